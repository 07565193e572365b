#!/bin/bash
# --gen-suppressions on findings with corrupt names (issue 7, fuzz_supp
# finding S4): a report can carry any bytes in module paths, owners,
# violation types and APIs -- newlines, carriage returns, blanks before a
# '#', trailing blanks, a ':' in a violation type, fnmatch's special
# characters, a path that ends in '/', empty names.  The generated file
# must always load back, and its rules must suppress every finding they
# were written for; a finding that no rule can express (no stack) gets a
# "# (no rule: ...)" comment instead.
. "$top_srcdir/tests/tools/testlib.sh"

R="$DATA/corrupt_names.json"

run gen "$AUDIT" --gen-suppressions --log-file "$WORK/gen.txt" report "$R"
expect_rc gen 23
# The text report itself carries the corrupt names with every control
# character escaped (\n, \r, \x1b: tools/render_text.c): no carriage
# return or escape sequence reaches a terminal, and every line of the
# report keeps its "==" prefix (a newline in a name cannot end a line).
LC_ALL=C grep -q "$(printf '[\001-\010\011\013-\037\177]')" "$WORK/gen.txt" &&
	fail "gen: the text report holds control characters from the report's names"
grep -qF 'lib\nnl.so, module file not found' "$WORK/gen.txt" ||
	fail "gen: the corrupt names are not in the text report, escaped"
sed '/^# ---- cuwarden-audit --gen-suppressions/,/^# ---- end of suppressions/d' \
	"$WORK/gen.txt" >"$WORK/gentext.txt"
bad=$(grep -v '^==' "$WORK/gentext.txt")
[ -z "$bad" ] || fail "gen: text report lines without the == prefix: $bad"
# The rules: between the header and the footer line.
sed -n '/^# ---- cuwarden-audit --gen-suppressions/,/^# ---- end of suppressions/p' \
	"$WORK/gen.txt" >"$WORK/gen.supp"
cp "$WORK/gen.supp" "$WORK/gen.log"
# Every line is a comment or a line of a call-chain rule; none is split.
bad=$(grep -v -e '^#' -e '^[{}]$' -e '^   [a-z_]*-[0-9a-f]*$' \
	-e '^   leak:' -e '^   violation:' -e '^   obj:' -e '^   fun:' "$WORK/gen.supp")
[ -z "$bad" ] || fail "gen: lines that are neither a comment nor a rule's: $bad"
# What the parser cannot take is written as '?', '#' escaped.
expect_in gen log '   obj:lib?nl.so'
expect_in gen log '   leak:device:cuMemAlloc_v2?X'
expect_in gen log '   obj:lib \#1.so?'
expect_in gen log '   obj:lib\[v2]\*.so?'
expect_in gen log '   obj:/opt/app/'
expect_in gen log '   violation:lk?X:cuMemFree_v2'
expect_in gen log '   violation:double_free?\# not a comment:cuMemFree_v2??'
expect_in gen log '   violation:*:cuMemFree_v2'
expect_in gen log '# (no rule: no stack was captured for this finding)'
expect_in gen log '# 8,192 bytes in 1 device allocation (cuMemAlloc_v2\nX), fingerprint '
expect_in gen log '# ---- cuwarden-audit --gen-suppressions: 7 rules for 10 finding groups (3 with no rule)'
grep -qxE '   (fun|obj):|   (leak|violation):[^:]*:' "$WORK/gen.supp" &&
	fail "gen: a rule with an empty pattern"
# Fed back: the file loads, and suppresses all but the three findings
# with no stack (28,672 and 20,480 bytes; the use*after[free violation).
run regen "$AUDIT" --suppressions "$WORK/gen.supp" report "$R"
expect_rc regen 23
expect_not_in regen err "malformed suppression"
expect_in regen err "== SUPPRESSED: 61,440 bytes in 4 allocations, 3 violations"
expect_in regen err "== ERROR SUMMARY: 3 errors (2 leaks, 1 violation)"
expect_in regen err "== LEAK SUMMARY: 49,152 bytes leaked in 2 allocations (2 groups)"

# Names that try to forge report lines: a command argument, a module path
# and an owner holding "\n== LEAK SUMMARY: 0 bytes ..." and escape
# sequences, in a report of two processes (so PROCESSES is printed); and
# a format that would do the same to an error message.
"${PY:-python3}" - "$DATA/proc_a.json" "$DATA/proc_b.json" "$WORK/forge_a.json" "$WORK/forge_b.json" "$WORK/forge_c.json" <<'P' || exit 99
import json, sys
fake = "\n== LEAK SUMMARY: 0 bytes leaked in 0 allocations (0 groups)\n== ERROR SUMMARY: 0 errors"
a = json.load(open(sys.argv[1]))
a["command"].append("--x" + fake)
a["modules"][1]["path"] = "/opt/app/libmodel.so" + fake + "\x1b[2J"
a["leaks"][1]["owner"] = "\x1b]0;pwned\x07" + fake
a["exit"]["how"] = "exit" + fake
json.dump(a, open(sys.argv[3], "w"))
b = json.load(open(sys.argv[2]))
b["leaks"][0]["api"] = "cuMemAlloc" + fake + "\u009b2J"
json.dump(b, open(sys.argv[4], "w"))
json.dump({"format": "x" + fake + "\x1b[2J", "version": 1}, open(sys.argv[5], "w"))
P
run forge "$AUDIT" --log-file "$WORK/forge.txt" report "$WORK/forge_a.json" "$WORK/forge_b.json"
expect_rc forge 23
n=$(grep -c '^== LEAK SUMMARY' "$WORK/forge.txt")
[ "$n" = 1 ] || fail "forge: $n LEAK SUMMARY lines, expected 1"
n=$(grep -c '^== ERROR SUMMARY' "$WORK/forge.txt")
[ "$n" = 1 ] || fail "forge: $n ERROR SUMMARY lines, expected 1"
bad=$(grep -v '^==' "$WORK/forge.txt")
[ -z "$bad" ] || fail "forge: lines without the == prefix: $bad"
LC_ALL=C grep -q "$(printf '[\001-\037\177]')" "$WORK/forge.txt" &&
	fail "forge: control characters in the text report"
grep -q "$(printf '\302\233')" "$WORK/forge.txt" && fail "forge: a C1 CSI in the text report"
cp "$WORK/forge.txt" "$WORK/forge.log"
expect_in forge log '--x\n== LEAK SUMMARY: 0 bytes leaked in 0 allocations (0 groups)\n== ERROR SUMMARY: 0 errors'
expect_in forge log '\x1b]0;pwned\x07\n== LEAK SUMMARY'
expect_in forge log 'cuMemAlloc\n== LEAK SUMMARY: 0 bytes leaked in 0 allocations (0 groups)\n== ERROR SUMMARY: 0 errors\u009b2J'
run forgeerr "$AUDIT" report "$WORK/forge_c.json"
expect_rc forgeerr 125
n=$(wc -l <"$WORK/forgeerr.err")
[ "$n" = 1 ] || fail "forgeerr: the error takes $n lines, expected 1"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$WORK/forgeerr.err" &&
	fail "forgeerr: control characters in the error message"
expect_in forgeerr err 'format is "x\n== LEAK SUMMARY'

finish
