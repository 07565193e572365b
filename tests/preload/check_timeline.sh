#!/bin/sh
# The timeline and the peak (issue 18, doc/shim.md "The timeline",
# doc/audit.md "Peaks"): tp_timeline allocates site_a 3 x 1 MiB, site_b
# 2 x 4 MiB (the peak: 11 MiB on device 0), frees site_b's, allocates
# site_c 2 MiB, then two threads make 1000 alloc/free pairs of 4 KiB each.
#   - CUWARDEN_TIMELINE=1: REPORT.timeline (0600) holds every event
#     (4008), in a valid header (version 2, the clock auto picks: the TSC
#     where invariant and a kernel clock source, else CLOCK_MONOTONIC) and
#     chunks of 32-byte records; CUWARDEN_TIMELINE_CLOCK=tsc and
#     =monotonic the same, the TSC's ratio sane (or the TSC refused with a
#     warning where it is not invariant), the peak the same; an
#     allocation comes before its free in time order across threads; the
#     report's timeline member says file, events, dropped 0, bytes (the
#     file's size), and holds the stacks the records name;
#   - cuwarden-audit --timeline: "PEAK: device 0: 11,534,336 bytes", its
#     groups exact (site_b 8 MiB in 2, site_a 3 MiB in 3), before the
#     leaks; --json's "peaks" the same; `report` of the merged document
#     and of a --keep-reports directory show it again;
#   - a tiny CUWARDEN_TIMELINE_LIMIT: the limit said once, events +
#     dropped == all events, the leak report unchanged; every event past
#     the limit summed (timeline.after_limit: none lost; the threads'
#     buffers fill the file, the main thread's, written last, is summed):
#     device 0 ends at 5 MiB and peaked, sampled, at 11 MiB, site_b's
#     stack at most 8 MiB and 0 at the end, site_a's 3 MiB and site_c's
#     2 MiB at the end; the tool's PEAK PAST THE LIMIT says so, with the
#     stacks, and --json's peaks carry it;
#   - a truncated or corrupt timeline: a clear error from the tool (125);
#   - the option off: no file, no timeline member; without
#     CUWARDEN_REPORT: a warning, no timeline.
. "${top_srcdir:-.}/tests/preload/lib.sh"

MIB=1048576
CUWARDEN_TIMELINE=1 CUWARDEN_REPORT=$WORK/on.json run on "$TP/tp_timeline"
expect_rc 0 "tp_timeline with the timeline"
[ -f "$WORK/on.json.timeline" ] && pass "REPORT.timeline written" ||
	fail "no $WORK/on.json.timeline"
[ "$(stat -c %a "$WORK/on.json.timeline" 2>/dev/null)" = 600 ] &&
	pass "timeline mode 0600" || fail "timeline mode not 0600"
# check_file REPORT CLOCK: the timeline beside REPORT, written with CLOCK
# ("monotonic" or "tsc"; the report says which, and so does the header).
check_file() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, struct, sys
r = json.load(open(sys.argv[1]))
clock = sys.argv[2]
t = r["timeline"]
bad = []
def want(c, what):
    if not c:
        bad.append(what)
data = open(t["file"], "rb").read()
want(data[:8] == b"CWTIMELN", "magic")
ver, hs, rs, cs, pid, clk = struct.unpack_from("<IIIIII", data, 8)
num, den = struct.unpack_from("<QQ", data, 48)
want((ver, hs, rs, cs) == (2, 64, 32, 16), "header sizes %r" % ((ver, hs, rs, cs),))
want(t["version"] == 2 and t["clock"] == clock, "version %r, clock %r" % (t["version"], t["clock"]))
if clock == "tsc":
    # ns a tick, measured at exit (not the 1/1 written first): a TSC of
    # 0.1 to 10 GHz.
    want(clk == 1 and den > 1 and 0.1 <= num / den <= 10, "tsc header %d %d/%d" % (clk, num, den))
else:
    want((clk, num, den) == (0, 1, 1), "monotonic header %d %d/%d" % (clk, num, den))
off, recs = 64, []
while off < len(data):
    magic, n, tid, _ = struct.unpack_from("<IIII", data, off)
    want(magic == 0x4b4e4843, "chunk magic at %d" % off)
    off += 16
    for i in range(n):
        recs.append(struct.unpack_from("<QQQIBBh", data, off) + (len(recs),))
        off += 32
want(off == len(data), "file size")
want(len(recs) == 4008, "4008 events, got %d" % len(recs))
want(t["events"] == 4008 and t["dropped"] == 0 and not t["limit_reached"], "counts %r" % t)
want(t["bytes"] == len(data), "bytes")
want(len(t["stacks"]) >= 4, "stacks %d" % len(t["stacks"]))
ids = {s["id"] for s in t["stacks"]}
want(all(x[3] in ids for x in recs), "every record's stack in the report")
# In time order, each address's events alternate alloc, free.
live = {}
for x in sorted(recs, key=lambda x: (x[0], x[7])):
    ev, a = x[5], x[1]
    if ev == 1:
        want(a not in live, "alloc of a live address %x" % a)
        live[a] = 1
    else:
        want(a in live, "free before alloc %x" % a)
        live.pop(a, None)
want(sum(1 for x in recs if x[5] == 1 and x[2] == 4096) == 2000, "threads' allocations")
if bad:
    print("\n".join(bad)); sys.exit(1)
PYEOF
}
# The clock auto picks: the TSC where it is invariant (constant_tsc and
# nonstop_tsc) and the kernel lists it as a clock source.
auto=monotonic
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo &&
	grep -qw tsc /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null &&
	[ "$(uname -m)" = x86_64 ] && auto=tsc
check_file "$WORK/on.json" $auto &&
	pass "the timeline file: header (clock $auto), chunks, 4008 records, in order across threads" ||
	fail "the timeline file"

# The TSC asked for: used where it is invariant, else said and not used;
# the peak and its groups below are the same whichever clock.
forced=monotonic
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo &&
	[ "$(uname -m)" = x86_64 ] && forced=tsc
CUWARDEN_TIMELINE=1 CUWARDEN_TIMELINE_CLOCK=tsc CUWARDEN_REPORT=$WORK/tsc.json run tsc "$TP/tp_timeline"
expect_rc 0 "tp_timeline with CUWARDEN_TIMELINE_CLOCK=tsc"
check_file "$WORK/tsc.json" $forced &&
	pass "CUWARDEN_TIMELINE_CLOCK=tsc: clock $forced, 4008 records in order across threads" ||
	fail "CUWARDEN_TIMELINE_CLOCK=tsc: the file"
if [ $forced = monotonic ]; then
	grep -q 'CUWARDEN_TIMELINE_CLOCK=tsc: this CPU has no invariant TSC' "$WORK/tsc.err" &&
		pass "no invariant TSC: said" || fail "no invariant TSC: not said"
fi
CUWARDEN_TIMELINE=1 CUWARDEN_TIMELINE_CLOCK=monotonic CUWARDEN_REPORT=$WORK/mono.json run mono "$TP/tp_timeline"
expect_rc 0 "tp_timeline with CUWARDEN_TIMELINE_CLOCK=monotonic"
check_file "$WORK/mono.json" monotonic &&
	pass "CUWARDEN_TIMELINE_CLOCK=monotonic: ns, 4008 records in order" ||
	fail "CUWARDEN_TIMELINE_CLOCK=monotonic: the file"

# The leak report is the same with and without the timeline.
CUWARDEN_REPORT=$WORK/off.json run off "$TP/tp_timeline"
expect_rc 0 "tp_timeline without the timeline"
[ ! -e "$WORK/off.json.timeline" ] && pass "off: no timeline file" || fail "off: a timeline file"
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit("timeline" in r)' "$WORK/off.json" &&
	pass "off: no timeline member" || fail "off: a timeline member"
CUWARDEN_TIMELINE=1 run noreport "$TP/tp_timeline"
grep -q 'CUWARDEN_TIMELINE=1: CUWARDEN_REPORT is unset' "$WORK/noreport.err" &&
	pass "no CUWARDEN_REPORT: refused with a warning" || { fail "no CUWARDEN_REPORT: no warning"; cat "$WORK/noreport.err"; }

# A tiny limit: the rest dropped and counted, the leaks unchanged.
CUWARDEN_TIMELINE=1 CUWARDEN_TIMELINE_LIMIT=2K CUWARDEN_REPORT=$WORK/lim.json run lim "$TP/tp_timeline" 100
expect_rc 0 "tp_timeline past the limit"
[ "$(grep -c 'CUWARDEN_TIMELINE_LIMIT (2048 bytes) reached' "$WORK/lim.err")" = 1 ] &&
	pass "limit: said once" || { fail "limit: not said once"; cat "$WORK/lim.err"; }
"$PY" - "$WORK/lim.json" "$WORK/off.json" <<'PYEOF' && pass "limit: events + dropped = 4208, limit_reached, file within it, leaks unchanged" || fail "limit"
import json, os, sys
r = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
t = r["timeline"]
ok = (t["limit_reached"] and t["dropped"] > 0 and t["events"] + t["dropped"] == 4208
      and os.path.getsize(t["file"]) == t["bytes"] <= 2048
      and r["summary"]["leaked_bytes"] == o["summary"]["leaked_bytes"] == 5 << 20
      and r["summary"]["leaked_allocations"] == o["summary"]["leaked_allocations"] == 4)
if not ok:
    print(t, r["summary"]); sys.exit(1)
PYEOF
"$PY" - "$WORK/lim.json" <<'PYEOF' && pass "limit: every event past it summed; device 0 ends at 5 MiB, peaked (sampled) at 11 MiB; the stacks' totals" || fail "limit: after_limit"
import json, sys
M = 1 << 20
t = json.load(open(sys.argv[1]))["timeline"]
a = t.get("after_limit") or {}
ends = sorted(s["end_bytes"] for s in a.get("stacks", []) if s["end_bytes"])
maxes = sorted(s["max_bytes"] for s in a.get("stacks", []))
ok = (a.get("events") == t["dropped"] and
      [(d["device"], d["end_bytes"], d["max_bytes"]) for d in a["devices"]] == [(0, 5 * M, 11 * M)] and
      ends == [2 * M, 3 * M] and maxes[-1] == 8 * M and
      all(s["max_bytes"] >= max(s["end_bytes"], s["at_limit_bytes"]) for s in a["stacks"]) and
      a["samples"] and max(x[2] for x in a["samples"]) == 11 * M and
      [x[1] for x in a["samples"]] == sorted(x[1] for x in a["samples"]) and
      a["since_ns"] > 0)
if not ok:
    print(json.dumps(a, indent=1)[:3000]); sys.exit(1)
PYEOF

AUDIT=$top_builddir/tools/cuwarden-audit
if [ -x "$AUDIT" ]; then
	"$AUDIT" --shim "$SHIM" --timeline --keep-reports "$WORK/kept" --json "$WORK/merged.json" \
		-- "$TP/tp_timeline" >"$WORK/audit.txt" 2>&1
	rc=$?
	expect_rc 23 "cuwarden-audit --timeline (the leaks)"
	peak=$(grep -n '== PEAK: device 0: 11,534,336 bytes at [0-9]*\.[0-9][0-9][0-9] s' "$WORK/audit.txt" | cut -d: -f1)
	leak=$(grep -n 'leaked by' "$WORK/audit.txt" | head -1 | cut -d: -f1)
	[ -n "$peak" ] && [ -n "$leak" ] && [ "$peak" -lt "$leak" ] &&
		pass "audit: PEAK: device 0: 11,534,336 bytes, before the leaks" ||
		{ fail "audit: no PEAK line before the leaks"; cat "$WORK/audit.txt"; }
	grep -A2 '8,388,608 bytes in 2 device allocations from' "$WORK/audit.txt" | grep -q 'site_b' &&
	grep -A2 '3,145,728 bytes in 3 device allocations from' "$WORK/audit.txt" | grep -q 'site_a' &&
	grep -q 'live then: 5 allocations in 2 groups by stack' "$WORK/audit.txt" &&
		pass "audit: the peak's groups exact (site_b 8 MiB in 2, site_a 3 MiB in 3)" ||
		{ fail "audit: the peak's groups"; cat "$WORK/audit.txt"; }
	"$PY" - "$WORK/merged.json" <<'PYEOF' && pass "--json: peaks" || fail "--json: peaks"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["peaks"][0]
dev = p["devices"]
ok = (len(dev) == 1 and dev[0]["device"] == 0 and dev[0]["bytes"] == 11 << 20 and
      [(g["bytes"], g["count"], g["kind"]) for g in dev[0]["top"]] ==
      [(8 << 20, 2, "device"), (3 << 20, 3, "device")] and p["exact"] and p["events"] == 4008)
if not ok:
    print(json.dumps(p, indent=1)[:3000]); sys.exit(1)
PYEOF
	# The same peak, exact, from the TSC's ticks.
	CUWARDEN_TIMELINE_CLOCK=tsc "$AUDIT" --shim "$SHIM" --timeline --json "$WORK/tscm.json" \
		-- "$TP/tp_timeline" >"$WORK/audit-tsc.txt" 2>&1
	grep -q '== PEAK: device 0: 11,534,336 bytes at' "$WORK/audit-tsc.txt" &&
	grep -q 'live then: 5 allocations in 2 groups by stack' "$WORK/audit-tsc.txt" &&
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["peaks"][0]["exact"] and d["peaks"][0]["devices"][0]["bytes"] == 11 << 20))' "$WORK/tscm.json" &&
		pass "audit, CUWARDEN_TIMELINE_CLOCK=$forced: the same peak, exact" ||
		{ fail "audit, CUWARDEN_TIMELINE_CLOCK=tsc: the peak"; cat "$WORK/audit-tsc.txt"; }
	# Past a tiny limit: the sampled peak and the stacks that held most.
	"$AUDIT" --shim "$SHIM" --timeline --json "$WORK/limm.json" --html "$WORK/limm.html" --trace "$WORK/limm.trace" \
		-- env CUWARDEN_TIMELINE_LIMIT=2K "$TP/tp_timeline" 100 >"$WORK/audit-lim.txt" 2>&1
	grep -q '^== PEAK PAST THE LIMIT (sampled): device 0: at most 11,534,336 bytes, about [0-9.]* s$' "$WORK/audit-lim.txt" &&
	grep -q '^==    live [0-9,]* bytes when the limit was reached, 5,242,880 at the last event$' "$WORK/audit-lim.txt" &&
	grep -A1 '^==    at most 8,388,608 bytes of device allocations (0 at the limit, 0 at the end) from$' \
		"$WORK/audit-lim.txt" | grep -q 'site_b' &&
	grep -q '^==    not exact: [0-9,]* events of pid [0-9]* came past CUWARDEN_TIMELINE_LIMIT (the file.s last at [0-9.]* s): summed, not written; the figures past it are sampled$' "$WORK/audit-lim.txt" &&
	"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["peaks"][0]; a=p["after_limit"]; sys.exit(not (not p["exact"] and a["lost"] == 0 and a["devices"][0]["max_bytes"] == 11 << 20 and a["devices"][0]["top"][0]["bytes"] == 8 << 20 and a["devices"][0]["top"][0]["stack"]))' "$WORK/limm.json" &&
		pass "audit past a tiny limit: PEAK PAST THE LIMIT 11 MiB, site_b's stack, --json's after_limit" ||
		{ fail "audit past a tiny limit"; cat "$WORK/audit-lim.txt"; }
	"$PY" - "$WORK/limm.json" "$WORK/limm.trace" <<'PYEOF' && pass "past the limit: the series' sampled points and the trace's track reach 11 MiB" || fail "past the limit: sampled series or trace"
import json, sys
d = json.load(open(sys.argv[1])); tr = json.load(open(sys.argv[2]))
sm = d["timelines"][0]["devices"][0]["sampled"]
past = [e["args"]["bytes"] for e in tr["traceEvents"] if e["ph"] == "C" and e["name"] == "device 0 past the limit (sampled)"]
ok = (max(sm["bytes"]) == 11 << 20 and sm["time_ns"] == sorted(sm["time_ns"]) and
      len(past) == len(sm["bytes"]) and max(past) == 11 << 20)
if not ok:
    print(sm, past); sys.exit(1)
PYEOF
	# The page in headless Chromium: the article past the limit, its
	# first row site_b's 8 MiB.
	CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
	if [ -n "$CHROME" ]; then
		cat >"$WORK/past.js" <<'JSEOF'
(function () {
  const out = [];
  try {
    const a = document.querySelector('.cw-peak-past');
    const row = a.querySelector('tbody tr');
    out.push('past_bytes=' + a.dataset.bytes, 'past_title=' + a.querySelector('h3').textContent,
      'past_row=' + row.dataset.bytes + ' ' + row.querySelector('.cw-site').textContent.replace(/ .*/, ''),
      'past_shown=' + (a.getBoundingClientRect().height > 0 ? 'yes' : 'no'));
  } catch (e) {
    out.push('error=' + String(e));
  }
  const pre = document.createElement('pre');
  pre.textContent = '\n' + out.join('\n') + '\n';
  document.body.append(pre);
})();
JSEOF
		"$PY" -c 'import sys; p = open(sys.argv[1]).read(); j = open(sys.argv[2]).read()
open(sys.argv[3], "w").write(p.replace("</body>", "<script>\n" + j + "\n</script>\n</body>"))' \
			"$WORK/limm.html" "$WORK/past.js" "$WORK/past.html"
		profile=$(mktemp -d "$WORK/chrome.XXXXXX")
		timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
			--no-first-run --disable-background-networking --disable-component-update \
			--disable-sync --user-data-dir="$profile" --window-size=1400,2400 \
			--dump-dom "file://$WORK/past.html" >"$WORK/past.out" 2>"$WORK/past.err"
		grep -qx 'past_bytes=11534336' "$WORK/past.out" && grep -qx 'past_shown=yes' "$WORK/past.out" &&
		grep -q '^past_title=Device 0 past the limit: at most 11,534,336 bytes' "$WORK/past.out" &&
		grep -qx 'past_row=8388608 site_b' "$WORK/past.out" &&
			pass "html past the limit: the sampled peak's article, site_b's 8 MiB first" ||
			{ fail "html past the limit"; grep '^past_\|^error' "$WORK/past.out"; }
	else
		echo "chromium is not installed: the page past the limit is not checked"
	fi
	"$AUDIT" report "$WORK/limm.json" >"$WORK/limm.txt" 2>&1
	grep -q '^== PEAK PAST THE LIMIT (sampled): device 0: at most 11,534,336 bytes' "$WORK/limm.txt" &&
		pass "report merged.json: the peak past the limit read back" || { fail "report of limm.json"; cat "$WORK/limm.txt"; }
	"$AUDIT" report "$WORK/merged.json" >"$WORK/again.txt" 2>&1
	grep -q '== PEAK: device 0: 11,534,336 bytes' "$WORK/again.txt" &&
		pass "report merged.json: the peak read back" || { fail "report merged.json"; cat "$WORK/again.txt"; }
	"$AUDIT" report "$WORK/kept" >"$WORK/kept.txt" 2>&1
	grep -q '== PEAK: device 0: 11,534,336 bytes' "$WORK/kept.txt" &&
		pass "report DIR (--keep-reports): the timeline beside its report read" ||
		{ fail "report DIR"; cat "$WORK/kept.txt"; }

	# Truncated, corrupt: a clear error, exit 125.
	mkdir "$WORK/cut" "$WORK/bad"
	cp "$WORK/on.json" "$WORK/cut/on.json"; cp "$WORK/on.json" "$WORK/bad/on.json"
	head -c 1000 "$WORK/on.json.timeline" >"$WORK/cut/on.json.timeline"
	cp "$WORK/on.json.timeline" "$WORK/bad/on.json.timeline"
	printf 'XXXX' | dd of="$WORK/bad/on.json.timeline" bs=1 seek=64 conv=notrunc 2>/dev/null
	"$AUDIT" report "$WORK/cut" >"$WORK/cut.txt" 2>&1; rc=$?
	[ $rc = 125 ] && grep -q 'truncated timeline: the chunk at offset 64 holds' "$WORK/cut.txt" &&
		pass "truncated timeline: a clear error (125)" || { fail "truncated timeline: rc $rc"; cat "$WORK/cut.txt"; }
	"$AUDIT" report "$WORK/bad" >"$WORK/bad.txt" 2>&1; rc=$?
	[ $rc = 125 ] && grep -q 'corrupt timeline: no chunk header at offset 64' "$WORK/bad.txt" &&
		pass "corrupt timeline: a clear error (125)" || { fail "corrupt timeline: rc $rc"; cat "$WORK/bad.txt"; }
	printf 'NOTATIMELINE' >"$WORK/bad/on.json.timeline"
	"$AUDIT" report "$WORK/bad" >"$WORK/bad2.txt" 2>&1; rc=$?
	[ $rc = 125 ] && grep -q 'not a cuwarden timeline' "$WORK/bad2.txt" &&
		pass "not a timeline: a clear error (125)" || { fail "not a timeline: rc $rc"; cat "$WORK/bad2.txt"; }
fi

finish
