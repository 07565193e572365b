#!/bin/bash
# Lost processes (doc/audit.md): a process that used CUDA under the shim
# and left no report (SIGKILL) is listed with its pid, command and end,
# and fails the audit (125) unless --allow-missing-reports; a run where
# every process reports lists none; a process that never used CUDA, or a
# fork child (the shim is dead there), is never lost.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/cuprog"
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
for f in "$P" "$SHIM" "$FAKECUDA_DIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
PY=$(command -v python3)

# json_lost NAME: "pid how status" per lost process of $WORK/NAME.json
json_lost() {
	"$PY" -c 'import json, sys
for l in json.load(open(sys.argv[1]))["lost_processes"]:
    print(l["pid"], l["end"]["how"], l["end"]["status"], " ".join(l["command"]))' \
	    "$WORK/$1.json"
}

# A child (fork + exec) SIGKILLed after allocating, reaped by its parent:
# listed, end unknown; the audit fails.
run kc "$AUDIT" --json "$WORK/kc.json" --sarif "$WORK/kc.sarif" --html \
    "$WORK/kc.html" "$P" killchild
expect_rc kc 125
expect_in kc err "used CUDA under the shim and left no report: end unknown"
expect_in kc err "($P selfkill)"
expect_in kc err "1 process used CUDA and left no report (listed above): the audit is incomplete (--allow-missing-reports accepts that)"
if [ -n "$PY" ]; then
	json_lost kc >"$WORK/kc.lost"
	pid=$(cut -d' ' -f1 "$WORK/kc.lost")
	expect_in kc lost " unknown None $P selfkill"
	[ "$(wc -l <"$WORK/kc.lost")" = 1 ] || fail "kc: not one lost process"
	expect_in kc err "== LOST: process $pid ($P selfkill)"
	# Its parent reported, and is not lost.
	expect_not_in kc err "== LOST: process $(( pid - 1 )) "
	if "$PY" -c 'import jsonschema' 2>/dev/null; then
		run kcschema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" \
		    "$WORK/kc.json"
		expect_rc kcschema 0
	fi
	run kcsarif "$PY" "$TT/check_sarif.py" "$WORK/kc.sarif"
	expect_rc kcsarif 0
	grep -q '"toolExecutionNotifications":\[{"level":"error"' \
	    "$WORK/kc.sarif" || fail "kc: no SARIF notification"
fi
expect_in kc html "cw-lost"
# The page's banner knows the audit failed.
expect_in kc html '<script type="application/json" id="cw-page">{"exit_status":125,'

# The same with --allow-missing-reports: the program's status, still
# listed.
run kca "$AUDIT" --allow-missing-reports "$P" killchild
expect_rc kca 0
expect_in kca err "selfkill) used CUDA under the shim and left no report: end unknown"
expect_not_in kca err "the audit is incomplete"

# An orphan, re-parented to the tool and reaped by it: its end is known.
run ok "$AUDIT" --json "$WORK/ok.json" "$P" orphankill
expect_rc ok 125
expect_in ok err "selfkill) used CUDA under the shim and left no report: killed by SIGKILL"
if [ -n "$PY" ]; then
	json_lost ok >"$WORK/ok.lost"
	expect_in ok lost " signal 9 $P selfkill"
fi

# The program's own process SIGKILLed: nothing audited (its 128+9), and
# it is named.
run self "$AUDIT" "$P" selfkill
expect_rc self 137
expect_in self err "($P selfkill) used CUDA under the shim and left no report: killed by SIGKILL"
expect_in self err "before any report was written: nothing was audited"
run selfa "$AUDIT" --allow-missing-reports "$P" selfkill
expect_rc selfa 137

# Every process reports: no lost line, an empty list.
run fork "$AUDIT" --json "$WORK/fork.json" "$P" fork
expect_rc fork 23
expect_not_in fork err "LOST"
expect_not_in fork err "left no report"
if [ -n "$PY" ]; then
	json_lost fork >"$WORK/fork.lost"
	[ ! -s "$WORK/fork.lost" ] || fail "fork: lost processes listed"
fi

# A fork child (no exec: the shim is dead there) that calls CUDA and is
# SIGKILLed, and an exec'd child that never uses CUDA, SIGKILLed: never
# lost.
run none "$AUDIT" "$P" forknone
expect_rc none 0
expect_not_in none err "left no report"
expect_not_in none err "LOST"

# The marker files never reach --keep-reports.
run keep "$AUDIT" --allow-missing-reports --keep-reports "$WORK/kept" \
    "$P" killchild
expect_rc keep 0
ls "$WORK/kept" | grep -q '^loaded\.' && fail "keep: a marker was kept"
ls "$WORK/kept" | grep -q '^report\.' || fail "keep: no report kept"

finish
