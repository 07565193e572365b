#!/bin/sh
# run-ab-timeline.sh -- the timeline's own cost under several builds of the
# shim, on one machine, in interleaved rounds (doc/benchmarks.md, "The
# timeline"): each round runs bench_shim -a (the stream-ordered pairs
# only) once in audit mode without the timeline (the first shim) and
# once per shim with CUWARDEN_TIMELINE=1, each round's turn starting one
# run later; prints the audit runs' median and spread (max - min over the
# rounds, the noise the other columns stand in) and each shim's median
# "+timeline" (ns a pair over the audit runs' median, two events a pair),
# and the clock's cost beside.
#
#   bench/run-ab-timeline.sh BENCH_SHIM ROUNDS NAME=SHIM.so[,VAR=VALUE...] ...
#
# A variant's VAR=VALUE settings go into its runs' environment only: one
# shim twice, as tsc=SHIM.so,CUWARDEN_TIMELINE_CLOCK=tsc and
# mono=SHIM.so,CUWARDEN_TIMELINE_CLOCK=monotonic, is an A/B of the clock.
#
# Meant for the GPU machine; LD_LIBRARY_PATH=<builddir>/tests/fakecuda
# runs it against the simulated driver.  Exit 77 when no driver loads.
set -u
[ $# -ge 3 ] || { echo "usage: run-ab-timeline.sh BENCH_SHIM ROUNDS NAME=SHIM.so..." >&2; exit 2; }
bench=$1 rounds=$2
shift 2
[ -x "$bench" ] || { echo "run-ab-timeline: $bench not built" >&2; exit 99; }
case $rounds in ''|*[!0-9]*|0) echo "run-ab-timeline: ROUNDS=$rounds: not a count" >&2; exit 99 ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cwabtl.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
names=
for a in "$@"; do
	n=${a%%=*} s=${a#*=}
	s=${s%%,*}
	[ -f "$s" ] && [ "$n" != "$a" ] || { echo "run-ab-timeline: $a: not NAME=SHIM.so[,VAR=VALUE...]" >&2; exit 99; }
	names="$names $n"
done
first=${1#*=}
first=${first%%,*}
# one_run NAME=SHIM.so[,VAR=VALUE...]: one bench_shim -a run of a variant
# with the timeline, or "audit": the first shim without it.
one_run() {
	if [ "$1" = audit ]; then
		LD_PRELOAD=$first CUWARDEN_MODE=audit CUWARDEN_STACK_DEPTH=24 \
			CUWARDEN_REPORT=$tmp/a.json "$bench" -a >>"$tmp/audit"
		return
	fi
	v=${1#*=}
	# shellcheck disable=SC2046
	env LD_PRELOAD="${v%%,*}" CUWARDEN_MODE=audit CUWARDEN_STACK_DEPTH=24 \
		CUWARDEN_TIMELINE=1 CUWARDEN_REPORT="$tmp/t.json" \
		$(case $v in *,*) echo "${v#*,}" | tr , ' ' ;; esac) \
		"$bench" -a >>"$tmp/tl.${1%%=*}"
}
# Round k (from 0) starts its turn at run k mod (variants + 1) of
# "audit, then each variant" and goes round: no run is always first or
# always after the same other, so a drift within a round (the GPU's
# clocks, the machine's other load) falls on every run alike.
k=0
while [ "$k" -lt "$rounds" ]; do
	set -- audit "$@"
	i=0
	while [ "$i" -lt $((k % $#)) ]; do
		a=$1
		shift
		set -- "$@" "$a"
		i=$((i + 1))
	done
	for a in "$@"; do
		one_run "$a" || exit $?
	done
	# back to the variants alone, in their given order
	while [ "$1" != audit ]; do
		a=$1
		shift
		set -- "$@" "$a"
	done
	shift
	k=$((k + 1))
done
med_awk=$(cat "$(dirname "$0")/median.awk") || exit 99
cd "$tmp" || exit 99
# shellcheck disable=SC2086
awk -v names="$names" -v rounds="$rounds" "$med_awk"'
{ v = FILENAME; sub(/^tl\./, "", v); k = $1 " " $2
  if (!(k in seen)) { seen[k] = 1; order[++n] = k }
  d[v, k] = d[v, k] " " $3 }
function spread(list,   n, a, i, lo, hi) {
	n = split(list, a, " "); lo = hi = a[1] + 0
	for (i = 2; i <= n; i++) {
		if (a[i] + 0 < lo) lo = a[i] + 0
		if (a[i] + 0 > hi) hi = a[i] + 0
	}
	return hi - lo
}
END {
	nn = split(names, nm, " ")
	printf "%-32s %9s %9s %9s", "pair", "bytes", "audit ns", "spread"
	for (i = 1; i <= nn; i++) printf " %10s", "+" nm[i]
	printf "   (median of %d rounds)\n", rounds
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, g, " "); a = med(d["audit", k])
		printf "%-32s %9s %9.1f %9.1f", g[1], g[2], a, spread(d["audit", k])
		for (j = 1; j <= nn; j++) printf " %+10.1f", med(d[nm[j], k]) - a
		printf "\n"
	}
}' audit $(for n in $names; do echo "tl.$n"; done)
