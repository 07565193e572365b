#!/bin/bash
# --baseline hides only the findings it holds (doc/audit.md, "Baselines"):
# matched on the whole symbolized stack, with lines by default
# (--baseline-match=exact), lines aside with --baseline-match=function.
# layerprog leaks from leak_here() at one line (line1) or another (line2):
# a baseline of line1 hides an identical run under both, and line2 only
# under function.  Old baselines (no fingerprints) still read; one without
# what exact matching needs, or without stacks, is refused, saying why.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/layerprog"
SRC="$TT/layerprog.c"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
l1=$(line_of "$SRC" "LINE-HERE1 \*/")
l2=$(line_of "$SRC" "LINE-HERE2 \*/")
B="$WORK/base.json"

run base "$AUDIT" --json "$B" "$P" line1
expect_rc base 23
expect_in base err ": leak_here (layerprog.c:$l1)"
expect_in base err "== LEAK SUMMARY: 196,608 bytes leaked in 3 allocations (1 group)"

# An identical run: hidden, whatever the match.
for how in "" "--baseline-match=exact" "--baseline-match=function"; do
	run same "$AUDIT" --baseline "$B" $how "$P" line1
	expect_rc same 0
	expect_in same err "== BASELINE: 1 leak group and 0 violation groups already in $B, not reported"
	expect_in same err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
done

# The same function, another line: a new finding for exact (the default),
# the same one for function.
for how in "" "--baseline-match=exact" "--baseline-match exact"; do
	run moved "$AUDIT" --baseline "$B" $how "$P" line2
	expect_rc moved 23
	expect_in moved err ": leak_here (layerprog.c:$l2)"
	expect_in moved err "== BASELINE: 0 leak groups and 0 violation groups already in $B, not reported"
	expect_in moved err "== ERROR SUMMARY: 3 errors (3 leaks, 0 violations)"
done
run movedf "$AUDIT" --baseline "$B" --baseline-match=function --json "$WORK/b2.json" "$P" line2
expect_rc movedf 0
expect_in movedf err "== BASELINE: 1 leak group and 0 violation groups already in $B, not reported"
expect_not_in movedf err "leak_here (layerprog.c:"

# The document of a baseline run holds what it left out (suppressed by
# "baseline"): a baseline made from it knows line2 exactly.
run again "$AUDIT" --baseline "$WORK/b2.json" "$P" line2
expect_rc again 0
run again1 "$AUDIT" --baseline "$WORK/b2.json" "$P" line1
expect_rc again1 23

# An old baseline: no fingerprints (they are not what is matched), no
# categories.  The same answers.
"$PY" - "$B" "$WORK/old.json" "$WORK/nolines.json" "$WORK/nostack.json" <<'P' || fail "harness: baseline variants"
import json, sys
d = json.load(open(sys.argv[1]))
for l in d["leaks"]:
    del l["fingerprint"], l["symbolic_fingerprint"], l["category"]
json.dump(d, open(sys.argv[2], "w"))
for l in d["leaks"]:
    for f in l["stack"]:
        f.pop("line", None)
json.dump(d, open(sys.argv[3], "w"))
for l in d["leaks"]:
    del l["stack"]
json.dump(d, open(sys.argv[4], "w"))
P
run old "$AUDIT" --baseline "$WORK/old.json" "$P" line1
expect_rc old 0
run old2 "$AUDIT" --baseline "$WORK/old.json" "$P" line2
expect_rc old2 23
run old2f "$AUDIT" --baseline "$WORK/old.json" --baseline-match=function "$P" line2
expect_rc old2f 0

# A baseline without lines cannot be matched exactly: refused before the
# program runs, saying what is missing and what to do; function takes it.
run nolines "$AUDIT" --baseline "$WORK/nolines.json" "$P" line1
expect_rc nolines 125
expect_in nolines err "--baseline: $WORK/nolines.json: leaks[0].stack[0] names a function but not its \"file\" and \"line\": --baseline-match=exact matches every frame's function, file and line"
expect_in nolines err "use --baseline-match=function"
expect_not_in nolines err "LEAK SUMMARY"
run nolinesf "$AUDIT" --baseline "$WORK/nolines.json" --baseline-match=function "$P" line2
expect_rc nolinesf 0
# Without stacks, neither.
run nostack "$AUDIT" --baseline "$WORK/nostack.json" --baseline-match=function "$P" line1
expect_rc nostack 125
expect_in nostack err "--baseline: $WORK/nostack.json: leaks[0] has no \"stack\" array"

# A fixture written by an earlier version of the tool, as its own
# baseline: every finding hidden, under both matches.
for how in exact function; do
	run planted "$AUDIT" --baseline "$DATA/gpu_planted.json" --baseline-match=$how report "$DATA/gpu_planted.json"
	expect_rc planted 0
	expect_in planted err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
done

# Usage errors.
run bad "$AUDIT" --baseline "$B" --baseline-match=lines "$P" line1
expect_rc bad 125
expect_in bad err "--baseline-match: \"lines\" is neither exact nor function"
run alone "$AUDIT" --baseline-match=function "$P" line1
expect_rc alone 125
expect_in alone err "--baseline-match: applies only with --baseline FILE"

finish
