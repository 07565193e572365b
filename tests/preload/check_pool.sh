#!/bin/sh
# Pool mode (CUWARDEN_MODE=pool): device, managed and pinned allocations
# come from the pools (far fewer driver allocations), and every answer is
# the driver's: bad arguments (size 0, NULL out-pointer) are the driver's
# own CUDA_ERROR_INVALID_VALUE, double and interior frees of pooled
# memory CUDA_ERROR_INVALID_VALUE (and violations), out of memory
# CUDA_ERROR_OUT_OF_MEMORY; range and attribute queries answer the block,
# not the segment; freed cached bytes count as free in cuMemGetInfo; a
# sub-allocated block has no IPC handle (CUDA_ERROR_INVALID_VALUE).
# Memory asked for in a context of the program's own comes from the
# driver.  tp_driver asserts each answer; the report shows the leaks.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/pool.json
CUWARDEN_MODE=pool CUWARDEN_REPORT=$R run pool "$TP/tp_driver" pool
expect_rc 0 "pool mode answers"
check "$R" -V "$WORK/pool.out" \
	'r["mode"] == "pool"' \
	'V["driver_allocs"] < 10' \
	'V["own_ctx_driver_allocs"] == 1' \
	'leak(kind="device", api="cuMemAlloc_v2")["bytes"] == 7000' \
	'leak(kind="pinned", api="cuMemAllocHost_v2")["bytes"] == 5000' \
	'len(r["leaks"]) == 2' \
	'viol(type="double_free")["cuda_error"] == "CUDA_ERROR_INVALID_VALUE"' \
	'viol(type="interior_free")["address"] != V["q"]' \
	'summ["violations"] == 2' \
	'cov["allocations"] == 71 and cov["frees"] == 71' \
	'cov["failed_calls"] == 2'
grep -q 'no IPC handle of its own' "$WORK/pool.err" && pass "IPC refusal explained" || fail "no IPC warning"

# The same program in audit mode: the same answers, but for the IPC
# handle, which the driver gives for its own allocation.
CUWARDEN_REPORT=$WORK/audit.json run paudit "$TP/tp_driver" pool audit
expect_rc 0 "pool scenario in audit mode"
check "$WORK/audit.json" -V "$WORK/paudit.out" 'r["mode"] == "audit"' \
	'V["driver_allocs"] >= 67'
plain pplain "$TP/tp_driver" pool audit
expect_rc 0 "pool scenario without the shim"

# Out of memory: the driver's code, pooled or not.
FAKECUDA_MEM=256M CUWARDEN_MODE=pool CUWARDEN_REPORT=$WORK/oom.json run oom "$TP/tp_driver" oom
expect_rc 0 "pool: out of memory"
FAKECUDA_MEM=256M CUWARDEN_REPORT=$WORK/oom2.json run oom2 "$TP/tp_driver" oom
expect_rc 0 "audit: out of memory"
check "$WORK/oom.json" 'cov["failed_calls"] == 1' 'r["leaks"] == []'
finish
