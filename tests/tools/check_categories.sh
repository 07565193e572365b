#!/bin/bash
# Leak categories (doc/audit.md, "Leak categories"): a 2 MiB cuMemCreate
# mapped into a 2 MiB reservation is 2 MiB leaked (vmm), the reservation
# an address range apart (never in the LEAK SUMMARY, never an error; an
# old report without "category" gives kind va that category too); memory
# freed only by context teardown is a leak of its own, counted, unless
# --accept-teardown.  Text, JSON, SARIF and the exit status.
. "$top_srcdir/tests/tools/testlib.sh"

C="$DATA/categories.json"
T="$DATA/teardown_only.json"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }

run cat "$AUDIT" --json "$WORK/c.json" --sarif "$WORK/c.sarif" report "$C"
expect_rc cat 23
expect_in cat err "== 4,096 bytes in 1 device allocation freed only by context teardown, made by /srv/vmm/vmmprog [device 0, cuMemAlloc_v2, pid 5151]"
expect_in cat err "== 2,097,152 bytes in 1 address range never freed, reserved by /srv/vmm/vmmprog [address range, cuMemAddressReserve, pid 5151]"
expect_in cat err "== LEAK SUMMARY: 3,149,824 bytes leaked in 3 allocations (3 groups)"
expect_in cat err "==    of which freed only by context teardown: 4,096 bytes in 1 allocation (1 group; --accept-teardown to accept them)"
expect_in cat err "== ADDRESS RANGES NEVER FREED: 2,097,152 bytes of address space in 1 range (1 group; not memory, not counted as leaks)"
expect_in cat err "== ERROR SUMMARY: 3 errors (3 leaks, 0 violations)"
expect_not_in cat err "[host"
# Leaks first, then teardown's, then the ranges.
a=$(line_of "$WORK/cat.err" "vmm allocation leaked")
b=$(line_of "$WORK/cat.err" "freed only by context teardown, made")
c=$(line_of "$WORK/cat.err" "address range never freed")
[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && [ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] ||
	fail "categories out of order: $a $b $c"

run py "$PY" - "$WORK/c.json" "$WORK/c.sarif" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["leaked_bytes"] == 3149824 and s["leaked_allocations"] == 3, s
assert s["teardown_bytes"] == 4096 and s["teardown_allocations"] == 1, s
assert s["teardown_groups"] == 1 and s["accepted_teardown_allocations"] == 0, s
assert s["address_ranges"] == 1 and s["address_range_bytes"] == 2097152, s
assert s["errors"] == 3, s
cats = sorted((l["kind"], l["category"]) for l in d["leaks"])
assert cats == [("device", "leak"), ("device", "teardown"), ("va", "address_range"), ("vmm", "leak")], cats
r = json.load(open(sys.argv[2]))["runs"][0]
ids = {x["id"]: x for x in r["tool"]["driver"]["rules"]}
assert ids["cuwarden.teardown"]["defaultConfiguration"]["level"] == "error"
assert ids["cuwarden.address_range"]["defaultConfiguration"]["level"] == "warning"
assert "cuwarden.leak.va" not in ids
res = {x["ruleId"]: x for x in r["results"]}
assert res["cuwarden.teardown"]["level"] == "error"
assert "freed only by context teardown" in res["cuwarden.teardown"]["message"]["text"]
assert res["cuwarden.address_range"]["level"] == "warning"
assert "address range" in res["cuwarden.address_range"]["message"]["text"]
assert res["cuwarden.leak.vmm"]["level"] == "error"
for x in r["results"]:
    assert r["tool"]["driver"]["rules"][x["ruleIndex"]]["id"] == x["ruleId"]
P
expect_rc py 0
[ "$rc" = 0 ] || cat "$WORK/py.err"

# The merged document read back keeps the categories.
run back "$AUDIT" report "$WORK/c.json"
expect_rc back 23
expect_in back err "== LEAK SUMMARY: 3,149,824 bytes leaked in 3 allocations (3 groups)"
expect_in back err "== ADDRESS RANGES NEVER FREED: 2,097,152 bytes"

# Teardown leaks alone fail the audit; accepted, they do not, and the
# address range never does.
run td "$AUDIT" report "$T"
expect_rc td 23
expect_in td err "== ERROR SUMMARY: 1 error (1 leak, 0 violations)"
run acc "$AUDIT" --accept-teardown --json "$WORK/acc.json" report "$T"
expect_rc acc 0
expect_in acc err "== ACCEPTED: 4,096 bytes in 1 allocation freed only by context teardown (--accept-teardown), not counted"
expect_in acc err "== LEAK SUMMARY: 0 bytes leaked in 0 allocations (0 groups)"
expect_in acc err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
run accpy "$PY" - "$WORK/acc.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["accepted_teardown_allocations"] == 1 and s["accepted_teardown_bytes"] == 4096, s
assert s["errors"] == 0 and s["suppressed_leaks"] == 0, s
sup = [x for x in d["suppressed"] if x.get("category") == "teardown"]
assert len(sup) == 1 and sup[0]["suppressed_by"] == "--accept-teardown", sup
P
expect_rc accpy 0
[ "$rc" = 0 ] || cat "$WORK/accpy.err"
if "$PY" -c 'import jsonschema' 2>/dev/null; then
	run schema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/c.json"
	expect_rc schema 0
	run schema2 "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/acc.json"
	expect_rc schema2 0
fi
finish
