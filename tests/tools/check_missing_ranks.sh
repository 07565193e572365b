#!/bin/bash
# Missing ranks in every output (doc/audit.md, "Auditing a distributed
# job"): ranks 0 and 2 of a job of 4 report (rankprog under the shim, the
# job given by Open MPI's variables, no mpirun needed); `report` fails the
# audit (125) and says MISSING RANKS: 2 of 4 left no report: 1,3 -- in
# the text, in JUnit (a test case in error, counted in errors), and in
# SARIF (an error notification of the invocation), as a lost process is;
# --allow-missing-ranks accepts it (23: the leaks) and still lists it.
# Then rank 2's host renamed with control bytes and markup (a report from
# elsewhere): JUnit's test case names it escaped, and stays XML.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/rankprog"
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
for f in "$P" "$SHIM"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done

mkdir "$WORK/out"
for r in 0 2; do
	env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u TORCHELASTIC_RUN_ID \
	    -u PMI_RANK -u PMI_SIZE -u PMIX_RANK -u SLURM_PROCID -u SLURM_NTASKS \
	    -u SLURM_JOB_ID -u SLURM_STEP_ID \
	    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_LOCAL_RANK=$r \
	    OMPI_COMM_WORLD_SIZE=4 OMPI_MCA_ess_base_jobid=77 \
	    CUWARDEN_REPORT="$WORK/out/$r.json" LD_PRELOAD="$SHIM" "$P" \
	    >"$WORK/rank$r.out" 2>&1 || { fail "rank $r: rankprog failed"; cat "$WORK/rank$r.out"; }
done

run miss "$AUDIT" --junit "$WORK/miss.xml" --sarif "$WORK/miss.sarif" \
    report "$WORK/out"
expect_rc miss 125
expect_in miss err "== MISSING RANKS: 2 of 4 left no report: 1,3"
run ok "$AUDIT" --allow-missing-ranks --junit "$WORK/ok.xml" \
    --sarif "$WORK/ok.sarif" report "$WORK/out"
expect_rc ok 23
expect_in ok err "== MISSING RANKS: 2 of 4 left no report: 1,3"

for x in miss ok; do
	"$PY" - "$WORK/$x.xml" "$WORK/$x.sarif" >"$WORK/$x.py" 2>&1 <<'PYEOF' ||
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
assert (suite.get("tests"), suite.get("errors")) == ("3", "1"), suite.attrib
cases = {c.get("name"): c for c in suite.iter("testcase")}
c = cases.get("missing ranks")
assert c is not None, sorted(cases)
e = c.find("error")
assert e is not None and e.get("type") == "missing_ranks", ET.tostring(c)
assert e.get("message") == "MISSING RANKS: 2 of 4 left no report: 1,3", e.get("message")
inv = json.load(open(sys.argv[2]))["runs"][0]["invocations"][0]
notes = [(n["level"], n["message"]["text"]) for n in inv.get("toolExecutionNotifications", [])]
assert notes == [("error", "MISSING RANKS: 2 of 4 left no report: 1,3")], notes
# Missing ranks fail the audit unless allowed: SARIF's invocation says so.
want = sys.argv[1].endswith("ok.xml")
assert inv["executionSuccessful"] is want, inv["executionSuccessful"]
PYEOF
	{ fail "$x: JUnit, SARIF"; cat "$WORK/$x.py"; }
done
"$PY" "$TT/check_sarif.py" "$WORK/miss.sarif" >"$WORK/sarifcheck.out" 2>&1 ||
	{ fail "SARIF check"; cat "$WORK/sarifcheck.out"; }

# A host name with control bytes and markup: JUnit still parses.
"$PY" - "$WORK/out/2.json" <<'PYEOF' || exit 99
import json, sys
r = json.load(open(sys.argv[1]))
r["host"], r["boot_id"] = "ev\u0001il\u001b[31m<&>\"host", "x" * 8
json.dump(r, open(sys.argv[1], "w"))
PYEOF
run evil "$AUDIT" --allow-missing-ranks --junit "$WORK/evil.xml" report "$WORK/out"
expect_rc evil 23
"$PY" - "$WORK/evil.xml" >"$WORK/evil.py" 2>&1 <<'PYEOF' ||
import sys, xml.etree.ElementTree as ET
names = [c.get("name") for c in ET.parse(sys.argv[1]).getroot().iter("testcase")]
want = '(ev\\x01il\\x1b[31m<&>"host:rank 2)'
assert any(n.endswith(want) for n in names), names
PYEOF
	{ fail "evil: JUnit with a host's control bytes"; cat "$WORK/evil.py"; }

finish
