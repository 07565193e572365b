#!/bin/bash
# Installation (Makefile.am, "Installation directories"): a copy of the
# distributed sources (make distdir), configured with --prefix=P1 and
# installed; then `make install prefix=P2`; then reconfigured with
# --prefix=P3 and installed; then installed with DESTDIR.  After each:
# cuwarden.pc, the CMake configuration, the installed manual pages and the
# programs name the prefix installed to -- the tool, copied away from its
# installation, finds the shim by its built-in path, its SARIF rules'
# helpUri names the installed audit.md, every document the manual pages
# name is installed; a change of prefix rebuilds what names it and
# nothing else; DESTDIR stages without changing a path.  A CMake program
# builds against P3.  The build tree of make check is never touched.
. "$top_srcdir/tests/tools/testlib.sh"
. "$TT/installlib.sh"

P="$top_builddir/tests/tools/cuprog"
for f in "$P" "$FAKECUDA_DIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
PY=$(command -v python3) || { echo "harness: python3 is needed"; exit 99; }
command -v pkg-config >/dev/null 2>&1 || { echo "harness: pkg-config is needed"; exit 99; }
unset MAKEFLAGS MFLAGS MAKELEVEL
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# step NAME CMD...: a build step in $WORK/src; its output in
# $WORK/NAME.log; a failure ends the test (nothing after it can run).
step() {
	local name=$1
	shift
	(cd "$WORK/src" && "$@") >"$WORK/$name.log" 2>&1 || {
		echo "FAIL: $name: $*"
		tail -40 "$WORK/$name.log" | sed 's/^/    | /'
		exit 1
	}
}

make -C "$top_builddir" distdir distdir="$WORK/src" >"$WORK/distdir.log" 2>&1 ||
    { echo "harness: make distdir failed"; tail -30 "$WORK/distdir.log"; exit 99; }
# The options this build was configured with, a prefix of our own, and
# no optimisation (quicker; nothing here measures speed).
eval "set -- $("$top_builddir/config.status" --config)"
config=("$@")
P1=$WORK/p1 P2=$WORK/p-2 P3=$WORK/p3
step configure1 ./configure "${config[@]}" --prefix="$P1" CFLAGS=-O0
step install1 make -j2 install

# mtime FILE: its modification time, in nanoseconds.
mtime() {
	stat -c %.9Y "$WORK/src/$1" 2>/dev/null || echo missing
}
EMBEDS=tools/cuwarden_audit-run_shim.o   # includes installdirs.h
OTHER=tools/cuwarden_audit-main.o        # does not

# check_prefix NAME PREFIX [STAGE]: what is installed under STAGE/PREFIX
# names PREFIX.
check_prefix() {
	local name=$1 pre=$2 root=${3-}$2 d
	local pc=$root/lib/pkgconfig/cuwarden.pc doc=$root/share/doc/cuwarden

	# cuwarden.pc
	[ "$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --variable=prefix cuwarden)" = "$pre" ] ||
	    { fail "$name: cuwarden.pc's prefix is not $pre"; sed 's/^/    | /' "$pc"; }
	d=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --cflags --libs cuwarden)
	[ "$(echo $d)" = "-I$pre/include -L$pre/lib -lcuwarden" ] ||
	    fail "$name: pkg-config --cflags --libs: $d"
	# The CMake configuration, where it was not moved.
	grep -qF "set(_cuwarden_installed \"$pre/lib/cmake/cuwarden\")" \
	    "$root/lib/cmake/cuwarden/cuwarden-config.cmake" ||
	    fail "$name: cuwarden-config.cmake does not name $pre"
	# Nothing names the configured default or another prefix.
	for f in "$pc" "$root"/lib/cmake/cuwarden/*.cmake "$root"/share/man/man*/*; do
		sed 's/\\-/-/g' "$f" | grep -oE "(/usr/local|$WORK/p[-0-9]+)/" |
		    grep -vxF "$pre/" >"$WORK/$name.stray"
		[ -s "$WORK/$name.stray" ] &&
		    { fail "$name: ${f#$root/} names another prefix"; sed 's/^/    | /' "$WORK/$name.stray"; }
	done
	# The tool's built-in paths (installdirs.h): the shim's directory
	# and the documents.
	for d in "$pre/lib/cuwarden/libcuwarden_preload.so" \
	    "$pre/share/doc/cuwarden/audit.md"; do
		strings "$root/bin/cuwarden-audit" | grep -qxF "$d" ||
		    fail "$name: cuwarden-audit has no built-in $d"
	done
	# The manual pages: the real directories ("\-" is roff's hyphen).
	sed 's/\\-/-/g' "$root/share/man/man1/cuwarden-audit.1" >"$WORK/$name.man1"
	expect_in "$name" man1 "$pre/lib/cuwarden/libcuwarden_preload.so"
	expect_in "$name" man1 "$pre/share/doc/cuwarden"
	grep -qF "$(printf '%s' "$pre" | sed 's/-/\\-/g')/share/doc/cuwarden" \
	    "$root/share/man/man1/cuwarden-audit.1" ||
	    fail "$name: the manual page does not write $pre's hyphens as \\-"
	# Every document a manual page names, installed; the CI examples.
	sed 's/\\-/-/g' "$top_srcdir"/doc/man/*.[1-8] |
	    grep -oE '[A-Za-z0-9_-]+\.md' | sort -u >"$WORK/$name.docs"
	[ -s "$WORK/$name.docs" ] || fail "$name: the manual pages name no document"
	while read -r d; do
		[ -f "$doc/$d" ] || fail "$name: $d (named by a manual page) is not installed in $pre/share/doc/cuwarden"
	done <"$WORK/$name.docs"
	for d in github-actions.yml CMakeLists.txt gpu_test.c; do
		[ -f "$doc/ci/$d" ] || fail "$name: ci/$d not installed"
	done
}

# run_prefix NAME PREFIX: the installed tool, used from PREFIX (no
# staging), finds its shim and writes helpUri for its documents.
run_prefix() {
	local name=$1 pre=$2

	# Copied away from its installation: only the built-in path is left.
	mkdir -p "$WORK/$name.bare/bin"
	cp "$pre/bin/cuwarden-audit" "$WORK/$name.bare/bin/"
	run "$name.bare" "$WORK/$name.bare/bin/cuwarden-audit" --json "$WORK/$name.json" \
	    --sarif "$WORK/$name.sarif" "$P" leak
	expect_rc "$name.bare" 23
	expect_in "$name.bare" err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
	run "$name.env" "$WORK/$name.bare/bin/cuwarden-audit" sh -c \
	    'printf "%s\n" "$LD_PRELOAD" >"$0"' "$WORK/$name.preload"
	expect_rc "$name.env" 0
	[ "$(cat "$WORK/$name.preload" 2>/dev/null)" = "$(realpath "$pre/lib/cuwarden/libcuwarden_preload.so")" ] ||
	    fail "$name: the shim loaded is $(cat "$WORK/$name.preload" 2>/dev/null), not $pre's"
	# Where it is installed.
	run "$name.inst" "$pre/bin/cuwarden-audit" "$P" clean
	expect_rc "$name.inst" 0
	"$PY" - "$WORK/$name.sarif" "$pre/share/doc/cuwarden/audit.md" <<'PYEOF' || fail "$name: helpUri"
import json, os, sys
from urllib.parse import unquote, urlparse
run = json.load(open(sys.argv[1]))["runs"][0]
uris = {r["helpUri"] for r in run["tool"]["driver"]["rules"]}
uris.add(run["tool"]["driver"]["informationUri"])
for u in uris:
    p = urlparse(u)
    if p.scheme != "file" or unquote(p.path) != sys.argv[2] or not os.path.isfile(unquote(p.path)):
        sys.exit("helpUri %r is not the installed %s" % (u, sys.argv[2]))
PYEOF
}

check_prefix p1 "$P1"
run_prefix p1 "$P1"

# make install prefix=P2: what names the prefix is remade, nothing else.
embeds=$(mtime $EMBEDS) other=$(mtime $OTHER)
step install2 make -j2 install prefix="$P2"
[ "$(mtime $EMBEDS)" != "$embeds" ] || fail "install2: $EMBEDS not rebuilt for prefix=$P2"
[ "$(mtime $OTHER)" = "$other" ] || fail "install2: $OTHER rebuilt, and it names no directory"
check_prefix p2 "$P2"
run_prefix p2 "$P2"

# Reconfigured with --prefix=P3: the same.
embeds=$(mtime $EMBEDS)
step configure3 ./configure "${config[@]}" --prefix="$P3" CFLAGS=-O0
step install3 make -j2 install
[ "$(mtime $EMBEDS)" != "$embeds" ] || fail "install3: $EMBEDS not rebuilt for --prefix=$P3"
[ "$(mtime $OTHER)" = "$other" ] || fail "install3: $OTHER rebuilt, and it names no directory"
check_prefix p3 "$P3"
run_prefix p3 "$P3"

# DESTDIR: staged, every path still P3's, nothing rebuilt.
embeds=$(mtime $EMBEDS)
step install4 make install DESTDIR="$WORK/stage"
[ "$(mtime $EMBEDS)" = "$embeds" ] || fail "install4: DESTDIR rebuilt $EMBEDS"
check_prefix stage "$P3" "$WORK/stage"
find "$WORK/stage" -type f | grep -vF "$WORK/stage$P3/" >"$WORK/stage.outside"
[ -s "$WORK/stage.outside" ] && { fail "stage: files outside $P3"; sed 's/^/    | /' "$WORK/stage.outside"; }

# A CMake program against the real prefix (not moved).
if command -v cmake >/dev/null 2>&1; then
	consumer_ok cmake3 "$P3"
else
	echo "cmake is not installed: no CMake program built"
fi

finish
