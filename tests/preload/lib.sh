# tests/preload/lib.sh -- sourced by tests/preload/check_*.sh.
# Runs driver-API programs under the shim against the simulated driver
# (tests/fakecuda/libcuda.so.1, found through LD_LIBRARY_PATH, which the
# harness sets) and asserts their reports with check.py.
# Exit codes: 0 pass, 1 fail, 77 skip, 99 harness error.

set -u
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"

SHIM=$top_builddir/preload/.libs/libcuwarden_preload.so
TP=$top_builddir/tests/preload
PY=${PYTHON3:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
[ -f "$SHIM" ] || { echo "ERROR: $SHIM not built"; exit 99; }
case ${LD_LIBRARY_PATH-} in
*fakecuda*) ;;
*) LD_LIBRARY_PATH=$top_builddir/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
   export LD_LIBRARY_PATH ;;
esac

# Hermetic: nothing of the caller's cuwarden or fakecuda settings.
for v in $(env | sed -n 's/^\(CUWARDEN_[A-Za-z0-9_]*\)=.*/\1/p;s/^\(FAKECUDA_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset LD_PRELOAD

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cwpreload.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# check REPORT [check.py args]: asserts facts about a report.
check() {
	if "$PY" "$top_srcdir/tests/preload/check.py" "$@"; then
		pass "report $(basename "$1"): $(($# - 1)) facts"
	else
		fail "report $1"
	fi
}

# run NAME CMD...: runs CMD under the shim; stdout in $WORK/NAME.out,
# stderr in $WORK/NAME.err, status in $rc.
run() {
	_name=$1; shift
	LD_PRELOAD=$SHIM "$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err"
	rc=$?
}

# plain NAME CMD...: the same without the shim.
plain() {
	_name=$1; shift
	"$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err"
	rc=$?
}

# expect_rc WANT WHAT
expect_rc() {
	if [ "$rc" -eq "$1" ]; then pass "$2: exit status $rc"
	else fail "$2: exit status $rc, want $1"; cat "$WORK"/*.err 2>/dev/null | tail -20; fi
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)"
		exit 1
	fi
	exit 0
}
