# testlib.sh -- shared by the cuwarden-audit tests (sourced).
# Exit codes: 0 pass, 1 fail, 77 skip, 99 harness error.
set -u
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
AUDIT="$top_builddir/tools/cuwarden-audit"
DATA="$top_srcdir/tests/tools/data"
TT="$top_srcdir/tests/tools"
[ -x "$AUDIT" ] || { echo "harness: $AUDIT not built"; exit 99; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cw-tooltest.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run NAME CMD...: runs CMD, stdout to $WORK/NAME.out, stderr to
# $WORK/NAME.err, status in $rc.
run() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
}

# expect_rc NAME WANT
expect_rc() {
	if [ "$rc" != "$2" ]; then
		fail "$1: exit status $rc, expected $2"
		sed 's/^/    | /' "$WORK/$1.err" | head -40
	fi
}

# expect_in NAME FILE-SUFFIX TEXT: fixed string TEXT in $WORK/NAME.SUFFIX
expect_in() {
	grep -qF -- "$3" "$WORK/$1.$2" || {
		fail "$1: \"$3\" not in its $2"
		sed 's/^/    | /' "$WORK/$1.$2" | head -40
	}
}

# expect_block NAME FILE-SUFFIX TEXT: the lines of TEXT, one after the
# other, in $WORK/NAME.SUFFIX
expect_block() {
	tr '\n' '\r' <"$WORK/$1.$2" | grep -qF -- "$(printf '%s' "$3" | tr '\n' '\r')" || {
		fail "$1: these lines are not in its $2:"
		printf '%s\n' "$3" | sed 's/^/    > /'
		sed 's/^/    | /' "$WORK/$1.$2" | head -40
	}
}

expect_not_in() {
	! grep -qF -- "$3" "$WORK/$1.$2" || fail "$1: \"$3\" unexpectedly in its $2"
}

# line_of FILE MARKER: the line number of MARKER in FILE
line_of() {
	grep -n -- "$2" "$1" | head -1 | cut -d: -f1
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
