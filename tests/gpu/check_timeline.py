#!/usr/bin/env python3
"""check_timeline.py AUDIT.json TRACE.json PAGE.html [STEPS] -- checks
cuwarden-audit's memory over time of torch_timeline.py (tests/gpu/README.md,
"Memory over time"): device 0's timeline (at most 1000 points, its largest
the peak), a growing stack on device 0 of at least half the planted growth
(STEPS x 4 MiB) owned by PyTorch's allocator library, the trace's device 0
counter reaching the peak, and the page's charts.  Prints what it found;
exits 1 on a failed check."""
import json
import sys

audit, trace, page = sys.argv[1:4]
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 300
d = json.load(open(audit))
bad = []


def want(c, what):
    print(("ok: " if c else "FAIL: ") + what)
    if not c:
        bad.append(what)


tls = [t for t in d.get("timelines", []) if any(x["device"] == 0 for x in t["devices"])]
want(len(tls) >= 1, "a timeline with device 0")
t = tls[0]
x = [x for x in t["devices"] if x["device"] == 0][0]
want(0 < len(x["time_ns"]) <= 1000, "device 0: %d points" % len(x["time_ns"]))
want(max(x["bytes"]) == x["peak_bytes"], "device 0: peak %d bytes at %.3f s" %
     (x["peak_bytes"], x["peak_time_ns"] / 1e9))
print("owners:", [(o["owner"], max(o["bytes"])) for o in x["owners"]])
g = [e for e in t["growing"] if e["device"] == 0]
for e in g:
    st = t["stacks"][e["stack"]]
    print("growing: %d bytes (%d -> %d), rose in %d of 15 intervals, owner %s, top frame %s" %
          (e["growth_bytes"], e["first_bytes"], e["last_bytes"], e["increases"], st["owner"],
           (st["stack"][0].get("function") if st["stack"] else None)))
want(any(e["growth_bytes"] >= steps * (4 << 20) // 2 for e in g),
     "a growing stack on device 0 of at least %d bytes" % (steps * (4 << 20) // 2))
tr = json.load(open(trace))
dev0 = [e for e in tr["traceEvents"] if e.get("ph") == "C" and e["name"] == "device 0"
        and e["pid"] == t["pid"]]
want(dev0 and max(e["args"]["bytes"] for e in dev0) == x["peak_bytes"],
     "trace: device 0 counter reaches the peak")
want(any(e.get("ph") == "M" and e["name"] == "process_name" for e in tr["traceEvents"]),
     "trace: process names")
html = open(page, encoding="utf-8").read()
want('id="cw-memory"' in html and "getElementById('cw-memory')" in html,
     "page: the memory section and its script")
sys.exit(1 if bad else 0)
