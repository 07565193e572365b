#!/bin/bash
# timeline_more.sh BUILDDIR -- the timeline's snapshot and its limit on a
# real PyTorch job (doc/audit.md, "Snapshots and diff" and "Peaks"), on
# the GPU machine, in about a minute:
# 1. torch_timeline.py with the timeline and a control FIFO, held half
#    way (CW_HOLD): `cuwarden-audit snapshot PID` shows the peak so far;
#    the snapshot's timeline copy holds, per thread, the first of that
#    thread's events in the file at exit (tests/preload/tl_prefixes.py);
# 2. the same job under `cuwarden-audit --timeline` with
#    CUWARDEN_TIMELINE_LIMIT=1K (the file holds a few dozen events):
#    PEAK PAST THE LIMIT (sampled) at least the growth the job plants
#    (300 steps x 4 MiB kept).
# Prints PASS/FAIL per check; exit 1 when one failed, 77 with no GPU.
set -u
b=$(cd "${1:?usage: timeline_more.sh BUILDDIR}" && pwd) || exit 99
src=$(cd "$(dirname "$0")/../.." && pwd)
AUDIT=${CUWARDEN_AUDIT:-$b/tools/cuwarden-audit}
SHIM=${CUWARDEN_PRELOAD:-$b/preload/.libs/libcuwarden_preload.so}
PY=${PYTHON:-python3}
W=${CW_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cw-tlm.XXXXXX")}
mkdir -p "$W"
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
failed=0
ok() { echo "PASS: $*"; }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

# 1. A snapshot half way.
rm -f "$W/ready" "$W/go"
mkfifo "$W/ready" "$W/go"
CW_HOLD=$W/ready:$W/go CUWARDEN_TIMELINE=1 CUWARDEN_CONTROL=$W/ctl.%p \
CUWARDEN_REPORT=$W/t.%p.json LD_PRELOAD=$SHIM \
	"$PY" "$src/tests/gpu/torch_timeline.py" >"$W/job.out" 2>"$W/job.err" &
pid=$!
l=$(timeout 300 sh -c 'read l <"$1"; echo "$l"' sh "$W/ready")
[ "$l" = 1 ] || { bad "the job did not reach half way"; tail "$W/job.err"; exit 1; }
"$AUDIT" snapshot "$pid" --wait 60 >"$W/snap.out" 2>"$W/snap.txt"
rc=$?
timeout 60 sh -c 'echo go >"$1"' sh "$W/go"
wait "$pid"
jrc=$?
snap=$(cat "$W/snap.out")
[ $rc = 0 ] && [ $jrc = 0 ] && [ -f "$snap" ] && ok "snapshot of the running job: $snap" ||
	{ bad "snapshot: rc $rc, the job's $jrc"; cat "$W/snap.txt"; tail "$W/job.err"; }
grep -E '^== (SNAPSHOT|PEAK)' "$W/snap.txt" | head -3
grep -q '^== PEAK: device 0: ' "$W/snap.txt" && ok "the snapshot shows device 0's peak so far" ||
	bad "no PEAK in the snapshot"
"$PY" "$src/tests/preload/tl_prefixes.py" "$W/t.$pid.json" "$snap" &&
	ok "the snapshot's timeline: each thread's first events of the file at exit" ||
	bad "the snapshot's timeline against the file at exit"

# 2. Past a tiny limit.
"$AUDIT" --timeline --json "$W/lim.json" -- env CUWARDEN_TIMELINE_LIMIT=1K \
	"$PY" "$src/tests/gpu/torch_timeline.py" >"$W/lim.txt" 2>&1
grep -E '^== (PEAK|   not exact|   live)' "$W/lim.txt" | head -6
"$PY" - "$W/lim.json" <<'PYEOF' && ok "past a 1K limit: the sampled peak holds the planted growth" || bad "past the limit"
import json, sys
p = json.load(open(sys.argv[1]))["peaks"]
a = [x for x in p if x.get("after_limit")]
dev = [d for x in a for d in x["after_limit"]["devices"] if d["device"] == 0]
print("after_limit:", [(x["after_limit"]["events"], x["after_limit"]["lost"]) for x in a],
      "device 0 max", [d["max_bytes"] for d in dev])
sys.exit(not (dev and dev[0]["max_bytes"] >= 300 * 4 * 2**20 and a[0]["after_limit"]["lost"] == 0))
PYEOF
echo "timeline-more: $failed failed"
[ "$failed" = 0 ]
