#!/bin/sh
# The public API under load: tests/stress/stress_api, 16 threads x OPS
# operations each (20,000 under make check, 1,000,000 with STRESS_FULL=1
# or STRESS_API_OPS), then nothing live, no violation, and nothing held
# by the simulated driver after cw_trim.  Not under the shim: the program
# links libcuwarden.
. "${top_srcdir:?run through make check}/tests/stress/stress_lib.sh"

ops=${STRESS_API_OPS:-$(size 20000 1000000)}
limit=$(size 300 1800)
t0=$(now)
timeout -s KILL "$limit" "$ST/stress_api" -n "$ops" -t 16
rc=$?
echo "stress_api: exit status $rc, wall $(elapsed "$t0") s"
case $rc in
0) pass "stress_api: 16 x $ops operations" ;;
124 | 137) fail "stress_api: no end within $limit s (hang?)" ;;
*) fail "stress_api: exit status $rc" ;;
esac
finish
