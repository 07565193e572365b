#!/bin/sh
# The three ways a program reaches the driver, each caught:
#   PLT (-lcuda): check_families.sh;
#   dlopen + dlsym of versioned names: redirected by identity, names the
#     shim does not hook (and names that are not the driver's) untouched;
#   dlopen + dlsym("cuGetProcAddress_v2") + lookups by base name and
#     version, with and without the per-thread default stream flag (2),
#     the self-query (11030 -> 4-argument, 12000 -> 5-argument wrapper).
# tp_dlopen asserts the pointers; the reports show the allocations under
# the exact variant the driver chose.
. "${top_srcdir:-.}/tests/preload/lib.sh"

for mode in dlsym gpa; do
	plain "${mode}plain" "$TP/tp_dlopen" $mode
	expect_rc 0 "$mode without the shim"
	R=$WORK/$mode.json
	CUWARDEN_REPORT=$R run $mode "$TP/tp_dlopen" $mode hooked
	expect_rc 0 "$mode under the shim (pointers redirected)"
	cmp -s "$WORK/$mode.out" "$WORK/${mode}plain.out" && pass "$mode: stdout unchanged" || fail "$mode: stdout differs"
	check "$R" \
		'leak(api="cuMemAllocAsync")["bytes"] == 8192' \
		'leak(api="cuMemAllocAsync_ptsz")["bytes"] == 16384' \
		'leak(api="cuMemAllocAsync")["owner"].endswith("/tp_dlopen")' \
		'cov["allocations"] == 5 and cov["frees"] == 1' \
		'summ["violations"] == 0'
done
check "$WORK/dlsym.json" \
	'leak(api="cuMemAlloc_v2")["bytes"] == 4096' \
	'leak(api="cuMemAllocManaged")["bytes"] == 32768' \
	'cov["teardown_frees"] == 0' \
	'cov["dlsym_redirects"] == 7' \
	'cov["gpa_lookups"] == 0'
# gpa: 18 lookups (the probe, 2 self-queries, 1 through the 4-argument
# wrapper, 14 entry points); 14 redirected (all but the probe and
# cuDeviceGet, cuCtxSetCurrent, cuStreamSynchronize, which are not hooked).
# The v1 release tore down the primary context's two allocations.
check "$WORK/gpa.json" \
	'leaks(api="cuMemAlloc_v2", category="leak") == [] and leaks(api="cuMemAllocManaged", category="leak") == []' \
	'cov["teardown_frees"] == 2' \
	'cov["dlsym_redirects"] == 1' \
	'cov["gpa_lookups"] == 18' \
	'cov["gpa_redirects"] == 14'

# The whole table: every name of hooks.def the driver exports is
# redirected (a wrapper wired to the wrong entry would show here).
names=$(sed -n 's/^[[:space:]]*\(HOOK\|GPA\)(\(cu[A-Za-z0-9_]*\).*/\2/p' "$top_srcdir/shim/hooks.def")
run table "$TP/tp_dlopen" table hooked $names
expect_rc 0 "every hooked name redirected by dlsym"
cat "$WORK/table.out"
finish
