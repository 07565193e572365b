#!/bin/sh
# The timeline's reader and series against files no shim writes
# (doc/audit.md, "Memory over time"): a tool that reads them gives an
# error or a bounded answer, never one as large as the file.
#   - one thread whose times go back and forth (20,000 records alternating
#     between the start and the end of the run): the series keeps at most
#     TLS_POINTS (1,000) points per device, as for any file;
#   - a merged document whose growing entry has no samples: the GROWING
#     line says 0 intervals, not 2^64 - 1;
#   - records naming devices past TL_MAX_DEVICE (255; 32,768 of them in
#     6 MB took minutes, a pass per device): refused as corrupt (125);
#   - every device of the format (0..255): read, a peak each; an empty
#     chunk (the shim writes none): refused as corrupt (125);
#   - the clock: a version-1 file read as ever; the TSC's ticks converted
#     by the header's ratio (the peak's time); a zero in the ratio or an
#     unknown clock refused as corrupt (125);
#   - a FIFO beside the report under the timeline's name: an error (125),
#     not a wait for a writer that never comes;
#   - two processes of one pid (two hosts of a job, or two containers):
#     --trace keeps them two processes (two trace pids), each named by
#     its real pid.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "ERROR: $AUDIT not built"; exit 99; }

CUWARDEN_TIMELINE=1 CUWARDEN_REPORT=$WORK/on.json run on "$TP/tp_timeline"
expect_rc 0 "tp_timeline with the timeline"

# craft.py ON.JSON DIR HOW [ARG]: a copy of on.json in DIR whose timeline holds, in
# one chunk of thread 7, 20,000 records of 4 KiB allocations made as HOW
# says: "back" (times alternating between the start and the end), "dev"
# (devices 0..ARG in turn, or ARG itself when it is negative), "empty"
# (as "dev" 255, behind an empty chunk); on device 0, 1 ns apart from
# 1 s on, under a header that says: "v1" (version 1, times in ns), "tsc"
# (the TSC's ticks, 4 a ns: ticks from 4 s on, the ratio 1/4),
# "badratio" (the TSC, a ratio of 1/0), "badclock" (clock 2).
cat >"$WORK/craft.py" <<'PYEOF'
import json, struct, sys
src, dst, how = sys.argv[1:4]
arg = int(sys.argv[4]) if len(sys.argv) > 4 else 255
r = json.load(open(src))
data = open(r["timeline"]["file"], "rb").read()
n = 20000
head = {"v1": (1, 0, 1, 1), "tsc": (2, 1, 1, 4), "badratio": (2, 1, 1, 0),
        "badclock": (2, 2, 1, 1)}.get(how)
def rec(i):
    if head is not None:
        t, dev = (10**9 + i) * (4 if head[1] == 1 else 1), 0
    else:
        t = (1000 + i if i % 2 == 0 else 10**9 - i) if how == "back" else 1000 + i
        dev = 0 if how == "back" else i % (arg + 1) if arg > 0 else arg
    return struct.pack("<QQQIBBh", t, 0x10000000 + i * 4096, 4096, 0, 0, 1, dev)
chunk = lambda k: struct.pack("<IIII", 0x4b4e4843, k, 7, 0)
hdr = bytearray(data[:64])
if head is not None:
    struct.pack_into("<I", hdr, 8, head[0])
    struct.pack_into("<I", hdr, 28, head[1])
    struct.pack_into("<QQ", hdr, 48, head[2], head[3])
out = bytes(hdr) + (chunk(0) if how == "empty" else b"") + chunk(n) + \
    b"".join(rec(i) for i in range(n))
path = dst + "/on.json.timeline"
open(path, "wb").write(out)
r["timeline"].update(file=path, events=n, bytes=len(out))
json.dump(r, open(dst + "/on.json", "w"))
PYEOF
mkdir "$WORK/back"
"$PY" "$WORK/craft.py" "$WORK/on.json" "$WORK/back" back ||
	{ fail "harness: the crafted timeline"; finish; }
"$AUDIT" --json "$WORK/back.json" report "$WORK/back" >"$WORK/back.txt" 2>&1
rc=$?
"$PY" - "$WORK/back.json" <<'PYEOF' && [ $rc = 23 ] &&
import json, sys
d = json.load(open(sys.argv[1]))
devs = d["timelines"][0]["devices"]
n = max(len(x["time_ns"]) for x in devs)
if not 0 < n <= 1000:
    print("points per device: %d" % n); sys.exit(1)
PYEOF
	pass "times that go back: at most 1,000 points a device" ||
	{ fail "times that go back: rc $rc"; tail -5 "$WORK/back.txt"; }

# A growing entry without samples (a document edited, or not ours).
"$AUDIT" --json "$WORK/grow.json" report "$WORK/on.json" >"$WORK/grow.txt" 2>&1
"$PY" - "$WORK/grow.json" <<'PYEOF' || { fail "harness: tp_timeline's timelines"; finish; }
import json, sys
d = json.load(open(sys.argv[1]))
d["timelines"][0]["growing"] = [{"stack": 0, "device": 0, "host": False,
    "first_bytes": 1048576, "last_bytes": 4194304, "growth_bytes": 3145728,
    "increases": 15, "samples": []}]
json.dump(d, open(sys.argv[1], "w"))
PYEOF
"$AUDIT" report "$WORK/grow.json" >"$WORK/grow2.txt" 2>&1
grep -q 'GROWING: .* rose in [0-9]* of 0 intervals' "$WORK/grow2.txt" &&
	pass "growing without samples: 0 intervals" ||
	{ fail "growing without samples"; grep GROWING "$WORK/grow2.txt"; }

# Devices past TL_MAX_DEVICE, and below -1.
for dev in 32767 -2; do
	mkdir "$WORK/dev$dev"
	"$PY" "$WORK/craft.py" "$WORK/on.json" "$WORK/dev$dev" dev "$dev" ||
		{ fail "harness: device $dev"; finish; }
	timeout 60 "$AUDIT" report "$WORK/dev$dev" >"$WORK/dev$dev.txt" 2>&1
	rc=$?
	[ $rc = 125 ] && grep -q "corrupt timeline: the record at offset [0-9]* has event 1, kind 0, device " "$WORK/dev$dev.txt" &&
		pass "device $dev in a record: refused as corrupt (125)" ||
		{ fail "device $dev in a record: rc $rc"; tail -3 "$WORK/dev$dev.txt"; }
done

# Every device the format allows (0..255, 20,000 records): read, one
# look-up an event (a pass per device was 256 times the work); and an
# empty chunk, which the shim never writes: refused as corrupt.
mkdir "$WORK/alldev" "$WORK/empty"
{ "$PY" "$WORK/craft.py" "$WORK/on.json" "$WORK/alldev" dev 255 &&
    "$PY" "$WORK/craft.py" "$WORK/on.json" "$WORK/empty" empty; } ||
	{ fail "harness: all devices"; finish; }
timeout 60 "$AUDIT" --json "$WORK/alldev.out.json" report "$WORK/alldev" >"$WORK/alldev.txt" 2>&1
rc=$?
[ $rc != 125 ] && [ $rc != 124 ] && [ "$(grep -c '^== PEAK: device ' "$WORK/alldev.txt")" = 256 ] &&
	pass "256 devices: read, a peak each" ||
	{ fail "256 devices: rc $rc, $(grep -c '^== PEAK: device ' "$WORK/alldev.txt") peaks"; tail -3 "$WORK/alldev.txt"; }
timeout 60 "$AUDIT" report "$WORK/empty" >"$WORK/empty.txt" 2>&1
rc=$?
[ $rc = 125 ] && grep -q 'corrupt timeline: an empty chunk at offset 64' "$WORK/empty.txt" &&
	pass "an empty chunk: refused as corrupt (125)" ||
	{ fail "an empty chunk: rc $rc"; tail -3 "$WORK/empty.txt"; }

# The clock: a version-1 file (ns) read as before; the TSC's ticks
# converted by the header's ratio (the peak at 1.000 s, not 4.000);
# a ratio with a zero, or a clock the format does not have: corrupt.
for how in v1 tsc badratio badclock; do
	mkdir "$WORK/$how"
	"$PY" "$WORK/craft.py" "$WORK/on.json" "$WORK/$how" "$how" ||
		{ fail "harness: $how"; finish; }
	timeout 60 "$AUDIT" report "$WORK/$how" >"$WORK/$how.txt" 2>&1
	echo $? >"$WORK/$how.rc"
done
for how in v1 tsc; do
	[ "$(cat "$WORK/$how.rc")" = 23 ] &&
	grep -q '^== PEAK: device 0: 81,920,000 bytes at 1\.000 s' "$WORK/$how.txt" &&
		pass "$how: the peak at 1.000 s" ||
		{ fail "$how: rc $(cat "$WORK/$how.rc")"; grep -m2 'PEAK\|timeline' "$WORK/$how.txt"; }
done
[ "$(cat "$WORK/badratio.rc")" = 125 ] &&
grep -q 'corrupt timeline header: clock 1, ticks to ns 1/0' "$WORK/badratio.txt" &&
[ "$(cat "$WORK/badclock.rc")" = 125 ] &&
grep -q 'corrupt timeline header: clock 2' "$WORK/badclock.txt" &&
	pass "a ratio of 1/0, clock 2: refused as corrupt (125)" ||
	{ fail "bad clock headers: rc $(cat "$WORK/badratio.rc") $(cat "$WORK/badclock.rc")"; tail -2 "$WORK/badratio.txt" "$WORK/badclock.txt"; }

# A FIFO where the timeline would be beside its report.
mkdir "$WORK/fifo"
cp "$WORK/on.json" "$WORK/fifo/on.json"
mkfifo "$WORK/fifo/on.json.timeline" || { fail "harness: mkfifo"; finish; }
timeout 20 "$AUDIT" report "$WORK/fifo/on.json" >"$WORK/fifo.txt" 2>&1
rc=$?
[ $rc = 125 ] && grep -q 'on.json.timeline: .*FIFO, not a regular file' "$WORK/fifo.txt" &&
	pass "a FIFO beside the report: an error (125)" ||
	{ fail "a FIFO beside the report: rc $rc (124: it waited)"; tail -3 "$WORK/fifo.txt"; }

# Two hosts' processes of one pid: two processes in --trace.
for h in a b; do
	mkdir "$WORK/host$h"
	"$PY" - "$WORK/on.json" "$WORK/host$h" "$h" <<'PYEOF' || { fail "harness: host $h"; finish; }
import json, shutil, sys
r = json.load(open(sys.argv[1]))
path = sys.argv[2] + "/on.json.timeline"
shutil.copy(r["timeline"]["file"], path)
r["timeline"]["file"] = path
r["host"], r["boot_id"] = "node-" + sys.argv[3], sys.argv[3] * 8
json.dump(r, open(sys.argv[2] + "/on.json", "w"))
PYEOF
done
"$AUDIT" --trace "$WORK/two.trace" report "$WORK/hosta/on.json" "$WORK/hostb/on.json" \
    >"$WORK/two.txt" 2>&1
"$PY" - "$WORK/two.trace" "$WORK/on.json" <<'PYEOF' &&
import json, sys
d = json.load(open(sys.argv[1]))
pid = json.load(open(sys.argv[2]))["pid"]
names = sorted((e["pid"], e["args"]["name"]) for e in d["traceEvents"] if e["ph"] == "M")
want = "tp_timeline (pid %d)" % pid
ok = len(names) == 2 and names[0][0] != names[1][0] and all(n == want for _, n in names)
counters = {e["pid"] for e in d["traceEvents"] if e["ph"] == "C"}
ok = ok and counters == {p for p, _ in names}
if not ok:
    print(names, counters); sys.exit(1)
PYEOF
	pass "--trace: two hosts' processes of one pid are two processes" ||
	fail "--trace: two hosts' processes of one pid"

finish
