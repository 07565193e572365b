#!/bin/bash
# see_through.sh BUILDDIR -- cuwarden-audit --see-through on a real GPU
# (doc/audit.md, "Seeing through the caches"), in one run of about two
# minutes and well under 1 GiB of GPU memory:
#
# 1. Leaks behind the caches.  For each of torch, cupy and jax that
#    imports (with a GPU), tests/gpu/see_through_leak.py keeps one array of
#    49380 bytes alive per step (40 steps) and ends with os._exit.  Run
#    under the tool twice: plain (the cache hides the arrays: INFO only)
#    and with --see-through, where the 40 arrays must be one leak group of
#    40 allocations (PASS/FAIL; the line says the group's owner, whether
#    its stack names see_through_leak.py, and its first frames).  Then
#    torch again as "torchnocache", with PYTORCH_CUDA_ALLOC_CONF set (to
#    nothing) in the environment: see-through keeps it, so PyTorch's
#    native allocator stays and PYTORCH_NO_CUDA_MEMORY_CACHING=1 (the
#    fallback) turns its cache off.
# 2. Speed.  bench/train_loop.py (a small convolutional net, fresh tensors
#    every step), STEPS steps after 50 of warm-up, six ways: plain
#    PyTorch; --see-through (the cudaMallocAsync backend, pool mode);
#    --see-through --mode audit; the cudaMallocAsync backend without the
#    shim; --see-through with PYTORCH_CUDA_ALLOC_CONF kept (the fallback:
#    no cache, pool mode); PYTORCH_NO_CUDA_MEMORY_CACHING=1 without the
#    shim.  Prints steps/s side by side (the median window of 100 steps,
#    the best in brackets) and PASS when --see-through is within 1.3x of
#    plain.
#
# Environment: CUWARDEN_AUDIT (the tool; default BUILDDIR/tools/
# cuwarden-audit, which finds the shim at BUILDDIR/preload/.libs and the
# CuPy hook at BUILDDIR/preload/python), PYTHON (python3), CW_GPU_WORK
# (work directory, kept), CW_SEE_STEPS (1000), CW_SEE_ONLY (a regular
# expression over torch, cupy, jax, torchnocache, speed).  Exit 0 when every check
# passed, 1 when one failed, 77 with no GPU, 99 when the tool is missing.
set -u
b=$(cd "${1:?usage: see_through.sh BUILDDIR}" && pwd) || exit 99
src=$(cd "$(dirname "$0")/../.." && pwd)
AUDIT=${CUWARDEN_AUDIT:-$b/tools/cuwarden-audit}
PY=${PYTHON:-python3}
W=${CW_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cw-see.XXXXXX")}
STEPS=${CW_SEE_STEPS:-1000}
ONLY=${CW_SEE_ONLY:-.}
LEAK=$src/tests/gpu/see_through_leak.py
LOOP=$src/bench/train_loop.py
mkdir -p "$W"
pass=0 failed=0 skipped=0
PRE=(env)

[ -x "$AUDIT" ] || { echo "see_through: no tool at $AUDIT"; exit 99; }
if ! nvidia-smi -L >/dev/null 2>&1 && ! [ -e /dev/nvidia0 ]; then
	echo "SKIP: no GPU"
	exit 77
fi
[ -f "$b/preload/python/sitecustomize.py" ] ||
	echo "WARNING: no $b/preload/python/sitecustomize.py: CuPy's pools stay on (copy it with the shim)"
echo "work directory: $W"

ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
skip() { echo "SKIP: $*"; skipped=$((skipped + 1)); }

# audit NAME ARGS...: the tool on the leak program, its outputs in $W.
audit() {
	local name=$1
	shift
	timeout 300 "${PRE[@]}" "$AUDIT" --error-exitcode 0 --json "$W/$name.json" "$@" \
	    >"$W/$name.out" 2>"$W/$name.err"
	echo "  ($name: exit $?, $(grep -h '^== LEAK SUMMARY' "$W/$name.err"))"
}

probe() {
	case $1 in
	torch) "$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' ;;
	cupy) "$PY" -c 'import cupy; cupy.zeros(1)' ;;
	jax) XLA_PYTHON_CLIENT_PREALLOCATE=false "$PY" -c 'import jax; jax.devices("gpu")' ;;
	esac >/dev/null 2>&1
}

# torchnocache: torch with PYTORCH_CUDA_ALLOC_CONF kept (empty): the
# fallback, PYTORCH_NO_CUDA_MEMORY_CACHING=1.
for fw in torch cupy jax torchnocache; do
	echo "$fw" | grep -qE "$ONLY" || continue
	prog=$fw PRE=(env)
	[ "$fw" = torchnocache ] &&
		prog=torch PRE=(env PYTORCH_CUDA_ALLOC_CONF=)
	if ! probe "$prog"; then
		skip "$fw: not importable with a GPU by $PY"
		continue
	fi
	echo "== $fw: a kept array per step"
	audit "$fw.plain" -- "$PY" "$LEAK" "$prog"
	echo "INFO: $fw plain (the cache hides the arrays): $("$PY" "$LEAK" --check "$prog" "$W/$fw.plain.json")"
	audit "$fw.see" --see-through -- "$PY" "$LEAK" "$prog"
	grep -h '^cuwarden-audit: see-through:' "$W/$fw.see.err" | sed 's/^/  /'
	if line=$("$PY" "$LEAK" --check "$prog" "$W/$fw.see.json"); then
		ok "$fw --see-through: $line"
	else
		bad "$fw --see-through: $line"
		sed 's/^/    | /' "$W/$fw.see.err" | head -30
	fi
done

# speed NAME CMD...: one run of the training loop; its median and best
# ms/step in $W/NAME.{out,err}, steps/s printed.
declare -A MED BEST
speed() {
	local name=$1 line
	shift
	timeout 300 "$@" "$LOOP" "$STEPS" 50 >"$W/$name.out" 2>"$W/$name.err"
	line=$(grep -h 'train-loop:' "$W/$name.out" "$W/$name.err" | tail -1)
	BEST[$name]=$(echo "$line" | sed -n 's/.*best \([0-9.]*\),.*/\1/p')
	MED[$name]=$(echo "$line" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
}

if echo speed | grep -qE "$ONLY" && probe torch; then
	echo "== speed: bench/train_loop.py, $STEPS steps after 50 of warm-up"
	speed plain "$PY"
	speed see "$AUDIT" --error-exitcode 0 --see-through -- "$PY"
	speed seeaudit "$AUDIT" --error-exitcode 0 --see-through --mode audit -- "$PY"
	speed async env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$PY"
	speed seenocache env PYTORCH_CUDA_ALLOC_CONF= "$AUDIT" --error-exitcode 0 --see-through -- "$PY"
	speed nocache env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$PY"
	printf '  %-52s %14s %8s\n' "run" "steps/s (best)" "x plain"
	for k in plain see seeaudit async seenocache nocache; do
		case $k in
		plain) what="plain PyTorch (caching allocator)" ;;
		see) what="--see-through (cudaMallocAsync backend, pool mode)" ;;
		seeaudit) what="--see-through --mode audit (no pool)" ;;
		async) what="backend:cudaMallocAsync, no shim" ;;
		seenocache) what="--see-through, PYTORCH_CUDA_ALLOC_CONF kept: no cache" ;;
		nocache) what="PYTORCH_NO_CUDA_MEMORY_CACHING=1, no shim" ;;
		esac
		if [ -z "${MED[$k]}" ]; then
			printf '  %-52s %14s\n' "$what" "no result ($W/$k.err)"
			continue
		fi
		awk -v w="$what" -v m="${MED[$k]}" -v b="${BEST[$k]}" \
		    -v p="${MED[plain]:-0}" 'BEGIN {
			printf "  %-52s %7.1f (%.1f) %7.2fx\n", w, 1000 / m,
			    1000 / b, (p > 0 ? m / p : 0) }'
	done
	if [ -z "${MED[plain]}" ] || [ -z "${MED[see]}" ]; then
		bad "speed: a run gave no result (see $W/plain.err, $W/see.err)"
	elif awk -v s="${MED[see]}" -v p="${MED[plain]}" 'BEGIN { exit !(s <= 1.3 * p) }'; then
		ok "speed: --see-through within 1.3x of plain ($(awk -v s="${MED[see]}" -v p="${MED[plain]}" 'BEGIN { printf "%.2fx", s / p }'))"
	else
		bad "speed: --see-through is $(awk -v s="${MED[see]}" -v p="${MED[plain]}" 'BEGIN { printf "%.2fx", s / p }') plain (goal 1.3x)"
	fi
elif echo speed | grep -qE "$ONLY"; then
	skip "speed: no torch with a GPU"
fi

echo "see_through: $pass passed, $failed failed, $skipped skipped (work directory $W)"
[ "$failed" = 0 ]
