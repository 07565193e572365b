#!/bin/sh
# Every hooked allocation family, through the PLT (-lcuda): one leak per
# family from a known call site, one matched pair each; the report names
# every leak with its kind, size, count, device, api and owner, and counts
# every allocation and free.  Mappings are tracked (unmap is a free) but
# not reported as leaks: their handle is (kind vmm), and their
# reservation (kind va) is an address range (category "address_range"),
# never in the summary's leaked bytes or allocations.  The program's
# output and exit status are the same with and without the shim.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/families.json
CUWARDEN_REPORT=$R run fam "$TP/tp_driver" families
expect_rc 0 "families under the shim"
plain famplain "$TP/tp_driver" families
expect_rc 0 "families without the shim"
if cmp -s "$WORK/fam.out" "$WORK/famplain.out"; then
	pass "stdout unchanged by the shim"
else
	fail "stdout differs with the shim"; diff "$WORK/famplain.out" "$WORK/fam.out"
fi
[ -s "$WORK/fam.err" ] && { fail "stderr not empty"; cat "$WORK/fam.err"; }

MiB=1048576
check "$R" -V "$WORK/fam.out" \
	'r["format"] == "cuwarden-report" and r["version"] == 1' \
	'r["mode"] == "audit" and r["exit"]["how"] == "exit"' \
	'cov["hooks_active"] is True and cov["hooked_entry_points"] >= 40' \
	'leak(kind="device", api="cuMemAlloc_v2")["count"] == 3' \
	"leak(kind=\"device\", api=\"cuMemAlloc_v2\")[\"bytes\"] == 3 * $MiB" \
	"leak(kind=\"device\", api=\"cuMemAlloc_v2\")[\"size\"] == $MiB" \
	'leak(kind="device", api="cuMemAlloc_v2")["device"] == 0' \
	'len(leak(kind="device", api="cuMemAlloc_v2")["addresses"]) == 3' \
	'leak(kind="device", api="cuMemAlloc_v2")["owner"].endswith("/tp_driver")' \
	'frame0(leak(api="cuMemAlloc_v2")["stack"]).endswith("/tp_driver")' \
	'leak(api="cuMemAllocPitch_v2")["bytes"] == V["pitch_bytes"]' \
	'leak(kind="managed", api="cuMemAllocManaged")["bytes"] == 65536' \
	'leak(kind="pinned", api="cuMemHostAlloc")["bytes"] == 8192' \
	'leak(kind="pinned", api="cuMemHostAlloc")["device"] == -1' \
	'leak(kind="pinned", api="cuMemAllocHost_v2")["bytes"] == 4096' \
	'leak(kind="registered", api="cuMemHostRegister_v2")["bytes"] == 3 * 4096' \
	'leak(kind="async", api="cuMemAllocAsync")["bytes"] == 2048' \
	'leak(kind="async", api="cuMemAllocFromPoolAsync", size=6144)["count"] == 1' \
	'leak(kind="async", api="cuMemAllocFromPoolAsync", size=7168)["count"] == 1' \
	'leak(kind="vmm", api="cuMemCreate")["bytes"] == V["gran"]' \
	'leak(kind="vmm", api="cuMemCreate")["device"] == 0' \
	'leak(kind="va", api="cuMemAddressReserve")["bytes"] == 2 * V["gran"]' \
	'leak(kind="va")["category"] == "address_range"' \
	'len(leaks(category="address_range")) == 1 and len(leaks(category="leak")) == 11' \
	'summ["address_ranges"] == 1 and summ["address_range_bytes"] == 2 * V["gran"]' \
	'leaks(kind="mapping") == []' \
	'leak(kind="array", api="cuArrayCreate_v2")["bytes"] == 16 * 16 * 4' \
	'len(r["leaks"]) == 12' \
	'summ["leaked_allocations"] == 13' \
	'summ["leaked_bytes"] == sum(e["bytes"] for e in leaks(category="leak"))' \
	'summ["teardown_allocations"] == 0 and summ["teardown_bytes"] == 0' \
	'summ["violations"] == 0 and r["violations"] == []' \
	'cov["allocations"] == 26' \
	'cov["frees"] == 11' \
	'cov["untracked_frees"] == 0' \
	'cov["failed_calls"] == 1' \
	'cov["teardown_frees"] == 0' \
	'r["leaks"] == sorted(r["leaks"], key=lambda e: -e["bytes"])'

# Two devices: the device is the one current at allocation time (or the
# VMM property's), not the one current at the free.
R=$WORK/dev.json
FAKECUDA_DEVICES=2 CUWARDEN_REPORT=$R run dev "$TP/tp_driver" devices
expect_rc 0 "two devices"
check "$R" \
	'leak(size=1000)["device"] == 0' \
	'leak(size=1001)["device"] == 1' \
	'leaks(size=1002) == [] and summ["violations"] == 0' \
	'leak(kind="vmm")["device"] == 1'
finish
