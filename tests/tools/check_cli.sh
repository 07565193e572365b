#!/bin/bash
# Command-line conventions users reach for: `report --help` prints the
# report command's usage (exit 0) and --help points to it; a mistyped long
# option gets "did you mean" (exit 125, as every usage error), a value
# given to an option that takes none and an ambiguous prefix say so;
# valgrind's forms: --opt=VALUE and --opt VALUE alike, a flag's =yes|no;
# `--json -`, `--sarif -`, `--html -` (and `--log-file -`) write to
# stdout, the text report staying on stderr and a program's own stdout
# going there too, so that stdout stays parseable; two outputs to `-` are
# a usage error.
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
P="$top_builddir/tests/tools/cuprog"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
[ -x "$P" ] || { echo "harness: $P not built"; exit 99; }

# report --help: the report command's own usage, on stdout, status 0,
# whatever output options come before it; nothing read.
run rhelp "$AUDIT" report --help
expect_rc rhelp 0
expect_in rhelp out "Usage: cuwarden-audit [output and filtering options] report FILE|DIR..."
expect_in rhelp out "the Running and Shim options apply only when running a program"
expect_not_in rhelp err "cannot read"
[ -s "$WORK/rhelp.err" ] && fail "rhelp: something on stderr"
run rhelp_short "$AUDIT" --json "$WORK/never.json" report -h
expect_rc rhelp_short 0
expect_in rhelp_short out "Usage: cuwarden-audit [output and filtering options] report"
[ -e "$WORK/never.json" ] && fail "rhelp_short: --json was written"
# After a file, --help is a file name like any other.
run rhelp_late "$AUDIT" report "$A" --help
expect_rc rhelp_late 125
expect_in rhelp_late err "--help: cannot read"
# The main --help names it.
run help "$AUDIT" --help
expect_rc help 0
expect_in help out "report --help          the report command's own usage"

# Did you mean: one or two edits from an option.
run typo "$AUDIT" --supressions x report "$A"
expect_rc typo 125
expect_in typo err "cuwarden-audit: unknown option --supressions (did you mean --suppressions?)"
run typo_eq "$AUDIT" --jsn="$WORK/x.json" report "$A"
expect_rc typo_eq 125
expect_in typo_eq err "unknown option --jsn (did you mean --json?)"
expect_not_in typo_eq err "$WORK"
run typo_far "$AUDIT" --frobnicate true
expect_rc typo_far 125
expect_in typo_far err "unknown option --frobnicate"
expect_not_in typo_far err "did you mean"
# A value for an option that takes none; a prefix of several options.
run noval "$AUDIT" --quiet=yes report "$A"
expect_rc noval 125
expect_in noval err "option --quiet takes no value"
run ambig "$AUDIT" --base x report "$A"
expect_rc ambig 125
expect_in ambig err "option --base is ambiguous: --baseline, --baseline-match"
# A prefix of one option is that option (getopt_long).
: >"$WORK/empty.supp"
run prefix "$AUDIT" --supp "$WORK/empty.supp" report "$A"
expect_rc prefix 23
# An unknown short option is named, not the word before it.
run short "$AUDIT" -json x report "$A"
expect_rc short 125
expect_in short err "unknown option -j"
expect_not_in short err "unknown option $AUDIT"

# valgrind's forms.  A value after = or as the next word, the same.
: >"$WORK/s1.supp"
run eq "$AUDIT" --num-callers=1 --suppressions="$WORK/s1.supp" \
	--print-limit=1 --show-leak-kinds=leak --color=never report "$A"
run sp "$AUDIT" --num-callers 1 --suppressions "$WORK/s1.supp" \
	--print-limit 1 --show-leak-kinds leak --color never report "$A"
expect_rc sp 23
cmp -s "$WORK/eq.err" "$WORK/sp.err" || fail "--opt=v and --opt v differ"
expect_in eq err "== NOT SHOWN: 1 leak group (262,144 bytes in 1 allocation)"
# A flag takes =yes or =no (no value: yes); anything else is refused.
run flag_yes "$AUDIT" --plain-summary=yes report "$A"
expect_in flag_yes err "== LEAK SUMMARY: 3407872 bytes"
run flag_no "$AUDIT" --plain-summary --plain-summary=no report "$A"
expect_in flag_no err "== LEAK SUMMARY: 3,407,872 bytes"
run req_no "$AUDIT" --require-cuda=no report "$DATA/nocuda.json"
expect_rc req_no 0
run req_yes "$AUDIT" --require-cuda=yes report "$DATA/nocuda.json"
expect_rc req_yes 125
expect_in req_yes err "--require-cuda: no CUDA activity seen"
run flag_bad "$AUDIT" --require-cuda=maybe report "$A"
expect_rc flag_bad 125
expect_in flag_bad err "cuwarden-audit: --require-cuda: \"maybe\" is neither yes nor no"
run acc_no "$AUDIT" --accept-teardown=no report "$DATA/teardown_only.json"
expect_rc acc_no 23
run acc_yes "$AUDIT" --accept-teardown=yes report "$DATA/teardown_only.json"
expect_rc acc_yes 0
# valgrind's booleans with a value: --demangle, --error-limit.
for o in demangle error-limit; do
	run "b_$o" "$AUDIT" "--$o=perhaps" report "$A"
	expect_rc "b_$o" 125
	expect_in "b_$o" err "--$o: \"perhaps\" is neither yes nor no"
	run "y_$o" "$AUDIT" "--$o=no" report "$A"
	expect_rc "y_$o" 23
done
# An optional value only with "=": --gen-suppressions FILE is not one.
run genopt "$AUDIT" --gen-suppressions "$WORK/g.supp" report "$A"
expect_rc genopt 127
[ -e "$WORK/g.supp" ] && fail "genopt: --gen-suppressions took the next word"
# A shim flag's =no reaches the program as 0 (over the environment's).
run shimflag env CUWARDEN_CHECK_BOUNDS=1 "$AUDIT" --check-bounds=no \
	sh -c 'echo "bounds=$CUWARDEN_CHECK_BOUNDS"'
expect_in shimflag out "bounds=0"
run shimflag2 "$AUDIT" --check-bounds --show-stats=yes \
	sh -c 'echo "bounds=$CUWARDEN_CHECK_BOUNDS stats=$CUWARDEN_SHOW_STATS"'
expect_in shimflag2 out "bounds=1 stats=1"

# Documents to stdout ("-"), the text report on stderr; no file "-".
cd "$WORK" || exit 99
run json "$AUDIT" --json - report "$A"
expect_rc json 23
expect_in json err "== LEAK SUMMARY: 3,407,872 bytes"
expect_not_in json out "== "
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "cuwarden-audit" and len(d["processes"]) == 1, d.keys()
' "$WORK/json.out" || fail "json: stdout is not the merged document"
run sarif "$AUDIT" --sarif - report "$A"
expect_rc sarif 23
expect_in sarif err "== LEAK SUMMARY: 3,407,872 bytes"
"$PY" -c '
import json, sys
assert json.load(open(sys.argv[1]))["version"] == "2.1.0"
' "$WORK/sarif.out" || fail "sarif: stdout is not SARIF"
run html "$AUDIT" --html - report "$A"
expect_rc html 23
[ "$(head -1 "$WORK/html.out")" = "<!DOCTYPE html>" ] ||
	fail "html: stdout is not the page"
expect_in html out "</html>"
# The text report to stdout, when asked for.
run log "$AUDIT" --log-file - report "$A"
expect_rc log 23
expect_in log out "== LEAK SUMMARY: 3,407,872 bytes"
expect_not_in log err "== LEAK SUMMARY"
# One to stdout, others to files: each where it was sent.
run mixed "$AUDIT" --json - --sarif "$WORK/m.sarif" report "$A"
expect_rc mixed 23
"$PY" -c 'import json, sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))' \
	"$WORK/mixed.out" "$WORK/m.sarif" || fail "mixed: an output is not JSON"
[ "$(stat -c %a "$WORK/m.sarif")" = 600 ] || fail "mixed: m.sarif is not 0600"
[ -e "$WORK/-" ] && fail "a file named - was written"

# A program run: its own stdout goes to stderr, ours is the document.
run prog "$AUDIT" --json - sh -c "echo program-output; exec \"\$0\" leak" "$P"
expect_rc prog 23
expect_in prog err "program-output"
expect_in prog err "== LEAK SUMMARY: 2,097,152 bytes"
"$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/prog.out" ||
	fail "prog: stdout is not the merged document"
# Without "-", the program's stdout is left alone.
run progout "$AUDIT" sh -c "echo program-output; exec \"\$0\" leak" "$P"
expect_rc progout 23
expect_in progout out "program-output"

# Two outputs to stdout: a usage error, before anything is written.
run twostd "$AUDIT" --json - --sarif - report "$A"
expect_rc twostd 125
expect_in twostd err "cuwarden-audit: --json - and --sarif -: only one output can go to standard output"
[ -s "$WORK/twostd.out" ] && fail "twostd: something on stdout"
run twostd_log "$AUDIT" --log-file - --html - report "$A"
expect_rc twostd_log 125
expect_in twostd_log err "--log-file - and --html -: only one output can go to standard output"
# However stdout is spelled.
run twostd_dev "$AUDIT" --json - --sarif /dev/stdout report "$A"
expect_rc twostd_dev 125
expect_in twostd_dev err "--json - and --sarif /dev/stdout name one file"
# stdout closed: refused before anything runs.
"$AUDIT" --json - report "$A" >&- 2>"$WORK/closed.err"
rc=$?
expect_rc closed 125
expect_in closed err "--json -: cannot be written: standard output is closed or not writable"

finish
