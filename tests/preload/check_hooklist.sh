#!/bin/sh
# hooks.def against the toolkit's cuda.h ($CUDA_DIR/include/cuda.h): every
# variant of every hooked family is hooked, every hooked name exists.  And
# the check itself catches a missing variant (hooks.def without
# cuMemAllocAsync_ptsz must fail).
. "${top_srcdir:-.}/tests/preload/lib.sh"

cuda_h=${CUDA_DIR:-/usr/local/cuda}/include/cuda.h
[ -f "$cuda_h" ] || { echo "SKIP: $cuda_h not found"; exit 77; }
def=$top_srcdir/shim/hooks.def
if "$PY" "$top_srcdir/tests/preload/hooklist.py" "$cuda_h" "$def"; then
	pass "hooks.def agrees with cuda.h"
else
	fail "hooks.def and cuda.h"
fi
grep -v 'HOOK(cuMemAllocAsync_ptsz' "$def" >"$WORK/broken.def"
if "$PY" "$top_srcdir/tests/preload/hooklist.py" "$cuda_h" "$WORK/broken.def" >"$WORK/broken.out"; then
	fail "a missing variant went unnoticed"
else
	grep -q 'cuMemAllocAsync_ptsz is missing' "$WORK/broken.out" && pass "a missing variant is caught" || fail "wrong complaint"
fi
sed 's/HOOK(cuMemRelease,/HOOK(cucuMemRelease,/' "$def" >"$WORK/typo.def"
"$PY" "$top_srcdir/tests/preload/hooklist.py" "$cuda_h" "$WORK/typo.def" >"$WORK/typo.out" &&
	fail "a typo went unnoticed" || pass "a misspelt name is caught"
finish
