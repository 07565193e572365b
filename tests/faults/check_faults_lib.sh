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
# Twice: with the pools (the default) and without (CUWARDEN_POOL=0).
. "${top_srcdir:?run through make check}/tests/faults/faults_lib.sh"

[ -x "$FM/fm_lib" ] || { echo "ERROR: $FM/fm_lib not built"; exit 99; }
# In a sanitizer build fm_lib links the sanitized libcuwarden.so before the
# ASan runtime: the runtime is preloaded so that it comes first.
ASAN_FIRST=
[ -n "$SANITIZED" ] && ASAN_FIRST=$CW_ASAN_RUNTIME

for mode in pools direct; do
	case $mode in
	pools) pool=1 ;;
	direct) pool=0 ;;
	esac
	rm -f "$WORK/calls"
	LD_PRELOAD=$ASAN_FIRST CUWARDEN_POOL=$pool FAKECUDA_CALL_LOG=$WORK/calls timeout -s KILL "$FM_LIMIT" \
		"$FM/fm_lib" >"$WORK/base.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^fm_lib: ok' "$WORK/base.out"; then
		fail "$mode: the workload without faults: $(how $rc)"
		tail -20 "$WORK/base.out"
		continue
	fi
	names=$(reached "$WORK/calls")
	n=0 cases=0 bad=0
	for name in $names; do
		n=$((n + 1))
		for inj in $(cases "$name"); do
			cases=$((cases + 1))
			rm -f "$WORK/r.json"
			LD_PRELOAD=$ASAN_FIRST CUWARDEN_POOL=$pool FAKECUDA_FAIL_CALL="$inj" FM_REPORT=$WORK/r.json \
				timeout -s KILL "$FM_LIMIT" "$FM/fm_lib" >"$WORK/case.out" 2>&1
			rc=$?
			why=
			if [ $rc -ne 0 ]; then
				why=$(how $rc)
			elif ! grep -q '^fm_lib: ok' "$WORK/case.out"; then
				why="no ok line"
			elif ! valid_json "$WORK/r.json" -v "$(sed -n 's/^fm_lib: ok.* \(planted=[0-9]*\)$/\1/p' "$WORK/case.out")" \
				"summ['leaked_allocations'] == 0" \
				"summ['violations'] == V['planted'] + len(viols(type='failed_free'))"; then
				why="final report"
			fi
			if [ -n "$why" ]; then
				bad=$((bad + 1))
				fail "$mode: $inj: $why"
				grep -v '^fm_lib: cw_' "$WORK/case.out" | tail -8
			fi
		done
	done
	echo "fault matrix (library, $mode): $n entry points, $cases cases, $((cases - bad)) passed"
	[ "$bad" -eq 0 ] && pass "library, $mode: every entry point failed in turn"
	echo "  entry points: $(echo $names)"
done
finish
