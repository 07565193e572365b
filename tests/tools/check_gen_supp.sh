#!/bin/bash
# --gen-suppressions on findings with corrupt names (issue 7, fuzz_supp
# finding S4): a report can carry any bytes in module paths, owners,
# violation types and APIs -- newlines, carriage returns, blanks before a
# '#', trailing blanks, a ':' in a violation type, fnmatch's special
# characters, a path that ends in '/', empty names.  The generated file
# must always load back, and its rules must suppress every finding they
# were written for; a finding that no rule can express gets a
# "# (no rule: ...)" comment instead.
. "$top_srcdir/tests/tools/testlib.sh"

R="$DATA/corrupt_names.json"

run gen "$AUDIT" --gen-suppressions --log-file "$WORK/gen.txt" report "$R"
expect_rc gen 23
# The text report itself carries the corrupt names with every control
# character but newline and tab written as '?' (tools/render_text.c): no
# carriage return or escape sequence reaches a terminal.
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$WORK/gen.txt" &&
	fail "gen: the text report holds control characters from the report's names"
grep -q 'lib?nl' "$WORK/gen.txt" || fail "gen: the corrupt names are not in the text report"
# The rules: from the header line on, the report's own "==" lines out
# (the text report may hold the corrupt names themselves).
sed -n '/^# Suppressions for the findings above/,$p' "$WORK/gen.txt" |
	grep -v '^==' >"$WORK/gen.supp"
cp "$WORK/gen.supp" "$WORK/gen.log"
# Every line is a comment or one rule; none is split.
bad=$(grep -v -e '^#' -e '^leak:' -e '^owner:' -e '^violation:' "$WORK/gen.supp")
[ -z "$bad" ] || fail "gen: lines that are neither a comment nor a rule: $bad"
# What the parser cannot take is written as '?', '#' escaped.
expect_in gen log 'leak:lib?nl.so'
expect_in gen log 'leak:lib \#1.so?'
expect_in gen log 'leak:lib\[v2]\*.so?'
expect_in gen log 'leak:/opt/app/'
expect_in gen log 'owner:/opt/own?er/'
expect_in gen log 'violation:lk?X:lib \#1.so?'
expect_in gen log 'violation:double_free?\# not a comment:lib?nl.so'
expect_in gen log 'violation:use\*after\[free:*'
expect_in gen log '# (no rule: no frame or owner to match)'
expect_in gen log '# (no rule: the violation type is empty)'
expect_in gen log '# 8,192 bytes in 1 device allocation (cuMemAlloc_v2?X), fingerprint '
grep -qxE '(leak|owner|violation):|violation:[^:]*:' "$WORK/gen.supp" &&
	fail "gen: a rule with an empty pattern"
# Fed back: the file loads, and suppresses all but the two findings that
# got no rule (28,672 bytes with no frame and no owner; the violation
# with an empty type).
run regen "$AUDIT" --suppressions "$WORK/gen.supp" report "$R"
expect_rc regen 23
expect_not_in regen err "malformed suppression"
expect_in regen err "== SUPPRESSED: 81920 bytes in 5 allocations, 3 violations"
expect_in regen err "== ERROR SUMMARY: 2 errors (1 leak, 1 violation)"
expect_in regen err "== LEAK SUMMARY: 28672 bytes leaked in 1 allocation (1 group)"

finish
