#!/bin/bash
# run-gpu-tests.sh -- the shim on a real GPU: every program run plain, under
# the shim in audit mode and in pool mode, with the reports checked.
#
# Usage: tests/gpu/run-gpu-tests.sh [BUILDDIR]
#   BUILDDIR: the build tree (default: $top_builddir, as `make check-gpu`
#   sets it, else the tree this script sits in).
# Environment (all optional):
#   CUWARDEN_PRELOAD  the shim (default BUILDDIR/preload/.libs/libcuwarden_preload.so)
#   CUWARDEN_AUDIT    the audit tool (default BUILDDIR/tools/cuwarden-audit)
#   CUDA_HOME         the CUDA Toolkit (default /usr/local/cuda)
#   NVCC, COMPUTE_SANITIZER, PYTHON   the tools (defaults from CUDA_HOME, python3)
#   CW_GPU_ONLY       a regular expression: run only the cases it matches
#   CW_GPU_WORK       where builds, outputs and reports go (default a new
#                     /tmp/cw-gpu.XXXXXX, kept and printed)
#   CW_GPU_TIMEOUT    seconds per run (default 300)
#
# For each program: the plain run must exit 0; under the shim (audit and
# pool mode) the exit status and stdout must be the plain run's, and the
# per-process JSON reports must hold exactly the planted leaks (count and
# bytes, by kind) and the planted violations only (check_report.py).  For
# the nvcc programs and examples/leaky, compute-sanitizer --leak-check full
# must agree with the shim (its LEAK SUMMARY counts device, pinned and
# managed memory); for graph_mem.cu both are printed on an INFO: line.
#
# Programs: tests/gpu/gpu_driver (the driver layer alone, built by make
# check), examples/leaky.c (driver API), planted.cu built with -cudart
# static, -cudart shared and --default-stream per-thread, graph_mem.cu
# (graph memory nodes, stream capture), managed_attach.cu (OpenMP threads
# attaching managed memory to streams), PyTorch (caching allocator,
# expandable_segments:True, backend:cudaMallocAsync; a training step in a
# CUDA graph, with either allocator; torch.compile), CuPy, JAX,
# and examples/leaky through tools/cuwarden-audit.  Missing Python modules
# or tools are skips, not failures.
#
# Prints one line per check ("PASS:", "FAIL:", "SKIP:"; "INFO:" for what
# is shown, not asserted) and at the end
#   gpu-tests: N passed, M failed, K skipped
# Exit: 0 all passed, 1 a check failed, 77 no GPU (or nothing could run),
# 99 harness error (no shim).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${1:-${top_builddir:-$srcdir}}
builddir=$(cd "$builddir" && pwd) || exit 99

# ---------------------------------------------------------------- GPU?
# Without initialising CUDA here: nvidia-smi (a separate process) or the
# device node.
if command -v nvidia-smi >/dev/null 2>&1; then
	if ! nvidia-smi -L >/dev/null 2>&1; then
		echo "run-gpu-tests: nvidia-smi sees no GPU: skipped"
		echo "gpu-tests: 0 passed, 0 failed, 0 skipped"
		exit 77
	fi
elif [ ! -e /dev/nvidia0 ]; then
	echo "run-gpu-tests: no GPU (no nvidia-smi, no /dev/nvidia0): skipped"
	echo "gpu-tests: 0 passed, 0 failed, 0 skipped"
	exit 77
fi

shim=${CUWARDEN_PRELOAD:-$builddir/preload/.libs/libcuwarden_preload.so}
if [ ! -f "$shim" ]; then
	echo "run-gpu-tests: the shim is not built: $shim (run make first)"
	exit 99
fi

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
SAN=${COMPUTE_SANITIZER:-$CUDA_HOME/bin/compute-sanitizer}
[ -x "$SAN" ] || SAN=$(command -v compute-sanitizer || true)
PY=${PYTHON:-python3}
T=${CW_GPU_TIMEOUT:-300}
only=${CW_GPU_ONLY:-.}
check=$here/check_report.py

# The real driver, never the simulated one `make check` puts first.
LD_LIBRARY_PATH=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' |
    grep -v 'tests/fakecuda' | paste -sd: -)
export LD_LIBRARY_PATH
unset LD_PRELOAD CUWARDEN_REPORT CUWARDEN_MODE CUWARDEN_ON_VIOLATION
# JAX would take 75% of the GPU at start.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export PYTHONDONTWRITEBYTECODE=1

work=${CW_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cw-gpu.XXXXXX")}
mkdir -p "$work" || exit 99
echo "run-gpu-tests: shim $shim"
echo "run-gpu-tests: outputs and reports in $work"
nvidia-smi -L 2>/dev/null | head -n 4

npass=0 nfail=0 nskip=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
skip() { nskip=$((nskip + 1)); echo "SKIP: $*"; }

# run NAME MODE ENV... -- CMD ARGS...: one run; outputs in $work/NAME.MODE/,
# which the program finds in CW_RUN_DIR (new for each run)
run() {
	local name=$1 mode=$2; shift 2
	local d=$work/$name.$mode envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	rm -rf "$d"; mkdir -p "$d/reports"
	envs+=("CW_RUN_DIR=$d")
	case $mode in
	plain) ;;
	audit|pool)
		envs+=("LD_PRELOAD=$shim" "CUWARDEN_MODE=$mode"
		    "CUWARDEN_REPORT=$d/reports/cw.%p.json") ;;
	esac
	(cd "$work" && timeout -k 10 "$T" env ${envs[@]+"${envs[@]}"} "$@" \
	    >"$d/stdout" 2>"$d/stderr")
	echo $? >"$d/rc"
}

# tail of a file, indented, for failure messages
show() { sed -n '1,15p' "$1" | sed 's/^/    | /'; }

# case NAME "CHECK_REPORT ARGS" SANITIZE ENV... -- CMD ARGS...
#   SANITIZE: yes (compute-sanitizer's leak summary must agree with the
#   audit run's report), info (both printed side by side on an INFO: line,
#   not asserted), no
case_() {
	local name=$1 expect=$2 sanitize=$3; shift 3
	local envs=() cmd mode rc0 rc info
	if ! [[ $name =~ $only ]]; then return; fi
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	cmd=("$@")

	run "$name" plain ${envs[@]+"${envs[@]}"} -- "${cmd[@]}"
	rc0=$(cat "$work/$name.plain/rc")
	if [ "$rc0" != 0 ]; then
		fail "$name: plain run exits $rc0 (want 0)"
		show "$work/$name.plain/stderr"
		skip "$name: shim runs (plain run failed)"
		return
	fi
	pass "$name: plain run"
	for mode in audit pool; do
		run "$name" "$mode" ${envs[@]+"${envs[@]}"} -- "${cmd[@]}"
		rc=$(cat "$work/$name.$mode/rc")
		if [ "$rc" = "$rc0" ]; then
			pass "$name: $mode: exit status $rc"
		else
			fail "$name: $mode: exit status $rc, plain run $rc0"
			show "$work/$name.$mode/stderr"
		fi
		if cmp -s "$work/$name.plain/stdout" "$work/$name.$mode/stdout"
		then
			pass "$name: $mode: stdout identical"
		else
			fail "$name: $mode: stdout differs from the plain run"
			diff "$work/$name.plain/stdout" \
			    "$work/$name.$mode/stdout" | sed -n '1,10p' |
			    sed 's/^/    | /'
		fi
		# shellcheck disable=SC2086
		if "$PY" "$check" --mode "$mode" $expect \
		    "$work/$name.$mode/reports" >"$work/$name.$mode/check" 2>&1
		then
			pass "$name: $mode: report ($(tail -n 1 "$work/$name.$mode/check" | sed 's/^check_report: ok: //'))"
		else
			fail "$name: $mode: report"
			show "$work/$name.$mode/check"
		fi
	done
	case $sanitize in yes|info) ;; *) return ;; esac
	if [ -z "$SAN" ]; then
		skip "$name: compute-sanitizer (not found)"
		return
	fi
	(cd "$work" && timeout -k 10 "$T" env ${envs[@]+"${envs[@]}"} \
	    "$SAN" --leak-check full --print-limit 100 "${cmd[@]}" \
	    >"$work/$name.sanitizer" 2>&1)
	if [ "$sanitize" = info ]; then
		"$PY" "$check" --sanitizer-info "$work/$name.sanitizer" \
		    "$work/$name.audit/reports" >"$work/$name.sanitizer.check" 2>&1
		info=$(sed -n 's/^check_report: info: //p' "$work/$name.sanitizer.check")
		echo "INFO: $name: ${info:-$(tail -n 1 "$work/$name.sanitizer.check")}"
		return
	fi
	if "$PY" "$check" --sanitizer-log "$work/$name.sanitizer" \
	    "$work/$name.audit/reports" >"$work/$name.sanitizer.check" 2>&1
	then
		pass "$name: compute-sanitizer agrees ($(grep -o 'LEAK SUMMARY.*' "$work/$name.sanitizer" | tail -n 1))"
	else
		fail "$name: compute-sanitizer disagrees"
		show "$work/$name.sanitizer.check"
		grep -E 'LEAK SUMMARY|ERROR SUMMARY|Error' "$work/$name.sanitizer" |
		    sed -n '1,5p' | sed 's/^/    | /'
	fi
}

# wanted NAME...: true when CW_GPU_ONLY matches one of the case names
wanted() {
	local n
	for n in "$@"; do [[ $n =~ $only ]] && return 0; done
	return 1
}

# nvcc_build NAME SRC FLAGS...: $work/NAME from SRC with $NVCC_ARCH
# (default -arch=native), again without it for an nvcc that lacks it; the
# log in $work/NAME.build
nvcc_build() {
	local name=$1 src=$2 arch=${NVCC_ARCH:--arch=native}; shift 2
	# shellcheck disable=SC2086
	"$NVCC" -O1 -g $arch "$@" -o "$work/$name" "$src" \
	    >"$work/$name.build" 2>&1 ||
	    "$NVCC" -O1 -g "$@" -o "$work/$name" "$src" \
	    >>"$work/$name.build" 2>&1
}

# nvcc_case NAME SRC "CHECK_REPORT ARGS" SANITIZE FLAGS...: build SRC with
# nvcc, then case_ on the program
nvcc_case() {
	local name=$1 src=$2 expect=$3 sanitize=$4; shift 4
	[[ $name =~ $only ]] || return
	if [ -z "$NVCC" ]; then
		skip "$name: nvcc not found"
	elif nvcc_build "$name" "$src" "$@"; then
		pass "$name: build (nvcc${*:+ $*})"
		case_ "$name" "$expect" "$sanitize" -- "$work/$name"
	else
		fail "$name: build (nvcc${*:+ $*})"
		show "$work/$name.build"
	fi
}

# ---------------------------------------------------------------- cases

# The driver layer itself (lib/driver.c, lib/direct.c) on the real driver.
if [[ driver-layer =~ $only ]]; then
	if [ -x "$builddir/tests/gpu/gpu_driver" ]; then
		if (cd "$work" && timeout -k 10 "$T" "$builddir/tests/gpu/gpu_driver" \
		    >"$work/driver-layer.out" 2>&1); then
			pass "driver-layer: $(tail -n 1 "$work/driver-layer.out")"
		else
			fail "driver-layer: $(grep -c '^FAIL' "$work/driver-layer.out") check(s)"
			grep -E '^FAIL|rror' "$work/driver-layer.out" | sed -n '1,10p' |
			    sed 's/^/    | /'
		fi
	else
		skip "driver-layer: $builddir/tests/gpu/gpu_driver not built (make check builds it)"
	fi
fi
LEAKY_EXPECT="--exact-leaks device=3:3145728,pinned=1:262144 --violations double_free=1 --min-allocations 8 --max-untracked 0"
PLANTED_EXPECT="--exact-leaks device=3:4980736,pinned=1:196608,managed=1:262144 --violations double_free=1 --min-allocations 8 --max-untracked 0"

# examples/leaky: the driver-API example, linked against the driver's stub.
if wanted leaky audit-tool; then
	if gcc -O1 -g -I"$CUDA_HOME/include" "$srcdir/examples/leaky.c" \
	    -o "$work/leaky" -L"$CUDA_HOME/lib64/stubs" -L"$CUDA_HOME/lib64" \
	    -lcuda >"$work/leaky.build" 2>&1; then
		pass "leaky: build (gcc, driver API)"
		case_ leaky "$LEAKY_EXPECT" yes -- "$work/leaky"
	else
		fail "leaky: build"
		show "$work/leaky.build"
	fi
fi

# planted.cu, three ways.
for v in static shared ptds; do
	case $v in
	static) flags="-cudart static" ;;
	shared) flags="-cudart shared" ;;
	ptds) flags="--default-stream per-thread" ;;
	esac
	# shellcheck disable=SC2086
	nvcc_case "planted-$v" "$here/planted.cu" "$PLANTED_EXPECT" yes $flags
done

# Graph memory: allocation nodes and a captured cudaMallocAsync left
# allocated (kind "graph", the size asked for), others freed in the graph,
# by cudaFree (then freed again) or never launched.  What memcheck counts
# of graph memory is not established: its summary is printed beside the
# shim's, not asserted.
GRAPH_EXPECT="--exact-leaks graph=2:4206592 --violations double_free=1 --min-allocations 1 --max-untracked 0"
nvcc_case graph-mem "$here/graph_mem.cu" "$GRAPH_EXPECT" info

# Managed memory attached to one stream per task from 8 OpenMP threads
# (the UnifiedMemoryStreams pattern): nothing leaked, nothing wrong.  In
# pool mode the attach gets a pooled block, an interior pointer of a
# managed segment (doc/pools.md, cuStreamAttachMemAsync).
MANAGED_EXPECT="--exact-leaks none --violations none --min-allocations 64 --max-untracked 0"
nvcc_case managed-attach "$here/managed_attach.cu" "$MANAGED_EXPECT" yes \
    -Xcompiler -fopenmp

# PyTorch, three allocators.  Its cached segments are reported as leaks
# too (PyTorch never frees them); the planted ones are asserted by size.
TORCH_EXPECT="--has-leak device:5255168:1 --has-leak pinned:393216:1 --violations none --min-allocations 1"
if wanted torch-default torch-expandable torch-mallocasync torch-graph \
    torch-graph-mallocasync; then
	if "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
	    >"$work/torch.probe" 2>&1; then
		case_ torch-default "$TORCH_EXPECT" no -- "$PY" "$here/torch_leak.py"
		case_ torch-expandable "$TORCH_EXPECT" no \
		    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- \
		    "$PY" "$here/torch_leak.py"
		case_ torch-mallocasync "$TORCH_EXPECT" no \
		    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- \
		    "$PY" "$here/torch_leak.py"
		# A training step captured into a CUDA graph and replayed:
		# the capture must survive pool mode (its fence takes no
		# barrier that would invalidate it), the losses identical.
		case_ torch-graph "--no-bad-frees --min-allocations 1" no -- \
		    "$PY" "$here/torch_graph.py"
		# The same with cudaMallocAsync: what the capture allocates
		# becomes graph memory; a free of it outside the graph must
		# be of an allocation the shim saw (no untracked free).
		case_ torch-graph-mallocasync \
		    "--no-bad-frees --min-allocations 1 --max-untracked 0" no \
		    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- \
		    "$PY" "$here/torch_graph.py"
	else
		skip "torch: not importable or no CUDA ($(tail -n 1 "$work/torch.probe"))"
	fi
fi

# torch.compile(mode="reduce-overhead"): Inductor's Triton kernels in CUDA
# graph trees.  Each run compiles from scratch, its caches in its own
# directory (torch_compile.py says why).  The probe compiles a trivial
# function: no torch, triton, C compiler or Python headers is a skip.
if wanted torch-compile; then
	if (cd "$work" && CW_RUN_DIR=$work timeout -k 10 "$T" "$PY" \
	    "$here/torch_compile.py" --probe >"$work/torch-compile.probe" 2>&1)
	then
		case_ torch-compile "--no-bad-frees --min-allocations 1" no -- \
		    "$PY" "$here/torch_compile.py"
	else
		skip "torch-compile: torch.compile does not work here ($(tail -n 1 "$work/torch-compile.probe"))"
	fi
fi

# CuPy's pool is emptied before the leaks are planted: only they remain.
CUPY_EXPECT="--exact-leaks device=1:3153920,pinned=1:327680 --violations none --min-allocations 1 --max-untracked 0"
if [[ cupy =~ $only ]]; then
	if "$PY" -c 'import cupy' >"$work/cupy.probe" 2>&1; then
		case_ cupy "$CUPY_EXPECT" no -- "$PY" "$here/cupy_leak.py"
	else
		skip "cupy: not importable ($(tail -n 1 "$work/cupy.probe"))"
	fi
fi

JAX_EXPECT="--no-bad-frees --min-allocations 1"
if [[ jax =~ $only ]]; then
	if "$PY" -c 'import jax' >"$work/jax.probe" 2>&1; then
		case_ jax "$JAX_EXPECT" no -- "$PY" "$here/jax_small.py"
	else
		skip "jax: not importable ($(tail -n 1 "$work/jax.probe"))"
	fi
fi

# The README's first command, on the real GPU: the audit tool on
# examples/leaky must exit 23 and its merged JSON hold the planted bugs.
tool=${CUWARDEN_AUDIT:-$builddir/tools/cuwarden-audit}
if [[ audit-tool =~ $only ]]; then
	if [ ! -x "$tool" ]; then
		skip "audit-tool: $tool not built"
	elif [ ! -x "$work/leaky" ]; then
		skip "audit-tool: examples/leaky not built"
	else
		(cd "$work" && timeout -k 10 "$T" "$tool" --preload "$shim" \
		    --json "$work/audit-tool.json" --log-file "$work/audit-tool.txt" \
		    --error-exitcode 23 -- "$work/leaky" \
		    >"$work/audit-tool.stdout" 2>"$work/audit-tool.stderr")
		rc=$?
		if [ "$rc" = 23 ]; then
			pass "audit-tool: cuwarden-audit ./leaky exits 23"
		else
			fail "audit-tool: cuwarden-audit ./leaky exits $rc (want 23)"
			show "$work/audit-tool.stderr"
		fi
		if [ -f "$work/leaky.plain/stdout" ] &&
		    cmp -s "$work/leaky.plain/stdout" "$work/audit-tool.stdout"; then
			pass "audit-tool: program stdout identical"
		else
			fail "audit-tool: program stdout differs from the plain run"
		fi
		# shellcheck disable=SC2086
		if "$PY" "$check" --exact-leaks device=3:3145728,pinned=1:262144 \
		    --violations double_free=1 "$work/audit-tool.json" \
		    >"$work/audit-tool.check" 2>&1; then
			pass "audit-tool: merged JSON ($(tail -n 1 "$work/audit-tool.check" | sed 's/^check_report: ok: //'))"
		else
			fail "audit-tool: merged JSON"
			show "$work/audit-tool.check"
		fi
	fi
fi

# The tool on PyTorch: exit 23 (the planted leaks), and its merged JSON
# holds them.  What else it shows depends on its built-in suppressions
# (PyTorch's caching allocator in libc10_cuda is suppressed; its pinned
# host cache in libtorch_cuda may not be): printed, not asserted.
if [[ audit-tool-torch =~ $only ]]; then
	if [ ! -x "$tool" ]; then
		skip "audit-tool-torch: $tool not built"
	elif ! "$PY" -c 'import torch' >/dev/null 2>&1; then
		skip "audit-tool-torch: torch not importable"
	else
		(cd "$work" && timeout -k 10 "$T" "$tool" --preload "$shim" \
		    --json "$work/audit-tool-torch.json" \
		    --log-file "$work/audit-tool-torch.txt" \
		    --error-exitcode 23 -- "$PY" "$here/torch_leak.py" \
		    >"$work/audit-tool-torch.stdout" 2>"$work/audit-tool-torch.stderr")
		rc=$?
		if [ "$rc" = 23 ]; then
			pass "audit-tool-torch: cuwarden-audit python3 torch_leak.py exits 23"
		else
			fail "audit-tool-torch: exits $rc (want 23)"
			show "$work/audit-tool-torch.stderr"
		fi
		if "$PY" "$check" --has-leak device:5255168:1 \
		    --has-leak pinned:393216:1 --violations none \
		    "$work/audit-tool-torch.json" >"$work/audit-tool-torch.check" 2>&1
		then
			pass "audit-tool-torch: merged JSON ($(tail -n 1 "$work/audit-tool-torch.check" | sed 's/^check_report: ok: //'))"
		else
			fail "audit-tool-torch: merged JSON"
			show "$work/audit-tool-torch.check"
		fi
	fi
fi

echo "run-gpu-tests: outputs and reports kept in $work"
echo "gpu-tests: $npass passed, $nfail failed, $nskip skipped"
if [ "$nfail" -gt 0 ]; then exit 1; fi
if [ "$npass" -eq 0 ]; then exit 77; fi
exit 0
