#!/bin/bash
# torchrun_ranks.sh BUILDDIR -- a 2-rank torchrun job (gloo, both ranks on
# one GPU, tests/gpu/torchrun_ranks.py) audited both ways (doc/audit.md,
# "Auditing a distributed job"), for the lead's GPU run (not in make
# check-gpu):
#   A. the launcher under the tool: cuwarden-audit torchrun ...;
#   B. the tool under the launcher: torchrun --no-python cuwarden-audit
#      --json out/%r.json ..., then cuwarden-audit report out/;
# each checked: processes named "rank 0" and "rank 1"; the leak of every
# rank folded "on 2 of 2 ranks: 3,158,016 bytes in 1 allocation each"
# ([... ranks 0,1]); rank 1's "on 1 of 2 ranks" ([... rank 1]); "RANKS: 2
# of 2 reported"; the merged JSON's ranks.  With --timeline (A only): each
# rank's peaks in the merged document.
# Environment: CUWARDEN_AUDIT, CUWARDEN_PRELOAD, PYTHON (python3),
# TORCHRUN (torchrun), CW_GPU_WORK (work directory, kept).
# Prints PASS:/FAIL: per check; exit 0, 1 (a failure), 77 (no GPU, torch or
# torchrun), 99 (the tool or shim not built).
set -u
B=$(cd "${1:-.}" && pwd) || exit 99
AUDIT=${CUWARDEN_AUDIT:-$B/tools/cuwarden-audit}
SHIM=${CUWARDEN_PRELOAD:-$B/preload/.libs/libcuwarden_preload.so}
PY=${PYTHON:-python3}
TORCHRUN=${TORCHRUN:-torchrun}
here=$(cd "$(dirname "$0")" && pwd)
W=${CW_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cw-torchrun.XXXXXX")}
mkdir -p "$W"
[ -x "$AUDIT" ] && [ -e "$SHIM" ] || { echo "harness: $AUDIT or $SHIM not built"; exit 99; }
{ nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; } || { echo "SKIP: no GPU"; exit 77; }
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "SKIP: no torch"; exit 77; }
command -v "$TORCHRUN" >/dev/null || { echo "SKIP: no $TORCHRUN"; exit 77; }
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# want NAME FILE TEXT: TEXT (fixed) in FILE
want() { grep -qF -- "$3" "$2" && pass "$1: $3" || { fail "$1: \"$3\" not found"; head -60 "$2" | sed 's/^/    | /'; }; }

check() { # NAME TEXTFILE JSON
	want "$1" "$2" "==    rank 0 (pid "
	want "$1" "$2" "==    rank 1 (pid "
	want "$1" "$2" "ranks 0,1]"
	want "$1" "$2" "==    on 2 of 2 ranks: 3,158,016 bytes in 1 allocation each"
	want "$1" "$2" "rank 1]"
	want "$1" "$2" "==    on 1 of 2 ranks: 393,216 bytes in 1 allocation each"
	want "$1" "$2" "== RANKS: 2 of 2 reported"
	"$PY" - "$3" <<'PYEOF' && pass "$1: merged JSON ranks" || fail "$1: merged JSON ranks"
import json, sys
d = json.load(open(sys.argv[1]))
def rank(p):
    return (p.get("job") or {}).get("rank")
ranked = sorted({rank(p) for p in d["processes"] if rank(p) is not None})
assert ranked == [0, 1], ranked
assert all(p["job"]["launcher"] == "torchrun" for p in d["processes"] if rank(p) is not None)
got = {(l["kind"], l["size"]): l["ranks"] for l in d["leaks"]}
assert got.get(("device", 3158016)) == [0, 1], got
assert got.get(("pinned", 393216)) == [1], got
assert d["job"]["world_size"] == 2 and d["job"]["missing_ranks"] == [], d["job"]
for p in d["processes"]:
    if rank(p) is not None and p["gpus"]["used"]:
        assert [g["device"] for g in p["gpus"]["used"]] == [0], p["gpus"]
        assert (p["gpus"]["used"][0]["uuid"] or "").startswith("GPU-"), p["gpus"]
PYEOF
}

# A. The launcher under the tool, with timelines.
(cd "$W" && timeout -k 10 600 "$AUDIT" --preload "$SHIM" --timeline \
    --json "$W/a.json" --html "$W/a.html" --log-file "$W/a.txt" -- \
    "$TORCHRUN" --nproc_per_node=2 "$here/torchrun_ranks.py" >"$W/a.out" 2>"$W/a.err")
rc=$?
[ "$rc" = 23 ] && pass "A: cuwarden-audit torchrun exits 23" || { fail "A: exit $rc (want 23)"; tail -20 "$W/a.err"; }
check A "$W/a.txt" "$W/a.json"
"$PY" - "$W/a.json" <<'PYEOF' && pass "A: each rank's peaks in the merged document" || fail "A: each rank's peaks"
import json, sys
d = json.load(open(sys.argv[1]))
pids = {p["pid"] for p in d["processes"] if (p.get("job") or {}).get("rank") is not None and p["gpus"]["used"]}
got = {pk.get("pid") for pk in d.get("peaks", [])}
assert pids <= got, (pids, got)
PYEOF

# B. The tool under the launcher: one document per rank, then report.
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W" && timeout -k 10 600 "$TORCHRUN" --nproc_per_node=2 --no-python \
    "$AUDIT" --preload "$SHIM" -q --error-exitcode=0 --json "$W/out/%r.json" \
    "$PY" "$here/torchrun_ranks.py" >"$W/b.out" 2>"$W/b.err")
rc=$?
[ "$rc" = 0 ] && pass "B: torchrun cuwarden-audit exits 0" || { fail "B: exit $rc (want 0)"; tail -20 "$W/b.err"; }
[ -s "$W/out/0.json" ] && [ -s "$W/out/1.json" ] && pass "B: out/0.json and out/1.json" || { fail "B: per-rank files"; ls "$W/out"; }
"$AUDIT" --json "$W/b.json" --html "$W/b.html" report "$W/out" >"$W/b.txt" 2>&1
rc=$?
[ "$rc" = 23 ] && pass "B: report out/ exits 23" || fail "B: report exits $rc (want 23)"
check B "$W/b.txt" "$W/b.json"

echo "torchrun-ranks: $fails failed; everything is in $W"
[ "$fails" = 0 ]
