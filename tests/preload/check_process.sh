#!/bin/sh
# Processes: fork (the child passes every call straight through and
# writes no report; the parent's report is whole), exec (the child keeps
# LD_PRELOAD and writes its own report: with %p, one file per process;
# it also opens the parent's IPC handle), _exit and _Exit (the report is
# written first, the status kept), _exit from a thread, exit from a
# thread, fatal signals (the report written, the death unchanged).
. "${top_srcdir:-.}/tests/preload/lib.sh"

# fork
mkdir "$WORK/fork"
CUWARDEN_REPORT=$WORK/fork/r.json run fork "$TP/tp_driver" fork
expect_rc 0 "fork"
n=$(ls "$WORK/fork" | wc -l)
[ "$n" -eq 1 ] && pass "fork: one report (the child wrote none)" || { fail "fork: $n reports"; ls "$WORK/fork"; }
check "$WORK/fork/r.json" -V "$WORK/fork.out" \
	'leak(api="cuMemAlloc_v2")["addresses"] == [V["leak"]]' \
	'cov["frees"] == 0 and cov["allocations"] == 1' \
	'r["exit"]["how"] == "exit"'

# exec: the child is found by its ppid
mkdir "$WORK/exec"
CUWARDEN_REPORT="$WORK/exec/r.%p.json" run exec "$TP/tp_driver" exec
expect_rc 0 "exec"
n=$(ls "$WORK/exec" | wc -l)
[ "$n" -eq 2 ] && pass "exec: two reports" || { fail "exec: $n reports"; ls "$WORK/exec"; }
parent=""; child=""
for f in "$WORK"/exec/r.*.json; do
	if "$PY" -c 'import json,sys; sys.exit(0 if "execchild" in json.load(open(sys.argv[1]))["command"] else 1)' "$f"; then
		child=$f
	else
		parent=$f
	fi
done
if [ -n "$parent" ] && [ -n "$child" ]; then
	ppid=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$parent")
	check "$parent" \
		'leak(api="cuMemAlloc_v2")["bytes"] == 98304' \
		'len(r["leaks"]) == 1'
	check "$child" -v "parent=$ppid" \
		'r["ppid"] == V["parent"]' \
		'r["command"][1] == "execchild"' \
		'leak(api="cuMemAlloc_v2")["bytes"] == 12345' \
		'leak(kind="ipc", api="cuIpcOpenMemHandle_v2")["count"] == 1' \
		'leak(kind="ipc")["bytes"] == 98304' \
		'cov["frees"] == 1 and summ["violations"] == 0'
else
	fail "exec: reports not told apart"
fi

# _exit, _Exit, _exit from a thread, exit from a thread
for how in _exit:3:_exit _Exit:4:_exit thread_exit:5:_exit thread_Exit:6:exit; do
	arg=${how%%:*}; rest=${how#*:}; st=${rest%%:*}; kind=${rest#*:}
	R=$WORK/x$arg.json
	CUWARDEN_REPORT=$R run "x$arg" "$TP/tp_driver" exit "$arg"
	expect_rc "$st" "$arg"
	check "$R" -v "st=$st" -v "how=$kind" \
		'r["exit"]["how"] == V["how"]' \
		'r["exit"]["status"] in ((V["st"],) if V["how"] == "_exit" else (None, V["st"]))' \
		'leak(api="cuMemAlloc_v2")["bytes"] == 3 * 4096'
done
# Fatal signals: abort(), a SIGTERM raised, a segmentation fault, a
# SIGTERM sent by another process.  The report is written (exit "signal"
# and its number), the process still dies of the signal (the shell's
# 128+n).  A SIGTERM handler the program installed before CUDA stays its
# own; CUWARDEN_SIGNALS=0 installs none (no report, same death).
ulimit -c 0 2>/dev/null
for how in abort:6 term:15 segv:11; do
	arg=${how%%:*}; sig=${how#*:}
	R=$WORK/s$arg.json
	# Sanitized, ASan's own SIGSEGV handler would be the program's,
	# which the shim leaves alone: without it, ours is the one tested.
	[ "$arg" = segv ] && [ -n "$SANITIZED" ] && _o="$ASAN_OPTIONS:handle_segv=0" || _o=${ASAN_OPTIONS-}
	ASAN_OPTIONS=$_o CUWARDEN_REPORT=$R run "s$arg" "$TP/tp_driver" exit "$arg"
	expect_rc $((128 + sig)) "died of signal $sig ($arg)"
	check "$R" -v "sig=$sig" \
		'r["exit"]["how"] == "signal"' \
		'r["exit"]["status"] == V["sig"]' \
		'leak(api="cuMemAlloc_v2")["bytes"] == 3 * 4096'
done
R=$WORK/skill.json
LD_PRELOAD=$PRELOAD CUWARDEN_REPORT=$R "$TP/tp_driver" exit killme >"$WORK/skill.out" 2>&1 &
pid=$!
i=0
while ! grep -q ready "$WORK/skill.out" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
kill -TERM $pid
wait $pid
rc=$?
expect_rc 143 "killed by another process's SIGTERM"
check "$R" 'r["exit"]["how"] == "signal" and r["exit"]["status"] == 15' \
	'leak(api="cuMemAlloc_v2")["bytes"] == 3 * 4096'
R=$WORK/sown.json
CUWARDEN_REPORT=$R run sown "$TP/tp_driver" exit ownterm
expect_rc 7 "the program's own SIGTERM handler ran"
check "$R" 'r["exit"]["how"] == "_exit" and r["exit"]["status"] == 7'
R=$WORK/soff.json
CUWARDEN_SIGNALS=0 CUWARDEN_REPORT=$R run soff "$TP/tp_driver" exit abort
expect_rc 134 "CUWARDEN_SIGNALS=0: abort"
if [ -e "$R" ]; then fail "CUWARDEN_SIGNALS=0 wrote a report"; else pass "CUWARDEN_SIGNALS=0: no report"; fi

# exit order: a library's ELF destructor and its constructor's atexit
# handler free memory after the shim's destructor ran; the report is
# written after them, so only the program's own leak is left.
R=$WORK/order.json
CUWARDEN_REPORT=$R run order "$TP/tp_exitorder"
expect_rc 0 "exit order"
check "$R" \
	'leak(api="cuMemAlloc_v2")["bytes"] == 33333' \
	'len(r["leaks"]) == 1' \
	'cov["frees"] == 2 and summ["violations"] == 0'

# vfork: the child's _exit shares our memory; the report stays the parent's
mkdir "$WORK/vf"
CUWARDEN_REPORT=$WORK/vf/r.json run vf "$TP/tp_driver" vfork
expect_rc 0 "vfork"
n=$(ls "$WORK/vf" | wc -l)
[ "$n" -eq 1 ] && pass "vfork: one report" || { fail "vfork: $n reports"; ls "$WORK/vf"; }
check "$WORK/vf/r.json" -V "$WORK/vf.out" \
	'r["pid"] == V["pid"]' \
	'r["exit"]["how"] == "exit"' \
	'leak(api="cuMemAlloc_v2")["bytes"] == 5 * 4096'
finish
