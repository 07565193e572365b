#!/bin/bash
# cuwarden-audit diff on hand-made reports (tests/tools/data): groups
# matched by whole stack across two processes' reports, what grew first
# with its stack, a merged --json read as one side, --json, the exit
# statuses (0; --error-exitcode N when something grew; 125 for a bad
# command line or an unreadable file); and snapshot's usage errors.
# tests/preload/check_snapshot.sh runs both on a live process.
. "$top_srcdir/tests/tools/testlib.sh"

run grew "$AUDIT" diff "$DATA/proc_b.json" "$DATA/proc_a.json" --json "$WORK/d.json"
expect_rc grew 0
expect_block grew err "== GREW: +2,097,152 bytes (+2 allocations) from 1,048,576 to 3,145,728 bytes, device cuMemAlloc_v2
==    at 0x1a2b: ??? (in /opt/app/libmodel.so, module file not found)"
expect_in grew err "== GREW: +262,144 bytes (+1 allocation) from 0 to 262,144 bytes, pinned cuMemHostAlloc"
# (proc_a's cuBLAS workspace, which a report's built-in rules hide, grew
# too: diff applies none of them.)
expect_in grew err "== GREW: +1,048,576 bytes (+1 allocation) from 0 to 1,048,576 bytes, device cuMemAlloc_v2"
[ "$(grep -c '^== GREW' "$WORK/grew.err")" = 3 ] || fail "grew: not three GREW lines"
[ "$(grep -n '^== GREW: +2,097,152' "$WORK/grew.err" | cut -d: -f1)" -lt \
  "$(grep -n '^== GREW: +262,144' "$WORK/grew.err" | cut -d: -f1)" ] ||
	fail "grew: not largest growth first"
expect_in grew err "== DIFF SUMMARY: +3,407,872 bytes (+4 allocations); live 1,048,576 bytes in $DATA/proc_b.json, 4,456,448 bytes in $DATA/proc_a.json; 3 groups grew, 0 shrank or went"
python3 - "$WORK/d.json" <<'PYEOF' || fail "diff --json: not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "cuwarden-diff" and d["version"] == 1
assert [(g["bytes"], g["allocations"], g["kind"]) for g in d["grew"]] == \
    [(2097152, 2, "device"), (1048576, 1, "device"), (262144, 1, "pinned")], d["grew"]
assert d["shrank"] == [] and d["totals"]["grew_bytes"] == 3407872
PYEOF

run shrank "$AUDIT" diff "$DATA/proc_a.json" "$DATA/proc_b.json" --error-exitcode=4
expect_rc shrank 0
expect_in shrank err "== nothing grew"
expect_in shrank err "== SHRANK OR FREED: -3,407,872 bytes in 3 groups"

run fail "$AUDIT" diff --error-exitcode 4 "$DATA/proc_b.json" "$DATA/proc_a.json"
expect_rc fail 4

# The built-in suppressions do not apply to diff (they hide the
# frameworks' caches, which in a running process are the memory asked
# about); a --suppressions file does.
for f in proc_a proc_b; do
	sed 's|/opt/app/libmodel.so|/opt/torch/lib/libc10_cuda.so|g' "$DATA/$f.json" >"$WORK/t_$f.json"
done
run torch "$AUDIT" diff "$WORK/t_proc_b.json" "$WORK/t_proc_a.json"
expect_rc torch 0
expect_in torch err "== GREW: +2,097,152 bytes (+2 allocations) from 1,048,576 to 3,145,728 bytes, device cuMemAlloc_v2"
run torchrep "$AUDIT" report "$WORK/t_proc_a.json"
expect_in torchrep err "== SUPPRESSED: 4,194,304 bytes in 4 allocations"
printf 'leak:libc10_cuda.so\n' >"$WORK/torch.supp"
run torchsupp "$AUDIT" --suppressions="$WORK/torch.supp" diff "$WORK/t_proc_b.json" "$WORK/t_proc_a.json"
expect_rc torchsupp 0
expect_not_in torchsupp err "== GREW: +2,097,152"

# A merged document is one side.
run merged "$AUDIT" --json "$WORK/m.json" report "$DATA/proc_a.json"
run same "$AUDIT" diff "$WORK/m.json" "$DATA/proc_a.json"
expect_rc same 0
expect_in same err "== nothing grew"

run one "$AUDIT" diff "$DATA/proc_a.json"
expect_rc one 125
expect_in one err "diff: give two reports (diff A B)"
run three "$AUDIT" diff a b c
expect_rc three 125
run missing "$AUDIT" diff "$WORK/none.json" "$DATA/proc_a.json"
expect_rc missing 125
expect_in missing err "none.json"
run help "$AUDIT" diff --help
expect_rc help 0
expect_in help out "Usage: cuwarden-audit [filtering options] diff A B [--json FILE]"

run snone "$AUDIT" snapshot
expect_rc snone 125
expect_in snone err "snapshot: give the process id"
run sbad "$AUDIT" snapshot 12x
expect_rc sbad 125
run swait "$AUDIT" snapshot 1 --wait 0
expect_rc swait 125
expect_in swait err "snapshot --wait"
run sself "$AUDIT" snapshot $$
expect_rc sself 125
expect_in sself err "does not run under the cuwarden shim"
run shelp "$AUDIT" snapshot --help
expect_rc shelp 0
expect_in shelp out "Usage: cuwarden-audit [output options] snapshot PID [--wait SECONDS]"

finish
