#!/bin/bash
# cuwarden-audit report: merging saved per-process reports, the text
# report, exit statuses, suppressions (built-in, files, generated) and bad
# input (corrupt, foreign and malformed reports; malformed suppressions;
# bad options).
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
B="$DATA/proc_b.json"

# Two processes: the same call stack in both is one group (4 allocations,
# pids 100 and 101, devices 0 and 1); the libcublas-owned leak is
# suppressed by the built-in rules; findings make the status 23.
run merge "$AUDIT" report "$A" "$B"
expect_rc merge 23
expect_in merge err "== 4,194,304 bytes in 4 device allocations (1,048,576 each) leaked by /opt/app/libmodel.so [devices 0,1, cuMemAlloc_v2, pids 100,101]"
expect_in merge err "==    at 0x1a2b: ??? (in /opt/app/libmodel.so, module file not found)"
expect_in merge err "== 262,144 bytes in 1 pinned allocation leaked by /opt/app/trainer [host, cuMemHostAlloc, pid 100]"
expect_in merge err "==    by 0x7fffdeadbeef: ??? (unknown module)"
expect_in merge err "== double_free: cuMemFree_v2 of 0x7f5000300000 (device allocation of 65,536 bytes) -> CUDA_ERROR_INVALID_VALUE, 1 time [device 0, pid 100]"
expect_in merge err "==  Allocated at:"
expect_in merge err "==  First freed at:"
expect_in merge err "== LEAK SUMMARY: 4,456,448 bytes leaked in 5 allocations (2 groups)"
expect_in merge err "== SUPPRESSED: 1,048,576 bytes in 1 allocation, 0 violations"
expect_in merge err "leak:libcublas.so* (built-in)"
expect_in merge err "== ERROR SUMMARY: 6 errors (5 leaks, 1 violation)"
expect_in merge err "== COVERAGE: 2 processes audited, 17 allocations seen, hooks active in 2, 1 untracked free"
expect_not_in merge err "libcublas.so.12 ["
expect_in merge err "== BY OWNER:"
expect_in merge err "==    4,194,304 bytes in 4 allocations: /opt/app/libmodel.so"
expect_in merge err "==    262,144 bytes in 1 allocation: /opt/app/trainer"
expect_in merge err "== PROCESSES:"
expect_in merge err "==    pid 100 (parent 1): ./trainer --epochs 1 -- exit 0, 10 allocations, 4,456,448 bytes leaked, 1 violation"
expect_in merge err "==    pid 101 (parent 100): ./trainer --worker -- exit 0, 7 allocations, 1,048,576 bytes leaked, 0 violations"
# Largest first: the 4 MiB group before the 256 KiB one.
first=$(grep -n "bytes in" "$WORK/merge.err" | head -1)
case $first in *4,194,304*) ;; *) fail "merge: largest group not first: $first";; esac

# The same with the text in a file, and a chosen exit status.
run logfile "$AUDIT" --log-file "$WORK/log.txt" --error-exitcode 7 report "$A" "$B"
expect_rc logfile 7
grep -qF "LEAK SUMMARY: 4,456,448 bytes" "$WORK/log.txt" || fail "logfile: no summary in the log file"
[ -s "$WORK/logfile.err" ] && fail "logfile: stderr not empty"
run never "$AUDIT" --error-exitcode 0 report "$A"
expect_rc never 0

# Built-in suppressions off: the libcublas leak is reported.
run nobuiltin "$AUDIT" --no-builtin-suppressions report "$A"
expect_rc nobuiltin 23
expect_in nobuiltin err "leaked by /usr/lib/x86_64-linux-gnu/libcublas.so.12"
expect_not_in nobuiltin err "SUPPRESSED"

# A process that never used CUDA is clean, and says so.
run nocuda "$AUDIT" report "$DATA/nocuda.json"
expect_rc nocuda 0
expect_in nocuda err "== COVERAGE: 1 process audited, 0 allocations seen, hooks active in 0: no CUDA activity seen"
expect_in nocuda err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"

run reqcuda "$AUDIT" --require-cuda report "$DATA/nocuda.json"
expect_rc reqcuda 125
expect_in reqcuda err "--require-cuda: no CUDA activity seen in 1 process"
run reqcuda2 "$AUDIT" --require-cuda report "$DATA/nocuda.json" "$B"
expect_rc reqcuda2 23

# A directory of directories: "is a directory", never an "empty file".
mkdir -p "$WORK/dirs/a" "$WORK/dirs/b"
run dirs "$AUDIT" report "$WORK/dirs"
expect_rc dirs 125
expect_in dirs err "$WORK/dirs/a: is a directory, not read"
expect_in dirs err "report: no report files found"
expect_not_in dirs err "empty file"

# A program that uses CUDA only through libcuwarden (mode "library",
# hooks_active false, no shim counts) used CUDA: its findings are listed
# and the coverage line does not deny it; --require-cuda is satisfied.
L="$DATA/library.json"
run lib "$AUDIT" report "$L"
expect_rc lib 23
expect_in lib err "== 1,048,576 bytes in 1 device allocation leaked by an unknown owner [device 0, cw_alloc, pid 400]"
expect_in lib err "== COVERAGE: 1 process audited, using CUDA through libcuwarden (no shim: no hook counts)"
expect_not_in lib err "no CUDA activity seen"
expect_not_in lib err "0 allocations seen"
expect_not_in lib err "hooks active in 0"
run reqlib "$AUDIT" --require-cuda --json "$WORK/lib.json" report "$L"
expect_rc reqlib 23
expect_not_in reqlib err "--require-cuda"
"${PY:-python3}" -c '
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
assert c["cuda_active"] is True and c["cuda_active_processes"] == 1, c
assert c["library_processes"] == 1 and c["hooks_active"] is False, c
' "$WORK/lib.json" || fail "reqlib: coverage"
run libmix "$AUDIT" report "$L" "$DATA/nocuda.json"
expect_rc libmix 23
expect_in libmix err "./libleak -- request, exit status unknown, 0 allocations, 1,048,576 bytes leaked, 1 violation (libcuwarden)"
expect_in libmix err "/bin/true -- exit 0, 0 allocations, 0 bytes leaked, 0 violations (no CUDA activity)"
expect_not_in libmix err "no CUDA activity seen"

# A report the shim wrote in its nowait state (an exit from a signal
# handler inside the shim) left parts out: the text says so after the
# coverage, the merged JSON keeps the note (and passes the schema).
run inc "$AUDIT" --json "$WORK/inc.json" report "$DATA/incomplete.json"
expect_in inc err "== INCOMPLETE: the report of pid 101 left 2 parts out (the program exited from a signal handler that interrupted a CUDA call holding the shim's locks)"
run incschema "${PY:-python3}" "$top_srcdir/tests/tools/check_json.py" "$top_srcdir/tests/tools/audit.schema.json" "$WORK/inc.json"
expect_rc incschema 0
"${PY:-python3}" -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
assert p["incomplete"]["parts_left_out"] == 2, p
' "$WORK/inc.json" || fail "inc: the merged JSON lost the note"

# A directory of reports (as --keep-reports leaves them).
mkdir "$WORK/dir"
cp "$A" "$B" "$WORK/dir/"
run dir "$AUDIT" report "$WORK/dir"
expect_rc dir 23
expect_in dir err "== LEAK SUMMARY: 4,456,448 bytes leaked in 5 allocations (2 groups)"

# Each process once.  Two reports of one directory with the same pid (pid
# reuse: the shim names the second report.101.json.101-1) are two
# processes, even byte for byte the same; the same report given twice --
# the same file, a file and its directory, a copy of the directory -- is
# one; files starting with '.' (the shim's, being written) and entries
# that are not regular files are not read.
mkdir "$WORK/reuse"
cp "$B" "$WORK/reuse/report.101.json"
cp "$B" "$WORK/reuse/report.101.json.101-1"
printf '{"format": "cuwar' >"$WORK/reuse/.report.102.json.tmp"
mkdir "$WORK/reuse/sub"
run reuse "$AUDIT" report "$WORK/reuse"
expect_rc reuse 23
expect_in reuse err "== COVERAGE: 2 processes audited, 14 allocations seen"
expect_in reuse err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
n=$(grep -c "^==    pid 101 (parent 100): ./trainer --worker" "$WORK/reuse.err")
[ "$n" = 2 ] || fail "reuse: pid 101 listed $n times in PROCESSES, expected 2"
expect_in reuse err "$WORK/reuse/sub: is a directory, not read"
expect_not_in reuse err "empty file"
run same "$AUDIT" report "$B" "$B"
expect_rc same 23
expect_in same err "$B: the same report as $B, read already: counted once"
expect_in same err "== COVERAGE: 1 process audited, 7 allocations seen"
run samedir "$AUDIT" report "$WORK/reuse" "$WORK/reuse/report.101.json"
expect_rc samedir 23
expect_in samedir err "== COVERAGE: 2 processes audited, 14 allocations seen"
cp -r "$WORK/reuse" "$WORK/reuse2"
run copydir "$AUDIT" report "$WORK/reuse" "$WORK/reuse2"
expect_rc copydir 23
expect_in copydir err "== COVERAGE: 2 processes audited, 14 allocations seen"
expect_in copydir err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
run copy3 "$AUDIT" report "$WORK/reuse" "$WORK/reuse2/report.101.json" "$A"
expect_rc copy3 23
expect_in copy3 err "== COVERAGE: 3 processes audited, 24 allocations seen"

# A status nobody knows (the report says -1, or has no "exit") is said to
# be unknown, never printed as -1.
sed 's/"exit": {"how": "exit", "status": 0}/"exit": {"how": "exit", "status": -1}/' "$A" >"$WORK/st_a.json"
sed '/"exit": {"how": "exit", "status": 0},/d' "$B" >"$WORK/st_b.json"
grep -q '"status": -1' "$WORK/st_a.json" && ! grep -q '"exit"' "$WORK/st_b.json" || exit 99
run unknown "$AUDIT" report "$WORK/st_a.json" "$WORK/st_b.json"
expect_rc unknown 23
expect_in unknown err "==    pid 100 (parent 1): ./trainer --epochs 1 -- exit status unknown, 10 allocations"
expect_in unknown err "==    pid 101 (parent 100): ./trainer --worker -- exit status unknown, 7 allocations"
expect_not_in unknown err "-1"

# Suppression files: function/module/file patterns, owner:, violation:.
cat >"$WORK/s1.supp" <<'S'
# the model library's leaks are known
leak:libmodel.so      # module base name
violation:double_free:trainer
S
run supp "$AUDIT" --suppressions "$WORK/s1.supp" report "$A" "$B"
expect_rc supp 23
expect_in supp err "== LEAK SUMMARY: 262,144 bytes leaked in 1 allocation (1 group)"
expect_in supp err "== SUPPRESSED: 5,242,880 bytes in 5 allocations, 1 violation"
expect_in supp err "leak:libmodel.so ($WORK/s1.supp:2)"
expect_in supp err "violation:double_free:trainer ($WORK/s1.supp:3)"
expect_in supp err "== ERROR SUMMARY: 1 error (1 leak, 0 violations)"
printf 'leak:/opt/app/*\nviolation:*\nowner:*/trainer\n' >"$WORK/s2.supp"
run suppall "$AUDIT" --suppressions "$WORK/s2.supp" report "$A" "$B"
expect_rc suppall 0
expect_in suppall err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"

# --gen-suppressions prints rules that, fed back, suppress everything.
run gen "$AUDIT" --gen-suppressions --log-file "$WORK/gen.txt" report "$A" "$B"
expect_rc gen 23
grep -v '^==' "$WORK/gen.txt" >"$WORK/gen.supp"
cp "$WORK/gen.supp" "$WORK/gen.log"
expect_block gen log '   leak:device:cuMemAlloc_v2
   obj:libmodel.so'
expect_block gen log '   violation:double_free:cuMemFree_v2
   obj:trainer
}'
run regen "$AUDIT" --suppressions "$WORK/gen.supp" report "$A" "$B"
expect_rc regen 0

# A run on an H200 (an nvcc-built program, static cudart; its --json
# document, gpu_planted.json): the same totals as compute-sanitizer
# --leak-check full printed for it ("LEAK SUMMARY: 2359296 bytes leaked in
# 3 allocations", "ERROR SUMMARY: 4 errors"); the static runtime's
# internal frames hidden; suppressions generated with the whole call
# chain, the runtime's hashed internal names as a pattern.
run gpu "$AUDIT" --gen-suppressions --log-file "$WORK/gpu.txt" report "$DATA/gpu_planted.json"
expect_rc gpu 23
cp "$WORK/gpu.txt" "$WORK/gpu.log"
expect_in gpu log "== LEAK SUMMARY: 2,359,296 bytes leaked in 3 allocations (3 groups)"
# --plain-summary: the summary lines as compute-sanitizer writes them, for
# scripts that parse them; every other line still grouped.
run gpuplain "$AUDIT" --plain-summary report "$DATA/gpu_planted.json"
expect_rc gpuplain 23
expect_in gpuplain err "== LEAK SUMMARY: 2359296 bytes leaked in 3 allocations (3 groups)"
expect_in gpuplain err "== ERROR SUMMARY: 4 errors (3 leaks, 1 violation)"
expect_not_in gpuplain err "LEAK SUMMARY: 2,359,296"
expect_in gpu log "== ERROR SUMMARY: 4 errors (3 leaks, 1 violation)"
expect_in gpu log "==    (2 frames inside the static CUDA runtime not shown)"
expect_in gpu log "==    at 0x4ca93: cudaMalloc (in /work/main/_tool_gpu/planted, no debug info)"
expect_in gpu log "==    by 0x8d5e: make_buffer(unsigned long) (planted.cu:7)"
expect_block gpu log "   fun:libcudart_static_* obj:planted
   fun:cudaMalloc obj:planted
   fun:make_buffer(unsigned long) obj:planted
   fun:leak_two() obj:planted
   fun:main obj:planted
}"
# Its two leaks of make_buffer (two lines of leak_two) share one chain of
# functions: one rule for both, printed once under both comment lines.
expect_in gpu log "# ---- cuwarden-audit --gen-suppressions: 3 rules for 4 finding groups"
n=$(grep -c '^   fun:make_buffer(unsigned long) obj:planted$' "$WORK/gpu.txt")
[ "$n" = 1 ] || fail "gpu: the make_buffer rule written $n times, expected once"
grep -v '^==' "$WORK/gpu.txt" | grep -q 'libcudart_static_[0-9a-f]' &&
	fail "gpu: a generated rule names a hashed function of the CUDA runtime"
grep -v '^==' "$WORK/gpu.txt" >"$WORK/gpu.supp"
run gpusupp "$AUDIT" --suppressions "$WORK/gpu.supp" report "$DATA/gpu_planted.json"
expect_rc gpusupp 0

# PyTorch on an H200 (gpu_torch.json): what the CUDA libraries and the
# caching allocators keep is all matched by the built-in rules.
run torch "$AUDIT" report "$DATA/gpu_torch.json"
expect_rc torch 0
expect_in torch err "== SUPPRESSED: 123,864,068 bytes in 7 allocations, 0 violations"
expect_in torch err "3 x, 67,240,960 bytes: leak:libcublas.so* (built-in)"
expect_in torch err "3 x, 56,623,104 bytes: leak:libc10_cuda.so (built-in)"
expect_in torch err "1 x, 4 bytes: leak:*CachingHostAllocator* (built-in)"
expect_in torch err "== ERROR SUMMARY: 0 errors (0 leaks, 0 violations)"
run torchall "$AUDIT" --no-builtin-suppressions report "$DATA/gpu_torch.json"
expect_rc torchall 23
expect_in torchall err "== LEAK SUMMARY: 123,864,068 bytes leaked in 7 allocations (6 groups)"
expect_in torchall err "== 23,068,672 bytes in 2 device allocations (2,097,152 to 20,971,520 each) leaked by"
expect_in torchall err "at::cuda::getCurrentCUDABlasHandle()"

# Bad input: each names the file and what is wrong.
run corrupt "$AUDIT" report "$DATA/corrupt.json"
expect_rc corrupt 125
expect_in corrupt err "corrupt.json:3:"
expect_in corrupt err "invalid JSON"
run empty "$AUDIT" report "$DATA/empty.json"
expect_rc empty 125
expect_in empty err "empty.json: empty file"
run foreign "$AUDIT" report "$DATA/wrongformat.json"
expect_rc foreign 125
expect_in foreign err "wrongformat.json: not a cuwarden report: format is \"something-else\""
printf 'cuwarden: LEAK SUMMARY: 0 bytes leaked in 0 allocations\n' >"$WORK/text.txt"
run text "$AUDIT" report "$WORK/text.txt"
expect_rc text 125
expect_in text err "text.txt: not JSON (a text report?"
run newer "$AUDIT" report "$DATA/newversion.json"
expect_rc newer 125
expect_in newer err "report version 2 is not supported"
run badstack "$AUDIT" report "$DATA/badstack.json"
expect_rc badstack 125
expect_in badstack err "badstack.json: leaks[0].stack[1].module: index 4 out of range (1 modules)"
run badcount "$AUDIT" report "$DATA/badcount.json"
expect_rc badcount 125
expect_in badcount err "badcount.json: leaks[0].count: expected a non-negative integer"
run missing "$AUDIT" report "$WORK/nonexistent.json"
expect_rc missing 125
expect_in missing err "nonexistent.json: cannot read: No such file or directory"

printf 'leak:ok\nfrob:bar\n' >"$WORK/bad.supp"
run badsupp "$AUDIT" --suppressions "$WORK/bad.supp" report "$A"
expect_rc badsupp 125
expect_in badsupp err "bad.supp:2: malformed suppression \"frob:bar\": unknown rule type"
printf 'leak:\n' >"$WORK/bad2.supp"
run badsupp2 "$AUDIT" --suppressions "$WORK/bad2.supp" report "$A"
expect_rc badsupp2 125
expect_in badsupp2 err "bad2.supp:1: malformed suppression \"leak:\": empty pattern"
# A NUL byte would cut the rule short ("leak:*" of "leak:*\0libfoo.so"):
# the file is refused.
printf 'leak:ok\nleak:*\000libfoo.so\n' >"$WORK/nul.supp"
run nulsupp "$AUDIT" --suppressions "$WORK/nul.supp" report "$A"
expect_rc nulsupp 125
expect_in nulsupp err "nul.supp:2: NUL byte"
run nosupp "$AUDIT" --suppressions "$WORK/none.supp" report "$A"
expect_rc nosupp 125
expect_in nosupp err "none.supp: cannot read the suppressions file"

# Bad options.
run noprog "$AUDIT"
expect_rc noprog 125
expect_in noprog err "missing program"
run noreports "$AUDIT" report
expect_rc noreports 125
expect_in noreports err "report: give the report files"
run badopt "$AUDIT" --frobnicate true
expect_rc badopt 125
expect_in badopt err "unknown option --frobnicate"
run badexit "$AUDIT" --error-exitcode 300 true
expect_rc badexit 125
expect_in badexit err "--error-exitcode: \"300\" is not a number from 0 to 255"
run badmode "$AUDIT" --mode fast true
expect_rc badmode 125
expect_in badmode err "--mode: \"fast\" is neither audit nor pool"
run baddepth "$AUDIT" --stack-depth 65 true
expect_rc baddepth 125
expect_in baddepth err "--stack-depth: \"65\" is not a number from 0 to 64"
# The tool's ranges are the library's (lib/options.def): a count the shim
# would refuse is refused here (--tombstones took up to 2^30).
tmax=$(sed -n 's/^OPTION(TOMBSTONES, LONG, [0-9]*, 0, \(.*\), OPTION_NO_WORDS,$/\1/p' "$top_srcdir/lib/options.def")
tmax=$((tmax))
run badtomb "$AUDIT" --tombstones $((tmax + 1)) true
expect_rc badtomb 125
expect_in badtomb err "--tombstones: \"$((tmax + 1))\" is not a number from 0 to $tmax"
run oktomb "$AUDIT" --tombstones "$tmax" true
expect_rc oktomb 0
run badsize "$AUDIT" --pool-limit 12Q true
expect_rc badsize 125
expect_in badsize err "--pool-limit: \"12Q\" is not a size"
run shimopt "$AUDIT" --mode pool report "$A"
expect_rc shimopt 125
expect_in shimopt err "apply only when running a program"
run noval "$AUDIT" --json
expect_rc noval 125
expect_in noval err "option --json needs a value"

# Output files that cannot be written are refused before anything runs.
run badout "$AUDIT" --json "$WORK/no/such/dir/x.json" -- sh -c 'touch "$1"' sh "$WORK/ran"
expect_rc badout 125
expect_in badout err "--json $WORK/no/such/dir/x.json: cannot be written"
[ -e "$WORK/ran" ] && fail "badout: the program ran anyway"
run badlog "$AUDIT" --log-file "$WORK/no/such/dir/x.txt" report "$A"
expect_rc badlog 125
expect_in badlog err "--log-file $WORK/no/such/dir/x.txt: No such file or directory"

# Two outputs to one file -- the same path, another spelling of it, a
# directory reached through a link, the log file -- are refused before
# anything runs.
mkdir "$WORK/outs"
ln -s "$WORK/outs" "$WORK/outs-link"
for pair in "--json $WORK/outs/x --sarif $WORK/outs/x" \
	"--json $WORK/outs/x --html $WORK/outs/./x" \
	"--sarif $WORK/outs/x --html $WORK/outs/../outs/x" \
	"--json $WORK/outs/x --log-file $WORK/outs-link/x" \
	"--log-file /dev/null --json /dev/null"; do
	# shellcheck disable=SC2086
	run dupout "$AUDIT" $pair -- sh -c 'touch "$1"' sh "$WORK/ran"
	expect_rc dupout 125
	expect_in dupout err "name one file: give each output its own"
done
(cd "$WORK/outs" && "$AUDIT" --json x --sarif "$WORK/outs/x" report "$A") \
	>"$WORK/dupcwd.out" 2>"$WORK/dupcwd.err"
rc=$?
expect_rc dupcwd 125
expect_in dupcwd err "--json x and --sarif $WORK/outs/x name one file"
[ -e "$WORK/ran" ] && fail "dupout: the program ran anyway"
[ -e "$WORK/outs/x" ] && fail "dupout: an output was written"
run twoout "$AUDIT" --json "$WORK/outs/x" --sarif "$WORK/outs/y" report "$A"
expect_rc twoout 23

# After --, "report" is a program like any other.
run dashdash "$AUDIT" -- report "$A"
expect_rc dashdash 127
expect_in dashdash err "report: command not found"

# --help and --version (check_help.sh: --help-all).
run help "$AUDIT" --help
expect_rc help 0
expect_in help out "Usage: cuwarden-audit [options] [--] program [args...]"
run helpall "$AUDIT" --help-all
expect_rc helpall 0
expect_in helpall out "leak:libcublas.so*"
run version "$AUDIT" --version
expect_rc version 0
expect_in version out "cuwarden-audit (cuwarden) "

finish
