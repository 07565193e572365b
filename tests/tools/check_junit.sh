#!/bin/bash
# --junit FILE (doc/audit.md, "JUnit XML"): well-formed XML; one test
# case per process, named by its command and pid, with one failure per
# reported finding group of that process (counts checked against the
# --json document of the same run), the text report's header line as the
# message and its stack as the text; a clean process passes; suppressed,
# accepted and address-range findings are no failures; a lost process is
# an error; names from a report are escaped; - is standard output; an
# unwritable FILE fails before the program runs, a failed write fails the
# audit (125).
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/cuprog"
for f in "$P" "$FAKECUDA_DIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
PY=$(command -v python3) || { echo "harness: python3 is needed"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# junit_vs_json NAME: $WORK/NAME.xml against $WORK/NAME.json and the text
# report in $WORK/NAME.err; prints what differs.
junit_vs_json() {
	"$PY" - "$WORK/$1.xml" "$WORK/$1.json" "$WORK/$1.err" <<'EOF'
import json, sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()   # well-formed, or an exception
doc = json.load(open(sys.argv[2]))
text = open(sys.argv[3], encoding="utf-8", errors="replace").read()
bad = []
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1, "one testsuite, not %d" % len(suites)
suite = suites[0]
cases = suite.findall("testcase")
procs, lost = doc["processes"], doc["lost_processes"]
if len(cases) != len(procs) + len(lost):
    bad.append("%d test cases for %d processes and %d lost" %
               (len(cases), len(procs), len(lost)))
failing = [c for c in cases if c.findall("failure")]
for node in (root, suite):
    want = {"tests": len(cases), "failures": len(failing),
            "errors": sum(len(c.findall("error")) for c in cases),
            "skipped": sum(len(c.findall("skipped")) for c in cases)}
    for k, v in want.items():
        if node.get(k) != str(v):
            bad.append("%s %s=%r, %d test cases say %d" %
                       (node.tag, k, node.get(k), len(cases), v))
groups = [f for f in doc["leaks"] if f.get("category") != "address_range"]
groups += doc["violations"]
for p in procs:
    name = "%s (pid %d)" % (" ".join(p["command"]), p["pid"])
    match = [c for c in cases if c.get("name") == name]
    if len(match) != 1:
        bad.append("no test case %r (names: %s)" %
                   (name, [c.get("name") for c in cases]))
        continue
    fails = match[0].findall("failure")
    want = [g for g in groups if p["pid"] in g["pids"]]
    if len(fails) != len(want):
        bad.append("%s: %d failures, the JSON has %d groups" %
                   (name, len(fails), len(want)))
    for f in fails:
        msg = f.get("message")
        if not msg or "== " + msg + "\n" not in text:
            bad.append("%s: message %r is not a header line of the text "
                       "report" % (name, msg))
        if " at 0x" not in (f.text or "") and "(no stack recorded)" not in (f.text or ""):
            bad.append("%s: failure without its stack: %r" % (name, f.text))
        if not (f.get("type") or "").startswith("cuwarden."):
            bad.append("%s: failure type %r" % (name, f.get("type")))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# A clean process is a passing test case.
run clean "$AUDIT" --junit "$WORK/clean.xml" --json "$WORK/clean.json" "$P" clean
expect_rc clean 0
junit_vs_json clean || fail "clean: JUnit and JSON differ"
expect_in clean xml '<testsuite name="cuwarden-audit" tests="1" failures="0" errors="0" skipped="0">'
expect_in clean xml "name=\"$P clean (pid "
expect_not_in clean xml "<failure"

# A leak: one failure, the header line and the stack from the text report.
run leak "$AUDIT" --junit "$WORK/leak.xml" --json "$WORK/leak.json" "$P" leak
expect_rc leak 23
junit_vs_json leak || fail "leak: JUnit and JSON differ"
expect_in leak xml '<failure type="cuwarden.leak.device" message="2,097,152 bytes in 2 device allocations (1,048,576 each) leaked by'
expect_in leak xml "   by 0x"
expect_in leak xml ": leak_some (cuprog.c:"

# Two processes (fork + exec), each its own test case.
run fork "$AUDIT" --junit "$WORK/fork.xml" --json "$WORK/fork.json" "$P" fork
expect_rc fork 23
junit_vs_json fork || fail "fork: JUnit and JSON differ"
expect_in fork xml 'tests="2" failures="2"'

# A violation: its stacks, the text report's labels.
run viol "$AUDIT" --junit "$WORK/viol.xml" --json "$WORK/viol.json" "$P" violation
expect_rc viol 23
junit_vs_json viol || fail "viol: JUnit and JSON differ"
expect_in viol xml '<failure type="cuwarden.violation.double_free" message="double_free: cuMemFree_v2 of 0x'
expect_in viol xml " Allocated at:"
expect_in viol xml " First freed at:"

# Suppressed: no failure, the test case passes.
echo "leak:leak_some" >"$WORK/s.supp"
run supp "$AUDIT" --suppressions "$WORK/s.supp" --junit "$WORK/supp.xml" \
    --json "$WORK/supp.json" "$P" leak
expect_rc supp 0
junit_vs_json supp || fail "supp: JUnit and JSON differ"
expect_in supp xml 'tests="1" failures="0"'
expect_not_in supp xml "<failure"

# Categories: the teardown leak fails, the address range is no failure
# (listed in system-out); accepted, the teardown leak fails nothing.
run cat "$AUDIT" --junit "$WORK/cat.xml" --json "$WORK/cat.json" report \
    "$DATA/categories.json"
expect_rc cat 23
junit_vs_json cat || fail "cat: JUnit and JSON differ"
expect_in cat xml 'type="cuwarden.teardown" message="4,096 bytes in 1 device allocation freed only by context teardown, made by'
expect_in cat xml "<system-out>"
expect_in cat xml "address range"
expect_not_in cat xml 'type="cuwarden.address_range"'
run acc "$AUDIT" --accept-teardown --junit "$WORK/acc.xml" --json \
    "$WORK/acc.json" report "$DATA/teardown_only.json"
expect_rc acc 0
junit_vs_json acc || fail "acc: JUnit and JSON differ"
expect_not_in acc xml "<failure"
expect_in acc xml "<system-out>"

# Names a report fills with any bytes: escaped, the document well-formed.
run names "$AUDIT" --junit "$WORK/names.xml" --json "$WORK/names.json" \
    report "$DATA/corrupt_names.json"
expect_rc names 23
junit_vs_json names || fail "names: JUnit and JSON differ"
"$PY" -c 'import sys
t = open(sys.argv[1], encoding="utf-8").read()   # valid UTF-8
bad = [c for c in t if ord(c) < 32 and c not in "\n"]
sys.exit(1 if bad else 0)' "$WORK/names.xml" || fail "names: control characters in the XML"

# A lost process (SIGKILLed child): an error test case; the audit fails.
run lost "$AUDIT" --junit "$WORK/lost.xml" --json "$WORK/lost.json" "$P" killchild
expect_rc lost 125
junit_vs_json lost || fail "lost: JUnit and JSON differ"
expect_in lost xml '<error type="lost_process" message="process '
expect_in lost xml 'errors="1"'

# Standard output: the document alone there, the program's output on
# stderr; an output of its own (distinct from the others).
run out "$AUDIT" --junit - "$P" leak
expect_rc out 23
head -c 38 "$WORK/out.out" | grep -qF '<?xml version="1.0" encoding="UTF-8"?>' ||
    fail "out: standard output does not start with the XML declaration"
"$PY" -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' \
    "$WORK/out.out" || fail "out: standard output is not one XML document"
run two "$AUDIT" --junit - --json - "$P" clean
expect_rc two 125
expect_in two err "only one output can go to standard output"
run same "$AUDIT" --junit "$WORK/x" --sarif "$WORK/./x" "$P" clean
expect_rc same 125
expect_in same err "name one file"

# An unwritable place fails before the run; a failed write fails the
# audit.
run nodir "$AUDIT" --junit "$WORK/no/such/dir/j.xml" "$P" clean
expect_rc nodir 125
expect_in nodir err "--junit $WORK/no/such/dir/j.xml: cannot be written"
if [ -w /dev/full ]; then
	run full "$AUDIT" --junit /dev/full "$P" clean
	expect_rc full 125
fi

finish
