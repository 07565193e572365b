#!/bin/sh
# A process that never uses CUDA: the shim loads nothing (libcuda absent
# from /proc/self/maps, even after dlsym of cu* names), writes no report,
# prints nothing, and the exit status is the program's.
. "${top_srcdir:-.}/tests/preload/lib.sh"

CUWARDEN_REPORT=$WORK/inert.json run inert "$TP/tp_inert"
expect_rc 0 "tp_inert (libcuda not loaded)"
[ -e "$WORK/inert.json" ] && fail "tp_inert wrote a report" || pass "tp_inert: no report"
[ -s "$WORK/inert.err" ] && { fail "tp_inert: stderr"; cat "$WORK/inert.err"; } || pass "tp_inert: silent"

for prog in true false; do
	p=$(command -v $prog) || continue
	plain "${prog}0" "$p"; want=$rc
	CUWARDEN_REPORT=$WORK/$prog.json run "$prog" "$p"
	expect_rc "$want" "$prog under the shim"
	[ -e "$WORK/$prog.json" ] && fail "$prog wrote a report" || pass "$prog: no report"
done
# A shell pipeline inherits the shim in every process: still nothing.
CUWARDEN_REPORT=$WORK/sh.%p.json run sh sh -c 'echo hi | cat >/dev/null; exit 7'
expect_rc 7 "sh -c under the shim"
[ -z "$(ls "$WORK" | grep '^sh\..*\.json$')" ] && pass "sh: no report" || fail "sh wrote reports"
# Asked for a report anyway (as cuwarden-audit does), the same program
# writes one that says CUDA was never used, and libcuda is still not loaded.
CUWARDEN_REPORT_ALWAYS=1 CUWARDEN_REPORT=$WORK/always.json run always "$TP/tp_inert"
expect_rc 0 "tp_inert with CUWARDEN_REPORT_ALWAYS (libcuda not loaded)"
check "$WORK/always.json" 'cov["hooks_active"] is False' 'cov["allocations"] == 0' \
	'summ["leaked_allocations"] == 0' 'r["mode"] == "audit"'
finish
