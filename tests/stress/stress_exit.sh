#!/bin/sh
# The exit race: "stress_proc exitrace 4" (4 threads allocating and
# freeing through the driver under the shim, another thread calling
# exit(5) after 0-3 ms), RUNS times (20 under make check, 200 with
# STRESS_FULL=1).  Each run: exit status 5, no hang (10 s), a report that
# parses, says how == "exit", and adds up (leaks and summary agree;
# the live count bounded).
. "${top_srcdir:?run through make check}/tests/stress/stress_lib.sh"

runs=${1:-$(size 20 200)}
threads=4
t0=$(now)
i=0
while [ "$i" -lt "$runs" ]; do
	R=$WORK/x$i.json
	CUWARDEN_REPORT=$R LD_PRELOAD=$SHIM timeout -s KILL 10 \
		"$ST/stress_proc" exitrace $threads >"$WORK/x.out" 2>"$WORK/x$i.err"
	rc=$?
	case $rc in
	5) ;;
	124 | 137) fail "run $i: hang (killed after 10 s)" ;;
	*) fail "run $i: exit status $rc"; tail -5 "$WORK/x$i.err" ;;
	esac
	i=$((i + 1))
done
dt=$(elapsed "$t0")
echo "stress_exit: $runs runs in $dt s"
if "$PY" - "$WORK" "$runs" "$threads" <<'PYEOF'
import json, os, sys
d, runs, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
for i in range(runs):
    p = os.path.join(d, "x%d.json" % i)
    try:
        with open(p) as fh:
            r = json.load(fh)
    except (OSError, ValueError) as e:
        bad.append("run %d: report: %s" % (i, e))
        continue
    s, cov = r["summary"], r["coverage"]
    live = cov["allocations"] - cov["frees"]
    if (r["format"] != "cuwarden-report" or r["exit"]["how"] != "exit" or
            s["violations"] != 0 or
            s["leaked_allocations"] != sum(l["count"] for l in r["leaks"]) or
            s["leaked_bytes"] != sum(l["bytes"] for l in r["leaks"]) or
            # 8 device + 8 pinned blocks per thread at most.  The
            # coverage counters are read at another moment than the
            # records (the threads run on while the report is written:
            # no snapshot is promised), so they are only bounded.
            s["leaked_allocations"] > threads * 16 or
            not 0 <= live <= threads * 17):
        bad.append("run %d: exit %r summary %r coverage %r" % (i, r["exit"], s, cov))
for b in bad[:30]:
    print("  " + b)
print("reports: %d runs, %d problem(s)" % (runs, len(bad)))
sys.exit(1 if bad else 0)
PYEOF
then pass "exit race: $runs reports written and whole"
else fail "exit race: reports"
fi
finish
