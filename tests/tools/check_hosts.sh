#!/bin/bash
# Processes of several hosts (issue 17): reports carry host and boot_id,
# and a process is known by them too.
#   - two reports of one pid from two hosts (otherwise byte for byte the
#     same) are two processes, every finding counted twice; the text
#     labels the pids host:pid; the merged JSON keeps each process's host
#     and boot_id and each finding's hosts, valid against
#     tests/tools/audit.schema.json, and reads back to the same report;
#     PROCESSES, the JUnit test cases and the SARIF results name each
#     process by host:pid, each test case failing with its own findings;
#   - one host, two boots, one pid: two processes, plain pid labels;
#   - the same report given twice, or a copy of it under another name: one
#     process, with a warning; a merged document and a report it holds: the
#     same;
#   - reports from before host and boot_id still read (a host of their
#     own: "?:pid" beside another host's), and a host that is not a
#     string is refused.
. "$top_srcdir/tests/tools/testlib.sh"

HA="$DATA/host_a.json"       # node1, pid 100
HB="$DATA/host_b.json"       # node2, pid 100, the same otherwise
HR="$DATA/host_a_reboot.json" # node1 after a reboot, pid 100
OLD="$DATA/proc_b.json"      # no host, pid 101
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }

# Two hosts, one pid.
run two "$AUDIT" --json "$WORK/two.json" --junit "$WORK/two.xml" --sarif "$WORK/two.sarif" \
    report "$HA" "$HB"
expect_rc two 23
expect_in two err "==    pid node1:100 (parent "
expect_in two err "==    pid node2:100 (parent "
expect_in two err "== 6,291,456 bytes in 6 device allocations (1,048,576 each) leaked by /opt/app/libmodel.so [device 0, cuMemAlloc_v2, pids node1:100,node2:100]"
expect_in two err "CUDA_ERROR_INVALID_VALUE, 2 times [device 0, pids node1:100,node2:100]"
expect_in two err "== LEAK SUMMARY: 6,815,744 bytes leaked in 8 allocations (2 groups)"
expect_in two err "== ERROR SUMMARY: 10 errors (8 leaks, 2 violations)"
expect_in two err "== COVERAGE: 2 processes audited"
expect_not_in two err "warning"
run schema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/two.json"
if [ "$rc" = 77 ]; then
	echo "python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 77
fi
expect_rc schema 0
[ "$rc" = 0 ] || cat "$WORK/schema.out"
"$PY" - "$WORK/two.json" >"$WORK/content.out" 2>&1 <<'P' || { fail "two hosts: the JSON"; cat "$WORK/content.out"; }
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((p["pid"], p["host"], p["boot_id"]) for p in d["processes"])
assert got == [(100, "node1", "5c1d9a3e-7f42-4b8e-9a61-0d2f8c3b7e15"),
               (100, "node2", "e8b04f27-31c9-4d6a-b2f5-94a7c0e1d836")], got
for f in d["leaks"] + d["violations"] + d["suppressed"]:
    assert f["pids"] == [100, 100] and f["hosts"] == ["node1", "node2"], f
assert d["summary"]["leaked_bytes"] == 6815744, d["summary"]
P
"$PY" - "$WORK/two.xml" "$WORK/two.sarif" >"$WORK/junit.out" 2>&1 <<'P' || { fail "two hosts: JUnit and SARIF"; cat "$WORK/junit.out"; }
import json, sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().findall(".//testcase")
names = sorted(c.get("name").rsplit(" (pid ", 1)[1] for c in cases)
assert names == ["node1:100)", "node2:100)"], names
fails = [len(c.findall("failure")) for c in cases]
assert fails[0] == fails[1] and fails[0] >= 2, fails
for r in json.load(open(sys.argv[2]))["runs"][0]["results"]:
    p = r["properties"]
    assert p["pids"] == [100, 100] and p["hosts"] == ["node1", "node2"], p
print("ok", names, fails)
P

# Read back: the same findings and labels; with a report it holds: once.
run back "$AUDIT" report "$WORK/two.json"
expect_rc back 23
expect_in back err "[device 0, cuMemAlloc_v2, pids node1:100,node2:100]"
expect_in back err "== ERROR SUMMARY: 10 errors (8 leaks, 2 violations)"
run backdup "$AUDIT" report "$WORK/two.json" "$HB"
expect_rc backdup 23
expect_in backdup err "$HB: the same report as "
expect_in backdup err "== ERROR SUMMARY: 10 errors (8 leaks, 2 violations)"

# One host, two boots, one pid: two processes; one host: plain pids.
run boots "$AUDIT" report "$HA" "$HR"
expect_rc boots 23
expect_in boots err "== COVERAGE: 2 processes audited"
expect_in boots err "== ERROR SUMMARY: 10 errors (8 leaks, 2 violations)"
expect_in boots err "[device 0, cuMemAlloc_v2, pid 100]"
expect_not_in boots err "node1:"

# The same report twice; a copy under another name.
run twice "$AUDIT" report "$HA" "$HA"
expect_rc twice 23
expect_in twice err "$HA: the same report as $HA, read already: counted once"
expect_in twice err "== COVERAGE: 1 process audited"
expect_in twice err "== ERROR SUMMARY: 5 errors (4 leaks, 1 violation)"
cp "$HB" "$WORK/copy.json"
run copy "$AUDIT" report "$HB" "$WORK/copy.json"
expect_rc copy 23
expect_in copy err "$WORK/copy.json: the same report as $HB, read already: counted once"
expect_in copy err "== ERROR SUMMARY: 5 errors (4 leaks, 1 violation)"

# A report without host and boot_id: still read; beside a report that
# names its host, its pid says "?".
run old "$AUDIT" --json "$WORK/old.json" report "$HA" "$OLD"
expect_rc old 23
expect_in old err "[devices 0,1, cuMemAlloc_v2, pids node1:100,?:101]"
expect_in old err "== COVERAGE: 2 processes audited"
"$PY" - "$WORK/old.json" >"$WORK/oldc.out" 2>&1 <<'P' || { fail "a report without host: the JSON"; cat "$WORK/oldc.out"; }
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((p["pid"], p["host"], p["boot_id"]) for p in d["processes"])
assert got == [(100, "node1", "5c1d9a3e-7f42-4b8e-9a61-0d2f8c3b7e15"), (101, "", "")], got
P
run oldonly "$AUDIT" report "$OLD"
expect_rc oldonly 23
expect_in oldonly err "pid 101]"

# A host that is not a string; a merged document's hosts that do not
# match its pids.
sed 's/"host": "node1"/"host": 7/' "$HA" >"$WORK/badhost.json"
grep -q '"host": 7' "$WORK/badhost.json" || exit 99
run badhost "$AUDIT" report "$WORK/badhost.json"
expect_rc badhost 125
expect_in badhost err "$WORK/badhost.json: \"host\" is not a string"
"$PY" - "$WORK/two.json" "$WORK/badhosts.json" <<'P' || exit 99
import json, sys
d = json.load(open(sys.argv[1]))
d["leaks"][0]["hosts"] = ["node1"]
json.dump(d, open(sys.argv[2], "w"))
P
run badhosts "$AUDIT" report "$WORK/badhosts.json"
expect_rc badhosts 125
expect_in badhosts err "$WORK/badhosts.json: leaks[0].hosts: expected an array as long as pids"

finish
