#!/bin/bash
# The files cuwarden-audit writes (--json, --sarif, --html, --log-file and
# the --keep-reports copies): never written through a link planted at the
# name (the link is replaced), mode 0600, an earlier output replaced whole,
# re-running onto the same paths works; character devices and a link to
# the tool's own stderr are written in place; a FIFO or a directory at the
# name is refused before anything runs.  --keep-reports makes its
# directory 0700, and refuses one that others can write to (not sticky)
# or that another user owns.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/cuprog"
A="$DATA/proc_a.json"
B="$DATA/proc_b.json"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
umask 022
mode() { stat -c %a "$1"; }

echo precious >"$WORK/victim"
chmod 600 "$WORK/victim"
intact() {
	[ "$(cat "$WORK/victim")" = precious ] ||
		fail "$1: the file a planted link names was overwritten"
}

# Links planted at every output: replaced, not followed.
mkdir "$WORK/out"
for f in a.json a.sarif a.html a.txt; do
	ln -s "$WORK/victim" "$WORK/out/$f"
done
run links "$AUDIT" --json "$WORK/out/a.json" --sarif "$WORK/out/a.sarif" \
	--html "$WORK/out/a.html" --log-file "$WORK/out/a.txt" report "$A"
expect_rc links 23
intact links
for f in a.json a.sarif a.html a.txt; do
	if [ -L "$WORK/out/$f" ] || [ ! -f "$WORK/out/$f" ]; then
		fail "links: $f is not a regular file"
	elif [ "$(mode "$WORK/out/$f")" != 600 ]; then
		fail "links: $f is mode $(mode "$WORK/out/$f"), expected 600"
	fi
done
grep -qF "== LEAK SUMMARY: 3,407,872 bytes" "$WORK/out/a.txt" ||
	fail "links: no text report in a.txt"

# Again onto the same files: each replaced by the new output.
run again "$AUDIT" --json "$WORK/out/a.json" --sarif "$WORK/out/a.sarif" \
	--html "$WORK/out/a.html" --log-file "$WORK/out/a.txt" report "$A" "$B"
expect_rc again 23
"$PY" -c '
import json, sys
assert len(json.load(open(sys.argv[1]))["processes"]) == 2
json.load(open(sys.argv[2]))
' "$WORK/out/a.json" "$WORK/out/a.sarif" || fail "again: the outputs were not replaced"
grep -qF "== COVERAGE: 2 processes audited" "$WORK/out/a.txt" ||
	fail "again: a.txt was not replaced"
left=$(ls -A "$WORK/out" | grep '^\.')
[ -z "$left" ] || fail "again: temporary files left: $left"

# A character device is written in place and stays one; so does a link
# to the tool's own stderr (what /dev/stderr is).
run devnull "$AUDIT" --log-file /dev/null report "$A"
expect_rc devnull 23
[ -c /dev/null ] || fail "devnull: /dev/null is no longer a device"
ln -s /proc/self/fd/2 "$WORK/myerr"
run myerr "$AUDIT" --log-file "$WORK/myerr" report "$A"
expect_rc myerr 23
expect_in myerr err "== LEAK SUMMARY: 3,407,872 bytes"
[ -L "$WORK/myerr" ] || fail "myerr: the link to stderr was replaced"

# A text report that cannot be written is a failed audit (as --json).
if [ -c /dev/full ]; then
	run logfull "$AUDIT" --log-file /dev/full report "$A"
	expect_rc logfull 125
	expect_in logfull err "--log-file: the text report was not written: /dev/full: No space left on device"
	run jsonfull "$AUDIT" --json /dev/full report "$A"
	expect_rc jsonfull 125
	expect_in jsonfull err "cannot write /dev/full: No space left on device"
fi

# A FIFO or a directory at the name: refused before the program runs.
mkfifo "$WORK/out/fifo"
run fifo timeout 20 "$AUDIT" --json "$WORK/out/fifo" -- sh -c 'touch "$1"' sh "$WORK/ran"
expect_rc fifo 125
expect_in fifo err "--json $WORK/out/fifo: cannot be written: is a FIFO"
run dirout "$AUDIT" --sarif "$WORK/out" -- sh -c 'touch "$1"' sh "$WORK/ran"
expect_rc dirout 125
expect_in dirout err "--sarif $WORK/out: cannot be written: is a directory"
[ -e "$WORK/ran" ] && fail "fifo, dirout: the program ran anyway"

# --keep-reports: a directory it makes is 0700, the copies 0600.
run keep "$AUDIT" --keep-reports "$WORK/kept" "$P" leak
expect_rc keep 23
[ "$(mode "$WORK/kept")" = 700 ] || fail "keep: $WORK/kept is mode $(mode "$WORK/kept")"
n=0
for f in "$WORK/kept"/report.*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	[ "$(mode "$f")" = 600 ] || fail "keep: $f is mode $(mode "$f")"
done
[ "$n" = 1 ] || fail "keep: $n reports kept, expected 1"
run keep2 "$AUDIT" --keep-reports "$WORK/kept" "$P" leak
expect_rc keep2 23

# Links planted in the keep directory for the next pids: replaced.
mkdir -m 700 "$WORK/kept2"
"$PY" -c '
import os, sys
d, target = sys.argv[1], sys.argv[2]
pid_max = int(open("/proc/sys/kernel/pid_max").read())
cur = os.getpid()
for i in range(cur, cur + 3000):
    p = i if i <= pid_max else i - pid_max + 300
    os.symlink(target, "%s/report.%d.json" % (d, p))
' "$WORK/kept2" "$WORK/victim" || exit 99
run keeplinks "$AUDIT" --keep-reports "$WORK/kept2" "$P" leak
expect_rc keeplinks 23
intact keeplinks
n=$(find "$WORK/kept2" -type f -name 'report.*' | wc -l)
[ "$n" = 1 ] || fail "keeplinks: $n reports kept, expected 1"

# A directory others can write to and not sticky: refused, nothing run;
# a sticky one (/tmp's kind) is fine.
mkdir "$WORK/open"
chmod 777 "$WORK/open"
run keepopen "$AUDIT" --keep-reports "$WORK/open" -- sh -c 'touch "$1"' sh "$WORK/ran"
expect_rc keepopen 125
expect_in keepopen err "--keep-reports $WORK/open: writable by others and not sticky: refused"
[ -e "$WORK/ran" ] && fail "keepopen: the program ran anyway"
mkdir "$WORK/sticky"
chmod 1777 "$WORK/sticky"
run keepsticky "$AUDIT" --keep-reports "$WORK/sticky" "$P" leak
expect_rc keepsticky 23
ls "$WORK/sticky" | grep -q '^report\.' || fail "keepsticky: no report kept"

# Another user's directory (root can make one).
if [ "$(id -u)" = 0 ]; then
	mkdir -m 755 "$WORK/theirs"
	chown 65534 "$WORK/theirs"
	run keeptheirs "$AUDIT" --keep-reports "$WORK/theirs" "$P" leak
	expect_rc keeptheirs 125
	expect_in keeptheirs err "--keep-reports $WORK/theirs: owned by uid 65534, not by this user or root: refused"
fi

finish
