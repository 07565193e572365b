#!/bin/sh
# The OOM report and the peak in every output of cuwarden-audit (issue 18,
# doc/audit.md "Out of memory", "Peaks"): tp_oom holds 3 x 1 MiB (site_a)
# and 2 x 4 MiB (site_b), frees one 1 MiB block (the peak was 11 MiB:
# site_b 8 MiB, site_a 3 MiB), then asks for 1 GiB of a 512 MiB device;
# run under cuwarden-audit --timeline with every output.
#   - SARIF: valid for code scanning (check_sarif.py); one result, rule
#     cuwarden.oom, level "note", at the request's stack, with the live
#     groups' stacks and the numbers as properties; the run fails nothing;
#   - JUnit: the process's test case passes (no failure: an OOM is no
#     error of the audit) and its <system-out> holds the OUT OF MEMORY
#     section, stacks symbolized;
#   - HTML, in headless Chromium (with tests/tools/html_mem_probe.js): an
#     "Out of memory" section first, above the summary: the request, the
#     device's free and total, the pools' cache absent (audit mode), the
#     live set by owner and stack largest first with symbolized stacks,
#     the last events in order; a "Peak memory" section: device 0 at
#     11,534,336 bytes, the table by stack largest first, the icicle graph
#     (root, main, site_b, site_a, the kind under each) with exact bytes
#     and widths;
#   - `report` of the merged document: the same SARIF result and JUnit
#     text, the page's stacks symbolized again; pool mode: the pools'
#     cached bytes in SARIF and the page.
# Skips the HTML part (not the test) where Chromium is not installed.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "SKIP: $AUDIT not built"; exit 77; }
export FAKECUDA_MEM=512M
MIB=1048576

"$AUDIT" --shim "$SHIM" --timeline --json "$WORK/m.json" --sarif "$WORK/m.sarif" \
	--junit "$WORK/m.xml" --html "$WORK/m.html" -- "$TP/tp_oom" >"$WORK/audit.txt" 2>&1
rc=$?
expect_rc 0 "cuwarden-audit --timeline, every output, tp_oom"
grep -q '^== OUT OF MEMORY in pid' "$WORK/audit.txt" && grep -q '^== PEAK: device 0: 11,534,336 bytes' "$WORK/audit.txt" ||
	{ fail "the text report lacks the OOM or the peak"; cat "$WORK/audit.txt"; }

# SARIF.
"$PY" "$top_srcdir/tests/tools/check_sarif.py" "$WORK/m.sarif" >"$WORK/sarifcheck" 2>&1 &&
	pass "sarif: valid for code scanning" || { fail "sarif: invalid"; cat "$WORK/sarifcheck"; }
if "$PY" - "$WORK/m.sarif" <<'PYEOF'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
rules = run["tool"]["driver"]["rules"]
res = [r for r in run["results"] if r["ruleId"] == "cuwarden.oom"]
bad = []
def want(c, what):
    if not c:
        bad.append(what)
want(len(res) == 1 and len(run["results"]) == 1, "one result, the OOM: %r" % [r["ruleId"] for r in run["results"]])
r = res[0]
rule = rules[r["ruleIndex"]]
want(rule["id"] == "cuwarden.oom" and rule["defaultConfiguration"]["level"] == "note", "rule %r" % rule)
want(r["level"] == "note", "level")
want(r["message"]["text"].startswith("Out of memory in pid ") and
     "cuMemAlloc_v2 of 1,073,741,824 bytes on device 0 failed (CUDA_ERROR_OUT_OF_MEMORY)" in r["message"]["text"] and
     "device free 526,385,152 of 536,870,912 bytes; live: 10,485,760 bytes in 4 allocations (2 groups" in r["message"]["text"],
     "message %r" % r["message"]["text"])
p = r["properties"]
MIB = 1 << 20
want((p["size"], p["device"], p["device_total"], p["live_bytes"], p["live_allocations"], p["live_groups"]) ==
     (1 << 30, 0, 512 * MIB, 10 * MIB, 4, 2) and p["pool_cached_bytes"] is None and
     p["cuda_error"] == "CUDA_ERROR_OUT_OF_MEMORY", "properties %r" % p)
want([(g["bytes"], g["count"]) for g in p["live_top"]] == [(8 * MIB, 2), (2 * MIB, 2)], "live_top")
names = lambda st: [f["location"].get("logicalLocations", [{}])[0].get("name") for f in st["frames"]]
st = r["stacks"]
want(len(st) == 3 and "too_much" in names(st[0]) and "site_b" in names(st[1]) and "site_a" in names(st[2]),
     "stacks %r" % [names(s) for s in st])
want("physicalLocation" in r["locations"][0], "location")
if bad:
    print("\n".join(bad)); sys.exit(1)
PYEOF
then pass "sarif: the OOM a note of rule cuwarden.oom, stacks and numbers exact"
else fail "sarif: the OOM result"; fi

# JUnit.
if "$PY" - "$WORK/m.xml" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
s = root.find("testsuite")
cases = s.findall("testcase")
bad = []
if root.get("failures") != "0" or root.get("errors") != "0" or len(cases) != 1:
    bad.append("counts %r, %d cases" % (root.attrib, len(cases)))
c = cases[0]
if c.find("failure") is not None or c.find("error") is not None:
    bad.append("a failure or error")
out = c.find("system-out")
text = out.text if out is not None else ""
lines = text.splitlines()
if not (lines and lines[0].startswith("OUT OF MEMORY in pid ") and
        "cuMemAlloc_v2 of 1,073,741,824 bytes on device 0 failed (CUDA_ERROR_OUT_OF_MEMORY)" in lines[0]):
    bad.append("first line %r" % lines[:1])
for want in ("   device free 526,385,152 of 536,870,912 bytes; live: 10,485,760 bytes in 4 allocations (2 groups by owner and stack)",
             "   requested at:"):
    if want not in lines:
        bad.append("no line %r" % want)
if not any("too_much" in l for l in lines) or not any("site_b" in l for l in lines):
    bad.append("stacks not symbolized")
if "\x01" in text or "\x1b" in text or "==" in text:
    bad.append("colour marks or == left")
if bad:
    print("\n".join(bad)); print(text); sys.exit(1)
PYEOF
then pass "junit: the test case passes, the OOM section in its system-out"
else fail "junit: the OOM in $WORK/m.xml"; fi

# Read back: `report` of the merged document gives the same SARIF result
# and JUnit text, and the page its stacks symbolized again.
"$AUDIT" --sarif "$WORK/r.sarif" --junit "$WORK/r.xml" --html "$WORK/r.html" report "$WORK/m.json" \
	>"$WORK/report.txt" 2>&1
rc=$?
expect_rc 0 "report m.json, every output"
"$PY" - "$WORK/m.sarif" "$WORK/r.sarif" "$WORK/m.xml" "$WORK/r.xml" <<'PYEOF' &&
import json, sys
import xml.etree.ElementTree as ET
a, b = (json.load(open(p))["runs"][0]["results"] for p in sys.argv[1:3])
strip = lambda rs: [(r["ruleId"], r["level"], r["message"]["text"], r["properties"], len(r["stacks"])) for r in rs]
out = lambda p: ET.parse(p).getroot().find("testsuite/testcase/system-out").text
sys.exit(not (strip(a) == strip(b) and out(sys.argv[3]) == out(sys.argv[4])))
PYEOF
	grep -q '"function":"too_much"' "$WORK/r.html" &&
	pass "report m.json: the same OOM result, system-out, and symbolized stacks in the page" ||
	fail "report m.json: the OOM's outputs differ from the run's"

# Pool mode: the pools' cache in the SARIF properties and the page.
"$AUDIT" --shim "$SHIM" --mode=pool --sarif "$WORK/p.sarif" --html "$WORK/p.html" -- "$TP/tp_oom" \
	>"$WORK/pool.txt" 2>&1
rc=$?
expect_rc 0 "cuwarden-audit --mode=pool tp_oom"
"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"]
sys.exit(not (len(r) == 1 and isinstance(r[0]["properties"]["pool_cached_bytes"], int)))' "$WORK/p.sarif" &&
	pass "pool mode: pool_cached_bytes in the SARIF result" || fail "pool mode: SARIF pool_cached_bytes"

# HTML: the embedded symbolized stacks, then the page in Chromium.
grep -q '<script type="application/json" id="cw-stacks">{"oom":\[{"request":\[' "$WORK/m.html" &&
	pass "html: the OOM's and peaks' stacks embedded, symbolized" || fail "html: no #cw-stacks"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
	echo "chromium is not installed: the page is not drawn"
	finish
}
"$PY" - "$WORK/m.html" "$WORK/probe.html" "$top_srcdir/tests/tools/html_mem_probe.js" <<'PYEOF' ||
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = open(sys.argv[3], encoding="utf-8").read()
assert page.count("</body>") == 1
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", "<script>\n" + probe + "\n</script>\n</body>"))
PYEOF
	fail "html: cannot add the probe"
# dom WIDTH PAGE OUT: the page drawn in headless Chromium, its DOM into
# OUT (stderr into OUT.err).
dom() {
	local profile
	profile=$(mktemp -d "$WORK/chrome.XXXXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --window-size="$1,1600" --dump-dom "file://$2" \
		>"$3" 2>"$3.err"
}
for w in 1400 800; do
	dom "$w" "$WORK/probe.html" "$WORK/p$w.out" || fail "html $w: chromium failed"
	grep -q 'data-rendered="yes"' "$WORK/p$w.out" || fail "html $w: the page's script did not finish"
	sed -n '/^[a-z_0-9]*=/p' "$WORK/p$w.out" >"$WORK/p$w.kv"
	"$PY" - "$WORK/p$w.kv" "$w" <<'PYEOF' && pass "html $w px: the OOM section first, the peak's table and icicle graph exact" ||
import re, sys
kv = {}
for line in open(sys.argv[1], encoding="utf-8"):
    k, _, v = line.rstrip("\n").partition("=")
    kv.setdefault(k, v)
want = {
    "error": None,
    "oom_shown": "yes", "oom_first": "yes", "oom_nav": "yes",
    "oom_heading": "Out of memory (1 process)",
    "oom_fact_device_free": "526,385,152 bytes (502 MiB) of 536,870,912 bytes (512 MiB) (98%)",
    "oom_fact_pool_cached": None,
    "oom_fact_live": "10,485,760 bytes (10 MiB) in 4 allocations, 2 groups by owner and stack",
    "oom_request_open": "yes",
    "oom_live_bytes": "8388608,2097152",
    "oom_live_row0": "8,388,608 bytes (8 MiB) | 80% | 2 | device | cuMemAlloc_v2 | 0",
    "oom_live_stacks": "site_b,site_a",
    "oom_recent": "alloc,alloc,alloc,alloc,alloc,free",
    "oom_fits": "yes",
    "peak_shown": "yes", "peak_nav": "yes",
    "peak_devices": "0:11534336",
    "peak_title": "Device 0: 11,534,336 bytes (11 MiB) at T s",
    "peak_sub": "Live then: 5 allocations in 2 groups by stack",
    "peak_rows": "8388608@site_b,3145728@site_a",
    "peak_row0": "8,388,608 bytes (8 MiB) | 72.7% | 2 | device",
    "peak_root": "device 0 at the peak@11534336@100%",
    "peak_cell_main": "11534336@100%",
    "peak_cell_site_a": "3145728@27.3%",
    "peak_cell_site_b": "8388608@72.7%",
    "peak_cell_device_memory": "8388608@72.7%",
    "peak_width_ratio": "0.73",
    "peak_below_main": "yes",
    "peak_font_min": "12",
}
bad = []
for k, v in want.items():
    if kv.get(k) != v:
        bad.append("%s is %r, want %r" % (k, kv.get(k), v))
t = kv.get("oom_title", "")
if not re.fullmatch(r"pid \d+: cuMemAlloc_v2 of 1,073,741,824 bytes \(1 GiB\) of device memory on device 0 failed \(CUDA_ERROR_OUT_OF_MEMORY\)", t):
    bad.append("oom_title %r" % t)
if not kv.get("oom_request_frames", "").startswith("too_much,main"):
    bad.append("request frames %r" % kv.get("oom_request_frames"))
if not kv.get("oom_live_owner_title", "").endswith("/tp_oom"):
    bad.append("owner %r" % kv.get("oom_live_owner_title"))
if not re.fullmatch(r"6 \| free \| cuMemFree_v2 \| device \| 1,048,576", kv.get("oom_recent_last", "")):
    bad.append("last event %r" % kv.get("oom_recent_last"))
if not kv.get("peak_title_attr", "").startswith("site_b: 8,388,608 bytes (8 MiB), 72.7% of the peak"):
    bad.append("title %r" % kv.get("peak_title_attr"))
if bad:
    print("\n".join(bad)); sys.exit(1)
PYEOF
		{ fail "html $w px: the OOM or peak sections (probe in $WORK/p$w.kv)"; cat "$WORK/p$w.kv"; }
done

# A program that allocates through the shared CUDA runtime (PyTorch,
# CuPy, most programs): its stacks start in libcudart.so, which has no
# symbols.  The same page with two such frames atop each peak stack: the
# table's "allocated in" is still the program's frame, not libcudart.
"$PY" - "$WORK/probe.html" "$WORK/probe_rt.html" <<'PYEOF' || fail "html: cannot add the runtime frames"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="cw-stacks">)(.*?)(</script>)', page, re.S)
d = json.loads(m.group(2))
rt = [{"module": "/usr/local/cuda/lib64/libcudart.so.13", "offset": o} for o in ("0x41b5e", "0x146f3")]
for p in d["peaks"]:
    for dev in p["devices"]:
        for st in dev:
            st[:0] = rt
page = page[:m.start(2)] + json.dumps(d).replace("</", "<\\/") + page[m.end(2):]
open(sys.argv[2], "w", encoding="utf-8").write(page)
PYEOF
dom 1400 "$WORK/probe_rt.html" "$WORK/rt.out" || fail "html runtime frames: chromium failed"
grep -qx 'peak_rows=8388608@site_b,3145728@site_a' "$WORK/rt.out" &&
	pass "html: the peak table's \"allocated in\" past the shared runtime's frames" ||
	{ fail "html: the peak table's sites under libcudart.so frames"; grep '^peak_rows=' "$WORK/rt.out"; }

# The pool-mode page: the pools' cache shown.
dom 1400 "$WORK/p.html" "$WORK/pool.dom" || fail "html pool: chromium failed"
grep -Eq '<div data-fact="pool_cached"><dt>Cached by the pools</dt><dd>[0-9,]+ bytes.* \(free to the program, not to the driver\)</dd></div>' "$WORK/pool.dom" &&
	pass "html pool mode: the pools' cached bytes shown" ||
	{ fail "html pool mode: no pools' cache"; grep -o '<dl class="cw-oom-facts">.*</dl>' "$WORK/pool.dom"; }

finish
