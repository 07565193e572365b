#!/bin/sh
# Memory over time (issue 18; doc/audit.md "Memory over time", "Growing";
# doc/report-schema.md "Timelines"): tp_growth on two fake devices keeps
# 8 MiB (site_keep), grows 1 MiB a step for 64 steps (site_grow),
# allocates and frees 4 MiB a step (site_saw), grows 4 MiB in its first 8
# steps then stays (site_warm), 2 MiB on device 1 and 256 KiB of pinned
# host memory, and frees everything before it exits.
#   - --json's timelines: devices 0, 1 and host; each device's points at
#     most 1000, in time order, their largest the peak (= peaks'), the
#     owners' and the stacks' bytes adding up to the total at every point;
#   - growing: site_grow alone (not keep, saw nor warm), in text (a
#     GROWING section after the PEAK sections) and JSON;
#   - --trace: a Chrome trace (0600, replacing a planted link, not
#     following it): process_name, counters per device and per owner, the
#     device counter at the peak's time equal to the peak;
#   - `report` of the merged document: the same timelines and trace;
#   - tp_timeline with 20,000 more events: still at most 1000 points a
#     device, the 11 MiB peak kept; nothing growing;
#   - --html in headless Chromium (skipped without it): a chart per
#     device, the peak marker's bytes the JSON's, a tooltip at the peak
#     with the peak's bytes, the by-stack toggle.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "no $AUDIT"; exit 99; }
FAKECUDA_DEVICES=2
export FAKECUDA_DEVICES

"$AUDIT" --shim "$SHIM" --timeline --json "$WORK/g.json" --trace "$WORK/g.trace" \
	--html "$WORK/g.html" -- "$TP/tp_growth" >"$WORK/g.txt" 2>&1
rc=$?
expect_rc 0 "cuwarden-audit --timeline --trace --html tp_growth"

"$PY" - "$WORK/g.json" <<'PYEOF' && pass "--json: timelines (devices, points, breakdowns adding up, the peak)" || fail "--json: timelines"
import json, sys
d = json.load(open(sys.argv[1]))
MIB = 1 << 20
bad = []
def want(c, what):
    if not c:
        bad.append(what)
tl = d["timelines"]
want(len(tl) == 1, "one timeline")
t = tl[0]
peaks = {p["device"]: p for p in d["peaks"][0]["devices"]}
want([x["device"] for x in t["devices"]] == [0, 1, -1], "devices %r" % [x["device"] for x in t["devices"]])
for x in t["devices"]:
    n = len(x["time_ns"])
    want(0 < n <= 1000 and len(x["bytes"]) == n, "points %d" % n)
    want(all(a < b for a, b in zip(x["time_ns"], x["time_ns"][1:])), "times increase")
    want(x["peak_bytes"] == peaks[x["device"]]["bytes"] and
         x["peak_time_ns"] == peaks[x["device"]]["time_ns"], "peak = peaks' (%d)" % x["device"])
    m = max(x["bytes"])
    want(m == x["peak_bytes"] and x["time_ns"][x["bytes"].index(m)] == x["peak_time_ns"],
         "largest point is the peak (%d)" % x["device"])
    for key in ("owners", "stacks"):
        s = [sum(o["bytes"][i] for o in x[key]) for i in range(n)]
        want(s == x["bytes"], "%s add up (%d)" % (key, x["device"]))
    want(x["owners"][0]["owner"] == t["exe"], "owner %r" % x["owners"][0]["owner"])
    want(x["host"] == (x["device"] == -1), "host flag")
d0 = t["devices"][0]
want(d0["peak_bytes"] == 80 * MIB, "device 0 peak %d" % d0["peak_bytes"])
fn = lambda k: t["stacks"][k]["stack"][0].get("function")
want([(fn(s["stack"]), max(s["bytes"])) for s in d0["stacks"][:4]] ==
     [("site_grow", 64 * MIB), ("site_keep", 8 * MIB), ("site_saw", 4 * MIB), ("site_warm", 4 * MIB)] or
     [(fn(s["stack"]), max(s["bytes"])) for s in d0["stacks"][:4]] ==
     [("site_grow", 64 * MIB), ("site_keep", 8 * MIB), ("site_warm", 4 * MIB), ("site_saw", 4 * MIB)],
     "device 0's stacks %r" % [(s["stack"], max(s["bytes"])) for s in d0["stacks"]])
want(d0["stacks"][-1]["stack"] is None and d0["owners"][-1]["owner"] is None, "the rest last")
want(t["devices"][1]["peak_bytes"] == 2 * MIB and t["devices"][2]["peak_bytes"] == 256 << 10, "device 1, host")
g = t["growing"]
want(len(g) == 1 and fn(g[0]["stack"]) == "site_grow" and g[0]["device"] == 0, "growing: site_grow alone, %r" %
     [(fn(x["stack"]), x["increases"], x["growth_bytes"]) for x in g])
if g:
    x = g[0]
    want(x["increases"] >= 12 and x["growth_bytes"] == x["last_bytes"] - x["first_bytes"] >= 48 * MIB and
         len(x["samples"]) == 16 and x["samples"][0] == x["first_bytes"] and x["samples"][-1] == x["last_bytes"],
         "growing numbers %r" % x)
want(d["summary"]["leaked_bytes"] == 0, "nothing leaked")
if bad:
    print("\n".join(bad)); sys.exit(1)
PYEOF

if "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" - "$top_srcdir/tests/tools/audit.schema.json" "$WORK/g.json" <<'PYEOF' &&
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
sub = dict(s["properties"]["timelines"], definitions=s["definitions"])
jsonschema.validate(json.load(open(sys.argv[2]))["timelines"], sub)
PYEOF
	pass "--json: timelines valid against tests/tools/audit.schema.json" || fail "--json: timelines: schema"
fi

peak=$(grep -n '== PEAK: device 0: 83,886,080 bytes' "$WORK/g.txt" | cut -d: -f1)
grow=$(grep -n '== GROWING: [0-9,]* bytes more on device 0 ([0-9,]* -> [0-9,]*), rose in [0-9]* of 15 intervals' "$WORK/g.txt" | cut -d: -f1)
[ -n "$peak" ] && [ -n "$grow" ] && [ "$peak" -lt "$grow" ] &&
	[ "$(grep -c '== GROWING' "$WORK/g.txt")" = 1 ] &&
	grep -A1 '== GROWING' "$WORK/g.txt" | grep -q 'site_grow (tp_growth.c' &&
	pass "text: one GROWING section (site_grow), after the PEAK" ||
	{ fail "text: GROWING"; cat "$WORK/g.txt"; }

[ "$(stat -c %a "$WORK/g.trace" 2>/dev/null)" = 600 ] && pass "--trace: mode 0600" || fail "--trace: mode not 0600"
"$PY" - "$WORK/g.trace" "$WORK/g.json" <<'PYEOF' && pass "--trace: a Chrome trace, counters per device and owner, the peak" || fail "--trace"
import json, sys
tr = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
t = d["timelines"][0]
ev = tr["traceEvents"]
bad = []
def want(c, what):
    if not c:
        bad.append(what)
meta = [e for e in ev if e["ph"] == "M"]
want(len(meta) == 1 and meta[0]["name"] == "process_name" and meta[0]["pid"] == t["pid"] and
     meta[0]["args"]["name"] == "tp_growth (pid %d)" % t["pid"], "process_name %r" % meta)
cs = [e for e in ev if e["ph"] == "C"]
want(all(e["pid"] == t["pid"] and isinstance(e["ts"], (int, float)) and
         isinstance(e["args"]["bytes"], int) for e in cs), "counter events")
names = sorted({e["name"] for e in cs})
want(names == ["device 0", "device 0: tp_growth", "device 1", "device 1: tp_growth", "host",
               "host: tp_growth"], "tracks %r" % names)
for x in t["devices"]:
    name = "host" if x["host"] else "device %d" % x["device"]
    track = [e for e in cs if e["name"] == name]
    want(max(e["args"]["bytes"] for e in track) == x["peak_bytes"], "%s: max is the peak" % name)
    at = [e["args"]["bytes"] for e in track if abs(e["ts"] - x["peak_time_ns"] / 1000.0) < 0.001]
    want(at == [x["peak_bytes"]], "%s: at the peak's time %r" % (name, at))
if bad:
    print("\n".join(bad)); sys.exit(1)
PYEOF

# A planted link at the name is replaced, never followed; `report` of the
# merged document gives the same timelines and the same trace.
echo victim >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/link.trace"
"$AUDIT" --json "$WORK/again.json" --trace "$WORK/link.trace" report "$WORK/g.json" >"$WORK/again.txt" 2>&1
rc=$?
expect_rc 0 "report merged.json --trace"
[ "$(cat "$WORK/victim")" = victim ] && [ ! -L "$WORK/link.trace" ] && [ -f "$WORK/link.trace" ] &&
	pass "--trace: a planted link replaced, not followed" || fail "--trace: through the link"
"$PY" -c '
import json, sys
a, b, c, e = (json.load(open(x)) for x in sys.argv[1:5])
sys.exit(not (a["timelines"] == b["timelines"] and c == e))' \
	"$WORK/g.json" "$WORK/again.json" "$WORK/g.trace" "$WORK/link.trace" &&
	pass "report merged.json: the same timelines and trace" || fail "report merged.json: timelines or trace differ"
grep -q '== GROWING: .* on device 0' "$WORK/again.txt" && pass "report merged.json: GROWING again" ||
	{ fail "report merged.json: no GROWING"; cat "$WORK/again.txt"; }

# Many events: at most 1000 points, the peak kept; nothing grows.
FAKECUDA_DEVICES=1 "$AUDIT" --shim "$SHIM" --timeline --json "$WORK/many.json" --keep-reports "$WORK/kept" \
	-- "$TP/tp_timeline" 20000 >"$WORK/many.txt" 2>&1
rc=$?
expect_rc 23 "tp_timeline 20000 (its leaks)"
"$PY" - "$WORK/many.json" <<'PYEOF' && pass "44,008 events: <= 1000 points, the 11 MiB peak kept, nothing growing" || fail "many events"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["timelines"][0]; x = t["devices"][0]
ok = (d["peaks"][0]["events"] == 44008 and len(x["time_ns"]) <= 1000 and max(x["bytes"]) == 11 << 20 ==
      x["peak_bytes"] and t["growing"] == [])
if not ok:
    print(d["peaks"][0]["events"], len(x["time_ns"]), max(x["bytes"]), t["growing"]); sys.exit(1)
PYEOF

# The reader's order (threads merged through a heap) is the file's
# records sorted by time, ties in file order: every point is the live
# bytes after an event at its time in that order, and the largest is the
# largest there.
"$PY" - "$WORK/many.json" "$WORK"/kept/*.timeline <<'PYEOF' && pass "every point is a state of the file sorted by time (threads merged in order)" || fail "points against the sorted file"
import json, struct, sys
d = json.load(open(sys.argv[1])); data = open(sys.argv[2], "rb").read()
# Version 2: the records may count TSC ticks (clock 1), converted as the
# tool does, by the header's one ratio (the build machine's auto clock is
# the TSC where the kernel lists it).
version, = struct.unpack_from("<I", data, 8)
clock, = struct.unpack_from("<I", data, 28)
num, den = struct.unpack_from("<QQ", data, 48)
if version < 2 or clock == 0:
    num = den = 1
off, recs = 64, []
while off < len(data):
    magic, n, tid, _ = struct.unpack_from("<IIII", data, off)
    off += 16
    for i in range(n):
        t, a, size, st, kind, ev, dev = struct.unpack_from("<QQQIBBh", data, off)
        recs.append((t * num // den, len(recs), size if ev == 1 else -size))
        off += 32
live, states = 0, {}
for t, _, delta in sorted(recs):
    live += delta
    states.setdefault(t, set()).add(live)
x = d["timelines"][0]["devices"][0]
bad = [(t, b) for t, b in zip(x["time_ns"], x["bytes"]) if b not in states.get(t, ())]
top = max(max(v) for v in states.values())
if bad or max(x["bytes"]) != top:
    print(len(bad), bad[:5], max(x["bytes"]), top); sys.exit(1)
PYEOF

# A crafted timeline: two threads, their chunks interleaved, a free and
# an allocation at the same nanosecond in file order (free first): the
# peak is 5 MiB at t=2, not 9 MiB (which the other order would give).
mkdir "$WORK/craft"
"$PY" - "$WORK"/kept/*.json "$WORK/craft" <<'PYEOF'
import json, os, struct, sys
r = json.load(open(sys.argv[1])); out = sys.argv[2]
st = r["timeline"]["stacks"][0]["id"]; M = 1 << 20
def rec(t, addr, size, ev):
    return struct.pack("<QQQIBBh", t, addr, size, st, 0, ev, 0)
chunks = [(1, [rec(1, 0xa, 4 * M, 1)]), (2, [rec(2, 0xb, M, 1)]),
          (1, [rec(10, 0xa, 4 * M, 2)]), (2, [rec(10, 0xc, 4 * M, 1), rec(20, 0xb, M, 2), rec(30, 0xc, 4 * M, 2)])]
data = b"CWTIMELN" + struct.pack("<IIIIII", 1, 64, 32, 16, r["pid"], 0) + struct.pack("<QQ", 0, 0) + bytes(16)
for tid, recs in chunks:
    data += struct.pack("<IIII", 0x4b4e4843, len(recs), tid, 0) + b"".join(recs)
open(os.path.join(out, "c.json.timeline"), "wb").write(data)
r["timeline"].update(file=os.path.join(out, "c.json.timeline"), events=6, bytes=len(data))
json.dump(r, open(os.path.join(out, "c.json"), "w"))
PYEOF
"$AUDIT" --json "$WORK/craft.json" report "$WORK/craft/c.json" >"$WORK/craft.txt" 2>&1
"$PY" - "$WORK/craft.json" <<'PYEOF' && pass "crafted timeline: threads merged by time, ties in file order (peak 5 MiB at t=2)" || { fail "crafted timeline"; cat "$WORK/craft.txt"; }
import json, sys
d = json.load(open(sys.argv[1]))
p = d["peaks"][0]["devices"][0]; x = d["timelines"][0]["devices"][0]
M = 1 << 20
ok = (p["bytes"] == 5 * M and p["time_ns"] == 2 and x["peak_bytes"] == 5 * M and
      list(zip(x["time_ns"], x["bytes"])) == [(1, 4 * M), (2, 5 * M), (10, 5 * M), (20, 4 * M), (30, 0)])
if not ok:
    print(p["bytes"], p["time_ns"], list(zip(x["time_ns"], x["bytes"]))); sys.exit(1)
PYEOF

# The page: its charts, worked in headless Chromium.
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -n "$CHROME" ]; then
	"$PY" - "$WORK/g.html" "$WORK/probe.html" "$top_srcdir/tests/tools/chart_probe.js" <<'PYEOF'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = open(sys.argv[3], encoding="utf-8").read()
assert page.count("</body>") == 1
open(sys.argv[2], "w", encoding="utf-8").write(
    page.replace("</body>", "<script>\n" + probe + "\n</script>\n</body>"))
PYEOF
	profile=$(mktemp -d "$WORK/chrome.XXXXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$profile" --window-size=1400,2400 \
		--dump-dom "file://$WORK/probe.html" >"$WORK/dom.out" 2>"$WORK/dom.err"
	pid=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["timelines"][0]["pid"])' "$WORK/g.json")
	probe() { sed -n "s/^$1=//p" "$WORK/dom.out" | head -1; }
	want() {
		v=$(probe "$1")
		[ "$v" = "$2" ] && pass "html: $1 = $2" || fail "html: $1 is \"$v\", expected \"$2\""
	}
	want error ""
	want charts 3
	want devices "$pid:0,$pid:1,$pid:-1"
	want series 1,1,1
	want peaks 83886080,2097152,262144
	want tip_shown yes
	want tip_bytes 83886080
	want tip_hidden_after yes
	want mode_after stack
	want series_by_stack 4,1,1
	probe legend_by_stack | grep -q '^site_grow (tp_growth.c:[0-9]*);site_keep' &&
		pass "html: by stack, the legend names the stacks" || fail "html: legend $(probe legend_by_stack)"
	probe growing | grep -q 'Growing on device 0 (pid [0-9]*): site_grow' &&
		pass "html: the growing stack listed" || fail "html: growing $(probe growing)"
else
	echo "chromium is not installed: the page's charts are not checked"
fi

finish
