#!/bin/sh
# Context teardown: cuCtxDestroy of a context of our own frees its
# device, managed and pinned records (not its stream-ordered or VMM
# memory); cuDevicePrimaryCtxReset frees the primary context's records;
# cuDevicePrimaryCtxRelease frees them only when it is the last release
# (the shim counts retains and releases per device), not before.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/td.json
CUWARDEN_REPORT=$R run td "$TP/tp_driver" teardown
expect_rc 0 "teardown under the shim"
check "$R" -V "$WORK/td.out" \
	'cov["teardown_frees"] == 5' \
	'cov["frees"] == 1 and cov["untracked_frees"] == 0' \
	'leak(kind="async", api="cuMemAllocAsync")["bytes"] == 40960' \
	'leak(kind="vmm", api="cuMemCreate")["bytes"] == V["gran"]' \
	'leak(kind="device", api="cuMemAlloc_v2")["bytes"] == 32768' \
	'leaks(kind="managed") == [] and leaks(kind="pinned") == []' \
	'len(r["leaks"]) == 3' \
	'summ["violations"] == 0'
finish
