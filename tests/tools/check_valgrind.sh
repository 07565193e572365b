#!/bin/bash
# cuwarden-audit under valgrind memcheck: no invalid read or write, no use
# of uninitialised memory, no definite or indirect leak, in the paths that
# parse untrusted input and render it: auditing a program under the shim
# (all four outputs), merging hand-written reports, and the corrupt,
# empty, truncated and wrong-format reports.  The audited program itself
# is not run under valgrind (--trace-children=no).
. "$top_srcdir/tests/tools/testlib.sh"
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not installed"; exit 99; }
SHIM=$top_builddir/preload/.libs/libcuwarden_preload.so
VG=(valgrind -q --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --trace-children=no)

# vg NAME WANT CMD...: the tool under memcheck; WANT is its own status.
vg() {
	local name=$1 want=$2
	shift 2
	run "$name" "${VG[@]}" "$@"
	if [ "$rc" = 99 ]; then
		fail "$name: memcheck found errors"
		grep '^==' "$WORK/$name.err" | head -60
	else
		expect_rc "$name" "$want"
	fi
}

vg run 23 "$AUDIT" --preload "$SHIM" --json "$WORK/r.json" \
	--html "$WORK/r.html" --sarif "$WORK/r.sarif" -- \
	"$top_builddir/tests/preload/tp_driver" violations 0
vg merge 23 "$AUDIT" --json "$WORK/m.json" --html "$WORK/m.html" report \
	"$DATA/proc_a.json" "$DATA/proc_b.json" "$DATA/proc_c.json"
vg gpu 23 "$AUDIT" report "$DATA/gpu_torch.json" "$DATA/gpu_planted.json"
for f in corrupt empty wrongformat newversion badstack badcount; do
	run "want_$f" "$AUDIT" report "$DATA/$f.json"
	vg "bad_$f" "$rc" "$AUDIT" report "$DATA/$f.json"
done
head -c 3000 "$DATA/proc_a.json" > "$WORK/truncated.json"
run want_trunc "$AUDIT" report "$WORK/truncated.json"
vg truncated "$rc" "$AUDIT" report "$WORK/truncated.json"
[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "ok: no memcheck error in $(( 6 + 6 )) runs of the tool"
