#!/bin/sh
# The fault matrix of the shim: tests/faults/fm_shim (a driver-API program
# of every hooked family, with two planted leaks and a planted double free)
# runs without the shim and under it, in audit and in pool mode, to learn
# which entry points the program and the shim reach (FAKECUDA_CALL_LOG);
# then, for each entry point and spec (tests/faults/faults_lib.sh), with
# that call failed (FAKECUDA_FAIL_CALL), once plain and once per mode under
# the shim.  Each case must:
#   - end as the plain run does (exit 0), within FM_LIMIT seconds: no crash,
#     no hang, whatever the shim's own calls answer;
#   - audit mode: show the program exactly the answers the driver gives
#     without the shim (the transcripts are equal), except where the failed
#     call is one the shim also makes itself and only some calls fail (then
#     which call is the n-th differs);
#   - write a report (CUWARDEN_REPORT) whose leaks are exactly what the
#     program still holds and whose violations are exactly the planted
#     double free plus a failed_free for each free the driver refused
#     (tests/faults/fm_check.py): nothing lost, nothing invented.
#
# FM_PAIRS=core or all: two entry points failed at once instead of one
# (tests/faults/check_faults_shim_pairs.sh; make check-faults-pairs: all).
. "${top_srcdir:?run through make check}/tests/faults/faults_lib.sh"

[ -x "$FM/fm_shim" ] || { echo "ERROR: $FM/fm_shim not built"; exit 99; }
CHECK="$PY $top_srcdir/tests/faults/fm_check.py"

# shim MODE NAME [VAR=VALUE...]: fm_shim under the shim in MODE, output in
# $WORK/NAME.out, report in $WORK/NAME.json, status in $rc.
shim() {
	_mode=$1 _n=$2; shift 2
	rm -f "$WORK/$_n.json"
	env LD_PRELOAD="$PRELOAD" CUWARDEN_MODE=$_mode CUWARDEN_REPORT="$WORK/$_n.json" \
		CUWARDEN_REPORT_FORMAT=json "$@" \
		timeout -s KILL "$FM_LIMIT" "$FM/fm_shim" >"$WORK/$_n.out" 2>"$WORK/$_n.err"
	rc=$?
}

# The transcript: calls, data and what is held, not the counts.
transcript() {
	grep -E '^(call|data) ' "$1"
}

# Baselines: which entry points are reached, and how often the program's
# own are called with and without the shim.
rm -f "$WORK/calls"
FAKECUDA_CALL_LOG=$WORK/calls timeout -s KILL "$FM_LIMIT" "$FM/fm_shim" >"$WORK/base.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "fm_shim without faults, plain: $(how $rc)"; finish; }
for mode in audit pool; do
	shim $mode base.$mode FAKECUDA_CALL_LOG="$WORK/calls"
	if [ $rc -ne 0 ]; then
		fail "fm_shim without faults, $mode: $(how $rc)"
		tail -20 "$WORK/base.$mode.err"
	elif ! $CHECK "$WORK/base.$mode.json" "$WORK/base.$mode.out"; then
		fail "fm_shim without faults, $mode: the report"
	fi
done
transcript "$WORK/base.out" >"$WORK/base.tr"
transcript "$WORK/base.audit.out" >"$WORK/base.audit.tr"
if ! cmp -s "$WORK/base.tr" "$WORK/base.audit.tr"; then
	fail "without faults, the program sees other answers under the shim"
	diff "$WORK/base.tr" "$WORK/base.audit.tr" | head -10
fi
[ "$failures" -eq 0 ] || finish
grep -q '^live ' "$WORK/base.out" && grep -q '^expect double_free' "$WORK/base.out" ||
	{ echo "ERROR: the planted leaks and double free are missing"; exit 99; }

names=$(reached "$WORK/calls")
# Entry points the shim calls itself (more calls counted under it).
shared=$(sort "$WORK/base.out" >"$WORK/c.plain"; sort "$WORK/base.audit.out" |
	comm -13 "$WORK/c.plain" - | sed -n 's/^count \([^ ]*\) .*/\1/p')

# comparable NAME SPEC: whether the program must see the plain run's
# answers: always, unless the shim calls NAME itself and only some calls
# fail (then the n-th call may be the shim's, not the program's).
comparable() {
	case " $(echo $shared) " in
	*" $1 "*) partial "$2" && return 1 ;;
	esac
	return 0
}

# one_case INJECTION NAME...: fm_shim with that injection, plain and in
# each mode; the audit transcript is compared when every NAME is
# comparable.
one_case() {
	_inj=$1; shift
	FAKECUDA_FAIL_CALL=$_inj timeout -s KILL "$FM_LIMIT" "$FM/fm_shim" >"$WORK/p.out" 2>&1
	prc=$?
	case_bad=
	_cmp=1
	for _nm in "$@"; do
		comparable "$_nm" "$_inj" || _cmp=
	done
	for mode in audit pool; do
		shim $mode s.$mode FAKECUDA_FAIL_CALL="$_inj"
		why=
		if [ $rc -ne $prc ]; then
			why="$(how $rc), plain $(how $prc)"
		elif ! $CHECK "$WORK/s.$mode.json" "$WORK/s.$mode.out" >"$WORK/chk" 2>&1; then
			why="the report: $(head -5 "$WORK/chk")"
		elif [ $mode = audit ] && [ -n "$_cmp" ]; then
			transcript "$WORK/p.out" >"$WORK/p.tr"
			transcript "$WORK/s.$mode.out" >"$WORK/s.tr"
			cmp -s "$WORK/p.tr" "$WORK/s.tr" ||
				why="the program saw other answers: $(diff "$WORK/p.tr" "$WORK/s.tr" |
					grep '^[<>]' | head -4 | tr '\n' ' ')"
		fi
		if [ -n "$why" ]; then
			case_bad=1
			fail "$mode: $_inj: $why"
			tail -5 "$WORK/s.$mode.err"
		fi
	done
	[ -z "$case_bad" ] || bad=$((bad + 1))
}

matrix shim "shim, audit and pool mode" "$names" one_case
echo "  also called by the shim itself: $(echo $shared)"
finish
