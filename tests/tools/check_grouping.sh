#!/bin/bash
# Grouping (doc/audit.md, "The text report"): a leak group is the same
# kind, category, API and whole allocation stack, as valgrind's loss
# records.  layerprog leaks through layer_a() and layer_b() with 30
# distinct stacks that share their innermost 8+ frames (leaf, deep, deep,
# ...): 30 groups, each with its own stack, bytes and count; text, JSON,
# SARIF and HTML name the same groups; the HTML icicle graph charges each
# path its own bytes.  --num-callers shortens what is shown, never what
# is grouped.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/layerprog"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# What layerprog.c leaks (its DEPTHS, COUNT and SIZE): stack (path, n),
# n = 0..14, leaks n % 3 + 1 allocations of 4096 * (n + 1) bytes (path a)
# or 4096 * (32 + n) bytes (path b).
EXPECT='
def expected():
    e = {}
    for path in "ab":
        for n in range(15):
            size = 4096 * (n + 1 if path == "a" else 32 + n)
            e[(path, n)] = (n % 3 + 1, size)
    return e
E = expected()
TOTAL = {p: sum(c * s for (q, n), (c, s) in E.items() if q == p) for p in "ab"}
'

run layers "$AUDIT" --json "$WORK/l.json" --sarif "$WORK/l.sarif" --html "$WORK/l.html" "$P" layers
expect_rc layers 23
expect_in layers err "(30 groups)"

# JSON: one group per distinct stack, each exact; the per-path sums.
run json "$PY" - "$WORK/l.json" "$WORK/l.sarif" "$WORK/layers.err" <<P
import json, re, sys
$EXPECT
d = json.load(open(sys.argv[1]))
leaks = d["leaks"]
assert len(leaks) == 30, "%d groups, expected 30" % len(leaks)
seen = {}
for l in leaks:
    fns = [f["function"] for f in l["stack"]]
    paths = [p for p in "ab" if "layer_" + p in fns]
    assert len(paths) == 1, ("a group with both or no layers", fns)
    key = (paths[0], fns.count("deep") - 1)
    assert key in E, key
    assert key not in seen, ("two groups of one stack", key)
    seen[key] = l
    count, size = E[key]
    assert l["count"] == count and l["bytes"] == count * size, (key, l["count"], l["bytes"])
    assert l["size"] == size and l["min_size"] == size == l["max_size"], (key, l["size"])
    assert fns[0] == "leaf", fns
assert set(seen) == set(E), set(E) - set(seen)
assert len({l["fingerprint"] for l in leaks}) == 30, "fingerprints collide"
for p in "ab":
    got = sum(l["bytes"] for l in leaks
              if "layer_" + p in [f["function"] for f in l["stack"]])
    assert got == TOTAL[p], (p, got, TOTAL[p])
s = d["summary"]
assert s["leak_groups"] == 30, s
assert s["leaked_bytes"] == TOTAL["a"] + TOTAL["b"], s
assert s["leaked_allocations"] == sum(c for c, _ in E.values()), s

# SARIF: one result per group, the same fingerprints, counts and bytes.
r = json.load(open(sys.argv[2]))["runs"][0]["results"]
assert len(r) == 30, len(r)
byfp = {l["fingerprint"]: l for l in leaks}
for x in r:
    l = byfp[x["partialFingerprints"]["cuwarden/v1"]]
    assert x["properties"]["count"] == l["count"], x["properties"]
    assert x["properties"]["bytes"] == l["bytes"], x["properties"]
assert {x["partialFingerprints"]["cuwarden/v1"] for x in r} == set(byfp)

# Text: 30 headers, each group shown with its own stack (one layer, the
# number of deep frames of its path and depth) and its own numbers.
blocks, cur = [], None
for line in open(sys.argv[3]):
    if re.match(r"== [0-9,]+ bytes in [0-9,]+ device allocations? ", line):
        cur = [line]
        blocks.append(cur)
    elif cur is not None and line.startswith("==    "):
        cur.append(line)
    else:
        cur = None
assert len(blocks) == 30, len(blocks)
got = set()
for b in blocks:
    m = re.match(r"== ([0-9,]+) bytes in ([0-9,]+) device", b[0])
    nbytes, count = int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
    body = "".join(b[1:])
    paths = [p for p in "ab" if ": layer_%s (" % p in body]
    assert len(paths) == 1, b
    key = (paths[0], body.count(": deep (") - 1)
    c, s = E[key]
    assert (count, nbytes) == (c, c * s), (key, count, nbytes)
    got.add(key)
assert got == set(E), set(E) - got
P
expect_rc json 0
[ "$rc" = 0 ] || cat "$WORK/json.err"

# --num-callers: 3 frames shown per group, still 30 groups.
run short "$AUDIT" --num-callers 3 "$P" layers
expect_rc short 23
n=$(grep -c ' device allocations\? .*leaked by ' "$WORK/short.err")
[ "$n" = 30 ] || fail "short: $n groups with --num-callers 3, expected 30"
expect_not_in short err ": main (layerprog.c:"
expect_in short err "(30 groups)"

# The HTML page embeds the same document; rendered, its icicle graph
# gives layer_a and layer_b each the bytes leaked through it.
run html "$PY" - "$WORK/l.html" "$WORK/l.json" <<'P'
import html, json, re, sys
page = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="cw-data">(.*?)</script>', page, re.S)
assert m, "no embedded document"
emb = json.loads(m.group(1))
doc = json.load(open(sys.argv[2]))
assert [l["fingerprint"] for l in emb["leaks"]] == [l["fingerprint"] for l in doc["leaks"]]
assert [l["bytes"] for l in emb["leaks"]] == [l["bytes"] for l in doc["leaks"]]
P
expect_rc html 0
[ "$rc" = 0 ] || cat "$WORK/html.err"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || CHROME=
if [ -n "$CHROME" ]; then
	profile=$(mktemp -d "$WORK/chrome.XXXXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$profile" --dump-dom "file://$WORK/l.html" \
		>"$WORK/dom.out" 2>"$WORK/dom.err"
	rc=$?
	[ "$rc" = 0 ] || fail "chromium exit status $rc"
	run icicle "$PY" - "$WORK/dom.out" <<P
import re, sys
$EXPECT
dom = open(sys.argv[1]).read()
cells = re.findall(r'data-name="([^"]*)" data-bytes="([0-9]+)"', dom)
def cell(name):
    v = [int(b) for n, b in cells if n == name]
    assert len(v) == 1, (name, v)
    return v[0]
assert cell("layer_a") == TOTAL["a"], (cell("layer_a"), TOTAL["a"])
assert cell("layer_b") == TOTAL["b"], (cell("layer_b"), TOTAL["b"])
assert cell("main") == TOTAL["a"] + TOTAL["b"]
assert cell("all leaked bytes") == TOTAL["a"] + TOTAL["b"]
P
	expect_rc icicle 0
	[ "$rc" = 0 ] || cat "$WORK/icicle.err"
else
	echo "chromium is not installed: the rendered icicle graph is not checked"
fi

finish
