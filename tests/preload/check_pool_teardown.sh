#!/bin/sh
# Pool mode and primary context teardown: cuDevicePrimaryCtxReset frees
# every allocation of the primary context, the pools' segments included.
# The shim must make the pools forget them (pool_forget_device): the
# allocations after the reset come from a new segment (a second driver
# allocation), never from the dead one.  The library holds a retain of its
# own, so the program's last release does not destroy the context in pool
# mode: what it allocated after the reset is still live (leaks).
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/ptd.json
CUWARDEN_MODE=pool CUWARDEN_REPORT=$R run ptd "$TP/tp_driver" teardown
expect_rc 0 "teardown in pool mode"
check "$R" -V "$WORK/ptd.out" \
	'r["mode"] == "pool"' \
	'r["stats"]["pools"]["device"]["driver_allocs"] == 2' \
	'r["stats"]["pools"]["device"]["segments"]["total"] == 2' \
	'r["stats"]["pools"]["device"]["segments"]["current"] == 1' \
	'r["stats"]["pools"]["device"]["allocated"]["current"] == 24576 + 32768' \
	'leak(kind="device", api="cuMemAlloc_v2", size=32768)["bytes"] == 32768' \
	'summ["violations"] == 0'
finish
