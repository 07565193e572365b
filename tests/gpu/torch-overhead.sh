#!/bin/bash
# torch-overhead.sh BUILDDIR [ROUNDS] -- the shim's audit-mode cost on the
# PyTorch training loop (bench/train_loop.py), measured more carefully than
# one run each: first the hooked calls per step (CUWARDEN_VERBOSE=2 counts
# them), then ROUNDS rounds of plain and shim processes in turn (2000
# steps each), then a process that aborts under the shim (the report must
# say "signal").  Prints one line per run; compare the best and median
# windows.  With TIMELINE=1, each round also runs the shim with
# CUWARDEN_TIMELINE=1 (tl-N) and prints the timeline file's events and
# bytes per event.
set -u
b=$(cd "$1" && pwd)
rounds=${2:-4}
src=$(cd "$(dirname "$0")/../.." && pwd)
shim=$b/preload/.libs/libcuwarden_preload.so
loop=$src/bench/train_loop.py
echo "== hooked calls in 200 steps (after 20 warm-up):"
CUWARDEN_VERBOSE=2 LD_PRELOAD=$shim python3 "$loop" 200 20 2>&1 |
	grep -E "hooked calls|train-loop"
for i in $(seq "$rounds"); do
	echo "plain-$i: $(python3 "$loop" 2000 50 2>&1 | grep train-loop)"
	echo "shim-$i:  $(CUWARDEN_REPORT=/tmp/cwto.%p.json LD_PRELOAD=$shim python3 "$loop" 2000 50 2>&1 | grep train-loop)"
	[ "${TIMELINE:-0}" = 1 ] || continue
	rm -f /tmp/cwtl.json /tmp/cwtl.json.timeline
	echo "tl-$i:    $(CUWARDEN_TIMELINE=1 CUWARDEN_REPORT=/tmp/cwtl.json LD_PRELOAD=$shim python3 "$loop" 2000 50 2>&1 | grep train-loop)"
	python3 -c '
import json, os
t = json.load(open("/tmp/cwtl.json")).get("timeline", {})
n = t.get("events", 0)
size = os.path.getsize("/tmp/cwtl.json.timeline")
print("  timeline: %d events, %d dropped, %d bytes (%.1f per event)" % (n, t.get("dropped", 0), size, size / max(n, 1)))' 2>&1
done
echo "== abort under the shim:"
rm -f /tmp/cwabort.json
CUWARDEN_REPORT=/tmp/cwabort.json LD_PRELOAD=$shim python3 -c '
import os, torch
x = torch.empty(1 << 20, device="cuda")
torch.cuda.synchronize()
os.abort()' >/dev/null 2>&1
echo "exit status $?"
python3 -c '
import json
r = json.load(open("/tmp/cwabort.json"))
print("report exit:", r["exit"], "leaks:", len(r["leaks"]))' 2>&1
