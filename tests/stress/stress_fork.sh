#!/bin/sh
# fork/exec under the shim, CUWARDEN_REPORT with %p: "stress_proc fork N"
# (a parent that leaks 65536 B, with a thread allocating and freeing all
# along) forks N children (50 under make check, 1,000 with STRESS_FULL=1)
# which exec "stress_proc forkchild I" (leaks 1000+I B, frees one block).
# Every child's report must be there and exact, the parent's too; no hang
# (timeout), no crash (exit status).
. "${top_srcdir:?run through make check}/tests/stress/stress_lib.sh"

n=${1:-$(size 50 1000)}
limit=$(size 300 1200)
mkdir "$WORK/r" || exit 99
t0=$(now)
CUWARDEN_REPORT="$WORK/r/r.%p.json" LD_PRELOAD=$SHIM \
	timeout -s KILL "$limit" "$ST/stress_proc" fork "$n" \
	>"$WORK/fork.out" 2>"$WORK/fork.err"
rc=$?
dt=$(elapsed "$t0")
cat "$WORK/fork.out"
echo "stress_fork: $n cycles in $dt s ($(awk -v n="$n" -v t="$dt" \
	'BEGIN { if (t > 0) printf "%.1f", n / t; else print "-" }') cycles/s)"
case $rc in
0) pass "fork: $n cycles, exit status 0" ;;
124 | 137) fail "fork: no end within $limit s (hang?)" ;;
*) fail "fork: exit status $rc"; tail -20 "$WORK/fork.err" ;;
esac

if "$PY" - "$WORK/r" "$n" <<'PYEOF'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
bad = []
parent = None
children = {}
files = sorted(os.listdir(d))
for f in files:
    try:
        with open(os.path.join(d, f)) as fh:
            r = json.load(fh)
    except (OSError, ValueError) as e:
        bad.append("%s: unreadable: %s" % (f, e))
        continue
    cmd = r.get("command", [])
    if len(cmd) >= 3 and cmd[1] == "fork":
        parent = r
    elif len(cmd) >= 3 and cmd[1] == "forkchild":
        i = int(cmd[2])
        if i in children:
            bad.append("%s: a second report for child %d" % (f, i))
        children[i] = (f, r)
    else:
        bad.append("%s: command %r" % (f, cmd))

def leaks_ok(name, r, size):
    s, cov = r["summary"], r["coverage"]
    ok = (r["exit"]["how"] == "exit" and s["violations"] == 0 and
          s["leaked_allocations"] == 1 and s["leaked_bytes"] == size and
          len(r["leaks"]) == 1 and r["leaks"][0]["api"] == "cuMemAlloc_v2"
          and r["leaks"][0]["bytes"] == size)
    if not ok:
        bad.append("%s: exit %r summary %r leaks %r" % (name, r["exit"], s,
                   [(l["api"], l["bytes"]) for l in r["leaks"]]))
    return ok

if parent is None:
    bad.append("no report of the parent")
else:
    leaks_ok("parent", parent, 65536)
    if parent["coverage"]["allocations"] - parent["coverage"]["frees"] != 1:
        bad.append("parent coverage %r" % parent["coverage"])
missing = [i for i in range(n) if i not in children]
if missing:
    bad.append("%d child report(s) missing: %s" % (len(missing), missing[:20]))
for i, (f, r) in sorted(children.items()):
    leaks_ok("child %d (%s)" % (i, f), r, 1000 + i)
    cov = r["coverage"]
    if cov["allocations"] != 2 or cov["frees"] != 1:
        bad.append("child %d coverage %r" % (i, cov))
    if parent is not None and r["ppid"] != parent["pid"]:
        bad.append("child %d: ppid %d, parent %d" % (i, r["ppid"], parent["pid"]))
if len(files) != n + 1:
    bad.append("%d reports, want %d" % (len(files), n + 1))
for b in bad[:30]:
    print("  " + b)
print("reports: %d files, %d children, %d problem(s)" % (len(files), len(children), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
then pass "fork: $((n + 1)) reports, all exact"
else fail "fork: reports"
fi
finish
