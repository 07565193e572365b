/*
 * fuzz_report.c -- libFuzzer target for the report reader of
 * cuwarden-audit (tools/ingest*.c, ingest_file), as tools/main.c
 * uses it for `cuwarden-audit report FILE...`.
 *
 * The input is written to a memfd and read through /proc/self/fd/N, so
 * the reader's whole path runs (json_load_file, the empty/not-JSON
 * diagnostics that reopen the file).  Properties checked:
 *   - a refused file gives a non-empty one-line message that starts with
 *     the file's name; no crash, no leak (ASan's leak check at exit and
 *     libFuzzer's -detect_leaks);
 *   - an accepted per-process report ("cuwarden-report") read a second
 *     time into the same model is accepted again and doubles the leaked
 *     allocations and violations (same fingerprints: same groups), as
 *     merging the reports of two identical processes must;
 *   - model_sort, model_totals and fingerprint_symbolic run on whatever
 *     was read, then model_free releases everything.
 * With CW_FUZZ_REPORT_SKIP_KNOWN=1 the inputs of finding R1
 * (corpus/fuzz_report/report-merged-version-uaf*.json: a "cuwarden-audit"
 * document with a "version" other than the integer 1, whose reader read
 * the version after freeing the document; fixed, doc/reliability.md) are
 * skipped, so that a long run can look for other bugs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit.h"
#include "baseline.h"
#include "ingest.h"
#include "json.h"
#include "model.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_report: check failed: %s " \
			    "(line %d)\n", #c, __LINE__); \
			abort(); \
		} \
	} while (0)

static int fd = -1;
static char path[64];

static void
write_input(const uint8_t *data, size_t size)
{
	size_t o = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz_report", 0);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	CHECK(ftruncate(fd, 0) == 0);
	while (o < size) {
		ssize_t n = pwrite(fd, data + o, size - o, (off_t)o);

		CHECK(n > 0);
		o += (size_t)n;
	}
}

/* An input of the known finding (see the top of the file). */
static bool
known_finding(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, 0, NULL);
	const json_t *v = json_object_get(doc, "version");
	bool r = doc != NULL && strcmp(json_str(doc, "format", ""),
	    "cuwarden-audit") == 0 && v != NULL &&
	    !(json_is_integer(v) && json_integer_value(v) == 1);

	json_decref(doc);
	return r;
}

/* Is the input a per-process report (top-level format)? */
static bool
is_process_report(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, 0, NULL);
	bool r = doc != NULL && strcmp(json_str(doc, "format", ""),
	    "cuwarden-report") == 0;

	json_decref(doc);
	return r;
}

static void
check_error(const char *err)
{
	CHECK(err[0] != '\0');
	CHECK(strncmp(err, path, strlen(path)) == 0);
	CHECK(strlen(err) < 1024);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	au_model_t m;
	au_totals_t t1, t2;
	char err[1024];
	size_t groups;

	if (getenv("CW_FUZZ_REPORT_SKIP_KNOWN") != NULL &&
	    known_finding(data, size))
		return 0;
	memset(&m, 0, sizeof(m));
	write_input(data, size);
	err[0] = '\0';
	if (ingest_file(&m, path, err, sizeof(err))) {
		check_error(err);
		goto out;
	}
	model_totals(&m, &t1);
	groups = m.nleaks + m.nviols;
	if (is_process_report(data, size) && t1.leaked_allocations < (1ULL <<
	    62) && t1.violations < (1ULL << 62) && t1.leaked_bytes < (1ULL <<
	    62)) {
		err[0] = '\0';
		CHECK(!ingest_file(&m, path, err, sizeof(err)));
		model_totals(&m, &t2);
		CHECK(m.nleaks + m.nviols == groups);
		CHECK(t2.leaked_allocations == 2 * t1.leaked_allocations);
		CHECK(t2.leaked_bytes == 2 * t1.leaked_bytes);
		CHECK(t2.violations == 2 * t1.violations);
		CHECK(t2.processes == 2 * t1.processes);
	}
out:
	model_sort(&m);
	model_totals(&m, &t1);
	fingerprint_symbolic(&m);
	model_free(&m);
	return 0;
}
