#!/bin/bash
# cuwarden-audit running programs under the real shim
# (preload/.libs/libcuwarden_preload.so) on the simulated driver
# (tests/fakecuda): exit statuses of clean, leaking, violating, crashing,
# unauditable, missing and non-executable programs; symbolized leaks;
# fork + exec and orphaned children; shim options; LD_PRELOAD kept;
# --keep-reports; signal forwarding; the README's first command.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/cuprog"
SP="$top_builddir/tests/tools/staticprog"
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
SRC="$TT/cuprog.c"
for f in "$P" "$SP" "$SHIM" "$FAKECUDA_DIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
alloc=$(line_of "$SRC" "LINE-ALLOC \*/")
leak=$(line_of "$SRC" "LINE-LEAK \*/")
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

run clean "$AUDIT" "$P" clean
expect_rc clean 0
expect_in clean err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
expect_in clean err "== COVERAGE: 1 process audited, 1 allocation seen, hooks active in 1"

run status "$AUDIT" "$P" status
expect_rc status 3

run leak "$AUDIT" --json "$WORK/leak.json" "$P" leak
expect_rc leak 23
expect_in leak err "== 2,097,152 bytes in 2 device allocations (1,048,576 each) leaked by $P [device 0, cuMemAlloc_v2, pid "
expect_in leak err ": alloc_buf (cuprog.c:$alloc)"
expect_in leak err ": leak_some (cuprog.c:$leak)"
expect_in leak err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
python3 "$TT/check_json.py" "$TT/audit.schema.json" "$WORK/leak.json" || fail "leak: JSON schema"
run leak0 "$AUDIT" --error-exitcode 0 "$P" leak
expect_rc leak0 0
run leak9 "$AUDIT" --error-exitcode=9 "$P" leak
expect_rc leak9 9

run viol "$AUDIT" "$P" violation
expect_rc viol 23
expect_in viol err "== double_free: cuMemFree_v2 of 0x"
expect_in viol err "==  Allocated at:"
expect_in viol err ": alloc_buf (cuprog.c:$alloc)"
expect_in viol err "==  First freed at:"
expect_in viol err "== ERROR SUMMARY: 1 error (0 leaks, 1 violation)"

# A crash: 128+11 when the shim could write no report; the findings'
# status when it could.
run crash "$AUDIT" "$P" crash
if grep -q "before any report was written" "$WORK/crash.err"; then
	expect_rc crash 139
	expect_in crash err "killed by signal 11 (Segmentation fault)"
	expect_not_in crash err "ERROR SUMMARY"
else
	expect_rc crash 23
	expect_in crash err ": leak_some (cuprog.c:$leak)"
fi

# fork + exec: both processes are audited and merged.
run fork "$AUDIT" "$P" fork
expect_rc fork 23
expect_in fork err "== COVERAGE: 2 processes audited, 3 allocations seen, hooks active in 2"
expect_in fork err "== LEAK SUMMARY: 3,145,728 bytes leaked in 3 allocations (2 groups)"
# An orphan, re-parented to the tool, is waited for.
run orphan "$AUDIT" "$P" orphan
expect_rc orphan 23
expect_in orphan err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
# Exit statuses in PROCESSES: never "-1".  The orphan was reaped by the
# tool (a child subreaper), so its status is known even where its report
# has none; the child of "fork" was reaped by its parent: known only if
# its report says.
expect_in orphan err ": $P leak -- exit 0,"
expect_in orphan err ": $P orphan -- exit 0,"
expect_not_in orphan err "exit -1"
expect_in fork err ": $P fork -- exit 0,"
expect_not_in fork err "exit -1"
run nowait "$AUDIT" --no-wait-descendants "$P" orphan
# The parent never used CUDA: its report (CUWARDEN_REPORT_ALWAYS) is
# clean; the orphan's, if it finished in time, has the leaks.
[ "$rc" = 0 ] || [ "$rc" = 23 ] || fail "nowait: exit status $rc"
sleep 0.5

# A program that never touches CUDA is clean: the shim reports it anyway
# (CUWARDEN_REPORT_ALWAYS, set by the tool), saying no CUDA was seen.
run none "$AUDIT" "$P" none
expect_rc none 0
expect_in none err "hooks active in 0: no CUDA activity seen"

# Unauditable and unrunnable programs.
run static "$AUDIT" "$SP"
expect_rc static 125
expect_in static err "the shim was not loaded"
run noshim "$AUDIT" --preload "$WORK/nonexistent.so" "$P" clean
expect_rc noshim 125
expect_in noshim err "--preload $WORK/nonexistent.so: No such file or directory"
run notfound "$AUDIT" cw-no-such-command-here
expect_rc notfound 127
expect_in notfound err "cw-no-such-command-here: command not found"
run notfound2 "$AUDIT" "$WORK/nothere"
expect_rc notfound2 127
expect_in notfound2 err "cannot run $WORK/nothere: No such file or directory"
printf '#!/bin/sh\nexit 0\n' >"$WORK/noexec"
chmod 644 "$WORK/noexec"
run noexec "$AUDIT" "$WORK/noexec"
expect_rc noexec 126
expect_in noexec err "cannot run $WORK/noexec: Permission denied"
# A program that cannot start: a shared library missing (the dynamic
# loader exits 127 before the shim loads: the status is passed on, no
# "statically linked?"), a script whose #! names a missing interpreter,
# an ELF file whose dynamic loader is missing (execvp says ENOENT of a
# file that exists: the missing file is named).
LD_LIBRARY_PATH= run nolib "$AUDIT" "$P" clean
if grep -q "error while loading shared libraries" "$WORK/nolib.err"; then
	expect_rc nolib 127
	expect_in nolib err "$P could not start: it exited with 127 before any report was written"
	expect_not_in nolib err "statically linked"
fi
printf '#!/nonexistent/cw-interp -x\necho hello\n' >"$WORK/badscript"
chmod 755 "$WORK/badscript"
run badscript "$AUDIT" "$WORK/badscript"
expect_rc badscript 127
expect_in badscript err "cannot run $WORK/badscript: its interpreter /nonexistent/cw-interp, named on its #! line, is not found"
mkdir -p "$WORK/bin"
cp "$WORK/badscript" "$WORK/bin/cw-badscript"
PATH="$WORK/bin:$PATH" run badpath "$AUDIT" cw-badscript
expect_rc badpath 127
expect_in badpath err "cannot run $WORK/bin/cw-badscript: its interpreter /nonexistent/cw-interp, named on its #! line, is not found"
expect_not_in badpath err "command not found"
run badelf "$AUDIT" "$top_builddir/tests/tools/badinterp"
expect_rc badelf 127
expect_in badelf err "cannot run $top_builddir/tests/tools/badinterp: its ELF interpreter (dynamic loader) /nonexistent/cuwarden-test/ld.so.1 is not found"
run explicit "$AUDIT" --preload "$SHIM" -- "$P" leak
expect_rc explicit 23

# A moved installation tree finds its own shim: <prefix>/bin and
# <prefix>/lib/cuwarden (or lib64/cuwarden), wherever <prefix> is.
if head -c4 "$AUDIT" | grep -q ELF; then
	for libdir in lib lib64; do
		pre="$WORK/moved-$libdir/usr"
		mkdir -p "$pre/bin" "$pre/$libdir/cuwarden"
		cp "$AUDIT" "$pre/bin/"
		cp "$SHIM" "$pre/$libdir/cuwarden/"
		run moved "$pre/bin/cuwarden-audit" --json "$WORK/moved.json" "$P" leak
		expect_rc moved 23
		expect_in moved err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
	done
fi

# A tool without a shim next to it says where it looked (unless the
# configured pkglibdir has one installed).
if head -c4 "$AUDIT" | grep -q ELF; then
	mkdir -p "$WORK/bare/bin"
	cp "$AUDIT" "$WORK/bare/bin/"
	run bare "$WORK/bare/bin/cuwarden-audit" "$P" clean
	if grep -q "was not found" "$WORK/bare.err"; then
		expect_rc bare 125
		expect_in bare err "looked at: $WORK/bare/lib/cuwarden/libcuwarden_preload.so $WORK/bare/lib64/cuwarden/libcuwarden_preload.so"
		expect_in bare err "(use --preload PATH"
	fi
fi

# Pool mode: the same findings, the mode recorded.
run pool "$AUDIT" --mode pool --json "$WORK/pool.json" "$P" leak
expect_rc pool 23
expect_in pool err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["processes"][0]["mode"] == "pool"
' "$WORK/pool.json" || fail "pool: mode not recorded"
run poolv "$AUDIT" --mode pool "$P" violation
expect_rc poolv 23
expect_in poolv err "== double_free: cuMemFree_v2 of 0x"

# The environment: our shim first, the user's LD_PRELOAD kept after it;
# CUWARDEN_REPORT private; shim options as variables.
LD_PRELOAD="$FAKECUDA_DIR/libcuda.so.1" run env "$AUDIT" --stack-depth 3 --check-bounds \
	--on-violation report --owner-skip 'libfoo*' -- sh -c \
	'echo "LD=$LD_PRELOAD"; echo "R=$CUWARDEN_REPORT"; echo "D=$CUWARDEN_STACK_DEPTH B=$CUWARDEN_CHECK_BOUNDS V=$CUWARDEN_ON_VIOLATION O=$CUWARDEN_OWNER_SKIP"'
shim_real=$(readlink -f "$SHIM")
expect_in env out "LD=$shim_real:$FAKECUDA_DIR/libcuda.so.1"
expect_in env out "R=$TMPDIR/cuwarden-audit."
expect_in env out "/report.%p.json"
expect_in env out "D=3 B=1 V=report O=libfoo*"
LD_PRELOAD= run env2 "$AUDIT" -- sh -c 'echo "F=$CUWARDEN_REPORT_FORMAT A=$CUWARDEN_REPORT_ALWAYS"'
expect_in env2 out "F=json A=1"
run depth "$AUDIT" --stack-depth 2 --json "$WORK/depth.json" "$P" leak
expect_rc depth 23
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(len(l["stack"]) <= 2 for l in d["leaks"]), [len(l["stack"]) for l in d["leaks"]]
' "$WORK/depth.json" || fail "depth: --stack-depth 2 not applied"

# A relative TMPDIR: the report path given to the program is absolute,
# so a program that changes directory still writes where the tool reads.
mkdir -p "$WORK/rel/tmp" "$WORK/rel/elsewhere"
(cd "$WORK/rel" && TMPDIR=tmp "$AUDIT" -- sh -c 'echo "R=$CUWARDEN_REPORT"') \
	>"$WORK/relenv.out" 2>"$WORK/relenv.err"
expect_in relenv out "R=$WORK/rel/tmp/cuwarden-audit."
(cd "$WORK/rel" && TMPDIR=tmp "$AUDIT" -- sh -c 'cd elsewhere && exec "$1" leak' sh "$P") \
	>"$WORK/relcd.out" 2>"$WORK/relcd.err"
rc=$?
expect_rc relcd 23
expect_in relcd err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
left=$(find "$WORK/rel/tmp" "$WORK/rel/elsewhere" -mindepth 1)
[ -z "$left" ] || fail "relcd: files left: $left"

# --keep-reports, and `report` over them gives the same answer.
run keep "$AUDIT" --keep-reports "$WORK/kept" --json "$WORK/keep.json" "$P" fork
expect_rc keep 23
n=$(ls "$WORK/kept" | grep -c '^report\.[0-9]*\.json$')
[ "$n" = 2 ] || fail "keep: $n reports kept, expected 2"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(p["report"].startswith(sys.argv[2] + "/") for p in d["processes"]), d["processes"]
' "$WORK/keep.json" "$WORK/kept" || fail "keep: processes[].report does not name the kept copies"
run rekeep "$AUDIT" report "$WORK/kept"
expect_rc rekeep 23
expect_in rekeep err "== LEAK SUMMARY: 3,145,728 bytes leaked in 3 allocations (2 groups)"

# Every regular file of the report directory not starting with '.' is
# read, whatever its name (the shim names a second report of one pid
# report.<pid>.json.<pid>-<n>), each once, two with one pid included; the
# shim's unfinished ".name" files are not read, and are removed.
run names "$AUDIT" -- sh -c 'd=${CUWARDEN_REPORT%/*}; cp "$1" "$d/report.101.json"; cp "$1" "$d/report.101.json.101-1"; printf "{" >"$d/.report.7.json.tmp"' sh "$DATA/proc_b.json"
expect_rc names 23
expect_in names err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
# (proc_b.json names no host, sh's own report does: "?:101", as in the
# findings' labels.)
n=$(grep -c "^==    pid ?:101 (parent 100): ./trainer --worker" "$WORK/names.err")
[ "$n" = 2 ] || fail "names: pid 101 listed $n times in PROCESSES, expected 2"

# Nothing left behind in TMPDIR.
left=$(ls -A "$TMPDIR")
[ -z "$left" ] || fail "temporary files left: $left"

# SIGTERM sent to the tool reaches the program.
"$AUDIT" "$P" sleep >"$WORK/sig.out" 2>"$WORK/sig.err" &
tool=$!
sleep 1
kill -TERM "$tool"
start=$(date +%s)
wait "$tool"
rc=$?
[ $(( $(date +%s) - start )) -lt 8 ] || fail "sig: the program did not stop"
expect_rc sig 143

# SARIF from a real run, located relative to the source tree.
(cd "$top_srcdir" && "$AUDIT" --sarif "$WORK/run.sarif" "$P" leak >/dev/null 2>&1)
python3 "$TT/check_sarif.py" "$WORK/run.sarif" || fail "run.sarif invalid"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"][0]
pl = r["locations"][0]["physicalLocation"]
assert pl["artifactLocation"] == {"uri": "tests/tools/cuprog.c", "uriBaseId": "%SRCROOT%"}, pl
assert pl["region"]["startLine"] == int(sys.argv[2]), pl
' "$WORK/run.sarif" "$alloc" || fail "run.sarif: location"

# The README's first command, from the build tree.
if [ -x "$top_builddir/examples/leaky" ]; then
	run readme "$AUDIT" "$top_builddir/examples/leaky"
	expect_rc readme 23
	expect_in readme err "== 3,145,728 bytes in 3 device allocations (1,048,576 each) leaked by $top_builddir/examples/leaky [device 0, cuMemAlloc_v2, pid"
	expect_in readme err "== LEAK SUMMARY: 3,407,872 bytes leaked in 4 allocations (2 groups)"
	expect_in readme err "== ERROR SUMMARY: 5 errors (4 leaks, 1 violation)"
	expect_in readme err ": device_buffer (leaky.c:"
fi

finish
