#!/bin/bash
# Labels and numbers (issue 17), through the real binaries on the simulated
# driver: an invalid free labelled with the family of its call, for every
# free entry point; immediate messages with the driver's answer;
# --check-bounds messages with the range and what was done with the call;
# --num-callers at its boundaries; libcuwarden's reports without
# cuwarden's own frames, and their coverage line; digits grouped in every
# text line, --plain-summary for compute-sanitizer's summary lines.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/cuprog"
LP="$top_builddir/tests/tools/libprog"
TPD="$top_builddir/tests/preload/tp_driver"
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
for f in "$P" "$LP" "$TPD" "$SHIM"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
for v in $(env | sed -n 's/^\(CUWARDEN_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# 1. An invalid free carries the family of its call: the report's
# "family", the text's label (never "host" for device memory).
run bad "$AUDIT" --json "$WORK/bad.json" "$P" badfrees
expect_rc bad 23
for af in cuMemFree_v2:device cuMemFreeAsync:device cuMemFreeHost:host \
    cuMemHostUnregister:host cuIpcCloseMemHandle:device \
    cuMemRelease:device cuMemAddressFree:device cuMemUnmap:device \
    cuArrayDestroy:device; do
	api=${af%%:*}
	expect_in bad err "== invalid_free: $api of 0xdead"
	grep -F "== invalid_free: $api of 0xdead" "$WORK/bad.err" |
	    grep -qF ", 1 time [${af#*:}, pid " ||
	    fail "bad: $api not labelled ${af#*:}"
done
"${PY:-python3}" - "$WORK/bad.json" <<'EOF' || fail "bad: families in the JSON"
import json, sys
want = {"cuMemFree_v2": "device", "cuMemFreeAsync": "device",
        "cuMemFreeHost": "pinned", "cuMemHostUnregister": "registered",
        "cuIpcCloseMemHandle": "ipc", "cuMemRelease": "vmm",
        "cuMemAddressFree": "va", "cuMemUnmap": "mapping",
        "cuArrayDestroy": "array"}
got = {v["api"]: v.get("family") for v in json.load(open(sys.argv[1]))["violations"]}
if got != want:
    print("families:", got)
    sys.exit(1)
EOF
# The merged document read back keeps the label.
run badback "$AUDIT" report "$WORK/bad.json"
expect_in badback err "== invalid_free: cuMemFree_v2 of 0xdead0000 -> CUDA_ERROR_INVALID_VALUE, 1 time [device, pid "

# 2. Immediate messages give the driver's answer, an invalid free's too.
expect_in bad err "cuwarden: invalid_free: cuMemFree_v2(0xdead0000) was never allocated (CUresult 1)"
expect_in bad err "cuwarden: invalid_free: cuMemHostUnregister(0xdead3000) was never allocated (CUresult 713)"
expect_in bad err "cuwarden: invalid_free: cuArrayDestroy(0xdead8000) was never allocated (CUresult 400)"

# 3. --check-bounds: the range, in the library's form, and the call
# forwarded (doc/shim.md); in pool mode, refused as the driver would.
run bounds "$AUDIT" --check-bounds "$TPD" bounds
expect_in bounds err "cuwarden: out_of_bounds: cuMemcpyHtoD_v2(0x"
expect_in bounds err "of device memory (4096 bytes): [4000, 4000 + 200) outside it; forwarded to the driver"
expect_in bounds err "of device memory (8192 bytes): [8190, 8190 + 4) outside it; forwarded to the driver"
expect_not_in bounds err "nothing done"
run poolb env CUWARDEN_MODE=pool CUWARDEN_CHECK_BOUNDS=1 LD_PRELOAD="$SHIM" "$TPD" bounds
expect_in poolb err "of device memory (4096 bytes): [4000, 4000 + 200) outside it; refused, nothing done (CUresult 1)"
expect_not_in poolb err "forwarded"
# The library's message: the same form, refused.
run lib "$LP" "$WORK/lib.json" "$WORK/lib.txt"
expect_rc lib 0
expect_in lib err "out_of_bounds: cw_upload(0x"
expect_in lib err "of device memory (64 bytes): [60, 60 + 8) outside it; refused, nothing done"

# 4. --num-callers N: cuprog's leak stack shows 3 frames (alloc_buf,
# leak_some, main); what is cut counts only frames that would show.
run nc1 "$AUDIT" --num-callers 1 "$P" leak
expect_in nc1 err "==    ... 2 more frames"
expect_not_in nc1 err ": leak_some ("
run nc2 "$AUDIT" --num-callers=2 "$P" leak
expect_in nc2 err ": leak_some ("
expect_in nc2 err "==    ... 1 more frame"
expect_not_in nc2 err "1 more frames"
run nc3 "$AUDIT" --num-callers 3 "$P" leak
expect_in nc3 err ": main (cuprog.c:"
expect_not_in nc3 err "more frame"

# 5. libcuwarden's reports: no frame of cuwarden's own, in its text as in
# its JSON (the stacks start in the program), digits grouped.
expect_not_in lib txt "libcuwarden.so"
expect_in lib txt "#0  libprog+0x"
expect_in lib txt "65,536 bytes in 1 device allocation of 65,536 bytes leaked on device 0 (cw_alloc"
expect_in lib txt "out_of_bounds: cw_upload(0x"
expect_in lib txt ", range [60, 60 + 8)"
expect_in lib txt "LEAK SUMMARY: 135,168 bytes leaked in 3 allocations"
"${PY:-python3}" - "$WORK/lib.json" <<'EOF' || fail "lib: cuwarden's frames in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
mods = d["modules"]
for f in d["leaks"] + d["violations"]:
    for key in ("stack", "alloc_stack"):
        st = f.get(key) or []
        if st and "libcuwarden" in mods[st[0]["module"]]["path"]:
            print(key, "starts in", mods[st[0]["module"]]["path"])
            sys.exit(1)
EOF
run librep "$AUDIT" report "$WORK/lib.json"
expect_rc librep 23
expect_in librep err ": lib_leak (libprog.c:"
expect_not_in librep err "alloc_common"
expect_not_in librep err "contract_"
# The shim's annotations go through the library's contracts: their
# stacks start in the program as well.
run annot "$AUDIT" "$TPD" violations 0
expect_in annot err "== transfer_while_shared: cw_annotate_transfer of 0x"
expect_in annot err ": scenario_violations (tp_driver.c:"
expect_not_in annot err "contract_transfer"
expect_not_in annot err "(annotate.c:"
# 6. ... and the coverage line says what is true of it.
expect_in librep err "== COVERAGE: 1 process audited, using CUDA through libcuwarden (no shim: no hook counts)"
expect_not_in librep err "no CUDA activity"
expect_not_in librep err "hooks active in 0"
expect_in librep err "== invalid_free: cw_free of 0x7777, 1 time [pid "
expect_in librep err "== out_of_bounds: cw_upload of 0x"
grep -F "== out_of_bounds: cw_upload of 0x" "$WORK/librep.err" |
    grep -qF " [60, 60 + 8) (device allocation of 64 bytes)" ||
    fail "librep: no range in the out_of_bounds header"
# The range survives the merged document.
run libjson "$AUDIT" --json "$WORK/libm.json" report "$WORK/lib.json"
"${PY:-python3}" "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/libm.json" || fail "libjson: schema"
run libback "$AUDIT" report "$WORK/libm.json"
expect_in libback err " [60, 60 + 8) (device allocation of 64 bytes)"

# 7. Digits grouped in every line of the tool's text; --plain-summary
# gives compute-sanitizer's summary lines.
expect_in librep err "== LEAK SUMMARY: 135,168 bytes leaked in 3 allocations (3 groups)"
run plain "$AUDIT" --plain-summary report "$WORK/lib.json"
expect_in plain err "== LEAK SUMMARY: 135168 bytes leaked in 3 allocations (3 groups)"
expect_in plain err "== ERROR SUMMARY: 5 errors (3 leaks, 2 violations)"
expect_in plain err "== 65,536 bytes in 1 device allocation"
# The shim's own text report groups them too.
run shimtxt env CUWARDEN_REPORT="$WORK/shimtxt.txt" CUWARDEN_REPORT_FORMAT=text LD_PRELOAD="$SHIM" "$P" leak
expect_in shimtxt txt "LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations"
expect_in shimtxt txt "2,097,152 bytes in 2 device allocations of 1,048,576 bytes leaked"

finish
