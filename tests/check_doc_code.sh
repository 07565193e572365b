#!/bin/sh
# Code quoted in the documents is the tree's: in a fenced block of
# doc/*.md, a line "/* path */" (a file of the tree, e.g. shim/memory.c)
# starts a piece of that file, which runs to the next such line or the end
# of the block; every piece must stand in its file, line for line (doc/shim.md's
# "Adding a hook" quotes a family of the shim so).
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_srcdir:?}"
tmpd=$(mktemp -d) || exit 99
trap 'rm -rf "$tmpd"' EXIT
LC_ALL=C
export LC_ALL
rc=0
n=0

for doc in "$top_srcdir"/doc/*.md; do
	# Pieces: $tmpd/p.N holds one, $tmpd/p.N.path its file.
	rm -f "$tmpd"/p.*
	awk -v dir="$tmpd" '
	/^```/ { inb = !inb; cur = ""; next }
	inb && /^\/\* [A-Za-z0-9_.\/-]+ \*\/$/ {
		k++; cur = dir "/p." k
		print $2 > (cur ".path"); close(cur ".path")
		printf "" > cur
		next
	}
	inb && cur != "" { print >> cur }
	' "$doc"
	for p in "$tmpd"/p.*; do
		case $p in *.path|*'*') continue ;; esac
		path=$(cat "$p.path")
		# A blank line before the next piece belongs to neither.
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$p" >"$p.trim"
		n=$((n + 1))
		if ! [ -f "$top_srcdir/$path" ]; then
			echo "FAIL: ${doc##*/} quotes $path, which does not exist"
			rc=1
		elif ! awk 'FNR == NR { want = want $0 "\n"; next }
		    { have = have $0 "\n" }
		    END { exit index(have, want) == 0 }' "$p.trim" "$top_srcdir/$path"; then
			echo "FAIL: ${doc##*/} quotes $path, but the file does not hold:"
			sed 's/^/  /' "$p.trim"
			rc=1
		fi
	done
done
[ $n -gt 0 ] || { echo "ERROR: no quoted piece of code found in doc/*.md"; exit 99; }
[ $rc = 0 ] && echo "PASS: the $n pieces of code doc/*.md quotes stand in their files"
exit $rc
