#!/bin/sh
# tests/fuzz/build.sh BUILDDIR OUTDIR -- builds the libFuzzer targets of
# tests/fuzz/ with clang (ASan + UBSan + libFuzzer) from the sources.
#
# BUILDDIR is a configured build tree of cuwarden (for config.h, the
# configure results in its Makefile, and lib/libjemalloc_private.a, which
# is made there if missing).  The library's and the tool's sources are
# compiled again here, instrumented; nothing in BUILDDIR changes except
# that one archive.  Targets land in OUTDIR: fuzz_options, fuzz_report,
# fuzz_supp, fuzz_api.  CC (default clang) must support -fsanitize=fuzzer.
# CW_FUZZ_TARGETS limits the list ("fuzz_options fuzz_supp").
# Exits 77 when clang is missing, 99 on a harness error, 1 when a
# compilation fails.
set -eu

if test $# -ne 2; then
	echo "usage: $0 BUILDDIR OUTDIR" >&2
	exit 99
fi
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
CC=${CC:-clang}
targets=${CW_FUZZ_TARGETS:-fuzz_options fuzz_report fuzz_supp fuzz_api}

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: $CC not found (apt-get install clang libclang-rt-14-dev)"
	exit 77
fi
if ! test -f "$build/config.h" || ! test -f "$build/Makefile"; then
	echo "$0: $build is not a configured cuwarden build tree" >&2
	exit 99
fi

# A configure result from BUILDDIR's Makefile ("NAME = value").
mkvar() {
	sed -n "s/^$1 = *//p" "$build/Makefile" | head -n 1
}
CUDA_CPPFLAGS=$(mkvar CUDA_CPPFLAGS)
LIBUNWIND_CFLAGS=$(mkvar LIBUNWIND_CFLAGS)
LIBUNWIND_LIBS=$(mkvar LIBUNWIND_LIBS)
JANSSON_CFLAGS=$(mkvar JANSSON_CFLAGS)
JANSSON_LIBS=$(mkvar JANSSON_LIBS)
DL_LIBS=$(mkvar DL_LIBS)

# config.h of BUILDDIR with the debug assertions on (cw_assert and the
# <mod>_validate checks are what a fuzzer wants to trip).
mkdir -p "$out/inc" "$out/obj/lib" "$out/obj/tools"
cat > "$out/inc/config.h.tmp" <<EOC
#include "$build/config.h"
#undef CW_DEBUG
#define CW_DEBUG 1
EOC
if cmp -s "$out/inc/config.h.tmp" "$out/inc/config.h"; then
	rm -f "$out/inc/config.h.tmp"
else
	mv "$out/inc/config.h.tmp" "$out/inc/config.h"
fi

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS_FUZZ="-g -O1 -std=gnu11 -pthread -fno-omit-frame-pointer $SAN"
CPPFLAGS_FUZZ="-D_GNU_SOURCE -I$out/inc -I$src/lib -I$build $CUDA_CPPFLAGS"

# Compiles $1 into $2 when the object is older than any source or header.
compile() {
	s=$1 o=$2
	shift 2
	if test -f "$o" && test -z "$(find "$src/lib" "$src/tools" \
	    "$out/inc" -newer "$o" \
	    \( -name '*.c' -o -name '*.h' -o -name '*.def' \) \
	    2>/dev/null | head -n 1)"; then
		return 0
	fi
	echo "  CC  ${s#$src/}"
	$CC $CFLAGS_FUZZ $CPPFLAGS_FUZZ "$@" -c "$s" -o "$o"
}

need_lib=false need_tools=false
for t in $targets; do
	case $t in
	fuzz_options|fuzz_api) need_lib=true ;;
	fuzz_report|fuzz_supp) need_tools=true ;;
	*) echo "$0: unknown target $t" >&2; exit 99 ;;
	esac
done

libobjs=
if $need_lib; then
	for s in "$src"/lib/*.c; do
		o="$out/obj/lib/$(basename "$s" .c).o"
		compile "$s" "$o" -fsanitize=fuzzer-no-link $LIBUNWIND_CFLAGS
		libobjs="$libobjs $o"
	done
	jem="$build/lib/libjemalloc_private.a"
	if ! test -f "$jem"; then
		make -s -C "$build" lib/libjemalloc_private.a
	fi
	LIB_LIBS="$jem $LIBUNWIND_LIBS $DL_LIBS -pthread -lm"
fi

toolobjs=
if $need_tools; then
	for f in util reportread baseline suppress; do
		o="$out/obj/tools/$f.o"
		compile "$src/tools/$f.c" "$o" -fsanitize=fuzzer-no-link \
		    $JANSSON_CFLAGS
		toolobjs="$toolobjs $o"
	done
fi

for t in $targets; do
	case $t in
	fuzz_options|fuzz_api) objs=$libobjs libs=$LIB_LIBS extra="$LIBUNWIND_CFLAGS" ;;
	*) objs=$toolobjs libs=$JANSSON_LIBS extra="-I$src/tools $JANSSON_CFLAGS" ;;
	esac
	echo "  LD  $t"
	# shellcheck disable=SC2086
	$CC $CFLAGS_FUZZ $CPPFLAGS_FUZZ $extra -fsanitize=fuzzer \
	    "$here/$t.c" $objs $libs -o "$out/$t"
done
