#!/bin/sh
# run-bench-shim.sh -- the shim's added cost, side by side.
#
#   bench/run-bench-shim.sh [BUILDDIR] [-q]
#
# Runs bench/bench_shim plain, under libcuwarden_preload.so in audit mode
# (CUWARDEN_STACK_DEPTH=24), in audit mode with CUWARDEN_TIMELINE=1 and in
# pool mode, and prints ns per allocation+free pair for each, with the
# difference to plain (the timeline's: to audit mode without it).  Meant for
# the GPU machine: libcuda.so.1 must be on the loader's path (the real
# driver; LD_LIBRARY_PATH=<builddir>/tests/fakecuda measures the shim
# against the simulated driver).  CUWARDEN_SHIM overrides the shim's path.
# The rows ".../16t" are the cuMemAlloc_v2 + cuMemFree_v2 pair on 16
# threads at once (bench_shim -t: one thread's ns per pair while all run),
# so the timeline's cost under contention reads beside audit mode's in the
# same run; CW_BENCH_THREADS=N sets the count, 0 leaves them out.
# CW_BENCH_ROUNDS=R (default 1) runs the four in turn R times and prints
# each figure's median over the rounds, so the spread between runs of one
# build does not read as a difference between builds.
# Exit 77 when no driver can be loaded.
set -u
b=${1:-${top_builddir:-.}}
quick=${2:-}
bench=$b/bench/bench_shim
shim=${CUWARDEN_SHIM:-$b/preload/.libs/libcuwarden_preload.so}
[ -x "$bench" ] || { echo "run-bench-shim: $bench not built (make check builds it)" >&2; exit 99; }
[ -f "$shim" ] || { echo "run-bench-shim: $shim not found" >&2; exit 99; }
if ldd "$bench" 2>/dev/null | grep -q 'libcuda.so.1 => not found'; then
	echo "run-bench-shim: no libcuda.so.1 on the loader path: skipped" >&2
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cwbench.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
threads=${CW_BENCH_THREADS:-16}
case $threads in ''|*[!0-9]*) echo "run-bench-shim: CW_BENCH_THREADS=$threads: not a count" >&2; exit 99 ;; esac
[ "$threads" -gt 0 ] && set -- $quick -t "$threads" || set -- $quick

rounds=${CW_BENCH_ROUNDS:-1}
case $rounds in ''|*[!0-9]*|0) echo "run-bench-shim: CW_BENCH_ROUNDS=$rounds: not a count" >&2; exit 99 ;; esac
r=0
while [ "$r" -lt "$rounds" ]; do
	r=$((r + 1))
	env -u LD_PRELOAD "$bench" "$@" >>"$tmp/plain" || exit $?
	LD_PRELOAD=$shim CUWARDEN_MODE=audit CUWARDEN_STACK_DEPTH=24 \
		CUWARDEN_REPORT=$tmp/audit.json "$bench" "$@" >>"$tmp/audit" || exit $?
	LD_PRELOAD=$shim CUWARDEN_MODE=audit CUWARDEN_STACK_DEPTH=24 CUWARDEN_TIMELINE=1 \
		CUWARDEN_REPORT=$tmp/tl.json "$bench" "$@" >>"$tmp/tl" || exit $?
	LD_PRELOAD=$shim CUWARDEN_MODE=pool CUWARDEN_STACK_DEPTH=24 \
		CUWARDEN_REPORT=$tmp/pool.json "$bench" "$@" >>"$tmp/pool" || exit $?
done
[ "$rounds" -gt 1 ] && echo "median of $rounds rounds, the four runs in turn each round"

med_awk=$(cat "$(dirname "$0")/median.awk") || exit 99
awk "$med_awk"'
FILENAME ~ /plain$/ { key = $1 " " $2; if (!(key in plain)) order[++n] = key
	plain[key] = plain[key] " " $3; next }
FILENAME ~ /audit$/ { audit[$1 " " $2] = audit[$1 " " $2] " " $3; next }
FILENAME ~ /tl$/    { tl[$1 " " $2] = tl[$1 " " $2] " " $3; next }
FILENAME ~ /pool$/  { pool[$1 " " $2] = pool[$1 " " $2] " " $3; next }
END {
	printf "%-32s %10s %12s %12s %10s %12s %10s %12s %10s\n", "pair", \
	    "bytes", "plain ns", "audit ns", "+audit", "timeline ns", \
	    "+timeline", "pool ns", "+pool"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, " ")
		p = med(plain[k]); a = med(audit[k]); t = med(tl[k]); o = med(pool[k])
		printf "%-32s %10s %12.1f %12.1f %+10.1f %12.1f %+10.1f %12.1f %+10.1f\n", \
		    f[1], f[2], p, a, a - p, t, t - a, o, o - p
	}
}' "$tmp/plain" "$tmp/audit" "$tmp/tl" "$tmp/pool"
