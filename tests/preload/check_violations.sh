#!/bin/sh
# Every violation the shim can see, each classified AFTER the driver
# answered, with the driver's answer passed back unchanged (tp_driver
# asserts the CUresults): double_free (with the allocation and first-free
# stacks), interior_free, mismatched_free both ways, invalid_free,
# failed_free (+ the failed-free ledger, the record stays live), an
# untracked free (coverage only), VMM double release, array double
# destroy, and through annotations free_while_referenced,
# transfer_while_shared, refcount_underflow.  Then
# CUWARDEN_ON_VIOLATION=abort stops at the first one.
. "${top_srcdir:-.}/tests/preload/lib.sh"

lib=$top_builddir/tests/fakecuda/libcuda.so.1
addr() { ${NM:-nm} -D --defined-only "$lib" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
a=$(addr cuMemAlloc_v2); b=$(addr cuDeviceGet)
[ -n "$a" ] && [ -n "$b" ] || { echo "ERROR: nm found no symbols in $lib"; exit 99; }
delta=$((a - b))

R=$WORK/v.json
CUWARDEN_REPORT=$R run v "$TP/tp_driver" violations "$delta"
expect_rc 0 "violations under the shim"
plain vplain "$TP/tp_driver" violations "$delta"
expect_rc 0 "violations without the shim"
grep -q "^errors=0" "$WORK/vplain.out" && pass "same driver answers without the shim" || fail "without the shim"
grep -q 'cuwarden: double_free: cuMemFree_v2' "$WORK/v.err" && pass "logged" || fail "no log line"

check "$R" -V "$WORK/v.out" \
	'viol(type="double_free", api="cuMemFree_v2")["address"] == V["dbl"]' \
	'viol(type="double_free", api="cuMemFree_v2")["cuda_error"] == "CUDA_ERROR_INVALID_VALUE"' \
	'viol(type="double_free", api="cuMemFree_v2")["size"] == 4096' \
	'viol(type="double_free", api="cuMemFree_v2")["kind"] == "device"' \
	'len(viol(type="double_free", api="cuMemFree_v2")["stack"]) > 0' \
	'len(viol(type="double_free", api="cuMemFree_v2")["alloc_stack"]) > 0' \
	'len(viol(type="double_free", api="cuMemFree_v2")["free_stack"]) > 0' \
	'viol(type="double_free", api="cuMemFree_v2")["free_stack"] != viol(type="double_free", api="cuMemFree_v2")["stack"]' \
	'frame0(viol(type="double_free", api="cuMemFree_v2")["stack"]).endswith("/tp_driver")' \
	'viol(type="interior_free")["address"] == V["interior"]' \
	'viol(type="interior_free")["size"] == 8192' \
	'viol(type="mismatched_free", api="cuMemFreeHost")["address"] == V["mis_dev"]' \
	'viol(type="mismatched_free", api="cuMemFreeHost")["kind"] == "device"' \
	'viol(type="mismatched_free", api="cuMemFree_v2")["address"] == V["mis_host"]' \
	'viol(type="mismatched_free", api="cuMemFree_v2")["kind"] == "pinned"' \
	'viol(type="invalid_free")["address"] == "0xdead0000"' \
	'viol(type="invalid_free")["alloc_stack"] == []' \
	'viol(type="failed_free")["address"] == V["failed"]' \
	'viol(type="failed_free")["cuda_error"] == "CUDA_ERROR_ILLEGAL_ADDRESS"' \
	'r["failed_frees"]["count"] == 1 and r["failed_frees"]["addresses"] == [V["failed"]]' \
	'leak(api="cuMemAlloc_v2")["size"] == 20480' \
	'V["failed"] in leak(api="cuMemAlloc_v2")["addresses"]' \
	'cov["untracked_frees"] == 1' \
	'viol(type="free_while_referenced")["address"] == V["fwr"]' \
	'viol(type="transfer_while_shared")["address"] == V["tws"]' \
	'viol(type="refcount_underflow")["address"] == V["tws"]' \
	'viol(type="double_free", api="cuMemRelease")["address"] == V["vmm"]' \
	'viol(type="double_free", api="cuMemRelease")["kind"] == "vmm"' \
	'viol(type="double_free", api="cuArrayDestroy")["address"] == V["arr"]' \
	'viol(type="double_free", api="cuArrayDestroy")["size"] == 8 * 8 * 4' \
	'summ["violations"] == 11 and len(r["violations"]) == 11' \
	'summ["leaked_allocations"] == 1' \
	'[v["type"] for v in r["violations"]][:6] == ["double_free", "interior_free", "mismatched_free", "mismatched_free", "invalid_free", "failed_free"]'

# CUWARDEN_CHECK_BOUNDS=1: copies and sets past the end of a tracked
# allocation are out_of_bounds (the driver's answer unchanged); off, none.
R=$WORK/b.json
CUWARDEN_CHECK_BOUNDS=1 CUWARDEN_REPORT=$R run b "$TP/tp_driver" bounds
expect_rc 0 "bounds checked"
check "$R" -V "$WORK/b.out" \
	'len(viols(type="out_of_bounds")) == 4 and summ["violations"] == 4' \
	'viol(api="cuMemcpyHtoD_v2")["address"] == hexs(int(V["p"], 16) + 4000)' \
	'viol(api="cuMemcpyHtoD_v2")["size"] == 4096' \
	'viol(api="cuMemsetD32_v2")["address"] == hexs(int(V["p"], 16) + 4092)' \
	'viol(api="cuMemcpy")["address"] == V["p"]' \
	'viol(api="cuMemcpy")["size"] == 4096' \
	'viol(api="cuMemsetD16Async")["kind"] == "device"' \
	'len(viol(api="cuMemcpy")["alloc_stack"]) > 0' \
	'frame0(viol(api="cuMemcpy")["stack"]).endswith("/tp_driver")'
R=$WORK/b0.json
CUWARDEN_REPORT=$R run b0 "$TP/tp_driver" bounds
expect_rc 0 "bounds not checked"
check "$R" 'summ["violations"] == 0'

# abort at the first violation: the double free, after the driver answered
CUWARDEN_ON_VIOLATION=abort CUWARDEN_REPORT=$WORK/abort.json run ab "$TP/tp_driver" double
expect_rc 134 "CUWARDEN_ON_VIOLATION=abort"
grep -q 'after=1' "$WORK/ab.out" && fail "ran past the violation" || pass "stopped at the violation"
grep -q 'double_free' "$WORK/ab.err" && pass "abort logged the violation" || fail "abort: no log"
finish
