#!/bin/sh
# Stream capture and graph memory (issue 15).  tp_graph runs plain, in
# audit mode and in pool mode; every transcript must be the driver's:
#  - memory: graph memory's lifecycle (tp_graph.c, A-J); the reports hold
#    exactly the two graph allocations left live (kind graph, with the
#    stack that made their node), one double free and one free of a node
#    never launched, and count the nodes, instantiations and launches;
#  - capture: calls during a capture in each mode from each thread: pool
#    mode refuses (and breaks the capture) exactly where the driver does,
#    and serves the rest;
#  - fence: a capture (global, thread-local, relaxed) while another thread
#    churns pooled blocks: the pools take no barrier during it (the capture
#    ends whole) and the barriers deferred are counted;
#  - attach: cuStreamAttachMemAsync of managed memory, pooled or not.
. "${top_srcdir:-.}/tests/preload/lib.sh"

three_modes memory "$TP/tp_graph" memory
A=$((3 * 1048576 + 4096)) B=$((1048576 + 8192))
for m in audit pool; do
	check "$WORK/memory.$m.json" \
		"len(leaks(kind='graph')) == 2" \
		"leak(kind='graph', size=$A)['bytes'] == $A" \
		"leak(kind='graph', size=$B)['bytes'] == $B" \
		"leak(kind='graph', size=$A)['api'] == 'cuGraphLaunch'" \
		'len(r["leaks"]) == 2' \
		'len(viols(type="double_free")) == 1' \
		'len(viols(type="invalid_free")) == 1 and summ["violations"] == 2' \
		'cov["untracked_frees"] == 0' \
		'cov["graphs"]["launches"] == 14' \
		'cov["graphs"]["alloc_nodes"] == 11' \
		'cov["graphs"]["made_live"] == 9' \
		'cov["teardown_frees"] == 0' \
		'cov["graphs"]["freed_by_graph"] == 1'
done

three_modes capture "$TP/tp_graph" capture
check "$WORK/capture.pool.json" \
	'r["stats"]["pools"]["device"]["allocated"]["total"] > 0' \
	'cov["captures"] == 13'

for mode in global thread_local relaxed; do
	three_modes fence-$mode "$TP/tp_graph" fence $mode
	grep -q 'the graph.s memsets ran  *yes' "$WORK/fence-$mode.plain.out" ||
		fail "fence $mode: the simulated driver did not run the graph"
	check "$WORK/fence-$mode.pool.json" \
		'r["stats"]["pools"]["device"]["allocated"]["total"] > 200 * 64 * 4096' \
		'cov["barriers_deferred"] > 0'
done

three_modes attach "$TP/tp_graph" attach
check "$WORK/attach.pool.json" \
	'r["stats"]["pools"]["managed"]["allocated"]["total"] > 0'
# Where the CPU may not touch managed memory while the GPU works, managed
# memory is not pooled: a stream attachment must then be the driver's.
FAKECUDA_NO_CONCURRENT_MANAGED=1; export FAKECUDA_NO_CONCURRENT_MANAGED
three_modes attach-nca "$TP/tp_graph" attach
check "$WORK/attach-nca.pool.json" \
	'r["stats"]["pools"]["managed"]["allocated"]["total"] == 0'
finish
