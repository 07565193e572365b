#!/bin/sh
# check_fuzz_corpus.sh -- a make check test: builds the libFuzzer targets
# of tests/fuzz/ (build.sh, clang) and runs each once over its seed corpus
# (tests/fuzz/corpus/<target>/, -runs=0): a crash, a leak or a failed
# check in any seed fails the test.  Exits 77 (skip) without a clang that
# has libFuzzer (Debian: clang libclang-rt-14-dev), 99 on a harness error.
# Reproducers of open findings (tests/fuzz/findings/) are not run: see
# doc/reliability.md.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=.}"
CC=${CC_FUZZ:-clang}
out=$top_builddir/tests/fuzz/bin

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: $CC not found (Debian: apt-get install clang libclang-rt-14-dev)"
	exit 77
fi
probe=$(mktemp -d) || exit 99
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if ! "$CC" -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p" 2>/dev/null; then
	rm -rf "$probe"
	echo "SKIP: $CC cannot link -fsanitize=fuzzer,address (Debian: libclang-rt-14-dev)"
	exit 77
fi
rm -rf "$probe"

if ! CC=$CC sh "$top_srcdir/tests/fuzz/build.sh" "$top_builddir" "$out"; then
	echo "FAIL: tests/fuzz/build.sh"
	exit 1
fi

# fuzz_api needs the simulated driver (AM_TESTS_ENVIRONMENT sets
# LD_LIBRARY_PATH; set it here too when run by hand).
if test -n "${FAKECUDA_DIR:-}"; then
	LD_LIBRARY_PATH=$FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
fi

rc=0
for t in fuzz_options fuzz_report fuzz_supp fuzz_api; do
	corpus=$top_srcdir/tests/fuzz/corpus/$t
	log=$out/$t.corpus.log
	if "$out/$t" -runs=0 -timeout=30 -rss_limit_mb=4096 \
	    -artifact_prefix="$out/$t-" "$corpus" >"$log" 2>&1; then
		echo "PASS: $t ($(ls "$corpus" | wc -l) seeds)"
	else
		echo "FAIL: $t over $corpus; the end of $log:"
		tail -n 40 "$log"
		rc=1
	fi
done
exit $rc
