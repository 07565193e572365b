#!/bin/sh
# jemalloc_check.sh ARCHIVE SYMS HEADER -- checks that the renamed jemalloc
# (ARCHIVE, made by objcopy --redefine-syms=SYMS from Debian's
# libjemalloc_pic.a) is what lib/ expects, so that a jemalloc upgrade that
# the renaming does not fit stops the build with a reason instead of
# linking a jemalloc that replaces the host program's malloc:
#  1. every cw_je_* function HEADER (lib/jemalloc_private.h) declares is
#     defined in ARCHIVE;
#  2. no global symbol defined in ARCHIVE has a public name: each is
#     cw_je_* (renamed), je_* or _* (jemalloc's internal prefixes, which no
#     program defines; --exclude-libs keeps them out of the dynamic table);
#  3. no object of ARCHIVE still refers to a name SYMS renamed (a reference
#     objcopy left would bind to the host's malloc).
# Prints what is wrong; exits 0 when all hold, 1 otherwise, 2 on misuse.
# Used by lib/Makemodule.am (the archive's rule) and by
# tests/unit/check_jemalloc_private.sh (on a broken archive too).
set -u
if [ $# -ne 3 ]; then
	echo "usage: $0 ARCHIVE SYMS HEADER" >&2
	exit 2
fi
ar=$1 syms=$2 hdr=$3
NM=${NM:-nm}
rc=0
defined=$($NM --defined-only "$ar" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBRVW]$/ { print $3 }' | sort -u)
if [ -z "$defined" ]; then
	echo "$0: $ar: no symbols" >&2
	exit 1
fi
for f in $(sed -n 's/.*\(cw_je_[a-z_]*\)(.*/\1/p' "$hdr" | sort -u); do
	if ! echo "$defined" | grep -qx "$f"; then
		echo "$ar: lacks $f (declared in $hdr)"; rc=1
	fi
done
public=$(echo "$defined" | grep -Ev '^(cw_je_|je_|_)')
if [ -n "$public" ]; then
	echo "$ar: defines public names (they would replace the host's):"
	echo "$public" | head -20 | sed 's/^/  /'; rc=1
fi
undef=$(mktemp) || exit 2
trap 'rm -f "$undef"' EXIT
$NM --undefined-only "$ar" 2>/dev/null | awk '{ print $NF }' | sort -u > "$undef"
left=$(awk '{ print $1 }' "$syms" | sort -u | comm -12 - "$undef")
if [ -n "$left" ]; then
	echo "$ar: still refers to names $syms renames:"
	echo "$left" | head -20 | sed 's/^/  /'; rc=1
fi
exit $rc
