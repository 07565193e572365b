#!/bin/sh
# 8 threads allocate and free concurrently (synchronous and stream-ordered)
# and leak one block each; a ninth thread has no context: the driver
# refuses it, the shim records nothing and does not crash
# (cuMemGetInfo(NULL, &total) included).  Counts are exact.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/th.json
CUWARDEN_REPORT=$R run th "$TP/tp_driver" threads
expect_rc 0 "threads under the shim"
check "$R" \
	'leak(api="cuMemAlloc_v2")["count"] == 8' \
	'leak(api="cuMemAlloc_v2")["bytes"] == 8 * 4096' \
	'len(set(leak(api="cuMemAlloc_v2")["addresses"])) == 8' \
	'len(r["leaks"]) == 1' \
	'cov["allocations"] == 8 * (2 * 500 + 1)' \
	'cov["frees"] == 8 * 2 * 500' \
	'cov["failed_calls"] == 1' \
	'cov["untracked_frees"] == 0' \
	'summ["violations"] == 0' \
	'r["stats"]["bytes"]["device"]["current"] == 8 * 4096' \
	'r["stats"]["bytes"]["async"]["current"] == 0'

# No lock of the shim's across a driver call: 200 allocations and frees
# complete while another thread waits inside cuMemFree (300 ms of queued
# simulated work).
R=$WORK/nolock.json
CUWARDEN_REPORT=$R run nolock "$TP/tp_driver" nolock
expect_rc 0 "a thread blocked in the driver"
grep -q '^ran_while_blocked=1' "$WORK/nolock.out" && pass "others ran while one waited in the driver" || fail "blocked behind a thread in the driver"
check "$R" 'cov["frees"] == 201 and r["leaks"] == []'

# 8 threads free the same pointer at once (50 rounds): one free each round,
# the rest double frees, never a failed free.
R=$WORK/race.json
CUWARDEN_REPORT=$R run race "$TP/tp_driver" race
expect_rc 0 "racing frees"
check "$R" \
	'len(viols(type="double_free")) == 50 * 7' \
	'viols(type="failed_free") == [] and r["failed_frees"]["count"] == 0' \
	'summ["violations"] == 350' \
	'r["leaks"] == [] and cov["frees"] == 400'
finish
