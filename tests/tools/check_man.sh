#!/bin/bash
# The manual pages (doc/man) render cleanly in man-db: groff, as man runs
# it (-man, tbl, the UTF-8 terminal device), warns about nothing with
# every warning on (-ww); no tab inside an .EX/.EE example (man would set
# it at the formatter's tab stops, not the source's).  check_install.sh
# checks that the documents they name are installed.
. "$top_srcdir/tests/tools/testlib.sh"

command -v groff >/dev/null 2>&1 ||
    { echo "harness: groff is needed (Debian: groff-base)"; exit 99; }
n=0
for page in "$top_srcdir"/doc/man/*.[1-8]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	name=${page##*/}
	groff -man -t -ww -z -Tutf8 "$page" >"$WORK/$name.out" 2>"$WORK/$name.err"
	if [ $? != 0 ] || [ -s "$WORK/$name.err" ]; then
		fail "$name: groff warns"
		sed 's/^/    | /' "$WORK/$name.err" | head -20
	fi
	awk -v name="$name" '
		/^\.EX/ { ex = 1; next }
		/^\.EE/ { ex = 0; next }
		ex && /\t/ { printf "%s:%d: a tab in an example: %s\n", name, NR, $0; bad = 1 }
		END { exit bad }' "$page" >"$WORK/$name.tabs" ||
	    { fail "$name: tabs in .EX"; sed 's/^/    | /' "$WORK/$name.tabs"; }
	awk '/^\.EX/ { d++ } /^\.EE/ { d-- } d < 0 || d > 1 { bad = 1 } END { exit bad || d }' "$page" ||
	    fail "$name: .EX and .EE do not pair"
done
[ "$n" -ge 3 ] || { echo "harness: $n manual pages in $top_srcdir/doc/man"; exit 99; }

# The check itself: a tab in an example and a warning are seen.
printf '.TH T 1\n.SH NAME\nt\n.EX\n\tx\n.EE\n.BOGUS\n' >"$WORK/t.1"
groff -man -t -ww -z -Tutf8 "$WORK/t.1" 2>&1 | grep -q . ||
    fail "groff -ww does not warn about an unknown macro"

finish
