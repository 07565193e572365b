#!/bin/sh
# tests/fuzz/build.sh BUILDDIR OUTDIR -- builds the libFuzzer targets of
# tests/fuzz/ with clang (ASan + UBSan + libFuzzer) from the sources.
#
# BUILDDIR is a configured build tree of cuwarden (for config.h, the
# configure results in its Makefile, and lib/libjemalloc_private.a, which
# is made there if missing).  The library's and the tool's sources are
# compiled again here, instrumented; nothing in BUILDDIR changes except
# that one archive.  Which sources: the .c files of two lists of BUILDDIR's
# Makefile, lib_libcuwarden_core_la_SOURCES (lib/*.am) and
# TOOLS_CORE_SOURCES (tools/Makemodule.am), so that a file added there is
# built here too (make in BUILDDIR regenerates its Makefile after such a
# change).  Targets land in OUTDIR: fuzz_options, fuzz_report, fuzz_supp,
# fuzz_api.  CC (default clang) must support -fsanitize=fuzzer.
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

# A variable of BUILDDIR's Makefile ("NAME = value"): a configure result
# or a list of sources.  Automake writes a long list over several lines,
# each but the last ending in a backslash: they are joined, and runs of
# blanks become one space.
mkvar() {
	awk -v name="$1" '
	!on && index($0, name " =") == 1 {
		on = 1
		$0 = substr($0, length(name) + 3)
	}
	on {
		more = sub(/\\$/, "")
		v = v " " $0
		if (!more)
			exit
	}
	END { print v }
	' "$build/Makefile" | sed 's/[[:space:]][[:space:]]*/ /g; s/^ //; s/ $//'
}
# The .c files of a source list of the Makefile (paths from the top of the
# source tree); exits 99 when the list is missing or names none.
mksources() {
	list=
	for f in $(mkvar "$1"); do
		case $f in
		*.c) list="$list $f" ;;
		esac
	done
	if test -z "$list"; then
		echo "$0: no .c file in $1 of $build/Makefile" >&2
		exit 99
	fi
	echo "$list"
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
	srcs=$(mksources lib_libcuwarden_core_la_SOURCES)
	for f in $srcs; do
		o="$out/obj/lib/$(basename "$f" .c).o"
		compile "$src/$f" "$o" -fsanitize=fuzzer-no-link \
		    $LIBUNWIND_CFLAGS
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
	srcs=$(mksources TOOLS_CORE_SOURCES)
	for f in $srcs; do
		o="$out/obj/tools/$(basename "$f" .c).o"
		compile "$src/$f" "$o" -fsanitize=fuzzer-no-link \
		    $JANSSON_CFLAGS
		toolobjs="$toolobjs $o"
	done
fi

# A tool target's headers are the tool's: tools/ is searched before lib/,
# which may hold headers of the same names.
for t in $targets; do
	case $t in
	fuzz_options|fuzz_api)
		objs=$libobjs libs=$LIB_LIBS first='' extra="$LIBUNWIND_CFLAGS" ;;
	*)
		objs=$toolobjs libs=$JANSSON_LIBS first="-I$src/tools"
		extra="$JANSSON_CFLAGS" ;;
	esac
	echo "  LD  $t"
	# shellcheck disable=SC2086
	$CC $CFLAGS_FUZZ $first $CPPFLAGS_FUZZ $extra -fsanitize=fuzzer \
	    "$here/$t.c" $objs $libs -o "$out/$t"
done
