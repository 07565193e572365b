#!/usr/bin/env python3
"""tl_prefixes.py FINAL SNAP... -- a snapshot's timeline so far against the
timeline at exit (check_snapshot_timeline.sh, tests/gpu/timeline_more.sh):
each SNAP report names a copy (mode 0600) that holds exactly its report's
events, and for each thread the first of that thread's records in FINAL's
timeline, byte for byte (no event lost from the middle, none made up).
Prints each copy's events and threads; exits 1 (an assertion) otherwise."""
import json, os, struct, sys
def records(path):
    data = open(path, "rb").read()
    assert data[:8] == b"CWTIMELN", path
    off, per = 64, {}
    while off < len(data):
        magic, n, tid, _ = struct.unpack_from("<IIII", data, off)
        assert magic == 0x4b4e4843 and n > 0, (path, off)
        off += 16
        per.setdefault(tid, []).extend(data[off + 32 * i:off + 32 * (i + 1)] for i in range(n))
        off += 32 * n
    assert off == len(data), path
    return per
def timeline(report):
    t = json.load(open(report))["timeline"]
    assert t["file"] is not None, (report, t)
    assert oct(os.stat(t["file"]).st_mode & 0o777) == "0o600", t["file"]
    return t
final = records(timeline(sys.argv[1])["file"])
for snap in sys.argv[2:]:
    t = timeline(snap)
    per = records(t["file"])
    n = sum(len(v) for v in per.values())
    assert n == t["events"], (snap, n, t["events"])
    for tid, recs in per.items():
        assert final.get(tid, [])[:len(recs)] == recs, (snap, tid, len(recs))
    print("%s: %d events, %d threads" % (os.path.basename(t["file"]), n, len(per)))
