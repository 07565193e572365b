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

step check_api_gpu 60 "$b/tests/gpu/check_api_gpu"
step pool-gpu-tests 120 "$src/tests/gpu/run-pool-gpu-tests.sh" "$b"
CW_GPU_TIMEOUT=120 CW_GPU_WORK=/tmp/cwgpu step gpu-tests 330 "$src/tests/gpu/run-gpu-tests.sh" "$b"

echo "=== benches"
step bench_api 60 "$b/bench/bench_api"
step bench_pool 90 "$b/bench/bench_pool"
step bench_shim 60 "$src/bench/run-bench-shim.sh" "$b"
step bench_registry 60 "$b/bench/bench_registry"
step staging-plain 60 "$b/bench/staging" 100
CUWARDEN_MODE=pool LD_PRELOAD=$b/preload/.libs/libcuwarden_preload.so step staging-pool 60 "$b/bench/staging" 100
step train-plain 90 python3 "$src/bench/train_loop.py" 200
CUWARDEN_REPORT=/tmp/cw-train.%p.json LD_PRELOAD=$b/preload/.libs/libcuwarden_preload.so \
	step train-shim 90 python3 "$src/bench/train_loop.py" 200
step train-plain-again 90 python3 "$src/bench/train_loop.py" 200
step train-sanitizer 150 /usr/local/cuda/bin/compute-sanitizer --leak-check full --print-limit 3 \
	python3 "$src/bench/train_loop.py" 200

echo "=== audits with HTML"
w=/tmp/cwgpu
p=$(ls "$w"/*/planted-static 2>/dev/null | head -1)
[ -n "$p" ] || p=$(find "$w" -name 'planted*' -type f -perm -u+x 2>/dev/null | head -1)
[ -n "$p" ] && step audit-nvcc 60 "$b/tools/cuwarden-audit" --html "$out/nvcc.html" --json "$out/nvcc.json" -- "$p"
step audit-torch 120 "$b/tools/cuwarden-audit" --html "$out/torch.html" --json "$out/torch.json" -- python3 "$src/tests/gpu/torch_leak.py"
echo "=== done ($(date +%T))"
