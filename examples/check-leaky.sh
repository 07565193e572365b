#!/bin/sh
# check-leaky.sh -- examples/leaky on the simulated driver: plain, then
# under the shim in audit and pool mode.  The program's output must not
# change and each report must hold exactly what it plants: 3 x 1 MiB device,
# 1 x 256 KiB pinned, one double free (tests/gpu/check_report.py, the same
# checker the GPU tests use).  Run by make check (LD_LIBRARY_PATH points at
# tests/fakecuda); exit 77 when the shim is not built.
set -u
b=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
s=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
prog=$b/examples/leaky
shim=$b/preload/.libs/libcuwarden_preload.so
check=$s/tests/gpu/check_report.py
expect="--exact-leaks device=3:3145728,pinned=1:262144 --violations double_free=1 --min-allocations 8 --max-untracked 0"

[ -x "$prog" ] || { echo "check-leaky: $prog not built"; exit 99; }
t=$(mktemp -d "${TMPDIR:-/tmp}/cw-leaky.XXXXXX") || exit 99
trap 'rm -rf "$t"' EXIT
"$prog" >"$t/plain" 2>"$t/plain.err" || {
	echo "check-leaky: FAIL: plain run failed"; cat "$t/plain.err"; exit 1; }
for line in "planted leak: 3 x 1048576 bytes of device memory" \
    "planted leak: 1 x 262144 bytes of pinned memory" \
    "second cuMemFree_v2 returned CUDA_ERROR_INVALID_VALUE"; do
	grep -q "$line" "$t/plain" ||
	    { echo "check-leaky: FAIL: output lacks '$line'"; exit 1; }
done
echo "check-leaky: plain run ok"
if [ ! -f "$shim" ]; then
	echo "check-leaky: the shim is not built ($shim): skipped"
	exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "check-leaky: no python3"; exit 77; }
rc=0
for mode in audit pool; do
	mkdir "$t/$mode"
	LD_PRELOAD=$shim CUWARDEN_MODE=$mode CUWARDEN_REPORT=$t/$mode/cw.%p.json \
	    "$prog" >"$t/$mode.out" 2>"$t/$mode.err"
	st=$?
	if [ "$st" -ne 0 ]; then
		echo "check-leaky: FAIL: $mode: exit $st"; cat "$t/$mode.err"; rc=1
	fi
	if ! cmp -s "$t/plain" "$t/$mode.out"; then
		echo "check-leaky: FAIL: $mode: output differs"
		diff "$t/plain" "$t/$mode.out"; rc=1
	fi
	# shellcheck disable=SC2086
	python3 "$check" --mode "$mode" $expect "$t/$mode" || rc=1
done
exit $rc
