#!/bin/sh
# The owner of an allocation is the module of the first stack frame
# outside CUDA's own libraries (and cuwarden), resolved when the
# allocation is made: a library dlopen'd, leaking, then dlclose'd before
# exit is still named.  CUWARDEN_OWNER_SKIP adds patterns to skip.
# ctypes' trampolines (libffi, _ctypes) are skipped too.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/own.json
CUWARDEN_REPORT=$R run own "$TP/tp_driver" owner "$TP/libtpowner.so"
expect_rc 0 "owner under the shim"
check "$R" \
	'leak(size=77777)["owner"].endswith("/libtpowner.so")' \
	'frame0(leak(size=77777)["stack"]).endswith("/libtpowner.so")' \
	'leak(size=55555)["owner"].endswith("/tp_driver")'

R=$WORK/own2.json
CUWARDEN_OWNER_SKIP='libnothing*:libtpowner.so' CUWARDEN_REPORT=$R run own2 "$TP/tp_driver" owner "$TP/libtpowner.so"
expect_rc 0 "owner with CUWARDEN_OWNER_SKIP"
check "$R" \
	'leak(size=77777)["owner"].endswith("/tp_driver")' \
	'frame0(leak(size=77777)["stack"]).endswith("/libtpowner.so")'

# More patterns than the table holds (23 besides the built-in ones): the
# first 23 apply, the rest are named in a warning, never dropped silently.
pats=
i=0
while [ $i -lt 22 ]; do pats="${pats}libnothing$i.so:"; i=$((i + 1)); done
R=$WORK/own4.json
CUWARDEN_OWNER_SKIP="${pats}libtpowner.so:libx1.so:libx2.so" CUWARDEN_REPORT=$R run own4 "$TP/tp_driver" owner "$TP/libtpowner.so"
expect_rc 0 "owner with 25 CUWARDEN_OWNER_SKIP patterns"
check "$R" 'leak(size=77777)["owner"].endswith("/tp_driver")'
grep -q 'CUWARDEN_OWNER_SKIP: 2 patterns past the first 23 ignored' "$WORK/own4.err" &&
	pass "patterns past the table's size: warned" || fail "no warning: $(cat "$WORK/own4.err")"

# A driver called through Python's ctypes: the frames of libffi and of the
# _ctypes module are trampolines, skipped; the interpreter is the owner.
R=$WORK/own3.json
CUWARDEN_REPORT=$R run own3 "$PY" -c '
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
ctx = ctypes.c_void_p()
p = ctypes.c_uint64()
assert cu.cuInit(0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(33333)) == 0
'
expect_rc 0 "a driver allocation through ctypes"
check "$R" \
	'"libffi" not in leak(size=33333)["owner"]' \
	'"_ctypes" not in leak(size=33333)["owner"]' \
	'"python" in leak(size=33333)["owner"].rsplit("/", 1)[-1]'
finish
