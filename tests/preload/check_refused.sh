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
	'len(r["leaks"]) == 3' \
	'len(viols(type="failed_free", api="cuMemFreeAsync")) == 3' \
	'viols(type="failed_free", api="cuMemFreeAsync")[0]["cuda_error"] == "CUDA_ERROR_INVALID_HANDLE"' \
	'len(viols(type="failed_free", api="cuMemAddressFree")) == 1' \
	'len(viols(type="failed_free", api="cuMemUnmap")) == 1' \
	'len(viols(type="double_free")) == 3' \
	'len(viols(type="double_free", api="cuMemUnmap")) == 1' \
	'len(viols(type="double_free", api="cuMemAddressFree")) == 1' \
	'summ["violations"] == 8'
finish
