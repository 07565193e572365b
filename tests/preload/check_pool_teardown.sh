#!/bin/sh
# Pool mode and primary context teardown: cuDevicePrimaryCtxReset frees
# every allocation of the primary context, the pools' segments included.
# The shim must make the pools forget them (pool_forget_device): the
# allocations after the reset come from a new segment (a second driver
# allocation), never from the dead one.  The program's last release must
# look as in audit mode: the pools hold a retain of their own, which they
# give back then, so the driver destroys the context with the program's
# blocks and the pools' segments; the next life gets a third segment, and
# only its allocation leaks (check_teardown.sh has the audit mode twin).
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/ptd.json
CUWARDEN_MODE=pool CUWARDEN_REPORT=$R run ptd "$TP/tp_driver" teardown
expect_rc 0 "teardown in pool mode"
check "$R" -V "$WORK/ptd.out" \
	'r["mode"] == "pool"' \
	'r["stats"]["pools"]["device"]["driver_allocs"] == 3' \
	'r["stats"]["pools"]["device"]["segments"]["total"] == 3' \
	'r["stats"]["pools"]["device"]["segments"]["current"] == 1' \
	'r["stats"]["pools"]["device"]["allocated"]["current"] == 32768' \
	'cov["teardown_frees"] == 5' \
	'leak(kind="device", api="cuMemAlloc_v2", size=32768)["bytes"] == 32768' \
	'leaks(kind="managed", category="leak") == [] and leaks(kind="pinned", category="leak") == []' \
	'len(leaks(category="leak")) == 3' \
	'len(leaks(category="teardown")) == summ["teardown_allocations"] > 0' \
	'summ["violations"] == 0'
finish
