#!/bin/sh
# The shim alone, without CUWARDEN_REPORT (issue 17): as LeakSanitizer, a
# process that found something prints the text report to its standard
# error at exit (CUWARDEN_EXIT_REPORT=auto, the default):
#   - a leak: the report, the same text CUWARDEN_REPORT_FORMAT=text
#     writes to a file (pids and addresses aside), LEAK SUMMARY last but
#     one, once;
#   - violations and no leak: the report too;
#   - a clean process, and one that never used CUDA: nothing on stderr;
#   - the other exit paths the shim reports on: _exit, a fatal signal;
#   - CUWARDEN_LOG_FILE set: the report appended there, nothing on stderr;
#   - CUWARDEN_EXIT_REPORT=never: nothing; =always: a clean process too;
#     a bad value: a warning and auto;
#   - CUWARDEN_REPORT set: the report goes there alone, whatever
#     CUWARDEN_EXIT_REPORT says; and so under cuwarden-audit, which sets it.
. "${top_srcdir:-.}/tests/preload/lib.sh"

AUDIT=$top_builddir/tools/cuwarden-audit
[ -x "$AUDIT" ] || { echo "ERROR: $AUDIT not built"; exit 99; }

# empty_err NAME WHAT: nothing on NAME's standard error.
empty_err() {
	if [ -s "$WORK/$1.err" ]; then
		fail "$2: standard error not empty:"
		head -20 "$WORK/$1.err"
	else
		pass "$2: nothing on standard error"
	fi
}

# has_line NAME LINE WHAT: LINE, whole, exactly once on NAME's stderr.
has_line() {
	_n=$(grep -cxF -- "$2" "$WORK/$1.err")
	if [ "$_n" -eq 1 ]; then
		pass "$3: \"$2\" on standard error"
	else
		fail "$3: \"$2\" $_n times on standard error, want once:"
		tail -20 "$WORK/$1.err"
	fi
}

# The text without what differs from run to run: pids, addresses.
normalize() {
	sed -E 's/pid [0-9]+ \(parent [0-9]+\)/pid P (parent P)/;
	    s/0x[0-9a-f]+/0xA/g' "$1"
}

# A leak: the report on stderr, the same as a text report file.
run leak "$TP/tp_exit" return 0
expect_rc 0 "a leak, no CUWARDEN_REPORT"
has_line leak "LEAK SUMMARY: 4,096 bytes leaked in 1 allocations" "a leak"
has_line leak "ERROR SUMMARY: 1 errors (1 leaked allocations, 0 violations)" "a leak"
[ "$(tail -2 "$WORK/leak.err" | head -1 | cut -c1-13)" = "LEAK SUMMARY:" ] &&
	pass "a leak: LEAK SUMMARY is the last line but one" ||
	fail "a leak: the report does not end stderr: $(tail -3 "$WORK/leak.err")"
CUWARDEN_REPORT=$WORK/leak.txt CUWARDEN_REPORT_FORMAT=text run leakfile "$TP/tp_exit" return 0
normalize "$WORK/leak.err" >"$WORK/leak.err.n"
normalize "$WORK/leak.txt" >"$WORK/leak.txt.n"
if [ -s "$WORK/leak.txt.n" ] && cmp -s "$WORK/leak.err.n" "$WORK/leak.txt.n"; then
	pass "a leak: stderr holds the text report file's text ($(wc -l <"$WORK/leak.txt.n") lines)"
else
	fail "a leak: stderr differs from the text report file:"
	diff -u "$WORK/leak.txt.n" "$WORK/leak.err.n" | head -30
fi

# Violations only.
run viol "$TP/tp_refused" invalid 2
expect_rc 0 "two invalid frees"
has_line viol "ERROR SUMMARY: 2 errors (0 leaked allocations, 2 violations)" "violations, no leak"

# Clean, and no CUDA at all: silent.
run clean "$TP/tp_exit" clean
expect_rc 0 "a clean program"
empty_err clean "a clean program"
run nocuda "$TP/tp_inert"
empty_err nocuda "a program that never uses CUDA"

# The other exit paths: _exit, a fatal signal.
run uexit "$TP/tp_driver" exit _exit
expect_rc 3 "_exit(3)"
has_line uexit "LEAK SUMMARY: 12,288 bytes leaked in 1 allocations" "_exit"
grep -q '^cuwarden .* report: pid [0-9]* (parent [0-9]*), mode audit, _exit status 3$' "$WORK/uexit.err" &&
	pass "_exit: the report says how it ended" || fail "_exit: no header: $(head -3 "$WORK/uexit.err")"
run term "$TP/tp_driver" exit term
expect_rc 143 "SIGTERM"
has_line term "LEAK SUMMARY: 12,288 bytes leaked in 1 allocations" "SIGTERM"
grep -q '^cuwarden .* report: pid [0-9]* (parent [0-9]*), mode audit, signal status 15$' "$WORK/term.err" &&
	pass "SIGTERM: the report says how it ended" || fail "SIGTERM: no header: $(head -3 "$WORK/term.err")"

# The option.
CUWARDEN_EXIT_REPORT=never run never "$TP/tp_exit" return 0
expect_rc 0 "CUWARDEN_EXIT_REPORT=never"
empty_err never "a leak, CUWARDEN_EXIT_REPORT=never"
CUWARDEN_EXIT_REPORT=always run always "$TP/tp_exit" clean
has_line always "LEAK SUMMARY: 0 bytes leaked in 0 allocations" "a clean program, CUWARDEN_EXIT_REPORT=always"
CUWARDEN_EXIT_REPORT=sometimes run badopt "$TP/tp_exit" return 0
grep -q 'CUWARDEN_EXIT_REPORT="sometimes" is not valid (expected auto|always|never); using the default, auto' "$WORK/badopt.err" &&
	pass "a bad CUWARDEN_EXIT_REPORT: warned" || fail "a bad CUWARDEN_EXIT_REPORT: no warning"
has_line badopt "LEAK SUMMARY: 4,096 bytes leaked in 1 allocations" "a bad CUWARDEN_EXIT_REPORT (auto)"

# CUWARDEN_LOG_FILE set: the report follows the shim's lines into that
# file (%p expanded), stderr stays empty; the same text as on stderr.
CUWARDEN_LOG_FILE=$WORK/shim.%p.log run logf "$TP/tp_exit" return 0
expect_rc 0 "a leak, CUWARDEN_LOG_FILE set"
empty_err logf "a leak, CUWARDEN_LOG_FILE set"
set -- "$WORK"/shim.*.log
if [ $# -eq 1 ] && [ -f "$1" ] &&
    [ "$(grep -cxF "LEAK SUMMARY: 4,096 bytes leaked in 1 allocations" "$1")" -eq 1 ] &&
    [ "$(tail -1 "$1" | cut -c1-14)" = "ERROR SUMMARY:" ]; then
	pass "a leak, CUWARDEN_LOG_FILE set: the report ends the log file $(basename "$1")"
else
	fail "a leak, CUWARDEN_LOG_FILE set: log files: $*"
	tail -5 "$1"
fi
grep -v '^cuwarden: ' "$1" | normalize /dev/stdin >"$WORK/logf.n"
if cmp -s "$WORK/logf.n" "$WORK/leak.err.n"; then
	pass "a leak, CUWARDEN_LOG_FILE set: the text standard error had"
else
	fail "a leak, CUWARDEN_LOG_FILE set: differs from standard error's:"
	diff -u "$WORK/leak.err.n" "$WORK/logf.n" | head -20
fi

# CUWARDEN_REPORT set: the report goes there alone.
for m in auto always; do
	CUWARDEN_EXIT_REPORT=$m CUWARDEN_REPORT=$WORK/rep.$m.json run rep$m "$TP/tp_exit" return 0
	expect_rc 0 "CUWARDEN_REPORT set, CUWARDEN_EXIT_REPORT=$m"
	empty_err rep$m "CUWARDEN_REPORT set, CUWARDEN_EXIT_REPORT=$m"
	check "$WORK/rep.$m.json" 'summ["leaked_bytes"] == 4096'
done

# cuwarden-audit sets CUWARDEN_REPORT: its own report only, no shim text
# (the program's stderr is the tool's).
for m in auto always; do
	CUWARDEN_EXIT_REPORT=$m "$AUDIT" "$TP/tp_exit" return 0 >"$WORK/audit$m.out" 2>"$WORK/audit$m.err"
	rc=$?
	expect_rc 23 "cuwarden-audit, CUWARDEN_EXIT_REPORT=$m"
	if grep -q '^== LEAK SUMMARY: 4,096 bytes leaked in 1 allocation' "$WORK/audit$m.err" &&
	    ! grep -Eq '^(LEAK SUMMARY|ERROR SUMMARY|cuwarden [^ ]* report: pid)' "$WORK/audit$m.err"; then
		pass "cuwarden-audit, CUWARDEN_EXIT_REPORT=$m: the tool's report alone"
	else
		fail "cuwarden-audit, CUWARDEN_EXIT_REPORT=$m: stderr:"
		head -40 "$WORK/audit$m.err"
	fi
done
finish
