#!/bin/bash
# The HTML page's sources (tools/html/): the scripts parse (node --check),
# no source names anything outside the page, and tools/html/embed.sh
# splices the included files in byte for byte and refuses one that would
# end its element early or cannot be read.
# node is installed by .ci/run and quickstart.sh: without it this is a
# harness error (99), not a skip.
. "$top_srcdir/tests/tools/testlib.sh"

NODE=$(command -v node || command -v nodejs) || {
	echo "node is not installed (apt-get install nodejs; quickstart.sh does)"
	exit 99
}
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
H="$top_srcdir/tools/html"

for js in "$H/page.js" "$H/oom.js" "$H/peak.js" "$H/chart.js" "$TT/html_probe.js" \
	"$TT/html_mem_probe.js" "$TT/chart_probe.js"; do
	run js "$NODE" --check "$js"
	expect_rc js 0
done

# Nothing from elsewhere: no address, no CSS url( (the script's
# createObjectURL( fetches nothing), no import, no font, no src.  SVG's
# namespace name (chart.js's createElementNS) is a name, not an address.
for f in page.html page.css page.js oom.js peak.js chart.css chart.js; do
	if sed 's#http://www\.w3\.org/2000/svg##g' "$H/$f" |
		grep -Eiq 'https?:|@import|@font-face|<link|<(script|img|iframe)[^>]* src=' ||
		grep -q 'url(' "$H/$f"; then
		fail "$f names something outside the page"
	fi
done
grep -q '^@include page.css@$' "$H/page.html" || fail "page.html does not include page.css"
grep -q '^@include page.js@$' "$H/page.html" || fail "page.html does not include page.js"
for f in oom.js peak.js chart.js; do
	grep -q "^@include $f@\$" "$H/page.html" || fail "page.html does not include $f"
done

# embed.sh: the header's bytes are the template with its includes.
mkdir "$WORK/t"
printf '<p>\n@include a.css@\n<b>@CW_DATA@</b>\n@include b.js@\n' >"$WORK/t/t.html"
printf 'p { content: "\\2195 \\\\ ?? \x27"; }\n' >"$WORK/t/a.css"
printf "var s = 'caf\xc3\xa9 \\\\n \"q\"';\n" >"$WORK/t/b.js"
run embed sh "$top_srcdir/tools/html/embed.sh" "$WORK/t/t.html"
expect_rc embed 0
run bytes "$PY" - "$WORK/embed.out" "$WORK/t" <<'P'
import re, sys
h = open(sys.argv[1]).read()
m = re.search(r"static const char page_html\[\] = \{(.*)\};", h, re.S)
assert m, "no page_html array"
b = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", m.group(1)))
d = sys.argv[2]
want = (b"<p>\n" + open(d + "/a.css", "rb").read() + b"<b>@CW_DATA@</b>\n" +
        open(d + "/b.js", "rb").read() + b"\0")
assert b == want, (b, want)
P
expect_rc bytes 0

printf '@include bad.js@\n' >"$WORK/t/bad.html"
printf 'var a = 1;\nvar s = "</SCRIPT>";\n' >"$WORK/t/bad.js"
run bad sh "$top_srcdir/tools/html/embed.sh" "$WORK/t/bad.html"
[ "$rc" != 0 ] || fail "bad: embed.sh took a script that ends its element"
expect_in bad err "bad.js:2: \"</script\" or \"</style\" would end the element"

printf '@include none.css@\n' >"$WORK/t/none.html"
run none sh "$top_srcdir/tools/html/embed.sh" "$WORK/t/none.html"
[ "$rc" != 0 ] || fail "none: embed.sh took a file that does not exist"
expect_in none err "none.css: cannot read it (or it is empty)"

finish
