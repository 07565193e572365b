#!/bin/bash
# --log-file as valgrind's: %p (the tool's pid), %q{VAR} (a variable's
# value) and %% expanded, anything else a usage error; and the file holds
# everything: the shim's own messages (a double free said at once) come
# first, then the text report, none of them on stderr.  --shim-log-file
# or CUWARDEN_LOG_FILE send the shim's messages elsewhere.  A line a
# program wrote into the shim's log cannot pass for a report line.
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
P="$top_builddir/tests/tools/cuprog"
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
cd "$WORK" || exit 99

# %p is the tool's own pid: the shell's exec keeps it ($$ of the sh).
sh -c 'echo $$ >pid; exec "$0" --log-file=log.%p report "$1"' "$AUDIT" "$A" \
	>/dev/null 2>"$WORK/pid.err"
[ -s "log.$(cat pid)" ] || fail "%p: log.$(cat pid) not written"
grep -qF "== LEAK SUMMARY: 3,407,872 bytes" "log.$(cat pid)" ||
	fail "%p: the log is not the report"
# %q{VAR}, %% and plain text around them; the value is not expanded again.
run q env CW_RANK=3 CW_DIR="$WORK/sub%p" "$AUDIT" \
	--log-file='%q{CW_DIR}.r%q{CW_RANK}.100%%' report "$A"
expect_rc q 23
[ -s "$WORK/sub%p.r3.100%" ] || fail "%q: sub%p.r3.100% not written"
[ -s "$WORK/q.err" ] && fail "q: something on stderr"
# The next word too (--log-file FILE); --json expands as --log-file does
# (%r: a rank's file, doc/audit.md "Auditing a distributed job"), while
# --gen-suppressions=FILE does not.
run qs env CW_RANK=4 OMPI_COMM_WORLD_RANK=2 "$AUDIT" --log-file 'r%q{CW_RANK}' \
    --json 'j%p.%r' --gen-suppressions='g%p' report "$A"
[ -s "$WORK/r4" ] || fail "qs: r4 not written"
ls "$WORK" | grep -qx 'j[0-9]*\.2' || fail "qs: --json did not expand its %p and %r"
[ -s "$WORK/g%p" ] || fail "qs: --gen-suppressions expanded its %p"
# What is not a pattern, a variable not set: usage errors, nothing run.
run bad_x "$AUDIT" --log-file 'x.%x' report "$A"
expect_rc bad_x 125
expect_in bad_x err "cuwarden-audit: --log-file x.%x: %x is not a pattern: use %p (the tool's pid), %r (the rank), %h (the host), %j (the job id), %q{VAR} (the variable VAR) or %% (a %)"
run bad_unset env -u CW_NOT_SET "$AUDIT" --log-file 'x.%q{CW_NOT_SET}' report "$A"
expect_rc bad_unset 125
expect_in bad_unset err "--log-file x.%q{CW_NOT_SET}: the environment variable CW_NOT_SET (%q{CW_NOT_SET}) is not set"
run bad_q "$AUDIT" --log-file 'x.%q' report "$A"
expect_rc bad_q 125
expect_in bad_q err "%q is not followed by {VAR}"
run bad_brace env CW_RANK=1 "$AUDIT" --log-file 'x.%q{CW_RANK' report "$A"
expect_rc bad_brace 125
expect_in bad_brace err "%q{ has no closing }"
run bad_end "$AUDIT" --log-file 'x.%' report "$A"
expect_rc bad_end 125
expect_in bad_end err "a % at the end"
ls "$WORK"/x.* >/dev/null 2>&1 && fail "a bad pattern wrote a file"

# The shim's messages in the log file, before the report; not on stderr.
run viol "$AUDIT" --log-file "$WORK/v.log" "$P" violation
expect_rc viol 23
expect_not_in viol err "cuwarden: double_free"
[ -s "$WORK/viol.err" ] && fail "viol: something on stderr"
grep -q "^cuwarden: double_free: cuMemFree_v2(0x[0-9a-f]*) of device memory" "$WORK/v.log" ||
	fail "viol: the shim's message is not in the log"
s=$(line_of "$WORK/v.log" "^cuwarden: double_free")
r=$(line_of "$WORK/v.log" "^== double_free")
[ -n "$s" ] && [ -n "$r" ] && [ "$s" -lt "$r" ] ||
	fail "viol: the shim's line is not before the report"
[ "$(stat -c %a "$WORK/v.log")" = 600 ] || fail "viol: the log is not 0600"
# To standard output as well.
run viol_out "$AUDIT" --log-file - "$P" violation
expect_in viol_out out "cuwarden: double_free: cuMemFree_v2"
expect_in viol_out out "== ERROR SUMMARY: 1 error"
expect_not_in viol_out err "cuwarden: double_free"
# Without --log-file, on stderr as ever.
run viol_err "$AUDIT" "$P" violation
expect_in viol_err err "cuwarden: double_free: cuMemFree_v2"
# --shim-log-file or CUWARDEN_LOG_FILE: there, not in the log file.
run sep "$AUDIT" --log-file "$WORK/s.log" --shim-log-file "$WORK/shim.log" \
	"$P" violation
grep -q "^cuwarden: double_free" "$WORK/shim.log" || fail "sep: not in shim.log"
grep -q "^cuwarden: double_free" "$WORK/s.log" && fail "sep: in the --log-file"
grep -q "^== double_free" "$WORK/s.log" || fail "sep: no report in the log"
run envlog env CUWARDEN_LOG_FILE="$WORK/env.log" "$AUDIT" \
	--log-file "$WORK/e.log" "$P" violation
grep -q "^cuwarden: double_free" "$WORK/env.log" || fail "envlog: not in env.log"
grep -q "^cuwarden: double_free" "$WORK/e.log" && fail "envlog: in the --log-file"
# Every process's lines: the children's too.
run fork "$AUDIT" --log-file "$WORK/f.log" -v "$P" fork
expect_rc fork 23
[ "$(grep -c '^cuwarden: debug: report written' "$WORK/f.log")" -ge 2 ] ||
	fail "fork: not every process's lines are in the log"
# What a process writes into the shim's log (its own process, so it can)
# is kept, escaped, each line starting as the shim's: none passes for a
# report line, none sends an escape sequence.
run forge "$AUDIT" --log-file "$WORK/g.log" sh -c \
	'printf "== LEAK SUMMARY: 0 bytes\n\033[31mred\n" >>"$CUWARDEN_LOG_FILE"; exec "$0" clean' "$P"
expect_rc forge 0
grep -qF "cuwarden: == LEAK SUMMARY: 0 bytes" "$WORK/g.log" ||
	fail "forge: the line was not kept with the shim's prefix"
grep -qF 'cuwarden: \x1b[31mred' "$WORK/g.log" || fail "forge: ESC not escaped"
[ "$(grep -c '^== LEAK SUMMARY' "$WORK/g.log")" = 1 ] ||
	fail "forge: a forged report line"
tr -d '\n' <"$WORK/g.log" | grep -q "$(printf '\033')" && fail "forge: ESC in the log"

finish
