#!/bin/bash
# Command-line conventions users reach for: `report --help` prints the
# report command's usage (exit 0) and --help points to it; a mistyped long
# option gets "did you mean" (exit 125, as every usage error), a value
# given to an option that takes none and an ambiguous prefix say so.
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"

# report --help: the report command's own usage, on stdout, status 0,
# whatever output options come before it; nothing read.
run rhelp "$AUDIT" report --help
expect_rc rhelp 0
expect_in rhelp out "Usage: cuwarden-audit [output and filtering options] report FILE|DIR..."
expect_in rhelp out "the Running and Shim options apply only when running a program"
expect_not_in rhelp err "cannot read"
[ -s "$WORK/rhelp.err" ] && fail "rhelp: something on stderr"
run rhelp_short "$AUDIT" --json "$WORK/never.json" report -h
expect_rc rhelp_short 0
expect_in rhelp_short out "Usage: cuwarden-audit [output and filtering options] report"
[ -e "$WORK/never.json" ] && fail "rhelp_short: --json was written"
# After a file, --help is a file name like any other.
run rhelp_late "$AUDIT" report "$A" --help
expect_rc rhelp_late 125
expect_in rhelp_late err "--help: cannot read"
# The main --help names it.
run help "$AUDIT" --help
expect_rc help 0
expect_in help out "report --help            the report command's own usage"

# Did you mean: one or two edits from an option.
run typo "$AUDIT" --supressions x report "$A"
expect_rc typo 125
expect_in typo err "cuwarden-audit: unknown option --supressions (did you mean --suppressions?)"
run typo_eq "$AUDIT" --jsn="$WORK/x.json" report "$A"
expect_rc typo_eq 125
expect_in typo_eq err "unknown option --jsn (did you mean --json?)"
expect_not_in typo_eq err "$WORK"
run typo_far "$AUDIT" --frobnicate true
expect_rc typo_far 125
expect_in typo_far err "unknown option --frobnicate"
expect_not_in typo_far err "did you mean"
# A value for an option that takes none; a prefix of several options.
run noval "$AUDIT" --require-cuda=yes report "$A"
expect_rc noval 125
expect_in noval err "option --require-cuda takes no value"
run ambig "$AUDIT" --base x report "$A"
expect_rc ambig 125
expect_in ambig err "option --base is ambiguous: --baseline, --baseline-match"
# A prefix of one option is that option (getopt_long).
: >"$WORK/empty.supp"
run prefix "$AUDIT" --supp "$WORK/empty.supp" report "$A"
expect_rc prefix 23
# An unknown short option is named, not the word before it.
run short "$AUDIT" -json x report "$A"
expect_rc short 125
expect_in short err "unknown option -j"
expect_not_in short err "unknown option $AUDIT"

finish
