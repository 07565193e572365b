#!/bin/sh
# The fault matrix of the library: tests/faults/fm_lib (linked to
# libcuwarden, on the simulated driver) runs once to learn which driver
# entry points it reaches (FAKECUDA_CALL_LOG), then once per entry point
# and spec (tests/faults/faults_lib.sh: the first call, the second, every
# call; OUT_OF_MEMORY too for allocations) with that call failed
# (FAKECUDA_FAIL_CALL).  Each case must end normally within FM_LIMIT
# seconds with fm_lib's own checks passed (documented errors only, data
# intact where every call said OK, nothing live after freeing, every
# driver allocation still live held by a pool or in the failed-free
# ledger) and its final report a valid document with nothing leaked.
# Twice: with the pools (the default) and without (CUWARDEN_POOL=0); then,
# with the pools, on the simulated driver of CUDA 12.1
# (tests/fakecuda/v12010: no cuMemAdvise_v2, no cuMemPrefetchAsync_v2),
# for the entry points only that driver makes the library reach: the
# unversioned cuMemAdvise and cuMemPrefetchAsync, which must be reached.
#
# FM_PAIRS=core or all: two entry points failed at once instead of one
# (tests/faults/check_faults_lib_pairs.sh; make check-faults-pairs runs all).
. "${top_srcdir:?run through make check}/tests/faults/faults_lib.sh"

[ -x "$FM/fm_lib" ] || { echo "ERROR: $FM/fm_lib not built"; exit 99; }
# In a sanitizer build fm_lib links the sanitized libcuwarden.so before the
# ASan runtime: the runtime is preloaded so that it comes first.
ASAN_FIRST=
[ -n "$SANITIZED" ] && ASAN_FIRST=$CW_ASAN_RUNTIME

# one_case INJECTION NAME...: fm_lib with that injection (pools: $pool,
# driver: $ldp); bad and the failure reported when it did not end as it
# must.
one_case() {
	rm -f "$WORK/r.json"
	LD_LIBRARY_PATH=$ldp LD_PRELOAD=$ASAN_FIRST CUWARDEN_POOL=$pool FAKECUDA_FAIL_CALL="$1" FM_REPORT=$WORK/r.json \
		timeout -s KILL "$FM_LIMIT" "$FM/fm_lib" >"$WORK/case.out" 2>&1
	_rc=$?
	_why=
	if [ $_rc -ne 0 ]; then
		_why=$(how $_rc)
	elif ! grep -q '^fm_lib: ok' "$WORK/case.out"; then
		_why="no ok line"
	elif ! valid_json "$WORK/r.json" -v "$(sed -n 's/^fm_lib: ok.* \(planted=[0-9]*\)$/\1/p' "$WORK/case.out")" \
		"summ['leaked_allocations'] == 0" \
		"summ['violations'] == V['planted'] + len(viols(type='failed_free'))"; then
		_why="final report"
	fi
	if [ -n "$_why" ]; then
		bad=$((bad + 1))
		fail "$mode: $1: $_why"
		grep -v '^fm_lib: cw_' "$WORK/case.out" | tail -8
	fi
}

modes="pools direct"
[ -z "$PAIRS" ] && modes="$modes driver-12.1"
for mode in $modes; do
	ldp=$LD_LIBRARY_PATH
	case $mode in
	pools) pool=1 ;;
	direct) pool=0 ;;
	driver-12.1)
		pool=1
		ldp=$top_builddir/tests/fakecuda/v12010${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		[ -f "$top_builddir/tests/fakecuda/v12010/libcuda.so.1" ] ||
			{ echo "ERROR: tests/fakecuda/v12010/libcuda.so.1 not built"; exit 99; } ;;
	esac
	rm -f "$WORK/calls"
	LD_LIBRARY_PATH=$ldp LD_PRELOAD=$ASAN_FIRST CUWARDEN_POOL=$pool FAKECUDA_CALL_LOG=$WORK/calls \
		timeout -s KILL "$FM_LIMIT" "$FM/fm_lib" >"$WORK/base.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^fm_lib: ok' "$WORK/base.out"; then
		fail "$mode: the workload without faults: $(how $rc)"
		tail -20 "$WORK/base.out"
		continue
	fi
	names=$(reached "$WORK/calls")
	if [ $mode = pools ]; then
		echo "$names" >"$WORK/names.pools"
	elif [ $mode = driver-12.1 ]; then
		# Only what the newer driver's run did not reach.
		names=$(echo "$names" | grep -vxF -f "$WORK/names.pools")
		for want in cuMemAdvise cuMemPrefetchAsync; do
			echo "$names" | grep -qxF "$want" ||
				fail "driver-12.1: $want not reached (reached: $(echo $names))"
		done
	fi
	matrix lib "library, $mode" "$names" one_case
done
finish
