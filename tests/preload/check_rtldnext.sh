#!/bin/sh
# RTLD_NEXT caller preservation: glibc resolves dlsym(RTLD_NEXT, ...) from
# the caller's return address, so the shim's dlsym must tail-jump to
# glibc's.  libtpnext1.so asks for the next definition of two names (one
# starting with "cu", which takes the shim's slower path) and must get
# libtpnext2.so's, never its own (the LLVM OpenMP ompt_start_tool spin of
# HAMi #2903).  RTLD_DEFAULT still finds the first definition.
. "${top_srcdir:-.}/tests/preload/lib.sh"

plain np "$TP/tp_rtldnext"
expect_rc 0 "without the shim"
run nx "$TP/tp_rtldnext"
expect_rc 0 "under the shim"
grep -q 'default=11 next=22' "$WORK/nx.out" && pass "RTLD_NEXT found the next object" || { fail "RTLD_NEXT"; cat "$WORK/nx.out"; }
# The shim's exported dlsym carries both glibc versions.
${NM:-nm} -D --defined-only "$SHIM" | grep -q ' dlsym@@GLIBC_2.34$' && pass "dlsym@@GLIBC_2.34" || fail "no dlsym@@GLIBC_2.34"
${NM:-nm} -D --defined-only "$SHIM" | grep -q ' dlsym@GLIBC_2.2.5$' && pass "dlsym@GLIBC_2.2.5" || fail "no dlsym@GLIBC_2.2.5"
# A program built against glibc < 2.34 references dlsym@GLIBC_2.2.5: it
# binds to the shim's dlsym as well (and is redirected).
if ${NM:-nm} -D "$TP/tp_olddlsym" | grep -q 'dlsym@GLIBC_2.2.5'; then
	run old "$TP/tp_olddlsym"
	expect_rc 0 "dlsym@GLIBC_2.2.5 program"
	grep -q 'redirected=1' "$WORK/old.out" && pass "dlsym@GLIBC_2.2.5 bound to the shim" || { fail "dlsym@GLIBC_2.2.5 not interposed"; cat "$WORK/old.out"; }
	plain oldp "$TP/tp_olddlsym"
	grep -q 'redirected=0' "$WORK/oldp.out" && pass "dlsym@GLIBC_2.2.5 without the shim" || fail "old dlsym without the shim"
fi
finish
