#!/bin/bash
# Call-chain suppressions ("{ ... }" rules, doc/audit.md) and
# --gen-suppressions[=FILE] on real programs under the shim and the
# simulated driver (tests/tools/chainprog.c, cuprog.c): generated rules,
# fed back, hide exactly their findings (not a leak of the same function
# on another path, not an invalid free in another function or program);
# identical rules are written once; "..." and globs match; bad files are
# refused with FILE:LINE; FILE is written 0600 and the report is the same.
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/chainprog"
CP="$top_builddir/tests/tools/cuprog"
for f in "$P" "$CP" "$FAKECUDA_DIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# rule_blocks FILE: each "{ ... }" block of FILE on one line.
rule_blocks() {
	awk '/^{$/ { b = ""; on = 1; next } /^}$/ { print b; on = 0; next }
		on { b = b "|" $0 }' "$1"
}

# --- Leaks: two call paths into one function --------------------------
run leaks "$AUDIT" --keep-reports "$WORK/leaks" "$P" leaks
expect_rc leaks 23
expect_in leaks err ": path_a (chainprog.c:"
expect_in leaks err ": path_b (chainprog.c:"
run genf "$AUDIT" --gen-suppressions="$WORK/leaks.supp" report "$WORK/leaks"
expect_rc genf 23
run plain "$AUDIT" report "$WORK/leaks"
expect_rc plain 23
# The report is the same with and without the option; the rules are in
# the file only.
cmp -s "$WORK/genf.err" "$WORK/plain.err" ||
	fail "genf: the text report differs from the one without --gen-suppressions=FILE"
[ -s "$WORK/genf.out" ] && fail "genf: something on stdout"
expect_not_in genf err "gen-suppressions"
[ "$(stat -c %a "$WORK/leaks.supp")" = 600 ] ||
	fail "genf: $WORK/leaks.supp is mode $(stat -c %a "$WORK/leaks.supp"), expected 600"
cp "$WORK/leaks.supp" "$WORK/genf.supp"
expect_in genf supp '# ---- cuwarden-audit --gen-suppressions: '
expect_in genf supp '# ---- end of suppressions ----'
expect_block genf supp '   leak:device:cuMemAlloc_v2
   fun:alloc_buf obj:chainprog
   fun:path_a obj:chainprog
   fun:main obj:chainprog
}'
expect_block genf supp '   leak:device:cuMemAlloc_v2
   fun:alloc_buf obj:chainprog
   fun:path_b obj:chainprog
   fun:main obj:chainprog
}'
# One rule per call chain, none twice, each with its own name (the loop
# in path_b may give two groups of one chain: one rule for both).
n=$(rule_blocks "$WORK/leaks.supp" | wc -l)
[ "$n" = 2 ] || fail "genf: $n rules, expected 2 (one per call chain)"
d=$(rule_blocks "$WORK/leaks.supp" | cut -d'|' -f3- | sort | uniq -d)
[ -z "$d" ] || fail "genf: a rule written twice: $d"
d=$(sed -n '/^{$/{n;p}' "$WORK/leaks.supp" | sort | uniq -d)
[ -z "$d" ] || fail "genf: a rule name used twice: $d"
# Fed back: every leak hidden.
run regen "$AUDIT" --suppressions "$WORK/leaks.supp" report "$WORK/leaks"
expect_rc regen 0
expect_in regen err "== LEAK SUMMARY: 0 bytes leaked in 0 allocations (0 groups)"
expect_in regen err "== SUPPRESSED: 1,179,648 bytes in 3 allocations, 0 violations"
# The path_a rule alone hides path_a's leak, not path_b's, though both
# leak from alloc_buf (the one-line leak:alloc_buf hides both).
awk '/^{$/ { b = $0 "\n"; next } b != "" { b = b $0 "\n" }
	/^}$/ { if (b ~ /path_a/) printf "%s", b; b = "" }' "$WORK/leaks.supp" >"$WORK/a.supp"
run onlya "$AUDIT" --suppressions "$WORK/a.supp" report "$WORK/leaks"
expect_rc onlya 23
expect_in onlya err "== LEAK SUMMARY: 131,072 bytes leaked in 2 allocations"
expect_in onlya err ": path_b (chainprog.c:"
expect_not_in onlya err ": path_a (chainprog.c:"
printf 'leak:alloc_buf\n' >"$WORK/old.supp"
run oneline "$AUDIT" --suppressions "$WORK/old.supp" report "$WORK/leaks"
expect_rc oneline 0
expect_in oneline err "3 x, 1,179,648 bytes: leak:alloc_buf ($WORK/old.supp:1)"

# Plain --gen-suppressions: the same rules after the report, on its
# stream, between the header and the footer; =yes and =all (valgrind's
# words) the same, =no none.
run gens "$AUDIT" --gen-suppressions report "$WORK/leaks"
expect_rc gens 23
sed -n '/^# ---- cuwarden-audit --gen-suppressions/,/^# ---- end of suppressions/p' \
	"$WORK/gens.err" >"$WORK/gens.supp"
cmp -s "$WORK/gens.supp" "$WORK/leaks.supp" ||
	fail "gens: the rules printed differ from the file written"
l1=$(line_of "$WORK/gens.err" '^== COVERAGE')
l2=$(line_of "$WORK/gens.err" '^# ---- cuwarden-audit --gen-suppressions')
[ -n "$l1" ] && [ -n "$l2" ] && [ "$l1" -lt "$l2" ] ||
	fail "gens: the rules are not after the report"
run genyes "$AUDIT" --gen-suppressions=yes report "$WORK/leaks"
cmp -s "$WORK/genyes.err" "$WORK/gens.err" || fail "genyes: differs from --gen-suppressions"
run genall "$AUDIT" --gen-suppressions=all report "$WORK/leaks"
cmp -s "$WORK/genall.err" "$WORK/gens.err" || fail "genall: differs from --gen-suppressions"
run genno "$AUDIT" --gen-suppressions=no report "$WORK/leaks"
cmp -s "$WORK/genno.err" "$WORK/plain.err" || fail "genno: differs from the plain report"
[ -e yes ] || [ -e all ] || [ -e no ] && fail "a file named yes, all or no was written"

# --num-callers 2: two frames, then "..." (frames were left out); the
# rules still hide their leaks.
run gen2 "$AUDIT" --num-callers 2 --gen-suppressions="$WORK/two.supp" report "$WORK/leaks"
cp "$WORK/two.supp" "$WORK/gen2.supp"
expect_block gen2 supp '   fun:alloc_buf obj:chainprog
   fun:path_a obj:chainprog
   ...
}'
run regen2 "$AUDIT" --suppressions "$WORK/two.supp" report "$WORK/leaks"
expect_rc regen2 0

# --- Violations: another function, another program --------------------
run badfree "$AUDIT" --gen-suppressions="$WORK/bad.supp" "$P" badfree
expect_rc badfree 23
cp "$WORK/bad.supp" "$WORK/badfree.supp"
expect_block badfree supp '   violation:invalid_free:cuMemFree_v2
   fun:main obj:chainprog
}'
run badfree2 "$AUDIT" --suppressions "$WORK/bad.supp" "$P" badfree2
expect_rc badfree2 23
expect_in badfree2 err "== SUPPRESSED: 0 bytes in 0 allocations, 1 violation"
expect_in badfree2 err "== ERROR SUMMARY: 1 error (0 leaks, 1 violation)"
expect_in badfree2 err ": free_elsewhere (chainprog.c:"
run double "$AUDIT" --gen-suppressions="$WORK/double.supp" "$P" double
expect_rc double 23
run doubleback "$AUDIT" --suppressions "$WORK/double.supp" "$P" double
expect_rc doubleback 0
# cuprog's double free, also in main: another program, still reported.
run other "$AUDIT" --suppressions "$WORK/double.supp" "$CP" violation
expect_rc other 23
expect_in other err "== double_free: cuMemFree_v2 of 0x"
expect_in other err "== ERROR SUMMARY: 1 error (0 leaks, 1 violation)"
expect_not_in other err "SUPPRESSED"

# --- Hand-written rules: "...", globs, the finding line ---------------
# supp NAME LINES...: a rule file $WORK/NAME.rules of one rule.
supp() {
	local name=$1
	shift
	{ echo "{"; echo "   $name"; printf '   %s\n' "$@"; echo "}"; } >"$WORK/$name.rules"
}
# hides NAME BYTES: the rule NAME hides BYTES bytes of the leaks
hides() {
	run "$1" "$AUDIT" --suppressions "$WORK/$1.rules" report "$WORK/leaks"
	if [ "$2" = 0 ]; then
		expect_not_in "$1" err "== SUPPRESSED"
	else
		expect_in "$1" err "== SUPPRESSED: $2 bytes in"
	fi
}
supp dots leak:device:cuMemAlloc_v2 fun:alloc_buf ... fun:main
hides dots 1,179,648
supp nodots leak:device:cuMemAlloc_v2 fun:alloc_buf fun:main
hides nodots 0
supp lead leak:device ... 'fun:path_b obj:chain*'
hides lead 131,072
supp glob leak:dev* 'fun:alloc_* obj:chainpro?' 'fun:path_[a]'
hides glob 1,048,576
supp objs 'leak:*:cuMem*' obj:chainprog obj:chainprog obj:chainprog
hides objs 1,179,648
supp path 'leak:*' "obj:$(realpath "$P")" "fun:path_a obj:*/tests/tools/chainprog"
hides path 1,048,576
supp wrongobj leak:device 'fun:alloc_buf obj:cuprog'
hides wrongobj 0
supp wrongkind leak:pinned fun:alloc_buf
hides wrongkind 0
supp wrongapi leak:device:cuMemHostAlloc fun:alloc_buf
hides wrongapi 0
supp wrongcat teardown:device fun:alloc_buf
hides wrongcat 0
supp wrongclass 'violation:*' fun:alloc_buf
hides wrongclass 0
supp deep leak:device fun:alloc_buf fun:path_a fun:main fun:main
hides deep 0
supp any leak:device ...
hides any 1,179,648
# The rule's name is what the summary and the JSON name.
run named "$AUDIT" --suppressions "$WORK/dots.rules" --json "$WORK/named.json" report "$WORK/leaks"
expect_in named err "3 x, 1,179,648 bytes: dots ($WORK/dots.rules:1)"
"${PY:-python3}" - "$WORK/named.json" <<'P' || fail "named: suppressed_by or suppressions_used do not name the rule"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["suppressions_used"][0]["rule"] == "dots", d["suppressions_used"]
assert all(s["suppressed_by"] == "dots" for s in d["suppressed"]), d["suppressed"]
P
# Comments and blank lines inside a rule; one-line rules around it.
printf '# head\nleak:nothing_like_this\n{\n  # a note\n   mixed # its name\n\n   leak:device\n   fun:alloc_buf\n   fun:path_b\n}\nowner:nobody\n' >"$WORK/mixed.rules"
hides mixed 131,072

# --- Bad files: FILE:LINE, exit 125, before anything runs -------------
# bad NAME TEXT MESSAGE
bad() {
	printf '%b' "$2" >"$WORK/$1.supp"
	run "$1" "$AUDIT" --suppressions "$WORK/$1.supp" "$P" leaks
	expect_rc "$1" 125
	expect_in "$1" err "$WORK/$1.supp:$3"
	expect_not_in "$1" err "ERROR SUMMARY"
}
bad noclose '{\n   r\n   leak:device\n   fun:f\n' \
	'1: the rule opened here ("r") has no "}" before the end of the file'
bad noframe '# x\n{\n   r\n   leak:device\n}\n' \
	'2: malformed suppression rule "r" (lines 2-5): the rule has no frame line (fun:, obj: or ...)'
bad nofinding '{\n   r\n}\n' \
	'1: malformed suppression rule "r" (lines 1-3): the rule has no finding line'
bad empty '{\n}\n' '1: malformed suppression rule "" (lines 1-2): empty rule'
bad badframe '{\n   r\n   leak:device\n   fun:f\n   frm:x\n}\n' \
	'5: malformed suppression "frm:x": expected a frame: fun:FUNCTION, fun:FUNCTION obj:MODULE, obj:MODULE or ... (in the rule opened at line 1)'
bad badclass '{\n   r\n   lek:device\n   fun:f\n}\n' \
	'3: malformed suppression "lek:device": unknown finding (expected leak:, teardown:, address_range: or violation:)'
bad emptykind '{\n   r\n   leak::cuMemAlloc\n   fun:f\n}\n' \
	'3: malformed suppression "leak::cuMemAlloc": empty kind ("*" is any kind)'
bad emptyfun '{\n   r\n   leak:device\n   fun:\n}\n' \
	'4: malformed suppression "fun:": empty pattern'
bad objfirst '{\n   r\n   leak:device\n   obj:a.so fun:f\n}\n' \
	'4: malformed suppression "obj:a.so fun:f": fun: comes first'
bad close 'leak:x\n}\n' '2: "}" without a "{"'
bad nested '{\n   r\n   leak:device\n{\n' \
	'4: "{" inside the rule opened at line 1 (a "}" is missing)'

# --- --gen-suppressions=FILE: checked like every output ---------------
run same "$AUDIT" --json "$WORK/x" --gen-suppressions="$WORK/x" "$P" leaks
expect_rc same 125
expect_in same err "name one file"
run noname "$AUDIT" --gen-suppressions= "$P" leaks
expect_rc noname 125
expect_in noname err "--gen-suppressions=: give a file name"
run nodir "$AUDIT" --gen-suppressions="$WORK/nodir/x.supp" "$P" leaks
expect_rc nodir 125
expect_in nodir err "--gen-suppressions $WORK/nodir/x.supp: cannot be written"
# An earlier file is replaced whole.
printf 'old\n' >"$WORK/again.supp"
chmod 644 "$WORK/again.supp"
run again "$AUDIT" --gen-suppressions="$WORK/again.supp" report "$WORK/leaks"
cmp -s "$WORK/again.supp" "$WORK/leaks.supp" || fail "again: the file was not replaced"
[ "$(stat -c %a "$WORK/again.supp")" = 600 ] || fail "again: not mode 600"

finish
