#!/bin/bash
# Symbolization with libdw, on a program built with -g that reports its
# own stack (tests/tools/symtarget.c): function and file:line of each
# frame, the inlined call marked, the build-id checked, a frame without
# debug info keeping its ELF symbol and module + offset.
. "$top_srcdir/tests/tools/testlib.sh"

ST="$top_builddir/tests/tools/symtarget"
SRC="$TT/symtarget.c"
[ -x "$ST" ] || { echo "harness: $ST not built"; exit 99; }
inner=$(line_of "$SRC" "LINE-INNER \*/")
call=$(line_of "$SRC" "LINE-CALL \*/")
main=$(line_of "$SRC" "LINE-MAIN \*/")
main2=$(line_of "$SRC" "LINE-MAIN2 \*/")

"$ST" "$WORK/sym.json" || { echo "harness: symtarget failed"; exit 99; }
run sym "$AUDIT" --json "$WORK/symout.json" report "$WORK/sym.json"
expect_rc sym 23
expect_in sym err "inner (symtarget.c:$inner) [inlined]"
expect_in sym err "leak_some (symtarget.c:$call)"
expect_in sym err "main (symtarget.c:$main)"
grep -q "^==    at 0x[0-9a-f]*: inner (symtarget.c:$inner) \[inlined\]$" "$WORK/sym.err" ||
	fail "sym: the inlined frame is not the first, marked, line"
grep -q "^==    by 0x[0-9a-f]*: leak_some (symtarget.c:$call)$" "$WORK/sym.err" ||
	fail "sym: leak_some is not the next line"
# The second leak names the program with a wrong build-id.
expect_in sym err "(in $ST, build-id mismatch)"
python3 - "$WORK/symout.json" "$call" "$inner" <<'P' || fail "sym: JSON frames"
import json, sys
d = json.load(open(sys.argv[1]))
f = [l for l in d["leaks"] if l["kind"] == "device"][0]["stack"][0]
assert f["function"] == "leak_some" and f["line"] == int(sys.argv[2]), f
assert f["file"].endswith("symtarget.c"), f
assert f["inlined"] == [{"function": "inner", "file": f["file"], "line": int(sys.argv[3])}], f
P

expect_in sym err "main (symtarget.c:$main2)"

# Two call sites of leak_some(): two groups, two fingerprints, one
# symbolic fingerprint.  A baseline holding one group is matched on the
# whole stack with lines (--baseline-match=exact, the default): the other
# group, from another line of main, is new; --baseline-match=function
# takes it for the same (as after an edit that moved main's code).  The
# fingerprints play no part: the same baseline without them matches the
# same.
python3 - "$WORK/symout.json" "$WORK/base.json" "$WORK/base_nosym.json" <<'P' || fail "sym: baseline files"
import json, sys
d = json.load(open(sys.argv[1]))
dev = [l for l in d["leaks"] if l["kind"] == "device"]
assert len(dev) == 2, len(dev)
assert dev[0]["fingerprint"] != dev[1]["fingerprint"]
assert dev[0]["symbolic_fingerprint"] == dev[1]["symbolic_fingerprint"]
d["leaks"] = [l for l in d["leaks"] if l is not dev[1]]
json.dump(d, open(sys.argv[2], "w"))
for l in d["leaks"]:
    del l["symbolic_fingerprint"]
json.dump(d, open(sys.argv[3], "w"))
P
run symbase "$AUDIT" --baseline "$WORK/base.json" report "$WORK/sym.json"
expect_rc symbase 23
expect_in symbase err "== BASELINE: 2 leak groups and 0 violation groups already in"
expect_in symbase err "== ERROR SUMMARY: 1 error (1 leak, 0 violations)"
expect_in symbase err "main (symtarget.c:$main2)"
run symbasef "$AUDIT" --baseline "$WORK/base.json" --baseline-match=function report "$WORK/sym.json"
expect_rc symbasef 0
expect_in symbasef err "== BASELINE: 3 leak groups and 0 violation groups already in"
run symbase2 "$AUDIT" --baseline "$WORK/base_nosym.json" report "$WORK/sym.json"
expect_rc symbase2 23
expect_in symbase2 err "== ERROR SUMMARY: 1 error (1 leak, 0 violations)"
expect_in symbase2 err "main (symtarget.c:$main2)"
run symbase2f "$AUDIT" --baseline "$WORK/base_nosym.json" --baseline-match function report "$WORK/sym.json"
expect_rc symbase2f 0

# Without debug info: the ELF symbol stays, with module + offset.
cp "$ST" "$WORK/nodbg"
strip --strip-debug "$WORK/nodbg" 2>/dev/null || { echo "harness: strip failed"; exit 99; }
"$WORK/nodbg" "$WORK/nodbg.json" || { echo "harness: nodbg failed"; exit 99; }
run nodbg "$AUDIT" report "$WORK/nodbg.json"
expect_rc nodbg 23
expect_in nodbg err ": leak_some (in $WORK/nodbg, no debug info)"
expect_not_in nodbg err "symtarget.c:"

# A module that is gone.
sed "s|\"exe\": \"[^\"]*\"|\"exe\": \"$WORK/gone\"|" "$WORK/nodbg.json" >"$WORK/gone.json"
run gone "$AUDIT" report "$WORK/gone.json"
expect_in gone err "(in $WORK/gone, module file not found)"

finish
