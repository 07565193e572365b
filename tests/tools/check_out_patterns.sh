#!/bin/bash
# Every output file's name takes the patterns of --log-file (doc/audit.md,
# "The log file"): a tool started as rank 3 of a job writes out/3.json,
# out/3.sarif, out/3.html, out/3.xml and out/3.trace -- --trace too, or
# a job's ranks would all write one file "out/%r.trace", the last one
# left; a bad pattern in --trace is a usage error (125).
. "$top_srcdir/tests/tools/testlib.sh"

mkdir "$WORK/out"
run rank env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 \
    "$AUDIT" --json "$WORK/out/%r.json" --sarif "$WORK/out/%r.sarif" \
    --html "$WORK/out/%r.html" --junit "$WORK/out/%r.xml" \
    --trace "$WORK/out/%r.trace" report "$DATA/proc_a.json"
for f in 3.json 3.sarif 3.html 3.xml 3.trace; do
	[ -s "$WORK/out/$f" ] || { fail "rank: no out/$f"; ls "$WORK/out"; }
done
[ -z "$(ls "$WORK/out" | grep '%')" ] || { fail "rank: a name with %"; ls "$WORK/out"; }
run bad "$AUDIT" --trace "$WORK/x.%z" report "$DATA/proc_a.json"
expect_rc bad 125
expect_in bad err "--trace $WORK/x.%z: %z is not a pattern"

finish
