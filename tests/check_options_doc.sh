#!/bin/sh
# The options are one table, lib/options.def; the rest is checked against
# it (the man page cannot be generated from it, so it is compared):
#   - cuwarden(7)'s ENVIRONMENT list (the '.BR CUWARDEN_NAME " (kind' lines)
#     has exactly the table's options, each with the table's kind (BOOL:
#     boolean, LONG: integer, SIZE: size, ENUM: word, STRING and PATH:
#     string);
#   - every CUWARDEN_* name lib/, shim/, preload/ and tools/ use (the tool
#     sets the shim's variables for its command-line options), and every
#     one the other documents name (doc/*.md, cuwarden-audit(1),
#     cuwarden(3), README.md), is one of the table's; header guards
#     (CUWARDEN_*_H) aside.
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_srcdir:?}"
def=$top_srcdir/lib/options.def
man=$top_srcdir/doc/man/cuwarden.7
if ! [ -f "$def" ] || ! [ -f "$man" ]; then
	echo "ERROR: $def or $man is missing"
	exit 99
fi
tmpd=$(mktemp -d) || exit 99
trap 'rm -rf "$tmpd"' EXIT
LC_ALL=C
export LC_ALL
rc=0

sed -n 's/^OPTION(\([A-Z0-9_]*\), *\([A-Z]*\),.*/CUWARDEN_\1 \2/p' "$def" |
    sed 's/ BOOL$/ boolean/; s/ LONG$/ integer/; s/ SIZE$/ size/;
    s/ ENUM$/ word/; s/ STRING$/ string/; s/ PATH$/ string/' |
    sort >"$tmpd/table"
entry='s/^\.BR \(CUWARDEN_[A-Z0-9_]*\) " (\([a-z]*\).*/\1 \2/p'
sed -n "/^\\.SH ENVIRONMENT/,/^\\.SH /$entry" "$man" | sort >"$tmpd/man"
if ! [ -s "$tmpd/table" ] || ! [ -s "$tmpd/man" ]; then
	echo "ERROR: no OPTION( line in $def, or no option in $man"
	exit 99
fi
cut -d' ' -f1 "$tmpd/table" >"$tmpd/names"
cut -d' ' -f1 "$tmpd/man" >"$tmpd/mannames"

missing=$(comm -23 "$tmpd/names" "$tmpd/mannames")
extra=$(comm -13 "$tmpd/names" "$tmpd/mannames")
if [ -n "$missing" ]; then
	echo "FAIL: options of lib/options.def that cuwarden(7) does not document:"
	echo "$missing" | sed 's/^/  /'
	rc=1
fi
if [ -n "$extra" ]; then
	echo "FAIL: cuwarden(7) documents variables lib/options.def does not have:"
	echo "$extra" | sed 's/^/  /'
	rc=1
fi
kinds=$(join "$tmpd/table" "$tmpd/man" | awk '$2 != $3 {
	print "  " $1 ": " $2 " in lib/options.def, " $3 " in cuwarden(7)" }')
if [ -n "$kinds" ]; then
	echo "FAIL: kinds that differ:"
	echo "$kinds"
	rc=1
fi
[ $rc = 0 ] && echo "PASS: cuwarden(7) documents the" \
    "$(wc -l <"$tmpd/names") options of lib/options.def, with their kinds"

# Every name used or documented elsewhere.
files=$(cd "$top_srcdir" && find lib shim preload tools \
    \( -name '*.c' -o -name '*.h' -o -name '*.def' \) -print | sort)
(cd "$top_srcdir" && grep -oHE 'CUWARDEN_[A-Z][A-Z0-9_]*' $files \
    doc/*.md doc/man/cuwarden-audit.1 doc/man/cuwarden.3 README.md) |
    grep -v '_H$' | sort -u >"$tmpd/used"
unknown=$(awk -F: 'NR == FNR { known[$1] = 1; next }
	!($2 in known) { print "  " $1 ": " $2 }' "$tmpd/names" "$tmpd/used")
if [ -n "$unknown" ]; then
	echo "FAIL: CUWARDEN_* names that are no option of lib/options.def:"
	echo "$unknown"
	rc=1
else
	echo "PASS: lib/, shim/, preload/, tools/ and the documents name only" \
	    "options of lib/options.def"
fi
exit $rc
