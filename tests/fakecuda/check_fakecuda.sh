#!/bin/sh
# check_fakecuda.sh: make-check test of the simulated CUDA driver itself.
#
# Runs tests/fakecuda/probe against tests/fakecuda/libcuda.so.1 and asserts the
# facts cuwarden depends on (line by line, the same lines the probe prints on
# a real GPU), then the fault-injection variables, the host fault on a device
# pointer, the simulated asynchronous work (probe sim), and that the exported
# symbols are exactly the X-macro list in fakecuda_exports.h.
# Exit: 0 pass, 1 fail, 99 harness error.

builddir=${top_builddir:-.}
srcdir=${top_srcdir:-.}
dir=${FAKECUDA_DIR:-$builddir/tests/fakecuda}
probe=$dir/probe
lib=$dir/libcuda.so.1
list=$srcdir/tests/fakecuda/fakecuda_exports.h

[ -x "$probe" ] && [ -f "$lib" ] && [ -f "$list" ] || {
	echo "check_fakecuda: missing $probe, $lib or $list" >&2
	exit 99
}
LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
# The variables under test must not leak in from the caller.
unset FAKECUDA_FAIL_ALLOC FAKECUDA_FAIL_FREE FAKECUDA_NO_DEVICE \
	FAKECUDA_NO_CONCURRENT_MANAGED FAKECUDA_DEVICES FAKECUDA_MEM \
	FAKECUDA_FAIL_CALL FAKECUDA_CALL_LOG

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_fakecuda.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# expect FILE LINE...: each LINE must be a whole line of FILE.
expect() {
	f=$1
	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$f" || fail "$(basename "$f"): missing line '$l'"
	done
}

# ------------------------------------------------------------ default run
"$probe" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "probe exited $?"; }
expect "$tmp/out" \
	'cuMemAlloc before cuInit: CUDA_ERROR_NOT_INITIALIZED' \
	'cuInit: CUDA_SUCCESS' \
	'info: driver version: 13000' \
	'attribute CONCURRENT_MANAGED_ACCESS: CUDA_SUCCESS 1' \
	'attribute COMPUTE_CAPABILITY_MAJOR: CUDA_SUCCESS 9' \
	'attribute COMPUTE_CAPABILITY_MINOR: CUDA_SUCCESS 0' \
	'attribute PAGEABLE_MEMORY_ACCESS: CUDA_SUCCESS 0' \
	'attribute MAX (out of range): CUDA_ERROR_INVALID_VALUE' \
	'cuMemAlloc no context: CUDA_ERROR_INVALID_CONTEXT' \
	'cuMemAlloc zero: CUDA_ERROR_INVALID_VALUE' \
	'cuMemAllocManaged zero: CUDA_ERROR_INVALID_VALUE' \
	'cuMemHostAlloc zero: CUDA_SUCCESS' \
	'cuMemHostAlloc zero pointer: NULL' \
	'cuMemAllocAsync zero pointer: 0' \
	'cuMemFree unknown no context: CUDA_ERROR_INVALID_VALUE' \
	'ptrattrs malloc RANGE_SIZE: CUDA_SUCCESS width=0 -' \
	'cuMemAlloc NULL out: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree interior: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree: CUDA_SUCCESS' \
	'cuMemFree double: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree(0): CUDA_SUCCESS' \
	'cuMemFree(0) no context: CUDA_SUCCESS' \
	'cuMemHostUnregister interior: CUDA_ERROR_INVALID_VALUE' \
	'cuMemUnmap again: CUDA_SUCCESS' \
	'ptrattr async CONTEXT: CUDA_SUCCESS NULL width=8' \
	'cuMemFree unknown: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree of pinned: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFreeHost of device: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFreeHost double: CUDA_ERROR_INVALID_VALUE' \
	'cuMemHostUnregister double: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED' \
	'cuMemGetInfo NULL free: CUDA_SUCCESS' \
	'cuMemGetInfo NULL total: CUDA_SUCCESS' \
	'cuMemGetInfo free drops by 64 MiB alloc: yes' \
	'cuMemGetAddressRange interior base: base' \
	'ptrattr device MEMORY_TYPE: CUDA_SUCCESS DEVICE width=4' \
	'ptrattr device RANGE_SIZE: CUDA_SUCCESS 1000 width=8' \
	'ptrattr managed IS_MANAGED: CUDA_SUCCESS 1 width=4' \
	'ptrattr pinned MEMORY_TYPE: CUDA_SUCCESS HOST width=4' \
	'memcpy roundtrip: ok' \
	'memset values: ok' \
	'cuMemFree managed: CUDA_SUCCESS' \
	'cuMemFreeAsync: CUDA_SUCCESS' \
	'cuMemFree of async: CUDA_SUCCESS' \
	'granularity minimum: 2097152' \
	'cuMemRelease while mapped: CUDA_SUCCESS' \
	'vmm data after release: ok' \
	'cuMemUnmap: CUDA_SUCCESS' \
	'cuMemRelease after unmap: CUDA_ERROR_INVALID_VALUE' \
	'cuMemAddressFree: CUDA_SUCCESS' \
	'cuCtxDestroy: CUDA_SUCCESS' \
	'cuMemFree after cuCtxDestroy: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFreeHost after cuCtxDestroy: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree async after cuCtxDestroy: CUDA_SUCCESS' \
	'cuMemFree after reset: CUDA_ERROR_CONTEXT_IS_DESTROYED' \
	'primary active after reset: 0' \
	'cuMemAlloc on released primary: CUDA_ERROR_CONTEXT_IS_DESTROYED' \
	'cuMemFree after release to zero: CUDA_ERROR_INVALID_VALUE' \
	'dlsym equals direct cuMemAlloc_v2: yes' \
	'gpa empty probe: CUDA_SUCCESS SYMBOL_NOT_FOUND NULL' \
	'gpa unknown name: CUDA_SUCCESS SYMBOL_NOT_FOUND NULL' \
	'gpa older than first ABI: CUDA_SUCCESS VERSION_NOT_SUFFICIENT NULL' \
	'gpa cuMemAllocAsync flags=2 is dlsym cuMemAllocAsync_ptsz: yes' \
	'gpa cuDevicePrimaryCtxReset@7000 is dlsym cuDevicePrimaryCtxReset: yes' \
	'gpa self-query 12000 is cuGetProcAddress_v2: yes' \
	'gpa cuMemAlloc@3020 f0: CUDA_SUCCESS SUCCESS cuMemAlloc_v2' \
	'gpa cuMemAllocAsync@11020 f0: CUDA_SUCCESS SUCCESS cuMemAllocAsync' \
	'gpa cuMemAllocAsync@11020 f2: CUDA_SUCCESS SUCCESS cuMemAllocAsync_ptsz' \
	'gpa cuMemFreeAsync@11020 f2: CUDA_SUCCESS SUCCESS cuMemFreeAsync_ptsz' \
	'gpa cuDevicePrimaryCtxRelease@7000 f0: CUDA_SUCCESS SUCCESS cuDevicePrimaryCtxRelease' \
	'gpa cuDevicePrimaryCtxReset@11000 f0: CUDA_SUCCESS SUCCESS cuDevicePrimaryCtxReset_v2' \
	'gpa cuGetProcAddress@11030 f0: CUDA_SUCCESS SUCCESS cuGetProcAddress' \
	'gpa cuGetProcAddress@12000 f0: CUDA_SUCCESS SUCCESS cuGetProcAddress_v2' \
	'gpa cuMemPrefetchAsync@12020 f2: CUDA_SUCCESS SUCCESS cuMemPrefetchAsync_v2_ptsz' \
	'gpa cuMemcpyHtoD@3020 f0: CUDA_SUCCESS SUCCESS cuMemcpyHtoD_v2' \
	'gpa cuMemcpyHtoD@3020 f2: CUDA_SUCCESS VERSION_NOT_SUFFICIENT NULL' \
	'gpa cuInit@2000 f2: CUDA_SUCCESS SUCCESS cuInit' \
	'gpa1 unknown: CUDA_ERROR_NOT_FOUND NULL' \
	'gpa cuMemcpyHtoD@13000 f2: CUDA_SUCCESS SUCCESS cuMemcpyHtoD_v2_ptds' \
	'gpa cuCtxCreate@13000 f2: CUDA_SUCCESS SUCCESS cuCtxCreate_v4' \
	'gpa cuMemHostAlloc@2020 f0: CUDA_SUCCESS SUCCESS cuMemHostAlloc' \
	'gpa answers that are exports: all' \
	'done'

# --------------------------------------------------- capture and graphs
# The key facts, as the H200 (driver 580) answered them: which thread a
# capture prohibits potentially unsafe calls, in which mode; what those
# calls do to the capture; what a capture makes of stream-ordered memory;
# the graph-memory lifecycle.
expect "$tmp/out" \
	'capture global, same thread, cuMemAlloc: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture global, same thread, cuMemAlloc, status: CUDA_SUCCESS INVALIDATED' \
	'capture global, same thread, cuMemAlloc, end: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED' \
	'capture global, other thread, cuMemAlloc: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture global, other thread, cuMemAlloc, end: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED' \
	'capture global, other thread relaxed, cuMemAlloc, end: CUDA_SUCCESS' \
	'capture global, same thread relaxed, cuMemFree of an earlier allocation, end: CUDA_SUCCESS' \
	'capture global, same thread, cuMemFree(0): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture thread_local, same thread, cuMemAlloc: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture thread_local, other thread, cuMemAlloc, end: CUDA_SUCCESS' \
	'capture relaxed, same thread, cuMemAlloc, end: CUDA_SUCCESS' \
	'capture relaxed, other thread relaxed, cuCtxSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture relaxed, other thread relaxed, cuCtxSynchronize, end: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED' \
	'capture global, same thread, cuMemGetInfo, end: CUDA_SUCCESS' \
	'capture global, same thread, cuMemAllocAsync on another stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'capture global, same thread, cuMemsetD8 (synchronous), end: CUDA_SUCCESS' \
	'capture global, same thread, cuStreamSynchronize of the capturing stream, end: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED' \
	'capture relaxed, same thread, cuEventRecord on the capturing stream, then cuEventQuery of it: CUDA_ERROR_CAPTURED_EVENT' \
	'capture global, same thread, cuMemAllocAsync on the capturing stream, DEVICE_POINTER of it: CUDA_ERROR_INVALID_VALUE' \
	'capture global, same thread, cuMemAllocAsync on the capturing stream, cuMemGetAddressRange of it: CUDA_ERROR_NOT_FOUND' \
	'capture global, same thread, cuMemAllocAsync on the capturing stream, then cuMemFreeAsync: CUDA_SUCCESS' \
	'capture global, same thread, cuMemAllocAsync on the capturing stream, end: CUDA_SUCCESS' \
	'capture v1 begin, other thread, cuMemAlloc, end: CUDA_SUCCESS' \
	'capture graph from info is the ended one: same' \
	'capture captured memset ran: no' \
	'capture global, end from another thread: CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD' \
	'capture global, after it: NONE' \
	'capture relaxed, blocking stream, cuMemsetD8Async on the legacy stream: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT' \
	'capture relaxed, non-blocking stream, legacy work, end: CUDA_SUCCESS' \
	'attach managed base, length 0: CUDA_SUCCESS' \
	"attach managed base, length the allocation's size: CUDA_SUCCESS" \
	'attach managed interior, length 0: CUDA_ERROR_INVALID_VALUE' \
	'attach managed base, a partial length: CUDA_ERROR_INVALID_VALUE' \
	'attach device memory (cuMemAlloc), length 0: CUDA_ERROR_INVALID_VALUE' \
	'graph before launch, 1 MiB, DEVICE_POINTER: CUDA_ERROR_INVALID_VALUE' \
	'graph risky 2: cuMemsetD8 before any launch: CUDA_ERROR_INVALID_VALUE' \
	'graph mem after instantiate, USED_MEM_CURRENT: CUDA_SUCCESS 0' \
	'graph after launch, 1 MiB (freed by its node), DEVICE_POINTER: CUDA_ERROR_INVALID_VALUE' \
	'graph after launch, 3 MiB+4096 (no free node), cuMemGetAddressRange: CUDA_SUCCESS base, size' \
	'graph after launch, the live allocation reads back: ok' \
	'graph relaunch while an allocation is live: CUDA_ERROR_INVALID_VALUE' \
	'graph cuMemFree of a live graph allocation: CUDA_SUCCESS' \
	'graph cuMemFree of it again: CUDA_ERROR_INVALID_VALUE' \
	'graph relaunch after cuMemFree: CUDA_SUCCESS' \
	'graph after cuMemFreeAsync, DEVICE_POINTER: CUDA_ERROR_INVALID_VALUE' \
	'graph mem after cuMemFreeAsync, USED_MEM_CURRENT: CUDA_SUCCESS 33554432' \
	'graph mem after trim, RESERVED_MEM_CURRENT: CUDA_SUCCESS 0' \
	'graph auto-free relaunch while an allocation is live: CUDA_SUCCESS' \
	'graph after cuGraphDestroy while live, DEVICE_POINTER: CUDA_SUCCESS the address' \
	'graph cuMemFree after exec and graph destroyed: CUDA_SUCCESS' \
	"graph cuMemFree of an alloc node's address never launched: CUDA_ERROR_INVALID_VALUE" \
	'graph second instantiate while the first exec exists: CUDA_ERROR_NOT_SUPPORTED' \
	'graph cuGraphClone of a graph with memory nodes: CUDA_ERROR_NOT_SUPPORTED' \
	'graph child graph node with an alloc node: CUDA_ERROR_NOT_SUPPORTED' \
	"graph free node of another graph's allocation: CUDA_SUCCESS" \
	'graph cross-graph, after the freeing launch, DEVICE_POINTER: CUDA_ERROR_INVALID_VALUE' \
	'graph captured alloc and free, nodes: CUDA_SUCCESS 3 MEM_ALLOC MEMSET MEM_FREE' \
	'graph captured alloc and free, alloc node dptr: the captured address' \
	'graph captured alloc alone, after launch, reads the captured memset: yes'

# -------------------------------------------- the real driver, line by line
# probe-h200-driver580.txt is the probe's output on an NVIDIA H200 with driver
# 580.159.04 (CUDA 13.0). Every fact the fixture prints must have the value the
# driver printed (info: lines excepted). A key is the text before the last
# ": "; repeated keys are compared in order. A fact the reference lacks (a
# probe line added since it was recorded) is reported, not failed: record the
# reference again on a GPU (README.md says how).
golden=$srcdir/tests/fakecuda/probe-h200-driver580.txt
if [ -f "$golden" ]; then
	awk '
	function key(l) { n = match(l, /.*: /); return n ? substr(l, 1, RLENGTH - 2) : l }
	function val(l) { n = match(l, /.*: /); return n ? substr(l, RLENGTH + 1) : "" }
	/^info:/ { next }
	FNR == NR { k = key($0); g[k, ++gn[k]] = val($0); next }
	{
		k = key($0); i = ++fn[k]
		if (!(k in gn)) { print "not in the reference (record it again): " $0; next }
		if (i > gn[k]) { print "more often than in the reference: " $0; next }
		if (g[k, i] != val($0)) {
			print "DIFFERS from driver 580: " k ": fixture \"" val($0) "\", driver \"" g[k, i] "\""
			bad = 1
		}
	}
	END { exit bad }' "$golden" "$tmp/out" >"$tmp/golden.diff" ||
		fail "probe output differs from the real driver: $(cat "$tmp/golden.diff")"
	[ -s "$tmp/golden.diff" ] && cat "$tmp/golden.diff" >&2
else
	fail "missing $golden"
fi

# every line of the default run is comparable: no addresses
if grep -Eq '0x[0-9a-f]{6,}' "$tmp/out"; then
	fail "probe output contains an address"
fi

# ------------------------------------------------- exports == X-macro list
# probe.c counts the exports on three lines (the first recording's, those
# added after it, capture and graphs); together they must be the whole list.
n=$(grep -c '^	X(' "$list")
found=$(sed -n 's/^dlsym \(later \|capture and graph \)\{0,1\}exports found: \([0-9]*\) of \([0-9]*\)$/\2 \3/p' "$tmp/out" |
	awk '{ f += $1; t += $2 } END { print f " of " t }')
[ "$found" = "$n of $n" ] || fail "dlsym exports found: $found, want $n of $n"
if command -v nm >/dev/null 2>&1; then
	sed -n 's/^	X(\([A-Za-z0-9_]*\),.*/\1/p' "$list" | sort >"$tmp/want"
	{ nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^cu/ { print $3 }'; } |
		sort >"$tmp/have"
	cmp -s "$tmp/want" "$tmp/have" || {
		diff "$tmp/want" "$tmp/have" >&2
		fail "exported cu* symbols differ from fakecuda_exports.h"
	}
	extra=$(nm -D --defined-only "$lib" | awk '$2 != "A" && $3 !~ /^(cu|fakecuda_)/ { print $3 }')
	[ -z "$extra" ] || fail "unexpected exports: $extra"
	nm -D "$lib" | grep -q ' T fakecuda_launch_writer$' || fail "fakecuda_launch_writer not exported"
	# The CUDA 12.1 build: exactly the exports dated 12010 or before.
	old=$dir/v12010/libcuda.so.1
	if [ -f "$old" ]; then
		sed -n 's/^	X(\([A-Za-z0-9_]*\), [A-Za-z0-9_]*, \([0-9]*\),.*/\1 \2/p' "$list" |
			awk '$2 <= 12010 { print $1 }' | sort >"$tmp/want.old"
		{ nm -D --defined-only "$old" | awk '$2 == "T" && $3 ~ /^cu/ { print $3 }'; } |
			sort >"$tmp/have.old"
		cmp -s "$tmp/want.old" "$tmp/have.old" || {
			diff "$tmp/want.old" "$tmp/have.old" >&2
			fail "v12010: exported cu* symbols differ from those dated <= 12010"
		}
		[ "$(wc -l <"$tmp/want.old")" -lt "$(wc -l <"$tmp/want")" ] ||
			fail "v12010: hides nothing"
	else
		fail "$old not built"
	fi
fi
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$lib" | grep -q 'SONAME.*\[libcuda\.so\.1\]' || fail "SONAME is not libcuda.so.1"
fi

# ---------------------------------------------------------- fault on deref
"$probe" fault >"$tmp/fault" 2>&1
expect "$tmp/fault" 'host deref of device pointer: SIGSEGV'

# ------------------------------------------------------ fault injection
FAKECUDA_NO_DEVICE=1 "$probe" >"$tmp/nodev" 2>&1
expect "$tmp/nodev" 'cuInit: CUDA_ERROR_NO_DEVICE'

FAKECUDA_FAIL_ALLOC=1 "$probe" >"$tmp/fa1" 2>&1
expect "$tmp/fa1" 'cuMemAlloc 1000: CUDA_ERROR_OUT_OF_MEMORY'

FAKECUDA_FAIL_ALLOC=2,3+ "$probe" >"$tmp/fa2" 2>&1
expect "$tmp/fa2" 'cuMemAlloc 1000: CUDA_SUCCESS' \
	'cuMemAllocPitch: CUDA_ERROR_OUT_OF_MEMORY' \
	'cuMemHostAlloc 4096: CUDA_ERROR_OUT_OF_MEMORY' \
	'cuMemAllocManaged 65536: CUDA_ERROR_OUT_OF_MEMORY'

FAKECUDA_FAIL_FREE=1 "$probe" >"$tmp/ff" 2>&1
expect "$tmp/ff" 'cuMemFree interior: CUDA_ERROR_INVALID_VALUE' \
	'cuMemFree: CUDA_ERROR_ILLEGAL_ADDRESS' \
	'cuMemFree double: CUDA_SUCCESS'

# Per entry point: cuInit's third call (after "bad flags" and the first
# success), every cuMemFree_v2 with a numbered code, and a malformed list
# ignored as a whole.
FAKECUDA_FAIL_CALL='cuInit=3@CUDA_ERROR_NO_DEVICE;cuMemFree_v2=1+@700' \
	FAKECUDA_CALL_LOG=$tmp/calls "$probe" >"$tmp/fc" 2>&1
expect "$tmp/fc" 'cuInit bad flags: CUDA_ERROR_INVALID_VALUE' 'cuInit: CUDA_SUCCESS' \
	'cuInit again: CUDA_ERROR_NO_DEVICE'
grep -q '^cuMemFree[ (:].*: CUDA_ERROR_ILLEGAL_ADDRESS$' "$tmp/fc" ||
	fail "FAKECUDA_FAIL_CALL: no cuMemFree_v2 failed with code 700"
grep -q '^cuMemFree[ (:].*: CUDA_SUCCESS$' "$tmp/fc" &&
	fail "FAKECUDA_FAIL_CALL: a cuMemFree_v2 succeeded under 1+"
[ "$(grep -c . "$tmp/calls")" = "$(sort -u "$tmp/calls" | grep -c .)" ] &&
	grep -qx cuInit "$tmp/calls" && grep -qx cuMemFree_v2 "$tmp/calls" ||
	fail "FAKECUDA_CALL_LOG: not each reached entry point once"
FAKECUDA_FAIL_CALL='cuInit=2;cuNoSuchCall=1' "$probe" >"$tmp/fcbad" 2>&1
expect "$tmp/fcbad" 'cuInit: CUDA_SUCCESS'
grep -q 'ignoring malformed FAKECUDA_FAIL_CALL' "$tmp/fcbad" ||
	fail "FAKECUDA_FAIL_CALL: a malformed list was not reported"

# The new entry points fail by name too: a capture that cannot begin, a
# launch that fails and leaves nothing live.
FAKECUDA_FAIL_CALL='cuStreamBeginCapture_v2=1;cuGraphLaunch=1@CUDA_ERROR_LAUNCH_FAILED' \
	"$probe" >"$tmp/fcg" 2>&1
expect "$tmp/fcg" 'capture global, same thread, cuCtxSynchronize, begin: CUDA_ERROR_UNKNOWN' \
	'capture global, same thread, cuStreamSynchronize of another stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' \
	'graph cuGraphLaunch: CUDA_ERROR_LAUNCH_FAILED' \
	'graph after launch, 3 MiB+4096 (no free node), DEVICE_POINTER: CUDA_ERROR_INVALID_VALUE'

FAKECUDA_NO_CONCURRENT_MANAGED=1 "$probe" >"$tmp/ncm" 2>&1
expect "$tmp/ncm" 'attribute CONCURRENT_MANAGED_ACCESS: CUDA_SUCCESS 0' \
	'cuMemPrefetchAsync managed to device: CUDA_ERROR_INVALID_DEVICE'

FAKECUDA_DEVICES=3 FAKECUDA_MEM=1G "$probe" >"$tmp/dev" 2>&1
expect "$tmp/dev" 'info: device count: 3' 'info: total memory: 1073741824'

# ------------------------------------------------- simulated async work
"$probe" sim >"$tmp/sim" 2>&1 || fail "probe sim exited $?"
grep -q '^sim FAIL' "$tmp/sim" && fail "$(grep '^sim FAIL' "$tmp/sim")"
grep -qx 'sim: done' "$tmp/sim" || fail "probe sim did not finish"

if [ $failed -ne 0 ]; then
	echo "--- probe output:" >&2
	cat "$tmp/out" >&2
	echo "--- probe sim output:" >&2
	cat "$tmp/sim" >&2
	exit 1
fi
exit 0
