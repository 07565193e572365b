#!/bin/sh
# Pool mode answers exactly as the driver (issue: the defects found by
# review, items 2 and 10).  tp_exact runs the same calls plain, in audit
# mode and in pool mode; the three transcripts must be identical: range
# and attribute queries describe the allocation as asked for (1000 bytes,
# not the 1024-byte block or the 2 MiB segment), refuse past its end and
# after its free, the driver's own answer for a thread without a context,
# cuMemHostGetFlags the flags asked for, sets and copies past the end or
# into freed pooled memory refused (and nothing written), frees after a
# primary context reset answered by the driver.  With no tombstones
# (CUWARDEN_TOMBSTONES=0) a late double free of a block at the base of its
# segment is refused and recorded: the driver never sees a pool's pointer,
# so it never frees the segment under a live neighbour.
. "${top_srcdir:-.}/tests/preload/lib.sh"

plain plain "$TP/tp_exact"
expect_rc 0 "tp_exact without the shim"
CUWARDEN_TOMBSTONES=0 CUWARDEN_REPORT=$WORK/audit.json run audit "$TP/tp_exact"
expect_rc 0 "tp_exact in audit mode"
CUWARDEN_TOMBSTONES=0 CUWARDEN_MODE=pool CUWARDEN_REPORT=$WORK/pool.json run pool "$TP/tp_exact"
expect_rc 0 "tp_exact in pool mode"
grep -q 'late: free a again (DOUBLE) *-> 1$' "$WORK/plain.out" &&
	grep -qx '  b intact *yes' "$WORK/plain.out" ||
	fail "the simulated driver does not refuse the late double free as the real one does"
for m in audit pool; do
	if diff -u "$WORK/plain.out" "$WORK/$m.out" >"$WORK/$m.diff"; then
		pass "$m mode: transcript identical to the driver's ($(wc -l <"$WORK/plain.out") lines)"
	else
		fail "$m mode answers differently from the driver:"
		cat "$WORK/$m.diff"
	fi
done
# The pools served it (else the comparison says nothing), and the misuse
# is recorded as in audit mode: the same violations, type by type and
# call by call (with no tombstones a free of freed memory is an invalid
# free in both), nothing leaked.
check "$WORK/pool.json" \
	'r["mode"] == "pool"' \
	'r["stats"]["pools"]["device"]["allocated"]["total"] > 0' \
	'len(viols(type="invalid_free", api="cuMemFree_v2")) >= 5' \
	'leaks(category="leak") == []'
check "$WORK/audit.json" 'r["mode"] == "audit"' 'leaks(category="leak") == []'
if "$PY" - "$WORK/audit.json" "$WORK/pool.json" <<'PYEOF'
import json, sys
def v(path):
    with open(path) as f:
        return sorted((x["type"], x["api"]) for x in json.load(f)["violations"])
a, p = v(sys.argv[1]), v(sys.argv[2])
print("audit:", a)
print("pool: ", p)
sys.exit(a != p)
PYEOF
then pass "pool mode records the violations audit mode records"
else fail "pool mode records other violations than audit mode"
fi
finish
