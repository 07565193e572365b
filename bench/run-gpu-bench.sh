#!/bin/bash
# run-gpu-bench.sh -- every benchmark, on a GPU machine, in one run, with
# the driver's own calls measured beside ours.  Usage (from the build
# tree, after make check):  bench/run-gpu-bench.sh [builddir]
# Prints one line per figure; doc/benchmarks.md records them.
set -u
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
shim=$b/preload/.libs/libcuwarden_preload.so
if ! nvidia-smi -L >/dev/null 2>&1; then echo "run-gpu-bench: no GPU"; exit 77; fi
unset LD_PRELOAD
nvidia-smi -L
echo "== bench_api";  "$b/bench/bench_api"
echo "== bench_pool"; "$b/bench/bench_pool"
[ -x "$b/bench/run-bench-shim.sh" ] && { echo "== shim cost"; "$b/bench/run-bench-shim.sh" "$b"; }
[ -x "$b/../bench/run-bench-shim.sh" ] && [ ! -x "$b/bench/run-bench-shim.sh" ] && { echo "== shim cost"; "$b/../bench/run-bench-shim.sh" "$b"; }

echo "== pinned staging buffers: plain vs shim pool mode"
"$b/bench/staging" 200
CUWARDEN_MODE=pool LD_PRELOAD=$shim "$b/bench/staging" 200

echo "== PyTorch training loop (200 steps): plain, shim audit, compute-sanitizer"
src=$(cd "$(dirname "$0")" && pwd)
python3 "$src/train_loop.py" 200
CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$shim python3 "$src/train_loop.py" 200
python3 "$src/train_loop.py" 200
CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$shim python3 "$src/train_loop.py" 200
timeout 300 /usr/local/cuda/bin/compute-sanitizer --leak-check full --print-limit 5 python3 "$src/train_loop.py" 200 2>&1 | grep -E 'train-loop|LEAK SUMMARY|ERROR SUMMARY' || echo "compute-sanitizer run did not finish"
