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

# PRELOAD: what run() puts in LD_PRELOAD: the shim, or, in a build
# configured with --enable-sanitizers (the harness then passes the
# compiler's ASan runtime as CW_ASAN_RUNTIME, configure's ASAN_RUNTIME),
# the runtime and the shim built with ASan + UBSan
# (preload/libcuwarden_preload_san.so): the runtime must come first in the
# library order.  Every process run under it -- the test programs, python3,
# sh -- then runs with ASan's malloc and interceptors, and the shim's code
# with ASan's and UBSan's checks.
# ASan and LSan write their reports to $WORK/asan-log.PID (log_path);
# UBSan, next to ASan, writes to stderr whatever log_path says, so the
# output of every run is searched as well, and finish() searches every file
# left in $WORK.  A report fails the test whatever exit status the test
# expected.  SHIM stays the plain shim (what is installed).
PRELOAD=$SHIM
SANITIZED=
SAN_RE='runtime error: |==[0-9]+==(ERROR|WARNING): [A-Za-z]*Sanitizer'
_san_seen=
_san_n=0
if [ -n "${CW_ASAN_RUNTIME-}" ]; then
	SAN_SHIM=$top_builddir/preload/.libs/libcuwarden_preload_san.so
	[ -f "$CW_ASAN_RUNTIME" ] || { echo "ERROR: ASan runtime $CW_ASAN_RUNTIME not found"; exit 99; }
	[ -f "$SAN_SHIM" ] || { echo "ERROR: $SAN_SHIM not built"; exit 99; }
	SANITIZED=1
	PRELOAD="$CW_ASAN_RUNTIME $SAN_SHIM"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$WORK/asan-log"
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
	export ASAN_OPTIONS UBSAN_OPTIONS
fi

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
# stderr in $WORK/NAME.err, status in $rc.  Sanitized, a CMD from outside
# the build tree (python3, sh) runs without LeakSanitizer: such a host
# leaks by design at exit, and the leak check, run before the ELF
# destructors, would end it before the shim writes its report.  ASan and
# UBSan stay on there; the shim's own paths are leak-checked in the test
# programs of the build tree.
run() {
	_name=$1; shift
	_asan=${ASAN_OPTIONS-}
	if [ -n "$SANITIZED" ]; then
		case $1 in "$top_builddir"/*) ;; *) _asan="$_asan:detect_leaks=0" ;; esac
	fi
	ASAN_OPTIONS=$_asan LD_PRELOAD=$PRELOAD "$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err"
	rc=$?
	san_scan_run "$_name"
}

# plain NAME CMD...: the same without the shim.
plain() {
	_name=$1; shift
	"$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err"
	rc=$?
	san_scan_run "$_name"
}

# three_modes NAME CMD...: runs CMD plain, then under the shim in audit
# and in pool mode (reports $WORK/NAME.audit.json, $WORK/NAME.pool.json;
# transcripts $WORK/NAME.{plain,audit,pool}.out); each must exit 0 and
# print the plain run's transcript, line for line.
three_modes() {
	_tm=$1; shift
	plain "$_tm.plain" "$@"
	expect_rc 0 "$_tm without the shim"
	for _m in audit pool; do
		CUWARDEN_MODE=$_m CUWARDEN_REPORT=$WORK/$_tm.$_m.json \
			run "$_tm.$_m" "$@"
		expect_rc 0 "$_tm in $_m mode"
		if diff -u "$WORK/$_tm.plain.out" "$WORK/$_tm.$_m.out" \
		    >"$WORK/$_tm.$_m.diff"; then
			pass "$_tm in $_m mode: transcript identical to the driver's ($(wc -l <"$WORK/$_tm.plain.out") lines)"
		else
			fail "$_tm in $_m mode answers differently from the driver:"
			cat "$WORK/$_tm.$_m.diff"
		fi
	done
}

# expect_rc WANT WHAT
expect_rc() {
	if [ "$rc" -eq "$1" ]; then pass "$2: exit status $rc"
	else fail "$2: exit status $rc, want $1"; cat "$WORK"/*.err 2>/dev/null | tail -20; fi
}

# san_scan FILE...: sanitized, fails once for each file holding a
# sanitizer report (an asan-log.PID file always holds one; it goes once
# shown).
san_scan() {
	[ -n "$SANITIZED" ] || return 0
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		case " $_san_seen " in *" $_f "*) continue ;; esac
		case ${_f##*/} in
		asan-log.*)
			_san_n=$((_san_n + 1))
			fail "sanitizer report ${_f##*/}:"
			head -60 "$_f"
			rm -f "$_f" ;;
		*)
			grep -Eq "$SAN_RE" "$_f" || continue
			_san_n=$((_san_n + 1))
			fail "sanitizer report in ${_f##*/}:"
			grep -E -A40 "$SAN_RE" "$_f" | head -60
			_san_seen="$_san_seen $_f" ;;
		esac
	done
}

# san_scan_run NAME: the output of run/plain NAME, just written.
san_scan_run() {
	[ -n "$SANITIZED" ] || return 0
	_san_seen=$(echo " $_san_seen " | sed "s| $WORK/$1\.out | |; s| $WORK/$1\.err | |")
	san_scan "$WORK/$1.out" "$WORK/$1.err" "$WORK"/asan-log.*
}

finish() {
	if [ -n "$SANITIZED" ]; then
		san_scan $(find "$WORK" -type f)
		[ "$_san_n" -ne 0 ] || pass "no sanitizer report"
	fi
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)"
		exit 1
	fi
	exit 0
}
