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

# The measurements that a change to the pools or the shim moves; alone
# with "bench" as a third argument (a short second lease).
benches() {
	local shim=$b/preload/.libs/libcuwarden_preload.so
	step bench_pool 60 "$b/bench/bench_pool"
	# Thread scaling: the real driver, then the simulated one (our code
	# alone: its barriers cost nothing), then any variant builds carried
	# beside the build tree (bench_pool binaries built from other commits
	# or constants, named by what they change).
	step sweep-real 60 "$b/bench/bench_pool" -S
	CUWARDEN_POOL_ARENAS=1 step sweep-real-one-arena 60 "$b/bench/bench_pool" -S
	# Variants run on the simulated driver, between two runs of this
	# build: an A/B of our code alone in one lease.
	local sim=$b/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	LD_LIBRARY_PATH=$sim step sweep-simulated 60 "$b/bench/bench_pool" -S
	for v in "$b"/../variants/bench_pool*; do
		[ -x "$v" ] || continue
		LD_LIBRARY_PATH=$sim step "sweep-simulated-$(basename "$v")" \
		    60 "$v" -S
		LD_LIBRARY_PATH=$sim step sweep-simulated-again 60 \
		    "$b/bench/bench_pool" -S
	done
	step staging-plain 30 "$b/bench/staging" 200
	CUWARDEN_MODE=pool LD_PRELOAD=$shim step staging-pool 30 "$b/bench/staging" 1000
	# The training loop, plain and under the shim in turn, three times
	# (2000 steps each): the spread between runs is part of the figure.
	for i in 1 2 3; do
		step train-plain-$i 60 python3 "$src/bench/train_loop.py" 2000 50
		CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$shim \
		    step train-shim-$i 60 python3 "$src/bench/train_loop.py" 2000 50
	done
}

if [ "${3:-}" = bench ]; then
	step pool-gpu-tests 90 "$src/tests/gpu/run-pool-gpu-tests.sh" "$b"
	benches
	echo "=== done ($(date +%T))"
	exit 0
fi

step check_api_gpu 45 "$b/tests/gpu/check_api_gpu"
step pool-gpu-tests 90 "$src/tests/gpu/run-pool-gpu-tests.sh" "$b"
CW_GPU_TIMEOUT=90 CW_GPU_WORK=/tmp/cwgpu step gpu-tests 240 "$src/tests/gpu/run-gpu-tests.sh" "$b"

echo "=== benches"
benches
step bench_shim 45 "$src/bench/run-bench-shim.sh" "$b"
step bench_api 45 "$b/bench/bench_api"

echo "=== audit with HTML"
step audit-torch 90 "$b/tools/cuwarden-audit" --html "$out/torch.html" --json "$out/torch.json" -- python3 "$src/tests/gpu/torch_leak.py"
# compute-sanitizer on the training loop: 200 steps are timed; the process
# is known to crash at exit under it (exit 11, also without cuwarden).
step train-sanitizer 120 /usr/local/cuda/bin/compute-sanitizer --leak-check full --print-limit 3 \
	python3 "$src/bench/train_loop.py" 200
step bench_registry 30 "$b/bench/bench_registry"
echo "=== done ($(date +%T))"
