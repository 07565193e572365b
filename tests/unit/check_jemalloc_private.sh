#!/bin/sh
# jemalloc stays private (doc/pools.md "jemalloc stays private"):
#  1. libcuwarden.so and the preload shim export no malloc-family, mallocx-
#     family or je_/cw_je_ symbol, and the renamed jemalloc is inside them
#     (local cw_je_* symbols), with no DT_NEEDED on libjemalloc;
#  2. a host program linked with -lcuwarden still gets glibc's malloc
#     (dlsym + dladdr), before and after the pools start jemalloc;
#  3. the late-dlopen TLS note: loading libcuwarden.so with dlopen either
#     works, or fails with "static TLS" -- and then works with
#     GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 (doc/pools.md);
#  4. the host program's MALLOC_CONF does not reach the private jemalloc
#     (lib/jemalloc_noconf.pl): with stats_print, abort_conf and a pair
#     jemalloc does not know, the host runs as before and jemalloc says
#     nothing;
#  5. lib/jemalloc_check.sh, the build's check of the renamed archive,
#     passes the archive the build made and refuses one renamed without
#     mallocx and free (what a jemalloc upgrade the renaming missed looks
#     like), naming both.
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_builddir:?}"
lib="$top_builddir/lib/.libs/libcuwarden.so"
shim="$top_builddir/preload/.libs/libcuwarden_preload.so"
rc=0
[ -f "$lib" ] || { echo "ERROR: $lib not built"; exit 99; }
bad='^(malloc|free|calloc|realloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|mallocx|rallocx|xallocx|sallocx|dallocx|sdallocx|nallocx|mallctl|mallctlnametomib|mallctlbymib|malloc_stats_print|malloc_conf|malloc_message|je_.*|cw_je_.*)$'
for so in "$lib" "$shim"; do
	[ -f "$so" ] || { echo "SKIP: $so not built"; continue; }
	exp=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | grep -E "$bad")
	if [ -n "$exp" ]; then
		echo "FAIL: $so exports allocator symbols:"; echo "$exp" | sed 's/^/  /'; rc=1
	else
		echo "PASS: $so exports no allocator symbol"
	fi
	if readelf -d "$so" | grep -q 'NEEDED.*libjemalloc'; then
		echo "FAIL: $so needs libjemalloc"; rc=1
	fi
	if nm "$so" 2>/dev/null | grep -q ' [tT] cw_je_mallocx$'; then
		echo "PASS: $so holds the renamed jemalloc, local"
	elif nm "$so" 2>&1 | grep -q 'no symbols'; then
		echo "NOTE: $so is stripped; local symbols not checked"
	else
		echo "FAIL: $so lacks a local cw_je_mallocx"; rc=1
	fi
done

# 2. The host program.
host="$top_builddir/tests/unit/jemalloc_host"
[ -x "$host" ] || { echo "ERROR: $host not built"; exit 99; }
out=$("$host" 2>&1); st=$?
echo "$out" | sed 's/^/  host: /'
case $st in
0) echo "PASS: host program keeps glibc's malloc" ;;
99) echo "ERROR: host program harness"; exit 99 ;;
*) echo "FAIL: host program"; rc=1 ;;
esac

# 4. The host's MALLOC_CONF is the host's.  (Without the cut, our copy
#    printed its statistics at exit, and aborted on the unknown pair.)
conf=$(MALLOC_CONF="stats_print:true,abort_conf:true,cw_no_such_option:1" \
    "$host" 2>&1); st=$?
if [ $st -eq 0 ] && ! echo "$conf" | grep -qi 'jemalloc'; then
	echo "PASS: MALLOC_CONF of the host does not reach the private jemalloc"
else
	echo "FAIL: MALLOC_CONF reached the private jemalloc (exit $st):"
	echo "$conf" | head -5 | sed 's/^/  /'; rc=1
fi
for so in "$lib" "$shim"; do
	[ -f "$so" ] || continue
	if strings -a "$so" | grep -qx -e 'MALLOC_CONF' -e '/etc/malloc.conf'; then
		echo "FAIL: $so still names MALLOC_CONF or /etc/malloc.conf"; rc=1
	else
		echo "PASS: $so names neither MALLOC_CONF nor /etc/malloc.conf"
	fi
done

# 3. Late dlopen and the TLS tunable.
dl="$top_builddir/tests/unit/jemalloc_dlopen"
[ -x "$dl" ] || { echo "ERROR: $dl not built"; exit 99; }
plain=$(env -u GLIBC_TUNABLES "$dl" "$lib" 2>&1)
echo "  dlopen, no tunable: $plain"
case $plain in
loaded) echo "PASS: late dlopen works here without the tunable" ;;
*"static TLS"*) echo "PASS: late dlopen refused with the documented static TLS error" ;;
*) echo "FAIL: unexpected dlopen outcome"; rc=1 ;;
esac
tuned=$(GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 "$dl" "$lib" 2>&1)
echo "  dlopen, optional_static_tls=4096: $tuned"
if [ "$tuned" = loaded ]; then
	echo "PASS: late dlopen works with the tunable"
else
	echo "FAIL: late dlopen fails even with the tunable"; rc=1
fi

# 5. The build's check of the renamed archive.
: "${top_srcdir:?}"
check="$top_srcdir/lib/jemalloc_check.sh"
syms="$top_builddir/lib/jemalloc.syms"
hdr="$top_srcdir/lib/jemalloc_private.h"
pic=$(sed -n 's/^JEMALLOC_PIC_A = *//p' "$top_builddir/Makefile" | head -n 1)
[ -f "$syms" ] && [ -f "$pic" ] || { echo "ERROR: $syms or $pic missing"; exit 99; }
if sh "$check" "$top_builddir/lib/libjemalloc_private.a" "$syms" "$hdr"; then
	echo "PASS: the build's archive passes jemalloc_check.sh"
else
	echo "FAIL: the build's archive fails jemalloc_check.sh"; rc=1
fi
tmp=$(mktemp -d) || exit 99
grep -Ev '^(mallocx|free) ' "$syms" > "$tmp/partial.syms"
objcopy --redefine-syms="$tmp/partial.syms" "$pic" "$tmp/bad.a" || { rm -rf "$tmp"; exit 99; }
bad=$(sh "$check" "$tmp/bad.a" "$syms" "$hdr" 2>&1); st=$?
rm -rf "$tmp"
echo "$bad" | sed 's/^/  check: /'
if [ $st -eq 1 ] && echo "$bad" | grep -qx '  mallocx' &&
    echo "$bad" | grep -qx '  free' &&
    echo "$bad" | grep -q 'lacks cw_je_mallocx'; then
	echo "PASS: an archive renamed without mallocx and free is refused, both named"
else
	echo "FAIL: jemalloc_check.sh accepted or misdescribed a broken archive (exit $st)"; rc=1
fi
exit $rc
