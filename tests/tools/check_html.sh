#!/bin/bash
# --html: one self-contained page (no external script, style, font or
# image), loaded in headless Chromium at 1400 and 800 px wide; the
# rendered DOM must hold the banner with the audit's exit status, the
# numbers formatted one way, the owners cut from the left, the icicle
# graph's cells with bytes and percentages, the findings with folding
# stacks, the suppressed and baseline lists, the processes and the JSON
# to download.  A copy of the page with tests/tools/html_probe.js added
# measures the layout (the icicle's font, the owner's cut) and works the
# controls (tooltip, zoom, the processes' toggle and sorting).
# Skips (77) only when Chromium or python3 is not installed.
. "$top_srcdir/tests/tools/testlib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
	echo "chromium is not installed"
	exit 77
}
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
LONG=/opt/conda/envs/training-environment/lib/python3.11/site-packages/torch/lib/libtorch_cuda_linalg.so

# dom NAME FILE WIDTH: the DOM of FILE after its scripts ran, in a window
# WIDTH px wide, in $WORK/NAME.out.
dom() {
	local profile
	profile=$(mktemp -d "$WORK/chrome.XXXXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$profile" --window-size="$3,1600" \
		--dump-dom "file://$2" >"$WORK/$1.out" 2>"$WORK/$1.err"
	rc=$?
	[ "$rc" = 0 ] || { fail "$1: chromium exit status $rc"; tail -5 "$WORK/$1.err"; }
	grep -q 'data-rendered="yes"' "$WORK/$1.out" || fail "$1: the page's script did not finish"
}

# probe NAME KEY: what html_probe.js found (its line KEY=VALUE).
probe() {
	sed -n "s/^$2=//p" "$WORK/$1.out" | head -1
}

# expect_probe NAME KEY VALUE
expect_probe() {
	local v
	v=$(probe "$1" "$2")
	[ "$v" = "$3" ] || fail "$1: $2 is \"$v\", expected \"$3\""
}

# A baseline holding libmodel's leak (proc_b's), so the page lists one
# group in the baseline, one suppressed (libcublas, built-in) and two
# reported leaks, one owned by a long path.
run base "$AUDIT" --json "$WORK/base.json" report "$DATA/proc_b.json"
expect_rc base 23
run html "$AUDIT" --baseline "$WORK/base.json" --json "$WORK/r.json" --html "$WORK/r.html" \
	report "$DATA/proc_a.json" "$DATA/proc_b.json" "$DATA/nocuda.json" "$DATA/longowner.json"
expect_rc html 23
[ -s "$WORK/r.html" ] || { fail "html: no page written"; finish; }

# Self-contained: nothing fetched from anywhere (CSS's url( in lower
# case: the script's createObjectURL( is no fetch).
if grep -Eiq '<(script|img|iframe)[^>]* src=|<link[^>]*href=|@import|@font-face' "$WORK/r.html" ||
	grep -q 'url(' "$WORK/r.html"; then
	fail "html: the page refers to an external resource"
	grep -Eio '<(script|img|iframe)[^>]* src=[^>]*|<link[^>]*|url\([^)]*|@import[^;]*' "$WORK/r.html" | head
fi
grep -q "Content-Security-Policy\" content=\"default-src 'none';" "$WORK/r.html" ||
	fail "html: no Content-Security-Policy"

# The embedded document is the --json one; its size is what the download
# link offers.
run embedded "$PY" - "$WORK/r.html" "$WORK/r.json" <<'P'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="cw-data">(.*?)</script>', page, re.S)
assert m, "no embedded document"
assert json.loads(m.group(1)) == json.load(open(sys.argv[2])), "not the --json document"
info = re.search(r'<script type="application/json" id="cw-page">(.*?)</script>', page, re.S)
assert json.loads(info.group(1))["exit_status"] == 23, info.group(1)
print(len(m.group(1).encode("utf-8")))
P
expect_rc embedded 0
size=$(cat "$WORK/embedded.out")

dom wide "$WORK/r.html" 1400
# The banner: the verdict, the exit status, when, what, the download.
expect_in wide out 'id="cw-verdict">FAIL: exit status 23</h1>'
expect_in wide out 'data-verdict="fail" data-exit-status="23"'
expect_in wide out '<p id="cw-why">3 errors reported (2 leaks, 1 violation).</p>'
expect_in wide out '<dt>Run</dt><dd>2026-12-02 17:00:00 UTC – 2026-12-02 17:05:00 UTC</dd>'
grep -Eq '<dt>Page written</dt><dd>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC</dd>' "$WORK/wide.out" ||
	fail "wide: no page date"
expect_not_in wide out 'data-meta="Host'
expect_not_in wide out 'data-meta="Rank'
expect_in wide out '<a id="cw-download" href="blob:'
expect_in wide out "download=\"cuwarden-audit.json\" data-bytes=\"$size\">Download the JSON document</a>"
# Numbers: digits grouped, bytes in binary units beside them.
expect_in wide out 'data-key="leaked_bytes" data-value="3670016"><span class="cw-num">3,670,016</span><span class="cw-label">bytes leaked · 3.5 MiB</span>'
expect_in wide out 'data-key="suppressed_bytes" data-value="1048576"><span class="cw-num">1,048,576</span>'
expect_in wide out 'LEAK SUMMARY: 3,670,016 bytes (3.5 MiB) leaked in 2 allocations (2 groups). ERROR SUMMARY: 3 errors (2 leaks, 1 violation).'
expect_in wide out '<span class="cw-bar-value">3,407,872 bytes (3.25 MiB), 92.9%</span>'
expect_in wide out '<span class="cw-bar-value">262,144 bytes (256 KiB), 7.1%</span>'
# An owner: the directory cut (CSS, measured below), the file name apart,
# the full path as the title.
expect_in wide out "<span class=\"cw-path\" title=\"$LONG\"><span class=\"cw-dir\"><bdi dir=\"ltr\">${LONG%/*}/</bdi></span><span class=\"cw-base\">libtorch_cuda_linalg.so</span></span>"
# The icicle graph: a root, each stack's frames and leaves; bytes and
# percentages in the cells.
cells=$(grep -o 'class="cw-cell"' "$WORK/wide.out" | wc -l)
[ "$cells" -ge 8 ] || fail "wide: $cells icicle cells, expected at least 8"
expect_in wide out 'data-name="all leaked bytes" data-bytes="3670016" data-percent="100%"'
expect_in wide out 'data-name="libtorch_cuda_linalg.so+0x4400" data-bytes="3407872" data-percent="92.9%"'
expect_in wide out '<span class="cw-cell-name">libtorch_cuda_linalg.so+0x4400</span><span class="cw-cell-num">3.25 MiB · 92.9%</span>'
expect_in wide out '<span class="cw-cell-name">trainer+0x1200</span><span class="cw-cell-num">256 KiB · 7.1%</span>'
# Findings, their stacks folding (<details>, open for reported ones).
expect_in wide out 'id="cw-h-leaks">Leaks (2 groups)</h2>'
expect_in wide out '3,407,872 bytes (3.25 MiB) in 1 device allocation leaked by <span class="cw-path"'
expect_in wide out '<details class="cw-stack-box" open=""><summary>Allocated at (3 frames)</summary><ol class="cw-stack"><li class="cw-nodbg">0x4400: ??? (in '
expect_in wide out 'double_free: cuMemFree_v2 of 0x7f5000300000 (device allocation of 65,536 bytes) → CUDA_ERROR_INVALID_VALUE, 1 time'
expect_in wide out '<summary>First freed at (1 frame)</summary>'
# Suppressed and baseline findings, listed whole, stacks folded.
expect_in wide out '<h3>Suppressed by a rule (1 group)</h3>'
expect_in wide out '<tr><td>leak:libcublas.so*</td><td>built-in</td><td class="cw-n">1</td><td class="cw-n">1,048,576 bytes (1 MiB)</td></tr>'
expect_in wide out 'data-suppressed-by="leak:libcublas.so*"><h3>1,048,576 bytes (1 MiB) in 1 device allocation leaked by'
expect_in wide out '<p class="cw-sub">Suppressed by leak:libcublas.so*</p>'
expect_in wide out '<h3>In the baseline (1 group)</h3>'
expect_in wide out "data-suppressed-by=\"baseline\"><h3>4,194,304 bytes (4 MiB) in 4 device allocations (1,048,576 each) leaked by"
expect_in wide out "<p class=\"cw-sub\">In the baseline $WORK/base.json</p>"
expect_in wide out '<details class="cw-stack-box"><summary>Allocated at (3 frames)</summary>'
# Processes: table headers that sort; the one without CUDA hidden.
expect_in wide out '<th scope="col" aria-sort="none"><button class="cw-sort" type="button" data-col="0">pid</button></th>'
expect_in wide out '<button class="cw-sort" type="button" data-col="6">leaked bytes</button>'
expect_in wide out '<tr data-pid="300" data-cuda="no" hidden="">'
expect_in wide out '<tr data-pid="100" data-cuda="yes"><td class="cw-n">100</td><td class="cw-n">1</td><td class="cw-cmd">./trainer --epochs 1</td><td>exit 0</td><td>hooks active</td><td class="cw-n">10</td><td class="cw-n">4,456,448</td><td class="cw-n">1</td></tr>'
expect_in wide out 'Show the 1 process without CUDA activity'
# Accessible basics: headings and labelled sections.
expect_in wide out '<section id="cw-sec-processes" aria-labelledby="cw-h-processes">'

# The same page with hosts and ranks in its processes (as reports that
# carry them give), and the probe, at both widths.
run copy "$PY" - "$WORK/r.html" "$WORK/probe.html" "$TT/html_probe.js" <<'P'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="cw-data">)(.*?)(</script>)', page, re.S)
d = json.loads(m.group(2))
for p in d["processes"]:
    p["host"] = "node-a" if p["pid"] in (100, 101) else "node-b"
    if p["pid"] != 300:
        r = {100: 0, 101: 1, 200: 2}[p["pid"]]
        p["job"] = {"launcher": "torchrun", "id": None, "step": None,
                    "rank": r, "local_rank": r % 2, "world_size": 3}
s = json.dumps(d, separators=(",", ":")).replace("<", "\\u003c")
page = page[:m.start(2)] + s + page[m.end(2):]
probe = open(sys.argv[3], encoding="utf-8").read()
assert page.count("</body>") == 1
page = page.replace("</body>", "<script>\n" + probe + "\n</script>\n</body>")
open(sys.argv[2], "w", encoding="utf-8").write(page)
P
expect_rc copy 0
for w in 1400 800; do
	dom "p$w" "$WORK/probe.html" "$w"
	expect_probe "p$w" error ""
	expect_probe "p$w" width "$w"
	# The icicle's text never shrinks: 12 px, whole lines.
	expect_probe "p$w" icicle_font_min 12
	n=$(probe "p$w" icicle_labels)
	[ "${n:-0}" -ge 8 ] || fail "p$w: $n icicle labels shown"
	n=$(probe "p$w" icicle_line_min)
	[ "${n:-0}" -ge 12 ] || fail "p$w: an icicle line $n px high"
	n=$(probe "p$w" icicle_graph_px)
	[ "${n:-0}" -ge 1000 ] || fail "p$w: the icicle graph is $n px wide"
	# The long owner: cut on the left, its file name whole.
	expect_probe "p$w" owner_title "$LONG"
	expect_probe "p$w" owner_base libtorch_cuda_linalg.so
	expect_probe "p$w" owner_cut yes
	expect_probe "p$w" owner_base_whole yes
	expect_probe "p$w" owner_dir_end_shown yes
	expect_probe "p$w" owner_dir_start_cut yes
	# The tooltip at the cursor: the frame, its bytes and share.
	expect_probe "p$w" tip_shown yes
	expect_probe "p$w" tip_near yes
	expect_probe "p$w" tip_hidden_after yes
	expect_probe "p$w" tip_text "python3.11+0x2000 | /usr/bin/python3.11 | 3,407,872 bytes (3.25 MiB), 92.9% of all leaked bytes"
	expect_probe "p$w" zoom_in yes
	expect_probe "p$w" zoom_out "all leaked bytes"
	expect_probe "p$w" zoom_key yes
	# Processes: pid 300 (no CUDA) hidden, then shown; sorting.
	expect_probe "p$w" procs_hidden 300
	expect_probe "p$w" procs_hidden_after_toggle ""
	expect_probe "p$w" sort_bytes_1 300,101,200,100
	expect_probe "p$w" sort_bytes_1_aria ascending
	expect_probe "p$w" sort_bytes_2 100,200,101,300
	expect_probe "p$w" sort_bytes_2_aria descending
	expect_probe "p$w" sort_pid 100,101,200,300
	expect_probe "p$w" sort_bytes_aria_after none
	# Hosts and ranks, where the reports have them.
	expect_in "p$w" out '<dt>Hosts</dt><dd>node-a, node-b</dd>'
	expect_in "p$w" out '<dt>Ranks</dt><dd>0–2</dd>'
	expect_in "p$w" out 'data-col="2">host</button>'
	expect_in "p$w" out 'data-col="3">rank</button>'
done
# Wide, the graph fits; narrow, it scrolls sideways (the font stays).
expect_probe p1400 icicle_scrolls no
expect_probe p800 icicle_scrolls yes

# A clean audit: PASS and the status.
run pass "$AUDIT" --html "$WORK/pass.html" report "$DATA/nocuda.json"
expect_rc pass 0
dom passdom "$WORK/pass.html" 800
expect_in passdom out 'data-verdict="pass" data-exit-status="0"'
expect_in passdom out 'id="cw-verdict">PASS: exit status 0</h1>'
expect_in passdom out '<p id="cw-why">No leaks or violations reported.</p>'
expect_in passdom out '<p class="cw-none">Nothing leaked.</p>'

# Nothing reported, the program's own status: a pass, in amber.
run warn "$AUDIT" --html "$WORK/warn.html" -- sh -c 'exit 3'
expect_rc warn 3
dom warndom "$WORK/warn.html" 800
expect_in warndom out 'data-verdict="warn" data-exit-status="3"'
expect_in warndom out 'id="cw-verdict">PASS: exit status 3</h1>'
expect_in warndom out "the exit status is the program's own."
expect_in warndom out '<dt>Command</dt><dd>sh -c exit 3</dd>'

# The audit itself failed (--require-cuda, nothing used CUDA): 125, and
# why.
run failed "$AUDIT" --require-cuda --html "$WORK/failed.html" report "$DATA/nocuda.json"
expect_rc failed 125
dom faileddom "$WORK/failed.html" 800
expect_in faileddom out 'data-verdict="fail" data-exit-status="125"'
expect_in faileddom out 'id="cw-verdict">AUDIT FAILED: exit status 125</h1>'
expect_in faileddom out '<p id="cw-why">no CUDA activity seen in 1 process.</p>'

finish
