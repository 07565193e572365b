#!/bin/sh
# Signals during allocation: "stress_proc signals 4 MS" (4 threads
# allocating and freeing through the driver under the shim, SIGUSR1 with
# a handler that does nothing CUDA every ~100 us, then SIGTERM at its
# default disposition, which the shim catches to write the report), RUNS
# times (3 runs of 1 s under make check, 10 of 5 s with STRESS_FULL=1).
# Each: no deadlock (60 s), exit status 143, the report written, how ==
# "signal", status 15.  Then the same with the SIGTERM sent to a busy
# worker thread ("signals-worker"): it lands inside a shim wrapper nearly
# every time, and the report is written when the wrapper returns.
. "${top_srcdir:?run through make check}/tests/stress/stress_lib.sh"

runs=${1:-$(size 3 10)}
ms=${2:-$(size 1000 5000)}
t0=$(now)
i=0
total=$((2 * runs))
while [ "$i" -lt "$total" ]; do
	mode=signals
	[ "$i" -ge "$runs" ] && mode=signals-worker
	R=$WORK/s$i.json
	# sh -c: the shell reports the death by SIGTERM as 143.
	CUWARDEN_REPORT=$R LD_PRELOAD=$SHIM timeout -s KILL 60 \
		sh -c '"$@"; exit $?' sh "$ST/stress_proc" "$mode" 4 "$ms" \
		>"$WORK/s$i.out" 2>"$WORK/s$i.err"
	rc=$?
	cat "$WORK/s$i.out"
	case $rc in
	143) pass "run $i ($mode): exit status 143" ;;
	124 | 137) fail "run $i: deadlock (killed after 60 s)" ;;
	*) fail "run $i: exit status $rc, want 143"; tail -5 "$WORK/s$i.err" ;;
	esac
	if [ -f "$R" ]; then
		check "$R" 'r["exit"]["how"] == "signal"' \
			'r["exit"]["status"] == 15' \
			'summ["violations"] == 0' \
			'summ["leaked_allocations"] == sum(l["count"] for l in r["leaks"])' \
			'summ["leaked_allocations"] <= 4 * 16' \
			'cov["allocations"] > 1000'
	else
		fail "run $i: no report"
	fi
	grep -q 'errors 0$' "$WORK/s$i.out" || fail "run $i: a driver call failed"
	i=$((i + 1))
done
echo "stress_signals: $total runs in $(elapsed "$t0") s"
finish
