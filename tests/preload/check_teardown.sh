#!/bin/sh
# Context teardown: cuCtxDestroy of a context of our own frees its
# device, managed and pinned records (not its stream-ordered or VMM
# memory); cuDevicePrimaryCtxReset frees the primary context's records;
# cuDevicePrimaryCtxRelease frees them only when it is the last release
# (the shim counts retains and releases per device), not before.  What
# teardown freed the program never freed: the report keeps each of them,
# with its stack, as a leak of category "teardown" (lib/teardown.h).
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/td.json
CUWARDEN_REPORT=$R run td "$TP/tp_driver" teardown
expect_rc 0 "teardown under the shim"
check "$R" -V "$WORK/td.out" \
	'cov["teardown_frees"] == 5' \
	'cov["frees"] == 1 and cov["untracked_frees"] == 0' \
	'leak(kind="async", api="cuMemAllocAsync")["bytes"] == 40960' \
	'leak(kind="vmm", api="cuMemCreate")["bytes"] == V["gran"]' \
	'leak(kind="device", api="cuMemAlloc_v2", category="leak")["bytes"] == 32768' \
	'leaks(kind="managed", category="leak") == [] and leaks(kind="pinned", category="leak") == []' \
	'len(leaks(category="leak")) == 3' \
	'summ["leaked_allocations"] == 3' \
	'summ["violations"] == 0' \
	'len(leaks(category="teardown")) == 5' \
	'sorted(e["size"] for e in leaks(category="teardown", kind="device")) == [4096, 8192, 24576]' \
	'leak(category="teardown", kind="managed")["bytes"] == 4096' \
	'leak(category="teardown", kind="pinned")["api"] == "cuMemHostAlloc"' \
	'all(len(e["stack"]) > 0 and frame0(e["stack"]).endswith("tp_driver") for e in leaks(category="teardown"))' \
	'summ["teardown_allocations"] == 5 and summ["teardown_bytes"] == 4096 * 3 + 8192 + 24576' \
	'summ["teardown_not_kept"] == 0'

T=$WORK/td.txt
CUWARDEN_REPORT=$T CUWARDEN_REPORT_FORMAT=text run tdt "$TP/tp_driver" teardown
expect_rc 0 "teardown under the shim, text report"
for l in '^24,576 bytes in 1 device allocation of 24,576 bytes freed only by context teardown' \
    '^FREED ONLY BY CONTEXT TEARDOWN: 45,056 bytes in 5 allocations' \
    '^ERROR SUMMARY: 8 errors (8 leaked allocations, 0 violations)$'; do
	grep -q "$l" "$T" && pass "text: $l" || { fail "text: no $l"; cat "$T"; }
done
finish
