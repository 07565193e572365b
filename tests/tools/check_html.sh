#!/bin/bash
# --html: one self-contained page (no external script, style, font or
# image), loaded in headless Chromium; the rendered DOM must hold the
# summary numbers, the owners, the icicle graph's cells and the findings.
# Skips (77) only when Chromium is not installed.
. "$top_srcdir/tests/tools/testlib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
	echo "chromium is not installed"
	exit 77
}
run html "$AUDIT" --html "$WORK/r.html" report "$DATA/proc_a.json" "$DATA/proc_b.json"
expect_rc html 23
[ -s "$WORK/r.html" ] || { fail "html: no page written"; finish; }

# Self-contained: nothing fetched from anywhere.
if grep -Eiq '<(script|img|iframe)[^>]* src=|<link[^>]*href=|url\(|@import|@font-face' "$WORK/r.html"; then
	fail "html: the page refers to an external resource"
	grep -Eio '<(script|img|iframe)[^>]* src=[^>]*|<link[^>]*|url\([^)]*|@import[^;]*' "$WORK/r.html" | head
fi
grep -q "Content-Security-Policy" "$WORK/r.html" || fail "html: no Content-Security-Policy"

profile=$(mktemp -d "$WORK/chrome.XXXXXX")
timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
	--no-first-run --disable-background-networking --disable-component-update \
	--disable-sync --user-data-dir="$profile" --dump-dom "file://$WORK/r.html" \
	>"$WORK/dom.out" 2>"$WORK/dom.err"
rc=$?
[ "$rc" = 0 ] || { fail "chromium exit status $rc"; tail -5 "$WORK/dom.err"; finish; }
expect_in dom out 'data-rendered="yes"'
expect_in dom out 'data-key="leaked_bytes" data-value="4456448"'
expect_in dom out '<span class="cw-num">4,456,448</span>'
expect_in dom out 'data-key="leaked_allocations" data-value="5"'
expect_in dom out 'data-key="violations" data-value="1"'
expect_in dom out 'data-key="suppressed_bytes" data-value="1048576"'
expect_in dom out 'LEAK SUMMARY: 4456448 bytes leaked in 5 allocations (2 groups)'
expect_in dom out 'data-owner="/opt/app/libmodel.so"'
expect_in dom out 'id="cw-icicle-svg"'
expect_in dom out 'double_free: cuMemFree_v2 of 0x7f5000300000'
# Icicle: a root, the frames of two stacks and their leaves.
cells=$(grep -o 'class="cw-cell"' "$WORK/dom.out" | wc -l)
[ "$cells" -ge 7 ] || fail "html: $cells icicle cells, expected at least 7"
expect_in dom out 'data-name="libmodel.so+0x1a2b" data-bytes="4194304"'
expect_in dom out 'data-name="all leaked bytes" data-bytes="4456448"'

finish
