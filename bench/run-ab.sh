#!/bin/sh
# run-ab.sh -- two builds side by side in one run, for a change that must
# not make anything slower: bench_pool and run-bench-shim.sh of build A,
# then of build B, ROUNDS times in turn, so that both meet the same machine
# (one build's runs differ by up to 2x on a shared GPU machine: the spread
# between rounds is part of the figure, doc/benchmarks.md).
#
#   bench/run-ab.sh A B [ROUNDS]     (default 3 rounds)
#
# A and B are build trees (or trees holding only bench/bench_pool,
# bench/bench_shim and preload/.libs/libcuwarden_preload.so).  Prints a
# line as each run ends, then every figure's rounds side by side (bench_pool:
# M pairs/s, best of 3; the shim: ns per pair in pool mode, ns added in
# audit mode, from run-bench-shim.sh).  Meant for the GPU machine;
# LD_LIBRARY_PATH=<a build>/tests/fakecuda runs it against the simulated
# driver (figures of our code alone).  AB_FIGS=FILE keeps the figures
# there as they come, one "round build figure value" line each (a run
# stopped by a time limit keeps what it measured).
set -u
[ $# -ge 2 ] || { echo "usage: run-ab.sh A B [ROUNDS]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
rounds=${3:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cwab.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
figs=${AB_FIGS:-$tmp/figs}

one() { # label tree round
	lab=$1 t=$2 r=$3
	"$t/bench/bench_pool" >"$tmp/pool" 2>&1 || echo "$lab: bench_pool failed ($?)" >&2
	# "threads (best of 3 runs): ... 1 thread X M/s, 16 threads Y M/s"
	sed -n 's/.*pairs per second: 1 thread \([0-9.]*\) M\/s, \([0-9]*\) threads \([0-9.]*\) M\/s.*/\1 \2 \3/p' \
	    "$tmp/pool" | { read -r one n many || exit 0
		echo "$r $lab pool-1-thread $one"
		echo "$r $lab pool-$n-threads $many"; } >>"$figs"
	CUWARDEN_SHIM=$t/preload/.libs/libcuwarden_preload.so \
	    "$here/run-bench-shim.sh" "$t" >"$tmp/shim" 2>&1 ||
		echo "$lab: run-bench-shim.sh failed ($?)" >&2
	# pair bytes plain audit +audit timeline +timeline pool +pool
	# (the pool columns are the last two; the timeline's, where there
	# are nine, the sixth and seventh)
	awk -v r="$r" -v l="$lab" '$2 ~ /^[0-9]+$/ {
		sub(/_v2\+cuMemFree_v2/, "", $1); sub(/\+cuMemFreeAsync/, "", $1)
		print r, l, "shim-audit-added-" $1 "-" $2, $5
		if (NF >= 9)
			print r, l, "shim-timeline-added-" $1 "-" $2, $7
		print r, l, "shim-pool-" $1 "-" $2, $(NF - 1) }' "$tmp/shim" >>"$figs"
	echo "round $r: $lab ($t) done"
}

i=1
while [ "$i" -le "$rounds" ]; do
	one A "$1" "$i"
	one B "$2" "$i"
	i=$((i + 1))
done
echo "== side by side (A: $1, B: $2; rounds in order)"
awk '{ k = $3; v[k, $2] = v[k, $2] " " $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END { for (i = 1; i <= n; i++) printf "%-44s A:%s   B:%s\n", order[i], v[order[i], "A"], v[order[i], "B"] }' \
    "$figs"
