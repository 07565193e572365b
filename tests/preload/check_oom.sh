#!/bin/sh
# The OOM report (issue 18, doc/shim.md "The OOM report"): tp_oom holds
# two 1 MiB blocks from one call site and two 4 MiB blocks from another,
# then asks for 1 GiB of a 512 MiB device, twice.
#   - the program sees exactly CUDA_ERROR_OUT_OF_MEMORY (2) both times and
#     prints what it prints without the shim; exit status 0;
#   - CUWARDEN_REPORT=P: P.oom is one valid JSON document, mode 0600: the
#     request (api, kind, size, device, error), cuMemGetInfo's free and
#     total, the live set by owner and stack (exact bytes, counts, two
#     distinct stacks), the last allocations and frees in order; one
#     report for two OOMs, the second counted in a message at exit;
#   - pool mode: the same facts, the pools' cached bytes given;
#   - CUWARDEN_REPORT unset: the text form on standard error, and none
#     with CUWARDEN_EXIT_REPORT=never;
#   - cuwarden-audit shows the OOM first, before the leaks, exit status
#     the program's (an OOM is not an error by itself), and its --json
#     carries the document.
. "${top_srcdir:-.}/tests/preload/lib.sh"

export FAKECUDA_MEM=512M

plain oom.plain "$TP/tp_oom"
expect_rc 0 "tp_oom without the shim"
grep -qx 'first: 2' "$WORK/oom.plain.out" && grep -qx 'second: 2' "$WORK/oom.plain.out" ||
	{ fail "the simulated driver does not refuse 1 GiB of 512 MiB"; cat "$WORK/oom.plain.out"; }

for mode in audit pool; do
	CUWARDEN_MODE=$mode CUWARDEN_REPORT=$WORK/$mode.json run oom.$mode "$TP/tp_oom"
	expect_rc 0 "tp_oom in $mode mode"
	if cmp -s "$WORK/oom.plain.out" "$WORK/oom.$mode.out"; then
		pass "$mode: the program saw what the driver said (OUT_OF_MEMORY twice)"
	else
		fail "$mode: the program's output changed"; diff "$WORK/oom.plain.out" "$WORK/oom.$mode.out"
	fi
	set -- "$WORK"/$mode.json.oom*
	[ $# -eq 1 ] && [ -f "$1" ] && pass "$mode: one OOM report for two OOMs" ||
		fail "$mode: $# OOM reports: $*"
	[ "$(stat -c %a "$WORK/$mode.json.oom")" = 600 ] && pass "$mode: OOM report mode 0600" ||
		fail "$mode: OOM report mode $(stat -c %a "$WORK/$mode.json.oom")"
	grep -q '1 more allocation ran out of memory' "$WORK/oom.$mode.err" &&
		pass "$mode: the second OOM counted at exit" ||
		{ fail "$mode: the second OOM not said"; cat "$WORK/oom.$mode.err"; }
	if "$PY" - "$WORK/$mode.json.oom" "$mode" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
mode = sys.argv[2]
MIB = 1 << 20
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
want(r["format"] == "cuwarden-oom" and r["version"] == 1, "format")
want(r["mode"] == mode, "mode")
q = r["request"]
want(q["api"] == "cuMemAlloc_v2" and q["kind"] == "device" and
     q["size"] == 1024 * MIB and q["device"] == 0, "request %r" % q)
want(q["cuda_error"] == "CUDA_ERROR_OUT_OF_MEMORY" and
     q["cuda_error_code"] == 2, "error")
want(len(q["stack"]) > 0, "request stack")
m = r["device_memory"]
want(m["total"] == 512 * MIB and m["error"] is None, "device memory %r" % m)
if mode == "audit":
    # the fake driver's free: total less the live spans (10 MiB)
    want(m["free"] == 502 * MIB, "free %r" % m["free"])
    want(r["pool_cached_bytes"] is None, "no pools")
else:
    want(0 <= m["free"] <= m["total"], "free")
    want(isinstance(r["pool_cached_bytes"], int) and
         r["pool_cached_bytes"] >= 0, "pool cached")
L = r["live"]
want(L["complete"] and L["bytes"] == 10 * MIB and L["allocations"] == 4 and
     L["groups"] == 2, "live %r" % {k: L[k] for k in L if k != "top"})
t = L["top"]
want([(g["bytes"], g["count"], g["kind"], g["api"], g["device"]) for g in t] ==
     [(8 * MIB, 2, "device", "cuMemAlloc_v2", 0),
      (2 * MIB, 2, "device", "cuMemAlloc_v2", 0)], "groups %r" % t)
want(len(t) == 2 and t[0]["stack"] != t[1]["stack"] and
     t[0]["stack"] and t[1]["stack"], "two distinct stacks")
ev = [(e["event"], e["api"], e["size"]) for e in r["recent"]]
want(ev == [("alloc", "cuMemAlloc_v2", MIB)] * 3 +
     [("alloc", "cuMemAlloc_v2", 4 * MIB)] * 2 +
     [("free", "cuMemFree_v2", MIB)], "recent %r" % ev)
want([e["seq"] for e in r["recent"]] == list(range(1, 7)), "seq")
want(r["recent"][5]["address"] == r["recent"][2]["address"], "freed block")
nm = len(r["modules"])
for s in [q["stack"]] + [g["stack"] for g in t] + [e["stack"] for e in r["recent"]]:
    for f in s:
        want(-1 <= f["module"] < nm, "module index")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
	then pass "$mode: OOM report: request, device memory, live set, last events exact"
	else fail "$mode: OOM report $WORK/$mode.json.oom wrong"; fi
done

# Without CUWARDEN_REPORT: the text on standard error.
run oom.stderr "$TP/tp_oom"
expect_rc 0 "tp_oom, no CUWARDEN_REPORT"
cmp -s "$WORK/oom.plain.out" "$WORK/oom.stderr.out" && pass "stderr: stdout unchanged" ||
	fail "stderr: stdout changed"
if grep -qx '== OUT OF MEMORY in pid [0-9]*: cuMemAlloc_v2 of 1,073,741,824 bytes (device) on device 0 failed (CUDA_ERROR_OUT_OF_MEMORY), mode audit' "$WORK/oom.stderr.err" &&
    grep -qx 'device free 526,385,152 of 536,870,912 bytes' "$WORK/oom.stderr.err" &&
    grep -qx 'live: 10,485,760 bytes in 4 allocations, 2 groups by owner and stack' "$WORK/oom.stderr.err" &&
    grep -qx '  8,388,608 bytes in 2 device allocations (cuMemAlloc_v2, owner .*/tp_oom, device 0)' "$WORK/oom.stderr.err" &&
    grep -qx '  #6 free  cuMemFree_v2 device 1,048,576 bytes at 0x[0-9a-f]* on device 0' "$WORK/oom.stderr.err" &&
    [ "$(grep -c '^== OUT OF MEMORY' "$WORK/oom.stderr.err")" = 1 ]; then
	pass "stderr: the OOM report as text, once"
else
	fail "stderr: the text OOM report is not as expected:"; cat "$WORK/oom.stderr.err"
fi
CUWARDEN_EXIT_REPORT=never run oom.never "$TP/tp_oom"
expect_rc 0 "tp_oom, CUWARDEN_EXIT_REPORT=never"
grep -q 'OUT OF MEMORY' "$WORK/oom.never.err" && fail "never: an OOM report on stderr" ||
	pass "never: no OOM report on stderr"

# CUWARDEN_LOG_FILE set: the text goes there (with the shim's lines and
# the report at exit), standard error stays empty.
CUWARDEN_LOG_FILE=$WORK/oom.log run oom.logf "$TP/tp_oom"
expect_rc 0 "tp_oom, CUWARDEN_LOG_FILE set"
if [ ! -s "$WORK/oom.logf.err" ] &&
    [ "$(grep -c '^== OUT OF MEMORY in pid' "$WORK/oom.log")" = 1 ] &&
    grep -qx 'live: 10,485,760 bytes in 4 allocations, 2 groups by owner and stack' "$WORK/oom.log"; then
	pass "CUWARDEN_LOG_FILE: the OOM report there, nothing on stderr"
else
	fail "CUWARDEN_LOG_FILE: stderr:"; cat "$WORK/oom.logf.err"; echo "log:"; cat "$WORK/oom.log"
fi
# CUWARDEN_REPORT=/dev/stdout: the report's stream takes the OOM text.
CUWARDEN_REPORT=/dev/stdout run oom.stdout "$TP/tp_oom"
expect_rc 0 "tp_oom, CUWARDEN_REPORT=/dev/stdout"
[ "$(grep -c '^== OUT OF MEMORY in pid' "$WORK/oom.stdout.out")" = 1 ] && ! [ -e /dev/stdout.oom ] &&
	pass "CUWARDEN_REPORT=/dev/stdout: the OOM text on standard output" ||
	{ fail "CUWARDEN_REPORT=/dev/stdout: no OOM text on stdout"; cat "$WORK/oom.stdout.out"; }

# cuwarden-audit: the OOM first, the program's status, --json carries it.
AUDIT=$top_builddir/tools/cuwarden-audit
if [ -x "$AUDIT" ]; then
	"$AUDIT" --shim "$SHIM" --json "$WORK/merged.json" -- "$TP/tp_oom" \
		>"$WORK/audit.txt" 2>&1
	rc=$?
	expect_rc 0 "cuwarden-audit tp_oom (an OOM is no error by itself)"
	first=$(grep '^==' "$WORK/audit.txt" | head -1)
	case $first in
	"== OUT OF MEMORY in pid "*": cuMemAlloc_v2 of 1,073,741,824 bytes on device 0 failed (CUDA_ERROR_OUT_OF_MEMORY)")
		pass "audit: the OOM section comes first" ;;
	*) fail "audit: first line '$first'"; cat "$WORK/audit.txt" ;;
	esac
	grep -qx '==    device free 526,385,152 of 536,870,912 bytes; live: 10,485,760 bytes in 4 allocations (2 groups by owner and stack)' "$WORK/audit.txt" &&
		grep -q '^==    live: 8,388,608 bytes in 2 device allocations (cuMemAlloc_v2, owner .*tp_oom)$' "$WORK/audit.txt" &&
		grep -q '^==      free  cuMemFree_v2 device 1,048,576 bytes at 0x' "$WORK/audit.txt" &&
		pass "audit: device memory, live groups, last events shown" ||
		{ fail "audit: the OOM section is not as expected"; cat "$WORK/audit.txt"; }
	# Its stacks symbolized as the findings' are: the request's in
	# too_much, the live groups' in site_b and site_a, each called by main.
	sed -n '/^==    requested at:$/,/^==    last allocations/p' "$WORK/audit.txt" |
	    grep -E '^==    (at|by) 0x[0-9a-f]+: ' | sed -E 's/^==    (at|by) 0x[0-9a-f]+: ([a-z_]+) .*/\1 \2/' |
	    tr '\n' ' ' >"$WORK/frames"
	[ "$(cat "$WORK/frames")" = "at too_much by main at site_b by main at site_a by main " ] &&
		pass "audit: the OOM's stacks symbolized (request, then each live group)" ||
		{ fail "audit: OOM stacks: '$(cat "$WORK/frames")'"; cat "$WORK/audit.txt"; }
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
o = d["oom"]
sys.exit(not (len(o) == 1 and o[0]["format"] == "cuwarden-oom" and
    o[0]["request"]["size"] == 1 << 30 and o[0]["pid"] == d["processes"][0]["pid"]))
' "$WORK/merged.json" && pass "audit --json: \"oom\" carries the report" ||
		fail "audit --json: no \"oom\" member as expected"
	"$AUDIT" report "$WORK/merged.json" >"$WORK/again.txt" 2>&1
	grep -q '^== OUT OF MEMORY in pid' "$WORK/again.txt" &&
		pass "audit report merged.json: the OOM read back" ||
		{ fail "audit report merged.json: the OOM lost"; cat "$WORK/again.txt"; }
fi

# A VMM handle released while mapped goes with its mapping's unmap: that
# free, the mapping's and the range's are in the recent events too.
TP_OOM_VMM=1 CUWARDEN_REPORT=$WORK/vmm.json run oom.vmm "$TP/tp_oom"
expect_rc 0 "tp_oom with a VMM round"
"$PY" - "$WORK/vmm.json.oom" <<'PYEOF' && pass "recent events: the VMM frees (the handle with its last mapping)" ||
import json, sys
r = json.load(open(sys.argv[1]))
ev = [(e["event"], e["api"], e["kind"]) for e in r["recent"]]
want = [("alloc", "cuMemCreate", "vmm"), ("alloc", "cuMemAddressReserve", "va"),
        ("alloc", "cuMemMap", "mapping"), ("free", "cuMemUnmap", "mapping"),
        ("free", "cuMemUnmap", "vmm"), ("free", "cuMemAddressFree", "va")]
sys.exit(ev[6:] != want and "recent %r" % ev)
PYEOF
	{ fail "recent events of the VMM round"; "$PY" -c 'import json,sys; print([(e["event"], e["api"], e["kind"]) for e in json.load(open(sys.argv[1]))["recent"]])' "$WORK/vmm.json.oom"; }

finish
