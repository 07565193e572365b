#!/bin/sh
# doc/design.md's map names every C file of lib/, shim/, preload/ and
# tools/, each in its folder's part of the map (the part of the first code
# block that begins with "lib/", "shim/", ... at the start of a line and
# ends at a line of dashes).  The map may name files one by one
# ("engine.c"), by braces ("registry_{slot,tree}.c") or by a shell pattern
# ("devpool*.c").  A file added without its line in the map fails, and so
# does a name of the map that is no file of its folder.
# Exit 0 pass, 1 fail, 99 harness error.
: "${top_srcdir:?}"
map=$top_srcdir/doc/design.md
[ -f "$map" ] || { echo "ERROR: $map is missing"; exit 99; }
tmpd=$(mktemp -d) || exit 99
trap 'rm -rf "$tmpd"' EXIT
LC_ALL=C
export LC_ALL
rc=0

# The map: the first fenced block of design.md.
awk '/^```/ { n++; next } n == 1' "$map" >"$tmpd/map"
[ -s "$tmpd/map" ] || { echo "ERROR: no map (fenced block) in $map"; exit 99; }

# One name per line, "pre{a,b}post" expanded (one pair of braces).
expand() {
	case $1 in
	*'{'*'}'*)
		pre=${1%%\{*}
		rest=${1#*\{}
		body=${rest%%\}*}
		post=${rest#*\}}
		old_ifs=$IFS
		IFS=,
		for x in $body; do
			printf '%s\n' "$pre$x$post"
		done
		IFS=$old_ifs
		;;
	*) printf '%s\n' "$1" ;;
	esac
}

nfiles=0
for dir in lib shim preload tools; do
	awk -v d="$dir/" 'index($0, d) == 1 { on = 1 } on && /^---/ { on = 0 } on' \
	    "$tmpd/map" >"$tmpd/part"
	if ! [ -s "$tmpd/part" ]; then
		echo "FAIL: doc/design.md's map has no part for $dir/"
		rc=1
		continue
	fi
	grep -o '[A-Za-z0-9_*{},]*\.c\b' "$tmpd/part" | while read -r w; do
		expand "$w"
	done >"$tmpd/names"
	# ... and names only files that exist there.
	while read -r pat; do
		# shellcheck disable=SC2086
		set -- "$top_srcdir/$dir"/$pat
		if ! [ -f "$1" ]; then
			echo "FAIL: doc/design.md's map names $dir/$pat, which does not exist"
			rc=1
		fi
	done <"$tmpd/names"
	for f in "$top_srcdir/$dir"/*.c; do
		[ -f "$f" ] || continue
		nfiles=$((nfiles + 1))
		b=${f##*/}
		found=no
		while read -r pat; do
			# $pat unquoted: a name of the map may be a pattern.
			# shellcheck disable=SC2254
			case $b in $pat) found=yes; break ;; esac
		done <"$tmpd/names"
		if [ $found = no ]; then
			echo "FAIL: doc/design.md's map does not name $dir/$b"
			rc=1
		fi
	done
done
[ "$nfiles" -gt 0 ] || { echo "ERROR: no C files under $top_srcdir"; exit 99; }
[ $rc = 0 ] && echo "PASS: doc/design.md's map names all $nfiles C files of lib/, shim/, preload/, tools/"
exit $rc
