#!/bin/sh
# The public headers compile alone, as C and as C++, with -Wall -Werror.
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_srcdir:?}"
CC=${CC:-cc}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
rc=0
for h in cuwarden.h cuwarden_annotate.h; do
	printf '#include <%s>\nint main(void) { return 0; }\n' "$h" > "$tmp/t.c"
	if ! $CC -std=c99 -Wall -Wextra -Werror -pedantic -I"$top_srcdir/lib" -c "$tmp/t.c" -o "$tmp/t.o"; then
		echo "FAIL: $h does not compile alone as C"; rc=1
	fi
	if command -v c++ >/dev/null 2>&1; then
		cp "$tmp/t.c" "$tmp/t.cc"
		if ! c++ -Wall -Wextra -Werror -I"$top_srcdir/lib" -c "$tmp/t.cc" -o "$tmp/t.o"; then
			echo "FAIL: $h does not compile alone as C++"; rc=1
		fi
	fi
done
[ $rc = 0 ] && echo "PASS: public headers compile alone (C, C++)"
exit $rc
