#!/bin/bash
# The CI examples of doc/ci (doc/audit.md, "In CI").  The GitHub Actions
# workflow is valid YAML with the steps audit.md names: a checkout, the
# audit writing SARIF and JUnit XML, the SARIF upload and the test report
# reading those files even after a failed audit, the permissions they
# need; its audit options, run as written on a leaking program, fail it
# (23) and write a SARIF file that passes check_sarif.py (GitHub's upload
# rules: no copy of the SARIF 2.1.0 JSON schema is available offline), a
# JUnit file and a JSON document that passes its schema.  The CTest
# example, against this build installed with DESTDIR: under plain ctest
# its clean test passes and its leaking test fails with the report; with
# AUDIT_TESTS=memcheck both pass under plain ctest, and ctest -T
# memcheck fails the leaking one, the report in its MemoryChecker log.
# The CTest part is skipped (77) only where cmake is not installed.
. "$top_srcdir/tests/tools/testlib.sh"
. "$TT/installlib.sh"

P="$top_builddir/tests/tools/cuprog"
WF="$top_srcdir/doc/ci/github-actions.yml"
for f in "$P" "$FAKECUDA_DIR/libcuda.so.1" "$WF"; do
	[ -e "$f" ] || { echo "harness: $f not there"; exit 99; }
done
PY=$(command -v python3) || { echo "harness: python3 is needed"; exit 99; }
"$PY" -c 'import yaml' 2>/dev/null ||
    { echo "harness: python3's yaml module is needed (Debian: python3-yaml)"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# The workflow's shape; prints the audit step's options (before --), one
# a line.
"$PY" - "$WF" >"$WORK/wf.opts" 2>"$WORK/wf.err" <<'PYEOF'
import shlex, sys, yaml

wf = yaml.safe_load(open(sys.argv[1]))
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
# YAML 1.1 reads the key "on" as true.
need("on" in wf or True in wf, "no 'on' trigger")
perm = wf.get("permissions", {})
need(perm.get("security-events") == "write", "permissions: no security-events: write (SARIF upload)")
need(perm.get("checks") == "write", "permissions: no checks: write (test report)")
jobs = wf.get("jobs", {})
need(len(jobs) == 1, "not one job")
steps = list(jobs.values())[0].get("steps", [])
uses = lambda s, name: str(s.get("uses", "")).split("@")[0] == name
need(any(uses(s, "actions/checkout") for s in steps), "no checkout step")
audit = [s for s in steps if "cuwarden-audit" in str(s.get("run", ""))]
need(len(audit) == 1, "not one step running cuwarden-audit")
opts = []
sarif = junit = None
if audit:
    argv = shlex.split(audit[0]["run"])
    i = argv.index("cuwarden-audit")
    end = argv.index("--", i) if "--" in argv[i:] else len(argv)
    opts = argv[i + 1:end]
    need(end < len(argv) - 1, "the audit runs no program after --")
    for k, o in enumerate(opts):
        if o == "--sarif":
            sarif = opts[k + 1]
        if o == "--junit":
            junit = opts[k + 1]
    need(sarif, "the audit writes no --sarif")
    need(junit, "the audit writes no --junit")
    at = steps.index(audit[0])
up = [s for s in steps if uses(s, "github/codeql-action/upload-sarif")]
need(len(up) == 1, "no upload-sarif step")
for s in up:
    need(s.get("with", {}).get("sarif_file") == sarif,
         "upload-sarif reads %r, the audit writes %r" % (s.get("with", {}).get("sarif_file"), sarif))
    need("always()" in str(s.get("if", "")), "upload-sarif does not run after a failed audit")
    need(audit and steps.index(s) > at, "upload-sarif before the audit")
rep = [s for s in steps if junit and junit in str(s.get("with", {}))]
need(len(rep) == 1, "no step reads the JUnit file %r" % junit)
for s in rep:
    need("always()" in str(s.get("if", "")), "the test report does not run after a failed audit")
    need(audit and steps.index(s) > at, "the test report before the audit")
for b in bad:
    print("workflow:", b, file=sys.stderr)
print("\n".join(opts))
sys.exit(1 if bad else 0)
PYEOF
if [ $? != 0 ]; then
	fail "the workflow $WF:"
	sed 's/^/    | /' "$WORK/wf.err"
fi

# Its audit options, as written, on a leaking program, from a directory
# of its own (the files they name are relative).
mapfile -t opts <"$WORK/wf.opts"
mkdir "$WORK/gh"
(cd "$WORK/gh" && "$AUDIT" "${opts[@]}" -- "$P" leak) >"$WORK/gh.out" 2>"$WORK/gh.err"
rc=$?
expect_rc gh 23
sarif=$(grep -A1 -x -- --sarif "$WORK/wf.opts" | tail -1)
junit=$(grep -A1 -x -- --junit "$WORK/wf.opts" | tail -1)
json=$(grep -A1 -x -- --json "$WORK/wf.opts" | tail -1)
if [ -f "$WORK/gh/$sarif" ]; then
	"$PY" "$TT/check_sarif.py" "$WORK/gh/$sarif" >"$WORK/gh.sarifcheck" 2>&1 ||
	    { fail "gh: the SARIF breaks GitHub's rules"; sed 's/^/    | /' "$WORK/gh.sarifcheck"; }
	grep -qF '"ruleId":"cuwarden.leak.device"' "$WORK/gh/$sarif" ||
	    fail "gh: the leak is not in the SARIF"
else
	fail "gh: no SARIF file $sarif"
fi
"$PY" -c 'import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
sys.exit(0 if next(r.iter("failure")).get("message") else 1)' \
    "$WORK/gh/$junit" 2>/dev/null || fail "gh: no failure in the JUnit file $junit"
if [ -n "$json" ]; then
	"$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/gh/$json" ||
	    fail "gh: the JSON breaks its schema"
fi

# The CTest example.
if ! command -v cmake >/dev/null 2>&1; then
	echo "cmake is not installed: the CTest example is not tried"
	[ "$failures" -ne 0 ] && finish
	exit 77
fi
stage_install
cuda=$(sed -n 's/^CUDA_DIR = //p' "$top_builddir/Makefile")
# The installed copy is the one documented.
cmp -s "$top_srcdir/doc/ci/CMakeLists.txt" \
    "$(dirname "$(find "$stage" -name audit.md | head -1)")/ci/CMakeLists.txt" ||
    fail "doc/ci/CMakeLists.txt is not installed in the docdir's ci"

# ctest_project NAME [cmake args]: configures and builds the example in
# $WORK/NAME.
ctest_project() {
	local name=$1
	shift
	{
		cmake -S "$top_srcdir/doc/ci" -B "$WORK/$name" \
		    -DCMAKE_PREFIX_PATH="$stage$prefix" \
		    -DCUDAToolkit_ROOT="$cuda" "$@" &&
		cmake --build "$WORK/$name"
	} >"$WORK/$name.log" 2>&1 ||
	    { fail "$name: the CTest example does not build"; tail -30 "$WORK/$name.log" | sed 's/^/    | /'; }
}
# ct NAME DIR ctest-args...: ctest in $WORK/DIR; status in $rc.
ct() {
	local name=$1 dir=$2
	shift 2
	run "$name" ctest --test-dir "$WORK/$dir" --output-on-failure "$@"
}

ctest_project audited
ct all audited
[ "$rc" != 0 ] || fail "all: ctest passed with a leaking test"
expect_in all out "gpu_clean ........................   Passed"
expect_in all out "gpu_leak .........................***Failed"
expect_in all out "== LEAK SUMMARY: 65,536 bytes leaked in 1 allocation (1 group)"
ct clean audited -R '^gpu_clean$'
expect_rc clean 0

ctest_project mc -DAUDIT_TESTS=memcheck
ct plain mc
expect_rc plain 0
ct mcheck mc -T memcheck
[ "$rc" != 0 ] || fail "mcheck: ctest -T memcheck passed with a leaking test"
expect_in mcheck out "MemCheck #1: gpu_clean ........................   Passed"
expect_in mcheck out "MemCheck #2: gpu_leak .........................***Failed"
log=$(ls "$WORK"/mc/Testing/Temporary/MemoryChecker.2.log 2>/dev/null)
if [ -n "$log" ]; then
	grep -qF "== LEAK SUMMARY: 65,536 bytes leaked in 1 allocation (1 group)" "$log" ||
	    fail "mcheck: the leak is not in $log"
else
	fail "mcheck: no MemoryChecker.2.log"
fi

finish
