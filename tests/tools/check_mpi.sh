#!/bin/bash
# A distributed job (issue 20): Open MPI's mpirun starts 4 ranks of a
# driver-API program (tests/tools/rankprog.c) on the simulated driver;
# the program never calls MPI: the launcher's environment is what the
# shim reads.  Both arrangements (doc/audit.md, "Auditing a distributed
# job"):
#   - one cuwarden-audit per rank, each writing out/%j.%r.json, then
#     `cuwarden-audit report out/`;
#   - `cuwarden-audit mpirun ...`: one tool for the local ranks;
#   - and the shim alone (CUWARDEN_REPORT=raw/%j.%r.json), then report;
# rank labels exact ("rank 1"), a leak on all ranks folded "on 4 of 4
# ranks", one planted on ranks 1 and 3 "on 2 of 4 ranks", a rank killed
# with SIGKILL named missing (and failing the audit unless
# --allow-missing-ranks); the shim's report names its job, rank and GPU;
# reports of two hosts (host names and boot ids edited, the same pids)
# merged as host:rank; the merged JSON (schema, per-finding ranks) read
# back.  Then 1,024 generated rank reports merged (the time printed, not
# asserted).  Skips (77) only where mpirun is missing or cannot run.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/rankprog"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
command -v mpirun >/dev/null || {
	echo "mpirun is not installed (apt-get install openmpi-bin)"; exit 77; }
# As root (CI containers), Open MPI wants to be told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
MPIRUN=(mpirun --oversubscribe -np 4)
"${MPIRUN[@]}" true >"$WORK/probe.out" 2>&1 || {
	echo "mpirun cannot run here:"; head -5 "$WORK/probe.out"; exit 77; }

# 1. One tool per rank: each writes its own document, named by job and
# rank; a tool that is itself a rank names none missing.  mpirun aborts
# the job when a rank exits non-zero: the per-rank tools exit 0
# (--error-exitcode=0) and `report` decides.
mkdir "$WORK/out"
run perrank "${MPIRUN[@]}" "$AUDIT" --error-exitcode=0 \
    --json "$WORK/out/%j.%r.json" "$P" -s 1,3
expect_rc perrank 0
expect_not_in perrank err "MISSING RANKS"
expect_not_in perrank err "==    on 1 of 4 ranks"
expect_not_in perrank err "== RANKS:"
expect_in perrank err "[device 0, cuMemAlloc_v2, rank 3]"
n=$(ls "$WORK/out" | grep -c '^[^.]*\.[0-3]\.json$')
[ "$n" = 4 ] || { fail "perrank: 4 files JOB.RANK.json expected, got:"; ls "$WORK/out"; }
run merged "$AUDIT" --json "$WORK/merged.json" --html "$WORK/merged.html" \
    --sarif "$WORK/merged.sarif" --junit "$WORK/merged.xml" report "$WORK/out"
expect_rc merged 23
expect_in merged err "[device 0, cuMemAlloc_v2, ranks 0-3]"
expect_block merged err "leaked by $P [device 0, cuMemAlloc_v2, ranks 0-3]
==    on 4 of 4 ranks: 3,145,728 bytes in 1 allocation each"
expect_block merged err "== 4,194,304 bytes in 4 device allocations (1,048,576 each) leaked by $P [device 0, cuMemAlloc_v2, ranks 1,3]
==    on 2 of 4 ranks: 2,097,152 bytes in 2 allocations each"
for r in 0 1 2 3; do
	expect_in merged err "==    rank $r (pid "
done
expect_in merged err "== RANKS: 4 of 4 reported"
expect_not_in merged err "MISSING"
expect_in merged err "== ERROR SUMMARY: 8 errors (8 leaks, 0 violations)"
# The order: by rank.
[ "$(grep -o '^==    rank [0-3]' "$WORK/merged.err" | tr -d '=' | tr '\n' ' ')" = \
    "    rank 0     rank 1     rank 2     rank 3 " ] || fail "merged: processes not in rank order"

run schema "$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/merged.json"
if [ "$rc" = 77 ]; then
	echo "python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 77
fi
expect_rc schema 0
[ "$rc" = 0 ] || cat "$WORK/schema.out"
"$PY" - "$WORK/merged.json" "$WORK/out" >"$WORK/content.out" 2>&1 <<'PYEOF' || { fail "merged JSON"; cat "$WORK/content.out"; }
import json, os, sys
d = json.load(open(sys.argv[1]))
ranks = sorted(p["job"]["rank"] for p in d["processes"])
assert ranks == [0, 1, 2, 3], ranks
for p in d["processes"]:
    j = p["job"]
    assert j["launcher"] == "openmpi" and j["world_size"] == 4, j
    assert j["local_rank"] == j["rank"], j
    assert j["id"], j
    assert [g["device"] for g in p["gpus"]["used"]] == [0], p["gpus"]
    assert p["gpus"]["used"][0]["uuid"].startswith("GPU-"), p["gpus"]
got = sorted((l["ranks"], l["bytes"]) for l in d["leaks"])
assert got == [([0, 1, 2, 3], 12582912), ([1, 3], 4194304)], got
for l in d["leaks"]:
    assert [s["bytes"] for s in l["per_process"]] == [l["bytes"] // len(l["ranks"])] * len(l["ranks"]), l
assert d["job"] == {"world_size": 4, "ranks_reported": 4, "missing_ranks": []}, d["job"]
# The file names: JOB.RANK.json, the job id the reports name.
jid = d["processes"][0]["job"]["id"]
assert sorted(os.listdir(sys.argv[2])) == ["%s.%d.json" % (jid, r) for r in range(4)], os.listdir(sys.argv[2])
PYEOF
"$PY" - "$WORK/merged.sarif" "$WORK/merged.xml" >"$WORK/sarif.out" 2>&1 <<'PYEOF' || { fail "merged SARIF, JUnit"; cat "$WORK/sarif.out"; }
import json, sys, xml.etree.ElementTree as ET
res = json.load(open(sys.argv[1]))["runs"][0]["results"]
got = sorted((r["properties"]["ranks"], r["message"]["text"].rsplit(", on ", 1)[1]) for r in res)
assert got == [([0, 1, 2, 3], "4 of 4 ranks (0-3)"), ([1, 3], "2 of 4 ranks (1,3)")], got
names = sorted(c.get("name").rsplit(" (", 1)[1] for c in ET.parse(sys.argv[2]).getroot().iter("testcase"))
assert names == ["rank 0)", "rank 1)", "rank 2)", "rank 3)"], names
PYEOF
# Read back: the same folding.
run back "$AUDIT" report "$WORK/merged.json"
expect_rc back 23
expect_block back err "[device 0, cuMemAlloc_v2, ranks 1,3]
==    on 2 of 4 ranks: 2,097,152 bytes in 2 allocations each"

# 2. The launcher under the tool: one tool for every local rank; a rank
# killed by SIGKILL is lost and its rank missing.
run under "$AUDIT" --timeline --json "$WORK/under.json" --html "$WORK/under.html" \
    --trace "$WORK/under.trace" "${MPIRUN[@]}" "$P" -s 1,3
expect_rc under 23
# With --timeline: each rank's peak and timeline named by its rank, in
# text, JSON and the trace (the page: below).
for r in 0 1 2 3; do
	grep -q "^== PEAK: device 0: .* (rank $r, pid [0-9]*)$" "$WORK/under.err" ||
		fail "under: no PEAK line of rank $r"
done
"$PY" - "$WORK/under.json" "$WORK/under.trace" >"$WORK/under.py" 2>&1 <<'PYEOF' || { fail "under: ranks of the timelines"; cat "$WORK/under.py"; }
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("peaks", "timelines"):
    got = sorted((e["rank"], e["host"] is not None) for e in d[k])
    assert got == [(r, True) for r in range(4)], (k, got)
by = {p["pid"]: p["job"]["rank"] for p in d["processes"]}
assert all(by[e["pid"]] == e["rank"] for e in d["timelines"]), d["timelines"]
names = sorted(e["args"]["name"].split(" (")[1] for e in json.load(open(sys.argv[2]))["traceEvents"]
               if e["ph"] == "M")
assert [n.split(",")[0] for n in names] == ["rank %d" % r for r in range(4)], names
PYEOF
expect_block under err "leaked by $P [device 0, cuMemAlloc_v2, ranks 0-3]
==    on 4 of 4 ranks: 3,145,728 bytes in 1 allocation each"
expect_in under err "==    on 2 of 4 ranks: 2,097,152 bytes in 2 allocations each"
expect_in under err "==    rank 3 (pid "
expect_in under err "== RANKS: 4 of 4 reported"
run killed "$AUDIT" --allow-missing-reports "${MPIRUN[@]}" "$P" -s 1,3 -k 2 -W
expect_rc killed 125
expect_in killed err "[device 0, cuMemAlloc_v2, ranks 0,1,3]"
expect_in killed err "==    on 3 of 4 ranks: 3,145,728 bytes in 1 allocation each"
expect_in killed err "== MISSING RANKS: 1 of 4 left no report: 2"
expect_in killed err " (rank 2: $P -s 1,3 -k 2 -W) used CUDA under the shim and left no report: "
expect_in killed err "1 rank of 4 left no report (listed above): the audit is incomplete (--allow-missing-ranks accepts that)"
expect_not_in killed err "==    rank 2 (pid "
run killok "$AUDIT" --allow-missing-reports --allow-missing-ranks \
    "${MPIRUN[@]}" "$P" -k 2 -W
expect_rc killok 23
expect_in killok err "== MISSING RANKS: 1 of 4 left no report: 2"

# python3 -c "$MOVE" DIR OUT N PER: the per-rank documents of DIR (the
# tools' --json, one process each) copied into OUT as the N ranks of a
# job on hosts of PER ranks each (host nodeK, pids 100, 101, ...): each
# document's rank, pid, host and boot id changed, its findings' too.
MOVE='import json, os, sys
src = sorted(os.listdir(sys.argv[1]))
docs = [json.load(open(os.path.join(sys.argv[1], n))) for n in src]
docs.sort(key=lambda d: d["processes"][0]["job"]["rank"])
n = int(sys.argv[3])
per = int(sys.argv[4]) if len(sys.argv) > 4 else 2
for r in range(n):
    d = json.loads(json.dumps(docs[r % len(docs)]))
    p = d["processes"][0]
    host, pid = "node%d" % (r // per), 100 + r % per
    p["host"], p["pid"] = host, pid
    p["boot_id"] = "%08d-0000-4000-8000-000000000000" % (r // per)
    p["job"].update(rank=r, local_rank=r % per, world_size=n)
    for f in d["leaks"] + d["violations"] + d["suppressed"]:
        f["pids"], f["hosts"] = [pid], [host]
    json.dump(d, open(os.path.join(sys.argv[2], "%d.json" % r), "w"))
'

# 2b. The shim alone under mpirun (no tool): its reports, named by
# CUWARDEN_REPORT's %j.%r, merged by report; the killed rank missing.
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
mkdir "$WORK/raw"
run raw "${MPIRUN[@]}" -x LD_PRELOAD="$SHIM" -x CUWARDEN_REPORT="$WORK/raw/%j.%r.json" \
    "$P" -s 1,3 -k 2 -W
ls "$WORK/raw" | grep -q '^[^.]*\.3\.json$' || { fail "raw: no JOB.3.json"; ls "$WORK/raw"; }
run rawrep "$AUDIT" report "$WORK/raw"
expect_rc rawrep 125
expect_in rawrep err "==    on 2 of 4 ranks: 2,097,152 bytes in 2 allocations each"
expect_in rawrep err "== MISSING RANKS: 1 of 4 left no report: 2"

# 3. Two hosts: the per-rank documents copied as two machines' (ranks
# 0-1 on node0, 2-3 on node1, each host's pids 100 and 101).
mkdir "$WORK/hosts"
"$PY" -c "$MOVE" "$WORK/out" "$WORK/hosts" 4 2 || exit 99
run hosts "$AUDIT" --json "$WORK/hosts.json" report "$WORK/hosts"
expect_rc hosts 23
expect_in hosts err "==    node0:rank 0 (pid 100, parent "
expect_in hosts err "==    node0:rank 1 (pid 101, parent "
expect_in hosts err "==    node1:rank 2 (pid 100, parent "
expect_in hosts err "==    node1:rank 3 (pid 101, parent "
expect_block hosts err "[device 0, cuMemAlloc_v2, ranks 0-3]
==    on 4 of 4 ranks: 3,145,728 bytes in 1 allocation each"
expect_block hosts err "[device 0, cuMemAlloc_v2, ranks 1,3]
==    on 2 of 4 ranks: 2,097,152 bytes in 2 allocations each"
expect_in hosts err "== COVERAGE: 4 processes audited"
expect_in hosts err "== ERROR SUMMARY: 8 errors (8 leaks, 0 violations)"
"$PY" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/hosts.json" || fail "hosts: JSON schema"
# Two jobs' documents in one report: said.
"$PY" - "$WORK/hosts/0.json" "$WORK/otherjob.json" <<'PYEOF' || exit 99
import json, sys
d = json.load(open(sys.argv[1]))
d["processes"][0]["job"]["id"] = "other-job"
d["processes"][0]["pid"] = 555
for f in d["leaks"]:
    f["pids"] = [555]
json.dump(d, open(sys.argv[2], "w"))
PYEOF
run twojobs "$AUDIT" report "$WORK/hosts" "$WORK/otherjob.json"
expect_in twojobs err "warning: the reports are of several jobs (ids "
expect_in twojobs err "their ranks are counted as one job's"
# One host's reports only: the other's ranks are missing.
mkdir "$WORK/half"
cp "$WORK/hosts/0.json" "$WORK/hosts/1.json" "$WORK/half/"
run half "$AUDIT" report "$WORK/half"
expect_rc half 125
expect_in half err "== MISSING RANKS: 2 of 4 left no report: 2,3"

# 4. Scale: 1,024 ranks' documents (128 hosts of 8) merged; the time
# printed, not asserted.
mkdir "$WORK/big"
"$PY" -c "$MOVE" "$WORK/out" "$WORK/big" 1024 8 || exit 99
PY_EXIT1='import json, sys
d = json.load(open(sys.argv[1]))
d["processes"][0]["exit"]["status"] = 1
json.dump(d, open(sys.argv[1], "w"))'
"$PY" -c "$PY_EXIT1" "$WORK/big/7.json" || exit 99
start=$(date +%s.%N)
run big "$AUDIT" --json "$WORK/big.json" --html "$WORK/big.html" report "$WORK/big"
end=$(date +%s.%N)
expect_rc big 23
expect_in big err "[device 0, cuMemAlloc_v2, ranks 0-1023]"
expect_in big err "==    on 1024 of 1024 ranks: 3,145,728 bytes in 1 allocation each"
expect_in big err "==    on 512 of 1024 ranks: 2,097,152 bytes in 2 allocations each"
expect_in big err "== RANKS: 1024 of 1024 reported"
# PROCESSES folded: a line per command and end (rank 7 exited 1), the
# ranks compact, the figures summed.
expect_in big err "== PROCESSES: 1,024, in 2 groups by command and end (-v lists each):"
expect_in big err "==    ranks 0-6,8-1023 (1,023 processes on 128 hosts): $P -s 1,3 -- exit 0, 2,045 allocations, 4,289,724,416 bytes leaked, 0 violations in all"
expect_in big err "==    rank 7: $P -s 1,3 -- exit 1, 3 allocations, 5,242,880 bytes leaked, 0 violations"
[ "$(grep -c '^==    rank' "$WORK/big.err")" = 2 ] || fail "big: PROCESSES not folded into two lines"
echo "1,024 rank reports merged (text, JSON, HTML) in $(echo "$end - $start" | bc 2>/dev/null || echo "?") s"

# The HTML pages' rank x owner view, where Chromium renders them: one row
# per owner however many ranks, its ranks listed.
CHROME=$(command -v chromium || command -v chromium-browser) && for page in merged big under; do
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$WORK/chrome-$page" --window-size=1400,1600 \
		--dump-dom "file://$WORK/$page.html" >"$WORK/$page.dom" 2>/dev/null ||
		fail "$page.html: chromium failed"
	grep -q 'data-rendered="yes"' "$WORK/$page.dom" || fail "$page.html: the page's script did not finish"
	[ "$(grep -o '<tr data-owner=' "$WORK/$page.dom" | wc -l)" = 1 ] ||
		fail "$page.html: not one rank x owner row"
done
# The timelines' page: a chart per rank, its caption naming the rank.
if [ -n "$CHROME" ]; then
	for r in 0 1 2 3; do
		grep -q "<figcaption>device 0 of rank $r (pid [0-9]*) (rankprog): peak " "$WORK/under.dom" ||
			fail "under.html: no chart captioned rank $r"
	done
fi
if [ -n "$CHROME" ]; then
	grep -q 'data-ranks="0–3"' "$WORK/merged.dom" || fail "merged.html: ranks 0–3 not in the rank x owner view"
	grep -q '<td class="cw-n">4 of 4</td>' "$WORK/merged.dom" || fail "merged.html: 4 of 4 not shown"
	grep -q 'data-ranks="0–1023"' "$WORK/big.dom" || fail "big.html: ranks 0–1023 not in the rank x owner view"
fi

finish
