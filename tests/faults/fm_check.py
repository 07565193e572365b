#!/usr/bin/env python3
"""fm_check.py REPORT OUTPUT -- a report against fm_shim's own account.

OUTPUT is what tests/faults/fm_shim printed: its "live ADDR SIZE" lines must
be exactly the report's leaks (every address listed, the size where known),
and its "expect TYPE ADDR" lines exactly the report's violations (type and
address; as many of each).  Prints every difference; exit 0 when none, 1
otherwise, 99 when the report cannot be read."""
import json
import sys
from collections import Counter


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 99
    try:
        with open(argv[1]) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        print("fm_check: cannot read report %s: %s" % (argv[1], e))
        return 99
    live, expect = {}, Counter()
    with open(argv[2]) as f:
        for ln in f:
            w = ln.split()
            if len(w) == 3 and w[0] == "live":
                live[w[1].lower()] = int(w[2])
            elif len(w) == 3 and w[0] == "expect":
                expect[(w[1], w[2].lower())] += 1
    bad = []
    leaks = {}
    for g in r.get("leaks", []):
        # What context teardown freed is a leak, but no longer held.
        if g.get("category") == "teardown":
            continue
        if g["count"] > len(g["addresses"]):
            bad.append("a leak group of %d lists %d addresses" % (g["count"], len(g["addresses"])))
        for a in g["addresses"]:
            leaks[a.lower()] = (g["size"], g["kind"], g["api"])
    for a, size in sorted(live.items()):
        if a not in leaks:
            bad.append("held at exit, not in the report's leaks: %s (%d bytes)" % (a, size))
        elif size >= 0 and leaks[a][0] != size:
            bad.append("leak %s: size %d in the report, %d held" % (a, leaks[a][0], size))
    for a, (size, kind, api) in sorted(leaks.items()):
        if a not in live:
            bad.append("a leak the program does not hold: %s %d bytes %s (%s)" % (a, size, kind, api))
    got = Counter((v["type"], v["address"].lower()) for v in r.get("violations", []))
    for k in sorted(set(got) | set(expect)):
        if got[k] != expect[k]:
            bad.append("violation %s %s: %d in the report, %d expected" % (k[0], k[1], got[k], expect[k]))
    if r.get("summary", {}).get("violations") != sum(got.values()):
        bad.append("summary.violations %s, %d listed" % (r.get("summary", {}).get("violations"), sum(got.values())))
    for b in bad:
        print("fm_check: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
