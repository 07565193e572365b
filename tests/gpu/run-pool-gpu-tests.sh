#!/bin/bash
# run-pool-gpu-tests.sh -- the pools on a real GPU: the reuse fence
# (fence_test.cu) and kernels reading and writing pooled device, managed
# and pinned memory (kernel_io_test.cu).  The .cu programs are compiled
# here, at run time, with nvcc, and linked with libcuwarden from the build
# tree.
#
# Usage: tests/gpu/run-pool-gpu-tests.sh [BUILDDIR]
#   BUILDDIR: the build tree (default $top_builddir, as make check-gpu sets
#   it, else the tree this script sits in).
# Environment: NVCC (default $CUDA_HOME/bin/nvcc, /usr/local/cuda),
#   CW_LIBDIRS (extra library directories for the run: where libunwind.so.8
#   lives on a machine that lacks it).
# Prints `pool-gpu-tests: N passed, M failed`.  Exit 0 all passed, 1 a test
# failed, 77 no GPU, 99 harness error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${1:-${top_builddir:-$srcdir}}
builddir=$(cd "$builddir" && pwd) || exit 99

if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi -L >/dev/null 2>&1 || { echo "run-pool-gpu-tests: no GPU: skipped"; exit 77; }
elif [ ! -e /dev/nvidia0 ]; then
	echo "run-pool-gpu-tests: no GPU: skipped"; exit 77
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "ERROR: no nvcc"; exit 99; }
lib=$builddir/lib/.libs
[ -f "$lib/libcuwarden.so" ] || { echo "ERROR: $lib/libcuwarden.so not built"; exit 99; }

work=$(mktemp -d /tmp/cw-pool-gpu.XXXXXX) || exit 99
export LD_LIBRARY_PATH=$lib${CW_LIBDIRS:+:$CW_LIBDIRS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset LD_PRELOAD CUWARDEN_POOL
passed=0 failed=0
for t in fence_test kernel_io_test; do
	if ! "$nvcc" -O2 -std=c++17 -I"$srcdir/lib" -o "$work/$t" \
	    "$here/$t.cu" -L"$lib" -lcuwarden -lm -Xlinker -rpath="$lib" \
	    >"$work/$t.build" 2>&1; then
		echo "FAIL: $t: nvcc failed"; sed 's/^/  /' "$work/$t.build"
		failed=$((failed + 1)); continue
	fi
	echo "== $t"
	timeout 300 "$work/$t" > "$work/$t.out" 2>&1; st=$?
	cat "$work/$t.out"
	p=$(grep -c '^PASS' "$work/$t.out"); f=$(grep -c '^FAIL' "$work/$t.out")
	# fence_test counts its checks itself (only failures print).
	if [ "$t" = fence_test ]; then
		p=$(sed -n 's/^fence_test: \([0-9]*\) passed.*/\1/p' "$work/$t.out")
		p=${p:-0}
	fi
	case $st in
	0) ;;
	77) echo "SKIP: $t"; continue ;;
	1) [ "$f" -gt 0 ] || f=1 ;;
	*) echo "FAIL: $t exited $st"; f=$((f + 1)) ;;
	esac
	passed=$((passed + p)); failed=$((failed + f))
done
echo "pool-gpu-tests: $passed passed, $failed failed (work in $work)"
[ $failed -eq 0 ] || exit 1
[ $passed -gt 0 ] || exit 77
exit 0
