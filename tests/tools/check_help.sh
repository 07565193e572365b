#!/bin/bash
# --help is short: the common options, grouped, pointing to --help-all;
# --help-all lists every option of the tool's option table (read from
# tools/cli.c here, so a new option cannot be left out), the short ones
# and the built-in suppressions; and every option is described in
# doc/audit.md and cuwarden-audit(1).
. "$top_srcdir/tests/tools/testlib.sh"

CLI="$top_srcdir/tools/cli.c"
MAN="$top_srcdir/doc/man/cuwarden-audit.1"
DOC="$top_srcdir/doc/audit.md"

run short "$AUDIT" --help
expect_rc short 0
run shorth "$AUDIT" -h
cmp -s "$WORK/short.out" "$WORK/shorth.out" || fail "-h and --help differ"
run all "$AUDIT" --help-all
expect_rc all 0
[ -s "$WORK/short.err" ] || [ -s "$WORK/all.err" ] && fail "help: something on stderr"

# Short: under 40 lines, grouped, names --help-all; no suppression list.
n=$(wc -l <"$WORK/short.out")
[ "$n" -lt 40 ] || fail "--help is $n lines long"
expect_in short out "Common options (--help-all lists them all):"
expect_in short out "--help-all             every option, and the built-in suppressions"
expect_not_in short out "leak:libcublas.so*"
expect_not_in short out "--no-wait-descendants"

# All: every group, the built-in rules.
for g in "Output:" "Filtering:" "Running:" "Shim options" "Other:" \
	"Built-in suppressions"; do
	expect_in all out "$g"
done
expect_in all out "leak:libcublas.so*"
# ... and every option of the table, at the start of an entry.
opts=$(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", .*/\1/p' "$CLI")
[ "$(printf '%s\n' "$opts" | wc -l)" -gt 30 ] ||
	{ echo "harness: the option table of $CLI was not found"; exit 99; }
for o in $opts; do
	grep -qE -- "^  (-[a-zA-Z], )?--$o([=[ ,]|\$)" "$WORK/all.out" ||
		fail "--help-all does not list --$o"
	grep -qF -- "\`--$o" "$DOC" || fail "doc/audit.md does not describe --$o"
	m=$(printf '%s' "--$o" | sed 's/-/\\-/g')
	grep -qF -- "$m" "$MAN" || fail "cuwarden-audit(1) does not describe --$o"
done
for s in -h -q -v -V; do
	grep -qE -- "^  $s, --" "$WORK/all.out" || fail "--help-all does not list $s"
done
# Each listed option is one the tool takes (none invented or renamed).
for o in $(grep -oE -- "^  (-[a-zA-Z], )?--[a-z-]+" "$WORK/all.out" |
	sed 's/.*--//'); do
	printf '%s\n' "$opts" | grep -qx -- "$o" ||
		fail "--help-all lists --$o, which is no option"
done

finish
