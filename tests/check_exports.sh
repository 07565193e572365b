#!/bin/sh
# Each shared object exports exactly its intended symbols: the list in its
# version script (libunwind's check-namespace), and libcuwarden's list is
# the public headers' (the shim's is generated from it and hooks.def).  In particular no malloc,
# free, mallocx or jemalloc symbol leaves either object.
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_srcdir:?}" "${top_builddir:?}"
rc=0
check() { # object version-script
	so=$1; sym=$2
	[ -f "$so" ] || { echo "ERROR: $so not built"; exit 99; }
	want=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$sym" | sort -u)
	have=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBVWiR]$/ {print $3}' | sed 's/@.*//' | sort -u)
	extra=$(comm -13 "$(printf '%s\n' "$want" > "$tmpd/w"; echo "$tmpd/w")" "$(printf '%s\n' "$have" > "$tmpd/h"; echo "$tmpd/h")")
	missing=$(comm -23 "$tmpd/w" "$tmpd/h")
	if [ -n "$extra" ]; then echo "FAIL: $so exports symbols not in $sym:"; echo "$extra" | sed 's/^/  /'; rc=1; fi
	if [ -n "$missing" ]; then echo "FAIL: $so lacks symbols listed in $sym:"; echo "$missing" | sed 's/^/  /'; rc=1; fi
	if echo "$have" | grep -Eq '^(malloc|free|calloc|realloc|mallocx|dallocx|mallctl|posix_memalign|aligned_alloc|memalign|valloc|je_.*|cw_je_.*)$'; then
		echo "FAIL: $so exports an allocator symbol"; rc=1
	fi
	if readelf -d "$so" | grep -Eq 'NEEDED.*(libcuda|libcudart|libjemalloc)'; then
		echo "FAIL: $so depends on a CUDA or jemalloc library:"; readelf -d "$so" | grep NEEDED; rc=1
	fi
	[ $rc = 0 ] && echo "PASS: $so exports exactly $(echo "$want" | wc -l) symbols"
}
tmpd=$(mktemp -d) || exit 99
trap 'rm -rf "$tmpd"' EXIT
check "$top_builddir/lib/.libs/libcuwarden.so" "$top_srcdir/lib/libcuwarden.sym"
# The version script lists exactly what the public headers declare: the
# CW_EXPORT functions of cuwarden.h and the weak annotation functions of
# cuwarden_annotate.h (a function added to one and not the other is either
# not exported or exported undeclared).
{ sed -n 's/^CW_EXPORT [^(]*[ *]\(cw_[a-z_0-9]*\)(.*/\1/p' "$top_srcdir/lib/cuwarden.h"
  sed -n 's/^extern [^(]*[ *]\(cw_annotate_[a-z_]*\)(.*/\1/p' "$top_srcdir/lib/cuwarden_annotate.h"
} | sort -u > "$tmpd/decl"
sed -n 's/^[[:space:]]*\(cw_[a-z_0-9]*\);.*/\1/p' "$top_srcdir/lib/libcuwarden.sym" | sort -u > "$tmpd/sym"
if cmp -s "$tmpd/decl" "$tmpd/sym" && [ -s "$tmpd/sym" ]; then
	echo "PASS: lib/libcuwarden.sym lists exactly the $(wc -l < "$tmpd/sym") functions the public headers declare"
else
	echo "FAIL: lib/libcuwarden.sym and the public headers differ (< declared, > listed):"
	diff "$tmpd/decl" "$tmpd/sym" | grep '^[<>]' | sed 's/^/  /'; rc=1
fi
# The shim's engine (shim/) is linked into the shim only: libcuwarden.so
# holds none of its functions, exported or hidden.
so=$top_builddir/lib/.libs/libcuwarden.so
nm "$so" > "$tmpd/nm" || { echo "ERROR: nm $so failed"; exit 99; }
# Its local symbols must be there to be looked at (not a stripped object).
grep -q ' t registry_find$' "$tmpd/nm" || { echo "ERROR: $so has no symbol table (stripped?)"; exit 99; }
engine=$(awk '$2 ~ /^[TtDdBb]$/ {print $3}' "$tmpd/nm" | grep -E '^(track_|shim_|graphmem_)' | head -5)
if [ -n "$engine" ]; then
	echo "FAIL: $so holds the shim's engine:"; echo "$engine" | sed 's/^/  /'; rc=1
else
	echo "PASS: $so holds no track_, shim_ or graphmem_ symbol"
fi
if [ -f "$top_builddir/preload/libcuwarden_preload.sym" ]; then
	check "$top_builddir/preload/.libs/libcuwarden_preload.so" "$top_builddir/preload/libcuwarden_preload.sym"
fi
exit $rc
