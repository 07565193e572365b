#!/bin/sh
# Malformed CUWARDEN_* values: a warning naming the variable, then the
# default (the run and its report are otherwise normal); stack depths; the
# statistics at exit; report and log files (0600, no symbolic link).
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/o.json
CUWARDEN_STACK_DEPTH=banana CUWARDEN_MODE=bogus CUWARDEN_REPORT=$R \
	run o "$TP/tp_driver" threads
expect_rc 0 "malformed options"
grep -q 'warning:.*CUWARDEN_STACK_DEPTH' "$WORK/o.err" && pass "warned: STACK_DEPTH" || { fail "no warning for CUWARDEN_STACK_DEPTH"; cat "$WORK/o.err"; }
grep -q 'warning:.*CUWARDEN_MODE' "$WORK/o.err" && pass "warned: MODE" || fail "no warning for CUWARDEN_MODE"
check "$R" \
	'r["mode"] == "audit"' \
	'len(leak(api="cuMemAlloc_v2")["stack"]) > 0'

# CUWARDEN_STACK_DEPTH=0: no stacks, owners unknown, still every leak.
R=$WORK/o0.json
CUWARDEN_STACK_DEPTH=0 CUWARDEN_REPORT=$R run o0 "$TP/tp_driver" threads
expect_rc 0 "CUWARDEN_STACK_DEPTH=0"
check "$R" \
	'leak(api="cuMemAlloc_v2")["stack"] == []' \
	'leak(api="cuMemAlloc_v2")["count"] == 8'

# CUWARDEN_STACK_DEPTH=2: at most 2 frames.
R=$WORK/o2.json
CUWARDEN_STACK_DEPTH=2 CUWARDEN_REPORT=$R run o2 "$TP/tp_driver" families
expect_rc 0 "CUWARDEN_STACK_DEPTH=2"
check "$R" 'all(len(e["stack"]) <= 2 for e in r["leaks"])' \
	'frame0(leak(api="cuMemAllocManaged")["stack"]).endswith("/tp_driver")'

# CUWARDEN_SHOW_STATS=1: the counters on stderr at exit.
CUWARDEN_SHOW_STATS=1 run st "$TP/tp_driver" threads
expect_rc 0 "CUWARDEN_SHOW_STATS=1"
grep -q 'cuwarden: coverage: 8008 allocations, 8000 frees' "$WORK/st.err" && pass "stats printed" || { fail "no stats"; cat "$WORK/st.err"; }
grep -q 'cuwarden: stats: device' "$WORK/st.err" && pass "per-kind stats printed" || fail "no per-kind stats"

# Report and log files: mode 0600, never written through a symbolic link
# (one planted where the report goes must not make the shim overwrite its
# target: the path is taken, so the report goes to <path>.<pid>, as when
# another process wrote it first).
R=$WORK/mode.json
L=$WORK/mode.log
CUWARDEN_REPORT=$R CUWARDEN_LOG_FILE=$L CUWARDEN_VERBOSE=1 run mode "$TP/tp_driver" threads
expect_rc 0 "report and log file modes"
[ "$(stat -c %a "$R")" = 600 ] && pass "report mode 0600" || fail "report mode $(stat -c %a "$R")"
[ "$(stat -c %a "$L")" = 600 ] && pass "log mode 0600" || fail "log mode $(stat -c %a "$L")"
echo precious > "$WORK/victim"
ln -s "$WORK/victim" "$WORK/planted.json"
ln -s "$WORK/victim" "$WORK/planted.log"
CUWARDEN_REPORT=$WORK/planted.json run planted "$TP/tp_driver" threads
expect_rc 0 "a link planted at the report's path"
[ "$(cat "$WORK/victim")" = precious ] && pass "the link's target is untouched" || fail "the report went through the link"
set -- "$WORK"/planted.json.*
if [ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %a "$1")" = 600 ]; then
	pass "the report went to $(basename "$1")"
	check "$1" 'leak(api="cuMemAlloc_v2")["count"] == 8'
else
	fail "no report beside the planted link"
fi
CUWARDEN_LOG_FILE=$WORK/planted.log CUWARDEN_SHOW_STATS=1 run plantlog "$TP/tp_driver" threads
expect_rc 0 "a link planted at the log's path"
[ "$(cat "$WORK/victim")" = precious ] && pass "the log link's target is untouched" || fail "the log went through the link"
finish
