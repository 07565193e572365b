#!/bin/sh
# A snapshot's timeline so far (issue 18; doc/shim.md "Snapshots" and "The
# timeline", doc/audit.md "Snapshots and diff"): with CUWARDEN_TIMELINE=1 a
# snapshot's report names a copy of the timeline up to that moment,
# <CUWARDEN_REPORT>.snap.N.timeline, and the tool shows its peak.
#   - tp_snapshot (two phases, holding still after each; FIFOs as in
#     check_snapshot.sh) through the control FIFO: .snap.1 names a copy of
#     exactly 3 events (the peak 4 MiB), .snap.2 of 8 (the peak 7 MiB,
#     before site_b's free), each 0600, each thread's records the first of
#     that thread's in the file at exit, byte for byte;
#   - tp_tlsnap: 3 threads allocate and free without pause while three
#     snapshots are taken one after the other; each copy holds, for each
#     thread, the first of that thread's records in the file at exit (no
#     event lost from the middle, none made up), and reads back whole
#     (`cuwarden-audit report` of it: exit 0, a PEAK);
#   - a text snapshot (CUWARDEN_REPORT_FORMAT=text) has no copy;
#   - the report at exit and its timeline are as without snapshots.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "ERROR: $AUDIT not built"; exit 99; }

# start NAME PROG [ARGS]: PROG READY GO ARGS under the shim in the
# background (the caller's CUWARDEN_* apply); pid in $pid.
start() {
	_n=$1 _p=$2
	shift 2
	mkfifo "$WORK/$_n.ready" "$WORK/$_n.go" || exit 99
	LD_PRELOAD=$PRELOAD "$_p" "$WORK/$_n.ready" "$WORK/$_n.go" "$@" \
		>"$WORK/$_n.out" 2>"$WORK/$_n.err" &
	pid=$!
}
ready() { # a guard of 120 s against a program that died, not a timing
	l=$(timeout 120 sh -c 'read l <"$1"; echo "$l"' sh "$WORK/$1.ready")
	[ "$l" = "$2" ] || { fail "$1: phase $2 not reached ('$l')"; cat "$WORK/$1.err"; finish; }
}
go() {
	timeout 120 sh -c 'echo go >"$1"' sh "$WORK/$1.go" || fail "$1: no go"
}

PREFIXES=$top_srcdir/tests/preload/tl_prefixes.py

# ------------------------------------- two phases: exact counts and peaks
CUWARDEN_TIMELINE=1 CUWARDEN_CONTROL=$WORK/ctl.%p CUWARDEN_REPORT=$WORK/p.%p.json \
	start p "$TP/tp_snapshot"
ready p 1
"$AUDIT" snapshot "$pid" >"$WORK/p1.out" 2>"$WORK/p1.txt"
rc=$?
expect_rc 0 "snapshot after phase 1"
go p
ready p 2
"$AUDIT" snapshot "$pid" >"$WORK/p2.out" 2>"$WORK/p2.txt"
rc=$?
expect_rc 0 "snapshot after phase 2"
go p
wait "$pid"
rc=$?
expect_rc 0 "tp_snapshot with the timeline and snapshots"
p=$pid
[ -f "$WORK/p.$p.json.snap.1.timeline" ] && [ -f "$WORK/p.$p.json.snap.2.timeline" ] &&
	[ -f "$WORK/p.$p.json.timeline" ] &&
	pass "<report>.snap.1.timeline, .snap.2.timeline beside <report>.timeline" ||
	{ fail "the timelines: $(ls "$WORK")"; cat "$WORK/p.err"; }
if "$PY" "$PREFIXES" "$WORK/p.$p.json" "$WORK/p.$p.json.snap.1" "$WORK/p.$p.json.snap.2" \
	>"$WORK/p.prefix" 2>&1 &&
	[ "$(sed 's/^p\.[0-9]*\.json\.//' "$WORK/p.prefix")" = "snap.1.timeline: 3 events, 1 threads
snap.2.timeline: 8 events, 1 threads" ]; then
	pass "the copies: 3 and 8 events, the first of the file at exit, byte for byte"
else
	fail "the copies"; cat "$WORK/p.prefix"
fi
grep -q '^== PEAK: device 0: 4,194,304 bytes at ' "$WORK/p1.txt" &&
	grep -q '^== PEAK: device 0: 7,340,032 bytes at ' "$WORK/p2.txt" &&
	pass "the snapshots' peaks so far: 4 MiB, then 7 MiB" ||
	{ fail "the snapshots' PEAK lines"; cat "$WORK/p1.txt" "$WORK/p2.txt"; }
"$PY" - "$WORK/p.$p.json" <<'PYEOF' && pass "the report at exit: its whole timeline (9 events), the leak" || fail "the report at exit"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timeline"]
sys.exit(not (r["exit"]["how"] == "exit" and t["events"] == 9 and t["dropped"] == 0 and
              r["summary"]["leaked_bytes"] == 5 << 20))
PYEOF

# A text snapshot: no copy (its text has no timeline member to name it).
CUWARDEN_TIMELINE=1 CUWARDEN_REPORT_FORMAT=text CUWARDEN_CONTROL=$WORK/ctl.%p \
CUWARDEN_REPORT=$WORK/x.%p.txt start x "$TP/tp_snapshot"
ready x 1
"$AUDIT" snapshot "$pid" >"$WORK/x1.out" 2>"$WORK/x1.txt"
rc=$?
expect_rc 0 "a text snapshot"
go x
ready x 2
go x
wait "$pid"
[ -f "$WORK/x.$pid.txt.snap.1" ] && [ ! -e "$WORK/x.$pid.txt.snap.1.timeline" ] &&
	pass "a text snapshot: no timeline copy" || fail "a text snapshot: $(ls "$WORK")"

# ------------------------------- threads going on while snapshots are taken
CUWARDEN_TIMELINE=1 CUWARDEN_CONTROL=$WORK/ctl.%p CUWARDEN_REPORT=$WORK/t.%p.json \
	start t "$TP/tp_tlsnap" 3 300000
ready t 1
for i in 1 2 3; do
	"$AUDIT" snapshot "$pid" >"$WORK/t$i.out" 2>"$WORK/t$i.txt"
	rc=$?
	expect_rc 0 "snapshot $i of tp_tlsnap's threads"
done
go t
wait "$pid"
rc=$?
expect_rc 0 "tp_tlsnap"
t=$pid
if "$PY" "$PREFIXES" "$WORK/t.$t.json" "$WORK/t.$t.json.snap.1" "$WORK/t.$t.json.snap.2" \
	"$WORK/t.$t.json.snap.3" >"$WORK/t.prefix" 2>&1; then
	pass "three copies taken among running threads: each thread's first records, no hole ($(tr '\n' ';' <"$WORK/t.prefix"))"
else
	fail "the copies among running threads"; cat "$WORK/t.prefix"
fi
for i in 1 2 3; do
	grep -q '^== PEAK: device 0: ' "$WORK/t$i.txt" || { fail "snapshot $i: no PEAK"; head -20 "$WORK/t$i.txt"; }
done
pass "each snapshot read back with its timeline's peak"
finish
