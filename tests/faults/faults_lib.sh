# tests/faults/faults_lib.sh -- sourced by tests/faults/check_faults_*.sh.
# The harness of tests/preload (tests/preload/lib.sh: SHIM, PRELOAD, WORK,
# fail, pass, finish; the simulated driver through LD_LIBRARY_PATH; the
# caller's CUWARDEN_* and FAKECUDA_* settings dropped), plus what the fault
# matrix needs: which entry points a workload reaches, and which calls of
# each to fail.  Exit codes: 0 pass, 1 fail, 77 skip, 99 harness error.

. "${top_srcdir:?run through make check}/tests/preload/lib.sh"

FM=$top_builddir/tests/faults
command -v timeout >/dev/null 2>&1 || { echo "SKIP: timeout(1) not found"; exit 77; }
FM_LIMIT=${FM_LIMIT:-60}   # seconds one case may take before it is a hang
# FM_PAIRS: empty (one entry point failed at a time), core or all (pairs).
PAIRS=${FM_PAIRS:-}
case $PAIRS in
""|core|all) ;;
*) echo "ERROR: FM_PAIRS=$PAIRS: core or all"; exit 99 ;;
esac

# reached LOG: the entry points a run logged (FAKECUDA_CALL_LOG: every
# process appends each export's name at its first call), once each.
reached() {
	sort -u "$1"
}

# cases EXPORT: what to fail for EXPORT, as FAKECUDA_FAIL_CALL values: its
# first call (often on an initialisation path), its second (the first of
# a steady-state path), every call, and every call while cuGetErrorName and
# cuGetErrorString fail too (the error paths' messages); allocation entry
# points also fail every call with CUDA_ERROR_OUT_OF_MEMORY (the pools'
# stages).
cases() {
	echo "$1=1@CUDA_ERROR_UNKNOWN $1=2@CUDA_ERROR_UNKNOWN $1=1+@CUDA_ERROR_UNKNOWN"
	echo "$1=1+@CUDA_ERROR_UNKNOWN;cuGetErrorName=1+;cuGetErrorString=1+"
	case $1 in
	cuMemAlloc*|cuMemHostAlloc|cuMemCreate|cuMemHostRegister*|cuIpcOpenMemHandle*|cuMemPoolImportPointer)
		echo "$1=1+@CUDA_ERROR_OUT_OF_MEMORY" ;;
	esac
}

# pair_cases A B: two entry points failed together: every call of both
# (each one's error path meeting the other's), and the second call of
# each (both steady-state paths failing once, in either order of their
# calls).
pair_cases() {
	echo "$1=1+@CUDA_ERROR_UNKNOWN;$2=1+@CUDA_ERROR_UNKNOWN"
	echo "$1=2@CUDA_ERROR_UNKNOWN;$2=2@CUDA_ERROR_UNKNOWN"
}

# each_case NAMES FN: FN INJECTION NAME for each of NAMES and each of its
# cases; counts n (entry points) and cases.
each_case() {
	for _fc_a in $1; do
		n=$((n + 1))
		for _fc_inj in $(cases "$_fc_a"); do
			cases=$((cases + 1))
			$2 "$_fc_inj" "$_fc_a"
		done
	done
}

# each_pair NAMES FN: FN INJECTION A B for each pair of NAMES and each of
# its pair cases; counts n (entry points) and cases.
each_pair() {
	for _fc_a in $1; do
		n=$((n + 1))
		for _fc_b in $1; do
			[ "$_fc_a" \< "$_fc_b" ] || continue
			for _fc_inj in $(pair_cases "$_fc_a" "$_fc_b"); do
				cases=$((cases + 1))
				$2 "$_fc_inj" "$_fc_a" "$_fc_b"
			done
		done
	done
}

# core WHICH NAMES: those of NAMES on the paths where failures meet, the
# pairs make check runs (every pair: make check-faults-pairs).  lib: memory
# got and given back, barriers, events; shim: frees of every kind, VMM
# teardown, contexts (a record's context and its death).
core() {
	for _n in $2; do
		case $1:$_n in
		lib:cuMemAlloc_v2|lib:cuMemFree_v2|lib:cuMemHostAlloc|lib:cuMemFreeHost|\
		lib:cuMemAllocManaged|lib:cuCtxSynchronize|lib:cuEventCreate|lib:cuEventRecord|\
		lib:cuEventQuery|lib:cuEventDestroy_v2|\
		shim:cuMemFree_v2|shim:cuMemFreeHost|shim:cuMemFreeAsync|shim:cuMemUnmap|\
		shim:cuMemRelease|shim:cuMemAddressFree|shim:cuCtxGetCurrent|shim:cuCtxDestroy_v2|\
		shim:cuMemHostUnregister)
			echo "$_n" ;;
		esac
	done
}

# matrix WHICH LABEL NAMES CASE: runs CASE on every case of NAMES (one
# entry point failed at a time, or, with FM_PAIRS, pairs: the core ones of
# WHICH, lib or shim, or all) and prints the summary under LABEL.  CASE
# counts the cases that failed in bad.
matrix() {
	n=0 cases=0 bad=0
	_fc_names=$3
	if [ -z "$PAIRS" ]; then
		each_case "$_fc_names" "$4"
		echo "fault matrix ($2): $n entry points, $cases cases, $((cases - bad)) passed"
		[ "$bad" -eq 0 ] && pass "$2: every entry point failed in turn"
	else
		[ "$PAIRS" = core ] && _fc_names=$(core "$1" "$_fc_names")
		each_pair "$_fc_names" "$4"
		echo "fault matrix ($2, pairs: $PAIRS): $n entry points, $cases cases, $((cases - bad)) passed"
		[ "$bad" -eq 0 ] && pass "$2: every pair of entry points failed together"
	fi
	echo "  entry points: $(echo $_fc_names)"
}

# partial INJECTION: whether it fails only some calls (no "+").
partial() {
	case $1 in *+*) return 1 ;; *) return 0 ;; esac
}

# how RC: "exit N", "hang", or "signal N" for a status.
how() {
	case $1 in
	124|137) echo "hang (no end within $FM_LIMIT s)" ;;
	*) if [ "$1" -gt 128 ]; then echo "signal $(($1 - 128))"; else echo "exit $1"; fi ;;
	esac
}

# valid_json FILE [EXPR...]: FILE parses as a report and every EXPR holds
# (tests/preload/check.py), quietly; prints the reason when not.
valid_json() {
	_f=$1; shift
	"$PY" "$top_srcdir/tests/preload/check.py" "$_f" "$@" >"$WORK/check.out" 2>&1 ||
		{ head -20 "$WORK/check.out"; return 1; }
}
