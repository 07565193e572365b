#!/bin/sh
# A free the driver refuses for another argument than the pointer (a
# destroyed or garbage stream, a reservation's wrong size, a part of a
# mapping) leaves the allocation the driver's: the shim records a
# failed_free with the driver's code, keeps the record live (reported as a
# leak if never freed) and never calls it a double free (issue: the
# defects found by review, item 5).  Real double frees of the same
# families still are.
. "${top_srcdir:-.}/tests/preload/lib.sh"

plain plain "$TP/tp_refused"
expect_rc 0 "tp_refused without the shim"
CUWARDEN_REPORT=$WORK/r.json run r "$TP/tp_refused"
expect_rc 0 "tp_refused under the shim"
cmp -s "$WORK/plain.out" "$WORK/r.out" && pass "the driver's answers unchanged" ||
	fail "answers differ: $(diff "$WORK/plain.out" "$WORK/r.out")"
check "$WORK/r.json" \
	'leak(kind="async")["bytes"] == 1 << 20' \
	'leak(kind="device")["bytes"] == 1 << 20' \
	'leak(kind="va")["bytes"] == 4 << 20' \
	'leak(kind="va")["category"] == "address_range"' \
	'summ["leaked_bytes"] == 2 << 20 and summ["address_range_bytes"] == 4 << 20' \
	'len(r["leaks"]) == 3' \
	'len(viols(type="failed_free", api="cuMemFreeAsync")) == 3' \
	'viols(type="failed_free", api="cuMemFreeAsync")[0]["cuda_error"] == "CUDA_ERROR_INVALID_HANDLE"' \
	'len(viols(type="failed_free", api="cuMemAddressFree")) == 1' \
	'len(viols(type="failed_free", api="cuMemUnmap")) == 1' \
	'len(viols(type="double_free")) == 3' \
	'len(viols(type="double_free", api="cuMemUnmap")) == 1' \
	'len(viols(type="double_free", api="cuMemAddressFree")) == 1' \
	'summ["violations"] == 8'

# The violation lines printed as they happen are capped (100 per type,
# valgrind's error limit); the report counts and keeps every one.
CUWARDEN_REPORT=$WORK/inv.json run inv "$TP/tp_refused" invalid 250
expect_rc 0 "250 invalid frees"
n=$(grep -c '^cuwarden: invalid_free: cuMemFree_v2' "$WORK/inv.err")
[ "$n" -eq 100 ] && pass "100 invalid_free lines printed" || fail "$n invalid_free lines printed, want 100"
grep -q 'invalid_free: 100 shown; further ones are not printed' "$WORK/inv.err" &&
	grep -q '150 violations were not printed' "$WORK/inv.err" &&
	pass "the lines not printed are counted" || fail "no line about the lines not printed: $(tail -3 "$WORK/inv.err")"
check "$WORK/inv.json" 'summ["violations"] == 250' 'len(viols(type="invalid_free")) == 250'
finish
