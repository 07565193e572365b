#!/bin/sh
# Snapshots through the control FIFO (issue 18; doc/shim.md "Snapshots",
# doc/audit.md "Snapshots and diff"): tp_snapshot (two phases, holding
# still after each on FIFOs READY and GO, as in check_snapshot.sh) run
# with CUWARDEN_CONTROL=$WORK/ctl.%p and no signal.
#   - the shim makes the FIFO at the first CUDA call, mode 0600; no signal
#     handler goes in; every thread of the process sleeps while it waits
#     (no busy polling);
#   - `cuwarden-audit snapshot PID` writes "snapshot" to it (found in
#     /proc/PID/environ): .snap.1 and .snap.2, their live sets exact;
#   - lines that are no request: a warning each from the shim (three at
#     most), nothing else;
#   - with CUWARDEN_SNAPSHOT_SIGNAL set too, the tool uses the FIFO (no
#     signal sent: the process has none caught for it, and still works);
#   - at exit the FIFO is gone, the exit report as without it;
#   - refused, with a warning: a path taken by a file that is not a FIFO
#     of ours with mode 0600, no CUWARDEN_REPORT; the tool then says why
#     and sends nothing (125), the process unharmed; an earlier process's
#     FIFO of ours is taken over, unless another process holds its lock
#     (two started at once with the same name: one serves it).
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "ERROR: $AUDIT not built"; exit 99; }

phase_run() {
	mkfifo "$WORK/$1.ready" "$WORK/$1.go" || exit 99
	LD_PRELOAD=$PRELOAD "$TP/tp_snapshot" "$WORK/$1.ready" "$WORK/$1.go" \
		>"$WORK/$1.out" 2>"$WORK/$1.err" &
	pid=$!
}
ready() {
	l=$(timeout 120 sh -c 'read l <"$1"; echo "$l"' sh "$WORK/$1.ready")
	[ "$l" = "$2" ] || { fail "$1: phase $2 not reached ('$l')"; cat "$WORK/$1.err"; finish; }
}
go() {
	timeout 120 sh -c 'echo go >"$1"' sh "$WORK/$1.go" || fail "$1: no go"
}
# live FILE BYTES: the snapshot's leaked bytes are BYTES.
live() {
	"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not (r["exit"]["how"] == "snapshot" and r["summary"]["leaked_bytes"] == int(sys.argv[2])))' "$1" "$2"
}

# ------------------------------------------------- the FIFO, no signal
CUWARDEN_CONTROL=$WORK/ctl.%p CUWARDEN_REPORT=$WORK/c.%p.json phase_run c
ready c 1
ctl=$WORK/ctl.$pid
[ -p "$ctl" ] && [ "$(stat -c %a "$ctl")" = 600 ] && pass "the FIFO made, mode 0600" ||
	fail "no FIFO $ctl ($(ls -l "$ctl" 2>&1))"
cgt=$(sed -n 's/^SigCgt:\t*//p' "/proc/$pid/status")
[ $((0x$cgt >> 11 & 1)) = 0 ] && pass "no SIGUSR2 handler (SigCgt $cgt)" || fail "SIGUSR2 caught: $cgt"
busy=
for t in /proc/$pid/task/*; do
	st=$(sed 's/^.*) //' "$t/stat" | cut -d' ' -f1)
	[ "$st" = S ] || busy="$busy ${t##*/}:$st"
done
[ -z "$busy" ] && pass "every thread sleeps ($(ls /proc/$pid/task | wc -l) threads)" ||
	fail "threads not sleeping:$busy"
"$AUDIT" snapshot "$pid" >"$WORK/s1.out" 2>"$WORK/s1.txt"
rc=$?
expect_rc 0 "snapshot through the FIFO, phase 1"
printf 'bogus\nbogus2\nbogus3\nbogus4\nbogus5\n' >"$ctl"
go c
ready c 2
"$AUDIT" snapshot "$pid" >"$WORK/s2.out" 2>"$WORK/s2.txt"
rc=$?
expect_rc 0 "snapshot through the FIFO, phase 2"
go c
wait "$pid"
rc=$?
expect_rc 0 "tp_snapshot with CUWARDEN_CONTROL"
[ "$(cat "$WORK/s1.out")" = "$WORK/c.$pid.json.snap.1" ] && [ "$(cat "$WORK/s2.out")" = "$WORK/c.$pid.json.snap.2" ] &&
	pass "the tool prints .snap.1 and .snap.2" || fail "paths '$(cat "$WORK/s1.out")' '$(cat "$WORK/s2.out")'"
live "$WORK/c.$pid.json.snap.1" 4194304 && live "$WORK/c.$pid.json.snap.2" 5767168 &&
	pass "the snapshots' live sets (4 MiB, 5.5 MiB)" || fail "snapshot live sets"
grep -q 'CUWARDEN_CONTROL: "bogus" is no request' "$WORK/c.err" &&
	grep -q 'CUWARDEN_CONTROL: "bogus3" is no request.*(more such lines are left unsaid)' "$WORK/c.err" &&
	[ "$(grep -c 'cuwarden: warning' "$WORK/c.err")" = 3 ] &&
	pass "five lines that are no request: three warnings, the third says the rest go unsaid" || { fail "bogus lines"; cat "$WORK/c.err"; }
[ -e "$ctl" ] && fail "the FIFO is still there after exit" || pass "the FIFO removed at exit"
"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not (r["exit"] == {"how": "exit", "status": 0} and r["summary"]["leaked_bytes"] == 5 << 20))' \
	"$WORK/c.$pid.json" && pass "the exit report as without the FIFO" || fail "the exit report"

# ------------------------------- both set: the FIFO, not the signal
# The program catches SIGUSR2 itself, so the shim refuses the signal (a
# warning) and serves the FIFO: a tool that signalled would reach the
# program's handler and wait in vain.
TP_OWN_HANDLER=1 CUWARDEN_SNAPSHOT_SIGNAL=USR2 CUWARDEN_CONTROL=$WORK/both.%p \
	CUWARDEN_REPORT=$WORK/b.%p.json phase_run b
ready b 1
"$AUDIT" snapshot "$pid" --wait 60 >"$WORK/b1.out" 2>"$WORK/b1.txt"
rc=$?
expect_rc 0 "snapshot with both set, the signal refused by the shim"
go b; ready b 2; go b
wait "$pid"
[ -f "$WORK/b.$pid.json.snap.1" ] && live "$WORK/b.$pid.json.snap.1" 4194304 &&
	grep -q 'CUWARDEN_SNAPSHOT_SIGNAL=USR2: the program has its own disposition' "$WORK/b.err" &&
	pass "both set: the FIFO used (.snap.1 exact), not the signal" || { fail "both set"; cat "$WORK/b.err" "$WORK/b1.txt"; }

# ------------------------------------------------ refused: a warning
: >"$WORK/taken"
CUWARDEN_CONTROL=$WORK/taken CUWARDEN_REPORT=$WORK/t.%p.json phase_run t
ready t 1
grep -q "CUWARDEN_CONTROL=$WORK/taken: $WORK/taken is there already and is not a FIFO of this user's, mode 0600; left, no control" "$WORK/t.err" &&
	pass "a regular file at the path: refused, a warning" || { fail "taken path: no warning"; cat "$WORK/t.err"; }
"$AUDIT" snapshot "$pid" >/dev/null 2>"$WORK/t.snap.err"
rc=$?
expect_rc 125 "snapshot when the path is no FIFO"
grep -q "is no FIFO; nothing written" "$WORK/t.snap.err" && pass "the tool says it is no FIFO" ||
	{ fail "the tool's message"; cat "$WORK/t.snap.err"; }
[ -s "$WORK/taken" ] && fail "the file was written to" || pass "the file left as it was"
go t; ready t 2; go t
wait "$pid"
rc=$?
expect_rc 0 "tp_snapshot unharmed"

mkfifo -m 644 "$WORK/open.fifo"
CUWARDEN_CONTROL=$WORK/open.fifo CUWARDEN_REPORT=$WORK/o.json run open "$TP/tp_snapshot"
expect_rc 0 "a FIFO of mode 0644 at the path"
grep -q "is there already and is not a FIFO of this user's, mode 0600" "$WORK/open.err" &&
	pass "a FIFO others may write to: refused" || { fail "mode 0644: no warning"; cat "$WORK/open.err"; }
[ -p "$WORK/open.fifo" ] && pass "and left there" || fail "the FIFO of another removed"

CUWARDEN_CONTROL=$WORK/x.ctl run norep "$TP/tp_snapshot"
grep -q "CUWARDEN_CONTROL=$WORK/x.ctl: CUWARDEN_REPORT is unset" "$WORK/norep.err" && [ ! -e "$WORK/x.ctl" ] &&
	pass "no CUWARDEN_REPORT: a warning, no FIFO" || { fail "no CUWARDEN_REPORT"; cat "$WORK/norep.err"; }

# An earlier process's FIFO (ours, 0600, no reader): taken over.
mkfifo -m 600 "$WORK/stale"
CUWARDEN_CONTROL=$WORK/stale CUWARDEN_REPORT=$WORK/s.%p.json phase_run s
ready s 1
"$AUDIT" snapshot "$pid" >"$WORK/st.out" 2>"$WORK/st.txt"
rc=$?
expect_rc 0 "snapshot through a FIFO taken over"
go s; ready s 2; go s
wait "$pid"
[ ! -e "$WORK/stale" ] && ! grep -q warning "$WORK/s.err" && pass "taken over without a warning, removed at exit" ||
	{ fail "stale FIFO"; cat "$WORK/s.err"; }

# A FIFO another process reads (the same CUWARDEN_CONTROL inherited,
# no %p): refused.
CUWARDEN_CONTROL=$WORK/shared CUWARDEN_REPORT=$WORK/p.%p.json phase_run p1
ready p1 1
CUWARDEN_CONTROL=$WORK/shared CUWARDEN_REPORT=$WORK/q.json run second "$TP/tp_snapshot"
expect_rc 0 "a second process, the same CUWARDEN_CONTROL"
grep -q "CUWARDEN_CONTROL=$WORK/shared: $WORK/shared is read by another process already (put %p in the name); no control" "$WORK/second.err" &&
	pass "a FIFO another process reads: refused, a warning" || { fail "shared FIFO"; cat "$WORK/second.err"; }
"$AUDIT" snapshot "$pid" >/dev/null 2>&1
rc=$?
expect_rc 0 "the first process still served"
go p1; ready p1 2; go p1
wait "$pid"

# Two processes started at once with the same name both find the FIFO
# without a reader and open it: the one that holds its lock serves it,
# the other refuses.  The helper stands for the winner caught between the
# two: it holds the FIFO's write end and its lock, and no read end.
mkfifo -m 600 "$WORK/race"
"$PY" -c 'import fcntl, os, sys, time
r = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
w = os.open(sys.argv[1], os.O_WRONLY)
fcntl.flock(w, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.close(r)
open(sys.argv[2], "w").close()
time.sleep(600)' "$WORK/race" "$WORK/race.held" &
hpid=$!
n=0
until [ -e "$WORK/race.held" ] || [ $n -ge 1200 ]; do sleep 0.1; n=$((n + 1)); done
CUWARDEN_CONTROL=$WORK/race CUWARDEN_REPORT=$WORK/race.json run race "$TP/tp_snapshot"
expect_rc 0 "a FIFO another process holds the lock of"
kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
grep -q "CUWARDEN_CONTROL=$WORK/race: $WORK/race is taken by another process already (put %p in the name); no control" "$WORK/race.err" &&
	pass "a FIFO whose lock another process holds: refused, a warning" ||
	{ fail "locked FIFO taken over"; cat "$WORK/race.err"; }
[ -p "$WORK/race" ] && pass "and left there" || fail "the locked FIFO removed"

# No reader (the shim loaded, no CUDA call yet: no thread): the tool
# says so, writes nothing.
mkfifo -m 600 "$WORK/dead"
CUWARDEN_CONTROL=$WORK/dead CUWARDEN_REPORT=$WORK/d.json LD_PRELOAD=$PRELOAD sleep 1000 &
spid=$!
n=0
until grep -q libcuwarden_preload "/proc/$spid/maps" 2>/dev/null || [ $n -ge 1200 ]; do
	sleep 0.1; n=$((n + 1))
done
"$AUDIT" snapshot "$spid" >/dev/null 2>"$WORK/dead.err"
rc=$?
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
expect_rc 125 "snapshot of a process whose FIFO has no reader"
grep -q "has CUWARDEN_CONTROL, but $WORK/dead has no reader" "$WORK/dead.err" &&
	pass "no reader: the tool says so" || { fail "no reader: message"; cat "$WORK/dead.err"; }

finish
