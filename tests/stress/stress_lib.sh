# tests/stress/stress_lib.sh -- sourced by tests/stress/stress_*.sh.
# The harness of tests/preload (tests/preload/lib.sh: SHIM, WORK, fail,
# pass, finish; the simulated driver through LD_LIBRARY_PATH; the caller's
# CUWARDEN_* and FAKECUDA_* settings dropped), plus the stress programs
# and the sizes: small under `make check`, full with STRESS_FULL=1
# (`make stress`).  Exit codes: 0 pass, 1 fail, 77 skip, 99 harness error.

. "${top_srcdir:?run through make check}/tests/preload/lib.sh"

ST=$top_builddir/tests/stress
[ -x "$ST/stress_proc" ] || { echo "ERROR: $ST/stress_proc not built"; exit 99; }
command -v timeout >/dev/null 2>&1 || { echo "SKIP: timeout(1) not found"; exit 77; }

# size SMALL FULL: the first under make check, the second with STRESS_FULL.
size() {
	if [ -n "${STRESS_FULL-}" ]; then echo "$2"; else echo "$1"; fi
}

# Seconds since the epoch, with fractions where date(1) has them.
now() { date +%s.%N 2>/dev/null || date +%s; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
