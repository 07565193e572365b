#!/bin/sh
# Snapshots and diff (issue 18; doc/shim.md "Snapshots", doc/audit.md
# "Snapshots and diff"): tp_snapshot allocates in two phases with a
# planted growth and holds still after each (FIFOs: it writes the phase
# to READY, then waits for a line on GO), so that each snapshot is taken
# at a known point; nothing here waits on time.
#   - `cuwarden-audit snapshot PID` after each phase: the path of
#     <CUWARDEN_REPORT>.snap.1 and .snap.2 on stdout, each a JSON report
#     with exit.how "snapshot", mode 0600, whose live set is exactly the
#     phase's (bytes, counts, functions); the text says SNAPSHOT;
#   - `cuwarden-audit diff snap1 snap2`: exactly the planted growth, by
#     stack (site_a +3 MiB, site_c new 512 KiB; site_b gone), --json too;
#   - the exit report is the one a run without snapshots writes (leaks,
#     summary), written once, exit.how "exit";
#   - without the option: the tool says snapshots are off, sends nothing;
#   - a bad or refused signal, or one the program catches: a warning, no
#     handler.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "ERROR: $AUDIT not built"; exit 99; }
MIB=1048576

# phase_run NAME: starts tp_snapshot under the shim in the background
# (the caller's CUWARDEN_* apply), FIFOs $WORK/NAME.ready and .go; pid in
# $pid.
phase_run() {
	mkfifo "$WORK/$1.ready" "$WORK/$1.go" || exit 99
	LD_PRELOAD=$PRELOAD "$TP/tp_snapshot" "$WORK/$1.ready" "$WORK/$1.go" \
		>"$WORK/$1.out" 2>"$WORK/$1.err" &
	pid=$!
}
# ready NAME N: waits for the program to say it finished phase N (a
# guard of 120 s against a program that died, not a timing).
ready() {
	l=$(timeout 120 sh -c 'read l <"$1"; echo "$l"' sh "$WORK/$1.ready")
	[ "$l" = "$2" ] || { fail "$1: phase $2 not reached ('$l')"; cat "$WORK/$1.err"; finish; }
}
go() {
	timeout 120 sh -c 'echo go >"$1"' sh "$WORK/$1.go" || fail "$1: no go"
}

# -------------------------------------------------------------- snapshots
CUWARDEN_SNAPSHOT_SIGNAL=USR2 CUWARDEN_REPORT=$WORK/snap.%p.json phase_run snap
ready snap 1
"$AUDIT" snapshot "$pid" >"$WORK/s1.out" 2>"$WORK/s1.txt"
rc=$?
expect_rc 0 "snapshot after phase 1"
go snap
ready snap 2
"$AUDIT" snapshot "$pid" --wait 60 >"$WORK/s2.out" 2>"$WORK/s2.txt"
rc=$?
expect_rc 0 "snapshot after phase 2"
go snap
wait "$pid"
rc=$?
expect_rc 0 "tp_snapshot with snapshots"
snap_pid=$pid
s1=$(cat "$WORK/s1.out")
s2=$(cat "$WORK/s2.out")
[ "$s1" = "$WORK/snap.$pid.json.snap.1" ] && [ "$s2" = "$WORK/snap.$pid.json.snap.2" ] &&
	pass "snapshot prints the paths .snap.1, .snap.2" ||
	fail "snapshot paths '$s1' '$s2'"
for f in "$s1" "$s2"; do
	[ "$(stat -c %a "$f" 2>/dev/null)" = 600 ] && pass "${f##*/}: mode 0600" ||
		fail "${f##*/}: mode $(stat -c %a "$f" 2>/dev/null)"
done
set -- "$WORK"/snap.$pid.json*
[ $# -eq 3 ] && pass "one report and two snapshots, nothing else" || fail "files: $*"
grep -q '^== SNAPSHOT 1 of pid [0-9]*, a running process' "$WORK/s1.txt" &&
	grep -q '^== SNAPSHOT 2 of pid [0-9]*, a running process' "$WORK/s2.txt" &&
	pass "the text says SNAPSHOT N of a running process" ||
	{ fail "no SNAPSHOT line"; cat "$WORK/s1.txt"; }
grep -q '^== LEAK SUMMARY: 4,194,304 bytes leaked in 3 allocations (2 groups)$' "$WORK/s1.txt" &&
	grep -q '^== LEAK SUMMARY: 5,767,168 bytes leaked in 6 allocations (2 groups)$' "$WORK/s2.txt" &&
	pass "the rendered snapshots' totals" ||
	{ fail "rendered snapshots' totals"; cat "$WORK/s1.txt" "$WORK/s2.txt"; }

# The live sets, exactly: (function of the allocating frame, bytes,
# count) per group, plus the marker.
if "$PY" - "$s1" "$s2" "$WORK/snap.$pid.json" <<'PYEOF'
import json, sys
MIB = 1 << 20
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
want_sets = [
    {(2 * MIB, 2, MIB), (2 * MIB, 1, 2 * MIB)},
    {(5 * MIB, 5, MIB), (MIB // 2, 1, MIB // 2)},
]
for i, path in enumerate(sys.argv[1:3]):
    r = json.load(open(path))
    want(r["format"] == "cuwarden-report", "%s format" % path)
    want(r["exit"] == {"how": "snapshot", "status": None, "snapshot": i + 1},
         "%s exit %r" % (path, r["exit"]))
    got = {(l["bytes"], l["count"], l["size"]) for l in r["leaks"]}
    want(got == want_sets[i], "%s live set %r" % (path, got))
    want(r["summary"]["leaked_bytes"] == sum(b for b, c, s in want_sets[i]),
         "%s summary" % path)
r = json.load(open(sys.argv[3]))
want(r["exit"] == {"how": "exit", "status": 0}, "exit report exit %r" % r["exit"])
got = {(l["bytes"], l["count"], l["size"]) for l in r["leaks"]}
want(got == {(5 * MIB, 5, MIB)}, "exit report leaks %r" % got)
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
then pass "snapshots' live sets and markers exact; the exit report's leaks"
else fail "snapshot or exit report contents"; fi

# Symbolized: site_a's and site_b's groups in snapshot 1, by do_phase, main.
grep -E '^==    (at|by) 0x[0-9a-f]+: ' "$WORK/s1.txt" |
	sed -E 's/^==    (at|by) 0x[0-9a-f]+: ([a-z_]+).*/\1 \2/' | tr '\n' ' ' >"$WORK/frames"
[ "$(cat "$WORK/frames")" = "at site_a by do_phase by main at site_b by do_phase by main " ] &&
	pass "snapshot 1's stacks symbolized" ||
	{ fail "snapshot 1's frames: '$(cat "$WORK/frames")'"; cat "$WORK/s1.txt"; }

# ------------------------------------------------------------------- diff
"$AUDIT" diff "$s1" "$s2" --json "$WORK/diff.json" >"$WORK/diff.out" 2>"$WORK/diff.txt"
rc=$?
expect_rc 0 "diff snap1 snap2"
grep '^== GREW: ' "$WORK/diff.txt" >"$WORK/grew"
cat >"$WORK/grew.want" <<'EOF'
== GREW: +3,145,728 bytes (+3 allocations) from 2,097,152 to 5,242,880 bytes, device cuMemAlloc_v2
== GREW: +524,288 bytes (+1 allocation) from 0 to 524,288 bytes, device cuMemAlloc_v2
EOF
cmp -s "$WORK/grew" "$WORK/grew.want" && pass "diff: the planted growth, largest first" ||
	{ fail "diff: GREW lines"; cat "$WORK/diff.txt"; }
grep -E '^==    (at|by) 0x[0-9a-f]+: ' "$WORK/diff.txt" |
	sed -E 's/^==    (at|by) 0x[0-9a-f]+: ([a-z_]+).*/\1 \2/' | tr '\n' ' ' >"$WORK/frames"
[ "$(cat "$WORK/frames")" = "at site_a by do_phase by main at site_c by do_phase by main " ] &&
	pass "diff: each growth's stack, symbolized" ||
	{ fail "diff frames: '$(cat "$WORK/frames")'"; cat "$WORK/diff.txt"; }
grep -qx '== SHRANK OR FREED: -2,097,152 bytes in 1 group' "$WORK/diff.txt" &&
	grep -q '^== DIFF SUMMARY: +1,572,864 bytes (+3 allocations); live 4,194,304 bytes in .*, 5,767,168 bytes in .*; 2 groups grew, 1 shrank or went$' "$WORK/diff.txt" &&
	pass "diff: shrank line and totals" ||
	{ fail "diff: shrank or summary line"; cat "$WORK/diff.txt"; }
if "$PY" - "$WORK/diff.json" <<'PYEOF'
import json, sys
MIB = 1 << 20
d = json.load(open(sys.argv[1]))
ok = (d["format"] == "cuwarden-diff" and d["version"] == 1 and
      [(g["bytes"], g["allocations"], g["a_bytes"], g["b_bytes"],
        g["stack"][0]["function"].split(".")[0]) for g in d["grew"]] ==
      [(3 * MIB, 3, 2 * MIB, 5 * MIB, "site_a"), (MIB // 2, 1, 0, MIB // 2, "site_c")] and
      [(g["bytes"], g["stack"][0]["function"].split(".")[0]) for g in d["shrank"]] ==
      [(-2 * MIB, "site_b")] and
      d["totals"]["a_bytes"] == 4 * MIB and d["totals"]["b_bytes"] == 5 * MIB + MIB // 2 and
      d["totals"]["grew_groups"] == 2 and d["totals"]["shrank_groups"] == 1)
if not ok:
    print(json.dumps(d, indent=1)[:3000])
sys.exit(0 if ok else 1)
PYEOF
then pass "diff --json: the same facts"
else fail "diff --json"; fi
"$AUDIT" diff "$s1" "$s2" --error-exitcode 3 >/dev/null 2>&1
rc=$?
expect_rc 3 "diff --error-exitcode 3 when something grew"
"$AUDIT" diff "$s2" "$s2" --error-exitcode 3 >"$WORK/same.out" 2>"$WORK/same.txt"
rc=$?
expect_rc 0 "diff of a snapshot with itself"
grep -qx '== nothing grew' "$WORK/same.txt" && pass "diff: nothing grew" ||
	{ fail "diff same"; cat "$WORK/same.txt"; }

# ------------------------------------------- no snapshots: the same exit
CUWARDEN_REPORT=$WORK/off.%p.json phase_run off
ready off 1
"$AUDIT" snapshot "$pid" >"$WORK/off.snap.out" 2>"$WORK/off.snap.err"
rc=$?
expect_rc 125 "snapshot of a process without CUWARDEN_SNAPSHOT_SIGNAL"
grep -q "process $pid has snapshots off: it was started without CUWARDEN_SNAPSHOT_SIGNAL" "$WORK/off.snap.err" &&
	pass "the option off: the tool says so" ||
	{ fail "the option off: message"; cat "$WORK/off.snap.err"; }
go off
ready off 2
go off
wait "$pid"
rc=$?
expect_rc 0 "tp_snapshot without snapshots (survived the request)"
if "$PY" - "$WORK/snap.$snap_pid.json" "$WORK/off.$pid.json" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: sorted((l["kind"], l["api"], l["size"], l["count"], l["bytes"],
                        [f["offset"] for f in l["stack"]]) for l in r["leaks"])
ok = key(a) == key(b) and a["summary"] == b["summary"] and a["exit"] == b["exit"]
if not ok:
    print(key(a), key(b), a["summary"], b["summary"])
sys.exit(0 if ok else 1)
PYEOF
then pass "the exit report is the same with and without snapshots"
else fail "the snapshots changed the exit report"; fi
"$AUDIT" snapshot 999999999 >/dev/null 2>"$WORK/nopid.err"
rc=$?
expect_rc 125 "snapshot of no process"
grep -q 'no process 999999999' "$WORK/nopid.err" && pass "no such process: said" ||
	{ fail "no such process"; cat "$WORK/nopid.err"; }

# A report path of a distributed job's rank (%j, %r): the snapshot is
# looked for where that process writes it (doc/audit.md, "Auditing a
# distributed job").
OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_MCA_ess_base_jobid=77 \
CUWARDEN_SNAPSHOT_SIGNAL=USR2 CUWARDEN_REPORT="$WORK/job.%j.%r.json" phase_run job
ready job 1
"$AUDIT" snapshot "$pid" >"$WORK/job.s.out" 2>"$WORK/job.s.txt"
rc=$?
expect_rc 0 "snapshot of rank 3 (CUWARDEN_REPORT with %j.%r)"
grep -qx "$WORK/job.77.3.json.snap.1" "$WORK/job.s.out" &&
	pass "snapshot of rank 3: job.77.3.json.snap.1" ||
	{ fail "snapshot of rank 3: its path"; cat "$WORK/job.s.out" "$WORK/job.s.txt"; }
go job
ready job 2
go job
wait "$pid"

# ------------------------------------------- signals refused: a warning
for v in KILL TERM BOGUS 0 ALRM; do
	CUWARDEN_SNAPSHOT_SIGNAL=$v CUWARDEN_REPORT=$WORK/bad.json run bad.$v "$TP/tp_snapshot"
	expect_rc 0 "tp_snapshot, CUWARDEN_SNAPSHOT_SIGNAL=$v"
	grep -q "CUWARDEN_SNAPSHOT_SIGNAL=$v: .*no snapshots" "$WORK/bad.$v.err" &&
		pass "CUWARDEN_SNAPSHOT_SIGNAL=$v: a warning" ||
		{ fail "CUWARDEN_SNAPSHOT_SIGNAL=$v: no warning"; cat "$WORK/bad.$v.err"; }
	rm -f "$WORK/bad.json"
done
CUWARDEN_SNAPSHOT_SIGNAL=USR2 run noreport "$TP/tp_snapshot"
grep -q 'CUWARDEN_SNAPSHOT_SIGNAL=USR2: CUWARDEN_REPORT is unset' "$WORK/noreport.err" &&
	pass "no CUWARDEN_REPORT: a warning" || { fail "no CUWARDEN_REPORT: no warning"; cat "$WORK/noreport.err"; }
TP_OWN_HANDLER=1 CUWARDEN_SNAPSHOT_SIGNAL=SIGUSR2 CUWARDEN_REPORT=$WORK/own.json run own "$TP/tp_snapshot"
grep -q 'CUWARDEN_SNAPSHOT_SIGNAL=SIGUSR2: the program has its own disposition' "$WORK/own.err" &&
	pass "the program's own handler: left alone, a warning" ||
	{ fail "the program's own handler: no warning"; cat "$WORK/own.err"; }
CUWARDEN_SNAPSHOT_SIGNAL=12 CUWARDEN_REPORT=$WORK/num.json run num "$TP/tp_snapshot"
expect_rc 0 "CUWARDEN_SNAPSHOT_SIGNAL=12"
grep -q 'SNAPSHOT_SIGNAL' "$WORK/num.err" && { fail "12: a warning"; cat "$WORK/num.err"; } ||
	pass "CUWARDEN_SNAPSHOT_SIGNAL=12 (a number): taken"

finish
