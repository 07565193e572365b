#!/bin/bash
# The machine-readable outputs: --json against tests/tools/audit.schema.json
# (python3-jsonschema), --sarif against the SARIF 2.1.0 rules GitHub code
# scanning applies (check_sarif.py), each with a broken copy that must be
# refused; --baseline round trips; fingerprints are stable across pids and
# load addresses.
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
B="$DATA/proc_b.json"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
"$PY" -c 'import jsonschema' 2>/dev/null || {
	echo "python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 77
}

run out "$AUDIT" --json "$WORK/a.json" --sarif "$WORK/a.sarif" report "$A" "$B"
expect_rc out 23
run schema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/a.json"
expect_rc schema 0
[ "$rc" = 0 ] || cat "$WORK/schema.out"
run sarif "$PY" "$TT/check_sarif.py" "$WORK/a.sarif"
expect_rc sarif 0
[ "$rc" = 0 ] || cat "$WORK/sarif.out"

# What the documents hold.
"$PY" - "$WORK/a.json" "$WORK/a.sarif" >"$WORK/content.out" 2>&1 <<'P' || { fail "content"; cat "$WORK/content.out"; }
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert d["format"] == "cuwarden-audit" and d["version"] == 1, d["format"]
assert s["leaked_bytes"] == 4456448 and s["leaked_allocations"] == 5, s
assert s["leak_groups"] == 2 and s["violations"] == 1 and s["errors"] == 6, s
assert s["suppressed_leaks"] == 1 and s["suppressed_bytes"] == 1048576, s
assert d["coverage"]["processes"] == 2 and d["coverage"]["allocations"] == 17
l = d["leaks"][0]
assert l["count"] == 4 and l["bytes"] == 4194304 and l["pids"] == [100, 101], l
assert l["devices"] == [0, 1] and l["size"] == 1048576, l
assert l["stack"][0]["module"] == "/opt/app/libmodel.so" and l["stack"][0]["offset"] == "0x1a2b"
assert l["stack"][0]["note"] == "module file not found"
v = d["violations"][0]
assert v["type"] == "double_free" and v["pid"] == 100 and len(v["alloc_stack"]) == 1
sup = d["suppressed"][0]
assert sup["class"] == "leak" and sup["suppressed_by"] == "leak:libcublas.so*", sup
assert d["suppressions_used"] == [{"rule": "leak:libcublas.so*", "origin": "built-in",
                                   "count": 1, "bytes": 1048576}], d["suppressions_used"]
assert [p["pid"] for p in d["processes"]] == [100, 101]
r = json.load(open(sys.argv[2]))
run = r["runs"][0]
assert r["version"] == "2.1.0"
res = run["results"]
assert len(res) == 3, len(res)
rules = run["tool"]["driver"]["rules"]
# Violations first, then leaks largest first.
assert res[0]["ruleId"] == "cuwarden.violation.double_free", res[0]["ruleId"]
assert res[0]["partialFingerprints"]["cuwarden/v1"] == v["fingerprint"]
assert [x["ruleId"] for x in res[1:]] == ["cuwarden.leak.device", "cuwarden.leak.pinned"]
assert rules[res[1]["ruleIndex"]]["id"] == res[1]["ruleId"]
assert res[1]["partialFingerprints"]["cuwarden/v1"] == l["fingerprint"]
assert res[1]["stacks"][0]["frames"][0]["module"] == "/opt/app/libmodel.so"
assert len(res[0]["stacks"]) == 3, res[0]["stacks"]
ids = {x["id"] for x in rules}
for k in ("device", "managed", "pinned", "async", "vmm"):
    assert "cuwarden.leak." + k in ids, k
for t in ("invalid_free", "double_free", "interior_free", "mismatched_free", "out_of_bounds", "failed_free"):
    assert "cuwarden.violation." + t in ids, t
P

# The validators are not blind: broken documents are refused.
"$PY" - "$WORK/a.json" "$WORK/bad.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
del d["leaks"][0]["fingerprint"]
d["summary"]["leaked_bytes"] = -1
json.dump(d, open(sys.argv[2], "w"))
P
run schemabad "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/bad.json"
expect_rc schemabad 1
expect_in schemabad out "fingerprint"
"$PY" - "$WORK/a.sarif" "$WORK/bad.sarif" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]["results"]
r[1]["ruleIndex"] = 3
r[2]["level"] = "fatal"
r[0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
d["runs"][0]["results"].append({"ruleId": "x", "message": {"text": "t"}})
json.dump(d, open(sys.argv[2], "w"))
P
run sarifbad "$PY" "$TT/check_sarif.py" "$WORK/bad.sarif"
expect_rc sarifbad 1
expect_in sarifbad out "ruleIndex 3 names"
expect_in sarifbad out "level 'fatal'"
expect_in sarifbad out "startLine must be an integer >= 1"
expect_in sarifbad out "at least one location"

# Baseline: the findings of a saved run are not reported again; a new
# finding is.  The baseline document itself keeps them (as suppressed, by
# "baseline"), so a baseline of a baseline run still knows them.
run base1 "$AUDIT" --baseline "$WORK/a.json" --json "$WORK/b.json" --sarif "$WORK/b.sarif" report "$A" "$B"
expect_rc base1 0
expect_in base1 err "== BASELINE: 2 leak groups and 1 violation group already in $WORK/a.json, not reported"
expect_in base1 err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
run base1s "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/b.json"
expect_rc base1s 0
run base2 "$AUDIT" --baseline "$WORK/b.json" report "$A" "$B"
expect_rc base2 0
run base3 "$AUDIT" --baseline "$WORK/b.json" --sarif "$WORK/c.sarif" report "$A" "$B" "$DATA/nocuda.json" "$top_srcdir/tests/tools/data/proc_c.json"
expect_rc base3 23
expect_in base3 err "== 8,192 bytes in 2 managed allocations (4,096 each) leaked by /opt/app/libnew.so"
expect_in base3 err "== ERROR SUMMARY: 2 errors (2 leaks, 0 violations)"
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"]
assert len(r) == 1 and r[0]["baselineState"] == "new", r
' "$WORK/c.sarif" || fail "base3: SARIF baselineState"

# Fingerprints do not depend on pids, load bases or module directories:
# proc_c.json repeats proc_a's device leak from another pid, base address
# and install directory.
"$PY" -c '
import json, sys
a = json.load(open(sys.argv[1]))
fps = {l["fingerprint"] for l in a["leaks"]}
assert len(fps) == len(a["leaks"]), "fingerprints collide"
' "$WORK/a.json" || fail "fingerprints collide"
run fp "$AUDIT" --json "$WORK/c.json" report "$DATA/proc_c.json"
"$PY" -c '
import json, sys
a = {l["fingerprint"] for l in json.load(open(sys.argv[1]))["leaks"]}
c = {l["fingerprint"]: l for l in json.load(open(sys.argv[2]))["leaks"]}
moved = [f for f, l in c.items() if l["owner"] == "/srv/other/libmodel.so"]
assert moved and moved[0] in a, (moved, a)
' "$WORK/a.json" "$WORK/c.json" || fail "fp: a moved module changed the fingerprint"

# A saved --json document is read back by `report`: the same findings,
# text and document; merged with other reports; never counted twice.
run again "$AUDIT" --json "$WORK/again.json" report "$WORK/a.json"
expect_rc again 23
diff "$WORK/out.err" "$WORK/again.err" >/dev/null || {
	fail "again: the text differs from the original run's"
	diff "$WORK/out.err" "$WORK/again.err" | head
}
"$PY" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("summary", "coverage", "leaks", "violations", "suppressed", "suppressions_used", "processes"):
    assert a[k] == b[k], k
' "$WORK/a.json" "$WORK/again.json" || fail "again: the document differs"
run again2 "$AUDIT" report "$WORK/a.json" "$DATA/proc_c.json"
expect_rc again2 23
expect_in again2 err "== 5,242,880 bytes in 5 device allocations (1,048,576 each)"
expect_in again2 err "== COVERAGE: 3 processes audited, 22 allocations seen"
run twice "$AUDIT" report "$WORK/a.json" "$WORK/a.json"
expect_rc twice 23
expect_in twice err "every process in it was read already"
expect_in twice err "== LEAK SUMMARY: 4,456,448 bytes leaked in 5 allocations (2 groups)"
printf '{"format": "cuwarden-audit", "version": 1, "processes": [{"pid": 1}],\n "leaks": [{"kind": "device", "count": 1, "pids": [1], "stack": [{"module": 7, "offset": "0x1"}]}]}\n' >"$WORK/badm.json"
run badm "$AUDIT" report "$WORK/badm.json"
expect_rc badm 125
expect_in badm err "badm.json: leaks[0].stack[0].module: expected a path or null"

# Sums saturate (tests/tools/data/overflow.json: four leaks of 2^62
# bytes, 2^64 in all): "at least 18,446,744,073,709,551,615 bytes (the sum
# overflowed)", never a wrapped "0 bytes"; the documents write the largest
# JSON integer and name the member in "saturated"; read back, a saturated
# value stays one.
O="$DATA/overflow.json"
run ovf "$AUDIT" --json "$WORK/ovf.json" --sarif "$WORK/ovf.sarif" report "$O"
expect_rc ovf 23
expect_in ovf err "== LEAK SUMMARY: at least 18,446,744,073,709,551,615 bytes (the sum overflowed) leaked in 4 allocations (4 groups)"
expect_in ovf err "== 4,611,686,018,427,387,904 bytes in 1 device allocation leaked by /opt/app/huge"
run ovfschema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/ovf.json"
expect_rc ovfschema 0
[ "$rc" = 0 ] || cat "$WORK/ovfschema.out"
run ovfsarif "$PY" "$TT/check_sarif.py" "$WORK/ovf.sarif"
expect_rc ovfsarif 0
"$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["leaked_bytes"] == 2**63 - 1 and s["saturated"] == ["leaked_bytes"], s
' "$WORK/ovf.json" || fail "ovf: summary not saturated"
for p in 501 502 503; do
	sed "s/\"pid\": 500/\"pid\": $p/" "$O" >"$WORK/ovf$p.json"
done
run ovf2 "$AUDIT" --json "$WORK/ovf2.json" report "$O" "$WORK/ovf501.json"
expect_rc ovf2 23
expect_in ovf2 err "== 9,223,372,036,854,775,808 bytes in 2 device allocations (4,611,686,018,427,387,904 each) leaked by"
"$PY" -c '
import json, sys
for l in json.load(open(sys.argv[1]))["leaks"]:
    assert l["bytes"] == 2**63 - 1 and l["saturated"] == ["bytes"], l
' "$WORK/ovf2.json" || fail "ovf2: a leak past 2^63 - 1 not marked saturated"
run ovf4 "$AUDIT" --json "$WORK/ovf4.json" report "$O" "$WORK/ovf501.json" "$WORK/ovf502.json" "$WORK/ovf503.json"
expect_rc ovf4 23
expect_in ovf4 err "== at least 18,446,744,073,709,551,615 bytes (the sum overflowed) in 4 device allocations (4,611,686,018,427,387,904 each) leaked by"
run ovfback "$AUDIT" report "$WORK/ovf4.json"
expect_rc ovfback 23
expect_in ovfback err "== at least 18,446,744,073,709,551,615 bytes (the sum overflowed) in 4 device allocations"
expect_not_in ovfback err "== 9,223,372,036,854,775,807 bytes"
# size x count when "bytes" is absent
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
del d["leaks"][0]["bytes"]
d["leaks"][0]["count"] = 8
json.dump(d, open(sys.argv[2], "w"))
' "$O" "$WORK/ovfmul.json"
run ovfmul "$AUDIT" report "$WORK/ovfmul.json"
expect_rc ovfmul 23
expect_in ovfmul err "== at least 18,446,744,073,709,551,615 bytes (the sum overflowed) in 8 device allocations"

# Bytes that are not UTF-8 from outside -- a command argument, a report's
# path, a suppression file's path -- are kept, each invalid byte as
# U+FFFD (json_string would drop the whole string).
bad=$(printf 'a\377b')
cp "$A" "$WORK/r$bad.json"
printf 'leak:libmodel.so\n' >"$WORK/s$bad.supp"
run utf8 "$AUDIT" --json "$WORK/u.json" --sarif "$WORK/u.sarif" \
	--suppressions "$WORK/s$bad.supp" report "$WORK/r$bad.json"
expect_rc utf8 23
run utf8schema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/u.json"
expect_rc utf8schema 0
[ "$rc" = 0 ] || cat "$WORK/utf8schema.out"
"$PY" - "$WORK/u.json" "$WORK" <<'P' || fail "utf8: a non-UTF-8 path dropped"
import json, sys
d = json.load(open(sys.argv[1]))
w = sys.argv[2]
assert d["processes"][0]["report"] == w + "/ra\ufffdb.json", d["processes"][0]
used = d["suppressions_used"]
assert [u["origin"] for u in used if u["rule"] == "leak:libmodel.so"] == [w + "/sa\ufffdb.supp:1"], used
P
run utf8run "$AUDIT" --json "$WORK/ur.json" -- sh -c 'exit 0' sh "$bad"
expect_rc utf8run 0
"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["command"]
assert c == ["sh", "-c", "exit 0", "sh", "a\ufffdb"], c
' "$WORK/ur.json" || fail "utf8run: the non-UTF-8 argument was dropped from command"

# A bad baseline file is an error before anything runs.
run badbase "$AUDIT" --baseline "$A" true
expect_rc badbase 125
expect_in badbase err "--baseline: $A: not a baseline"

finish
