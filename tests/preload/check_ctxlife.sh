#!/bin/sh
# A primary context's end looks the same in pool mode as without the shim
# (issue 15, "context teardown in pool mode"): tp_ctxlife's transcripts are
# the driver's in audit and in pool mode, and the reports agree.  With the
# last release the driver destroys the context and its memory: nothing
# leaks (pool mode once kept it alive with the pools' own retain and
# reported the program's blocks as leaks); a reset of one device of two
# takes that device's memory only.  The program frees its device and
# pinned memory after the context died: the driver refuses both, and both
# modes record them as double frees (teardown freed them first).
. "${top_srcdir:-.}/tests/preload/lib.sh"

for n in 1 2; do
	three_modes release$n "$TP/tp_ctxlife" release $n
	for m in audit pool; do
		check "$WORK/release$n.$m.json" \
			"r['mode'] == '$m'" \
			'leaks(category="leak") == [] and cov["teardown_frees"] == 3 == summ["teardown_allocations"]' \
			'len(viols(type="double_free")) == 2' \
			'summ["violations"] == 2'
	done
done
check "$WORK/release1.pool.json" \
	'r["stats"]["pools"]["device"]["allocated"]["total"] >= 1048576 + 65536' \
	'r["stats"]["pools"]["device"]["segments"]["current"] == 0'

FAKECUDA_DEVICES=2; export FAKECUDA_DEVICES
three_modes twodev "$TP/tp_ctxlife" twodev
for m in audit pool; do
	check "$WORK/twodev.$m.json" \
		'len(leaks(category="leak")) == 1' \
		'leak(kind="device", size=1048576)["device"] == 0' \
		'cov["teardown_frees"] == 2 and summ["violations"] == 0'
done
finish
