#!/bin/bash
# run-everything.sh -- every GPU test and benchmark in one call on the GPU
# machine (the device time is short: one well-planned call).  Each step has
# a time limit; everything goes to OUTDIR/gpu.log, the HTML pages of two
# audits to OUTDIR.
#
# Usage, from the top of the source tree, with a build tree carried along:
#   LD_LIBRARY_PATH=<carried libs> tests/gpu/run-everything.sh OUTDIR BUILDDIR
set -u
out=$1
b=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
export top_builddir=$b top_srcdir=$src CW_REAL_DRIVER=1
exec > >(tee -a "$out/gpu.log") 2>&1
step() { # name seconds command...
	local name=$1 t=$2 rc
	shift 2
	echo "=== $name ($(date +%T))"
	timeout "$t" "$@"
	rc=$?
	echo "=== $name: exit $rc"
}
nvidia-smi -L; uname -r; ldd --version | head -1

# "bench" as a third argument: only the measurements that a change to the
# pools or the shim moves (a short second lease).
if [ "${3:-}" = bench ]; then
	shim=$b/preload/.libs/libcuwarden_preload.so
	step pool-gpu-tests 90 "$src/tests/gpu/run-pool-gpu-tests.sh" "$b"
	step bench_pool 60 "$b/bench/bench_pool"
	step staging-plain 30 "$b/bench/staging" 100
	CUWARDEN_MODE=pool LD_PRELOAD=$shim step staging-pool 30 "$b/bench/staging" 100
	for i in 1 2 3; do
		step train-plain-$i 60 python3 "$src/bench/train_loop.py" 2000 50
		CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$shim \
		    step train-shim-$i 60 python3 "$src/bench/train_loop.py" 2000 50
	done
	echo "=== done ($(date +%T))"
	exit 0
fi

step check_api_gpu 45 "$b/tests/gpu/check_api_gpu"
step pool-gpu-tests 90 "$src/tests/gpu/run-pool-gpu-tests.sh" "$b"
CW_GPU_TIMEOUT=90 CW_GPU_WORK=/tmp/cwgpu step gpu-tests 240 "$src/tests/gpu/run-gpu-tests.sh" "$b"

echo "=== benches"
step bench_pool 60 "$b/bench/bench_pool"
step bench_shim 45 "$src/bench/run-bench-shim.sh" "$b"
step bench_api 45 "$b/bench/bench_api"
step staging-plain 30 "$b/bench/staging" 100
CUWARDEN_MODE=pool LD_PRELOAD=$b/preload/.libs/libcuwarden_preload.so step staging-pool 30 "$b/bench/staging" 100
step train-plain 60 python3 "$src/bench/train_loop.py" 200
CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$b/preload/.libs/libcuwarden_preload.so \
	step train-shim 60 python3 "$src/bench/train_loop.py" 200

echo "=== audit with HTML"
step audit-torch 90 "$b/tools/cuwarden-audit" --html "$out/torch.html" --json "$out/torch.json" -- python3 "$src/tests/gpu/torch_leak.py"
step train-sanitizer 90 /usr/local/cuda/bin/compute-sanitizer --leak-check full --print-limit 3 \
	python3 "$src/bench/train_loop.py" 200
step bench_registry 30 "$b/bench/bench_registry"
echo "=== done ($(date +%T))"
