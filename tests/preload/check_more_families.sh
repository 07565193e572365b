#!/bin/sh
# The hooked entry points tp_driver does not reach, run by tp_more: 3D and
# mipmapped arrays, pointers imported from an IPC-capable pool, VMM handles
# imported from a POSIX file descriptor.  One leak of each from a known call
# site, one matched pair each, and the mistakes (an unknown handle, double
# frees); the report says what the shim (shim/vmm.c) records: an array's size is the
# product of its extents, element size and channels (level 0 for a mipmapped
# array), an imported pool pointer is stream-ordered memory of the size the
# driver reports, an imported VMM handle has no size or device.  Output and
# exit status are the same with and without the shim.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/more.json
CUWARDEN_REPORT=$R run more "$TP/tp_more"
expect_rc 0 "tp_more under the shim"
plain moreplain "$TP/tp_more"
expect_rc 0 "tp_more without the shim"
# The shim's own lines about the violations below are its only output on
# stderr.
if grep -v '^cuwarden: \(invalid_free\|double_free\): ' "$WORK/more.err" | grep -q .; then
	fail "unexpected stderr"; cat "$WORK/more.err"
fi
[ -s "$WORK/moreplain.err" ] && { fail "stderr not empty without the shim"; cat "$WORK/moreplain.err"; }
# The same answers (the addresses differ: the shim allocates too).
if [ "$(grep -c . "$WORK/more.out")" = "$(grep -c . "$WORK/moreplain.out")" ] &&
   grep -qx 'errors=0' "$WORK/more.out"; then
	pass "same output shape with and without the shim"
else
	fail "output differs with the shim"; diff "$WORK/moreplain.out" "$WORK/more.out"
fi

check "$R" -V "$WORK/more.out" \
	'r["mode"] == "audit" and r["exit"]["how"] == "exit"' \
	'leak(kind="array", api="cuArray3DCreate_v2")["size"] == 8 * 8 * 4 * 4 * 2' \
	'leak(kind="array", api="cuArray3DCreate_v2")["count"] == 1' \
	'leak(kind="array", api="cuArray3DCreate_v2")["device"] == 0' \
	'leak(kind="array", api="cuArray3DCreate_v2")["addresses"] == [V["a3d"]]' \
	'leak(kind="array", api="cuArray3DCreate_v2")["owner"].endswith("/tp_more")' \
	'frame0(leak(api="cuArray3DCreate_v2")["stack"]).endswith("/tp_more")' \
	'leak(kind="array", api="cuMipmappedArrayCreate")["size"] == 32 * 32 * 4' \
	'leak(kind="array", api="cuMipmappedArrayCreate")["addresses"] == [V["mip"]]' \
	'leak(kind="array", api="cuMipmappedArrayCreate")["device"] == 0' \
	'viol(type="invalid_free", api="cuArrayDestroy", address="0xdead0")["cuda_error"] == "CUDA_ERROR_INVALID_HANDLE"' \
	'viol(type="invalid_free", api="cuArrayDestroy", address="0xdead0")["alloc_stack"] == []' \
	'viol(type="invalid_free", api="cuMipmappedArrayDestroy", address="0x0")["cuda_error"] == "CUDA_ERROR_INVALID_HANDLE"' \
	'viol(type="double_free", api="cuMipmappedArrayDestroy")["address"] == V["mip_double"]' \
	'viol(type="double_free", api="cuMipmappedArrayDestroy")["kind"] == "array"' \
	'viol(type="double_free", api="cuMipmappedArrayDestroy")["size"] == 4 * 4 * 4 * 4' \
	'viol(type="double_free", api="cuMipmappedArrayDestroy")["cuda_error"] == "CUDA_ERROR_INVALID_HANDLE"' \
	'leaks(address=V["a3d_freed"]) == [] and viols(address=V["a3d_freed"]) == []' \
	'leak(kind="async", api="cuMemPoolImportPointer")["size"] == 12288' \
	'leak(kind="async", api="cuMemPoolImportPointer")["addresses"] == [V["imp_leak"]]' \
	'leak(kind="async", api="cuMemPoolImportPointer")["device"] == 0' \
	'leak(kind="async", api="cuMemAllocFromPoolAsync")["size"] == 12288' \
	'viols(address=V["imp_async"]) == []' \
	'viol(type="double_free", api="cuMemFree_v2")["address"] == V["imp_double"]' \
	'viol(type="double_free", api="cuMemFree_v2")["kind"] == "async"' \
	'viol(type="double_free", api="cuMemFree_v2")["size"] == 8192' \
	'leak(kind="vmm", api="cuMemImportFromShareableHandle")["addresses"] == [V["vmm_leak"]]' \
	'leak(kind="vmm", api="cuMemImportFromShareableHandle")["size"] == 0' \
	'leak(kind="vmm", api="cuMemImportFromShareableHandle")["device"] == -1' \
	'viol(type="double_free", api="cuMemRelease")["address"] == V["vmm_freed"]' \
	'viol(type="double_free", api="cuMemRelease")["kind"] == "vmm"' \
	'leaks(kind="vmm", api="cuMemCreate") == [] and leaks(kind="mapping") == []' \
	'len(r["leaks"]) == 5' \
	'summ["leaked_allocations"] == 5' \
	'summ["leaked_bytes"] == sum(e["bytes"] for e in r["leaks"])' \
	'summ["violations"] == 5 and len(r["violations"]) == 5' \
	'cov["untracked_frees"] == 0' \
	'cov["teardown_frees"] == 0' \
	'cov["allocations"] == 19 and cov["frees"] == 19' \
	'cov["failed_calls"] == 8'

# cuArrayDestroy of a live mipmapped array: the driver refuses it and the
# program then frees it with cuMipmappedArrayDestroy.  The refused call is
# a mismatched free (not a double free), the record stays live, and the
# right destroy then frees it: no untracked free, no leak.
R=$WORK/cross.json
CUWARDEN_REPORT=$R run cross "$TP/tp_more" crosstype
expect_rc 0 "crosstype under the shim"
check "$R" -V "$WORK/cross.out" \
	'leaks(api="cuMipmappedArrayCreate") == []' \
	'len(r["violations"]) == 1' \
	'r["violations"][0]["type"] == "mismatched_free"' \
	'r["violations"][0]["api"] == "cuArrayDestroy"' \
	'cov["untracked_frees"] == 0 and cov["frees"] == 2'
finish
