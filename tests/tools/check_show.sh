#!/bin/bash
# What the text report shows, as valgrind's and compute-sanitizer's users
# choose it: -q (only what counts, nothing when clean), -v (every process
# and owner, more coverage counts; the shim's log level), --print-limit
# and --error-limit (groups printed, a line saying what was not, the
# summary counting all), --show-leak-kinds (categories printed, the rest
# counted), --demangle=no (C++ names as the symbol table has them),
# --color (on a terminal or when asked, never in a --log-file, never
# from a name).
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
B="$DATA/proc_b.json"
C="$DATA/categories.json"
P="$top_builddir/tests/tools/cuprog"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# ---- -q: the groups that count, the summary; no address ranges, no
# sections, no coverage.
run q "$AUDIT" -q report "$C"
expect_rc q 23
expect_in q err "== 2,097,152 bytes in 1 vmm allocation leaked by"
expect_in q err "== 4,096 bytes in 1 device allocation freed only by context teardown"
expect_in q err "== LEAK SUMMARY: 3,149,824 bytes leaked in 3 allocations (3 groups)"
expect_in q err "== ERROR SUMMARY: 3 errors (3 leaks, 0 violations)"
expect_in q err "== EXIT STATUS: 23 (3 errors reported)"
expect_not_in q err "address range"
expect_not_in q err "ADDRESS RANGES"
expect_not_in q err "COVERAGE"
run q2 "$AUDIT" --quiet report "$A" "$B"
expect_in q2 err "== double_free: cuMemFree_v2"
for s in PROCESSES "BY OWNER" SUPPRESSED COVERAGE; do
	expect_not_in q2 err "== $s"
done
# Clean: nothing at all, the status as ever.
run qclean "$AUDIT" -q report "$DATA/nocuda.json"
expect_rc qclean 0
[ -s "$WORK/qclean.err" ] && fail "qclean: something printed"
run qrun "$AUDIT" -q "$P" clean
expect_rc qrun 0
[ -s "$WORK/qrun.err" ] && fail "qrun: something printed"
# Only address ranges (not errors): nothing either.
run qrange "$AUDIT" -q --accept-teardown report "$DATA/teardown_only.json"
expect_rc qrange 0
[ -s "$WORK/qrange.err" ] && fail "qrange: something printed"
# -q then -v: the default again.
run qv "$AUDIT" -q -v report "$C"
expect_in qv err "ADDRESS RANGES NEVER FREED"

# ---- -v: every process (one too), every owner, frees and failed calls.
run v "$AUDIT" -v report "$A"
expect_in v err "== PROCESSES:"
expect_in v err "==    pid 100 (parent 1): ./trainer --epochs 1 -- exit 0"
expect_in v err "== COVERAGE: 1 process audited, 10 allocations and 5 frees seen, hooks active in 1, 1 untracked free, 0 failed calls"
run nov "$AUDIT" report "$A"
expect_not_in nov err "== PROCESSES:"
expect_in nov err "== COVERAGE: 1 process audited, 10 allocations seen, hooks active in 1, 1 untracked free"
run vown "$AUDIT" -v report "$DATA/categories.json"
expect_block vown err "== BY OWNER:
==    3,149,824 bytes in 3 allocations: /srv/vmm/vmmprog"
# The shim's log level: -v 1, -vv 2, --verbose=N; -v takes no value.
run vshim "$AUDIT" -vv sh -c 'echo "level=$CUWARDEN_VERBOSE"'
expect_in vshim out "level=2"
run vshim0 "$AUDIT" --verbose=0 sh -c 'echo "level=$CUWARDEN_VERBOSE"'
expect_in vshim0 out "level=0"
run vshimq "$AUDIT" -q sh -c 'echo "level=${CUWARDEN_VERBOSE-unset}"'
expect_in vshimq out "level=unset"
# ... not for report (no shim): -v is the tool's detail there.
run vreport "$AUDIT" -vv report "$A"
expect_rc vreport 23
expect_in vreport err "== PROCESSES:"

# ---- --print-limit, --error-limit.
run lim "$AUDIT" --print-limit 1 report "$A" "$B"
expect_rc lim 23
expect_in lim err "== 4,194,304 bytes in 4 device allocations"
expect_not_in lim err "262,144 bytes in 1 pinned allocation leaked"
expect_not_in lim err "== double_free"
expect_in lim err "== NOT SHOWN: 1 leak group (262,144 bytes in 1 allocation) and 1 violation group (1 violation), past --print-limit 1; counted in the summary lines, all in --json"
expect_in lim err "== LEAK SUMMARY: 4,456,448 bytes leaked in 5 allocations (2 groups)"
expect_in lim err "== ERROR SUMMARY: 6 errors (5 leaks, 1 violation)"
run lim0 "$AUDIT" --print-limit=0 report "$A" "$B"
expect_in lim0 err "== double_free"
expect_not_in lim0 err "NOT SHOWN"
run limbad "$AUDIT" --print-limit=-1 report "$A"
expect_rc limbad 125
expect_in limbad err "--print-limit: \"-1\" is not a count"
# 1,003 groups: 1,000 printed by default (valgrind's --error-limit=yes),
# all with --error-limit=no or --print-limit=0.
"$PY" - "$A" "$WORK/many.json" <<'PYEOF' || exit 99
import json, sys
d = json.load(open(sys.argv[1]))
d["leaks"] = [{"kind": "device", "size": 4096, "count": 1, "bytes": 4096,
               "device": 0, "owner": "/opt/app/trainer", "api": "cuMemAlloc_v2",
               "addresses": ["0x%x" % (0x7f5000000000 + i * 4096)],
               "stack": [{"module": 0, "offset": "0x%x" % (0x1000 + i)}]}
              for i in range(1003)]
d["violations"] = []
d["summary"] = {"leaked_bytes": 1003 * 4096, "leaked_allocations": 1003, "violations": 0}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
run many "$AUDIT" report "$WORK/many.json"
[ "$(grep -c '^== 4,096 bytes in 1 device allocation' "$WORK/many.err")" = 1000 ] ||
	fail "many: not 1000 groups printed"
expect_in many err "== NOT SHOWN: 3 leak groups (12,288 bytes in 3 allocations), past --print-limit 1000"
expect_in many err "== LEAK SUMMARY: 4,108,288 bytes leaked in 1,003 allocations (1,003 groups)"
run manyno "$AUDIT" --error-limit=no report "$WORK/many.json"
[ "$(grep -c '^== 4,096 bytes in 1 device allocation' "$WORK/manyno.err")" = 1003 ] ||
	fail "manyno: not every group printed"
expect_not_in manyno err "NOT SHOWN"
run manyyes "$AUDIT" --print-limit=0 --error-limit=yes report "$WORK/many.json"
expect_in manyyes err "past --print-limit 1000"

# ---- --show-leak-kinds.
run k_leak "$AUDIT" --show-leak-kinds=leak report "$C"
expect_rc k_leak 23
expect_in k_leak err "== 2,097,152 bytes in 1 vmm allocation leaked by"
expect_not_in k_leak err "freed only by context teardown, made by"
expect_not_in k_leak err "never freed, reserved by"
expect_in k_leak err "== NOT SHOWN: 2 leak groups (2,101,248 bytes in 1 allocation and 1 address range), of categories --show-leak-kinds leaves out"
expect_in k_leak err "== LEAK SUMMARY: 3,149,824 bytes leaked in 3 allocations (3 groups)"
run k_def "$AUDIT" --show-leak-kinds=definite report "$C"
cmp -s "$WORK/k_leak.err" "$WORK/k_def.err" || fail "definite is not leak"
run k_list "$AUDIT" --show-leak-kinds=teardown,address_range report "$C"
expect_not_in k_list err "vmm allocation leaked by"
expect_in k_list err "freed only by context teardown, made by"
expect_in k_list err "never freed, reserved by"
run k_none "$AUDIT" --show-leak-kinds=none report "$C"
expect_rc k_none 23
grep -qE "^== [0-9,]+ bytes in " "$WORK/k_none.err" && fail "k_none: a group shown"
expect_in k_none err "== NOT SHOWN: 4 leak groups"
# Suppressed groups: shown with what hid them, counted as before.
run k_all "$AUDIT" --show-leak-kinds=all --accept-teardown report "$A" "$C"
expect_in k_all err "== 1,048,576 bytes in 1 device allocation leaked by /usr/lib/x86_64-linux-gnu/libcublas.so.12 [device 0, cuMemAlloc_v2, pid 100] (suppressed by leak:libcublas.so*)"
expect_in k_all err "== 4,096 bytes in 1 device allocation freed only by context teardown, made by /srv/vmm/vmmprog [device 0, cuMemAlloc_v2, pid 5151] (accepted: --accept-teardown)"
expect_in k_all err "== SUPPRESSED: 1,048,576 bytes in 1 allocation, 0 violations"
run k_base "$AUDIT" --json "$WORK/base.json" report "$A"
run k_inbase "$AUDIT" --show-leak-kinds=leak,suppressed --baseline "$WORK/base.json" report "$A"
expect_rc k_inbase 0
expect_in k_inbase err "== 262,144 bytes in 1 pinned allocation leaked by /opt/app/trainer [host, cuMemHostAlloc, pid 100] (in the baseline)"
run k_bad "$AUDIT" --show-leak-kinds=leak,reachable report "$A"
expect_rc k_bad 125
expect_in k_bad err "--show-leak-kinds: \"reachable\" is not a category: give all, none or a comma-separated list of leak (or definite), teardown, address_range, suppressed"
run k_empty "$AUDIT" --show-leak-kinds=leak, report "$A"
expect_rc k_empty 125

# ---- --demangle.
run dm "$AUDIT" "$P" mangled
expect_rc dm 23
expect_in dm err ": cw::leak_cxx(int) (cuprog.c:"
run dmno "$AUDIT" --demangle=no --json "$WORK/dmno.json" "$P" mangled
expect_in dmno err ": _ZN2cw8leak_cxxEi (cuprog.c:"
grep -qF '"_ZN2cw8leak_cxxEi"' "$WORK/dmno.json" || fail "dmno: JSON name demangled"
run dmyes "$AUDIT" --demangle yes "$P" mangled
expect_in dmyes err ": cw::leak_cxx(int) (cuprog.c:"

# ---- --color.
esc=$(printf '\033')
run c_pipe "$AUDIT" report "$A"
grep -q "$esc" "$WORK/c_pipe.err" && fail "c_pipe: colour on a pipe"
run c_always "$AUDIT" --color=always report "$A"
grep -qF "== ${esc}[1;31m3,145,728 bytes in 3 device allocations" "$WORK/c_always.err" ||
	fail "c_always: no colour on a leak header"
grep -qF "== ${esc}[1;31mdouble_free: cuMemFree_v2" "$WORK/c_always.err" ||
	fail "c_always: no colour on a violation header"
grep -qF "== ${esc}[1mLEAK SUMMARY: 3,407,872 bytes leaked in 4 allocations (2 groups)${esc}[0m" \
	"$WORK/c_always.err" || fail "c_always: no colour on LEAK SUMMARY"
grep -qF "== ${esc}[1;31mEXIT STATUS: 23" "$WORK/c_always.err" ||
	fail "c_always: no colour on EXIT STATUS"
grep "$esc" "$WORK/c_always.err" | grep -qE "^==  +(at|by) " &&
	fail "c_always: a frame line coloured"
run c_log "$AUDIT" --color=always --log-file "$WORK/c.log" report "$A"
grep -q "$esc" "$WORK/c.log" && fail "c_log: colour in a --log-file"
# A name cannot bring its own: only our SGR sequences, all of them.
run c_names "$AUDIT" --color=always report "$DATA/corrupt_names.json"
grep -o "${esc}[^m]*m" "$WORK/c_names.err" | sort -u |
	grep -vxE "${esc}\[(1;31|33|1|0)m" && fail "c_names: a foreign escape"
"$AUDIT" --color=never --no-builtin-suppressions report "$DATA/corrupt_names.json" \
	2>"$WORK/c_names0.err"
grep -q "$esc" "$WORK/c_names0.err" && fail "c_names0: ESC from a name"
run c_bad "$AUDIT" --color=sometimes report "$A"
expect_rc c_bad 125
expect_in c_bad err "--color: \"sometimes\" is none of auto, always, never"
# auto: on a terminal, unless NO_COLOR (not empty) or TERM=dumb.
tty_run() { # NAME ENV... -- ARGS...: the tool's stderr on a pty
	local name=$1
	shift
	"$PY" - "$WORK/$name.err" "$@" <<'PYEOF'
import os, pty, subprocess, sys
out, args = sys.argv[1], sys.argv[2:]
k = args.index("--")
env = dict(os.environ)
env.pop("NO_COLOR", None)
env["TERM"] = "xterm"
for kv in args[:k]:
    n, v = kv.split("=", 1)
    env[n] = v
m, s = pty.openpty()
p = subprocess.Popen(args[k + 1:], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=s, env=env)
os.close(s)
data = b""
while True:
    try:
        chunk = os.read(m, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
p.wait()
open(out, "wb").write(data)
PYEOF
}
tty_run t_auto -- "$AUDIT" report "$A"
grep -qF "${esc}[1mLEAK SUMMARY" "$WORK/t_auto.err" || fail "t_auto: no colour on a terminal"
tty_run t_nocolor NO_COLOR=1 -- "$AUDIT" report "$A"
expect_in t_nocolor err "LEAK SUMMARY"
grep -q "$esc" "$WORK/t_nocolor.err" && fail "t_nocolor: colour with NO_COLOR"
tty_run t_empty NO_COLOR= -- "$AUDIT" report "$A"
grep -qF "${esc}[1mLEAK SUMMARY" "$WORK/t_empty.err" || fail "t_empty: NO_COLOR= is not set"
tty_run t_dumb TERM=dumb -- "$AUDIT" report "$A"
grep -q "$esc" "$WORK/t_dumb.err" && fail "t_dumb: colour with TERM=dumb"
tty_run t_never -- "$AUDIT" --color=never report "$A"
grep -q "$esc" "$WORK/t_never.err" && fail "t_never: colour with --color=never"
tty_run t_always NO_COLOR=1 -- "$AUDIT" --color=always report "$A"
grep -qF "${esc}[1mLEAK SUMMARY" "$WORK/t_always.err" || fail "t_always: --color=always lost to NO_COLOR"

finish
