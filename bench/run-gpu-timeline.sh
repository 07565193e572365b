#!/bin/bash
# run-gpu-timeline.sh BUILDDIR [ROUNDS] [NAME=SHIM.so ...] -- the
# timeline's cost on the GPU machine, every figure of doc/benchmarks.md's
# "The timeline" in one run: the machine's clock sources; bench_timeline
# (the recording path alone, in-process) with each clock; the
# stream-ordered pairs of bench_shim on the real driver, audit mode
# against the timeline with each clock and any variant shims given, in
# ROUNDS (default 7) interleaved rounds (bench/run-ab-timeline.sh); and
# the PyTorch training loop with the cudaMallocAsync backend (every
# tensor an allocation the shim sees), plain, under the shim and under the
# shim with the timeline, in turn (tests/gpu/torch-overhead.sh, 3 rounds).
# Prints its figures; exit 77 without a GPU.
set -u
b=$(cd "${1:?usage: run-gpu-timeline.sh BUILDDIR [ROUNDS] [NAME=SHIM.so ...]}" && pwd)
rounds=${2:-7}
shift $(($# >= 2 ? 2 : 1))
src=$(cd "$(dirname "$0")/.." && pwd)
shim=$b/preload/.libs/libcuwarden_preload.so
nvidia-smi -L >/dev/null 2>&1 || { echo "run-gpu-timeline: no GPU"; exit 77; }
cs=/sys/devices/system/clocksource/clocksource0
echo "== $(nvidia-smi -L | head -1); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "== clock source $(cat $cs/current_clocksource) (available: $(cat $cs/available_clocksource))"
for c in monotonic tsc; do
	echo "== bench_timeline, CUWARDEN_TIMELINE_CLOCK=$c"
	CUWARDEN_TIMELINE_CLOCK=$c "$b/bench/bench_timeline" -r 5
done
echo "== bench_shim -a, $rounds rounds: +timeline over audit, ns a pair (two events)"
"$src/bench/run-ab-timeline.sh" "$b/bench/bench_shim" "$rounds" \
	"mono=$shim,CUWARDEN_TIMELINE_CLOCK=monotonic" \
	"tsc=$shim,CUWARDEN_TIMELINE_CLOCK=tsc" "$@"
echo "== PyTorch loop, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync"
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync TIMELINE=1 \
	"$src/tests/gpu/torch-overhead.sh" "$b" 3
