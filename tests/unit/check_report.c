/*
 * check_report.c -- the report: records inserted into the registry,
 * violations and ledger entries are written as JSON, parsed back with
 * jansson and every member checked; the text format's summary lines;
 * grouping and order of many leaks; %p expansion; the file rules of
 * CUWARDEN_REPORT (own report replaced, by rename; any other existing
 * file never written: a forked child, an earlier run, another user's
 * pre-created file, an earlier process with the same pid all give
 * "<path>.<pid>-<starttime>"; whole or not at all; "-", /dev/stderr and
 * /dev/fd/2 are fd 2; a FIFO, a directory, a device refused without
 * blocking; a relative path resolved once, before a chdir); byte sums
 * that saturate instead of wrapping; control characters escaped in the
 * text report; an unknown exit status written as null.
 */
#include "preamble.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ledger.h"
#include "log.h"
#include "options.h"
#include "owner.h"
#include "registry.h"
#include "report.h"
#include "report_int.h"
#include "stackdepot.h"
#include "stats.h"
#include "teardown.h"
#include "violation.h"
#include "unit.h"

#define MIB (1024u * 1024u)

/* ------------------------------------------------------------- helpers */

static void
reset_all(void)
{
	registry_reset();
	violation_reset();
	teardown_reset();
	ledger_reset();
	unsetenv("CUWARDEN_REPORT");
	unsetenv("CUWARDEN_REPORT_FORMAT");
	unsetenv("CUWARDEN_ON_VIOLATION");
	options_reset();
	report_paths_reset();
}

/* CUWARDEN_REPORT=pat (NULL: unset), read afresh. */
static void
use_report(const char *pat)
{
	if (pat != NULL)
		setenv("CUWARDEN_REPORT", pat, 1);
	else
		unsetenv("CUWARDEN_REPORT");
	options_reset();
	report_paths_reset();
}

static volatile int sink;

__attribute__((noinline)) static stack_id_t
site_one(void)
{
	stack_id_t id = stack_capture(0);

	sink++;
	return id;
}

__attribute__((noinline)) static stack_id_t
site_two(void)
{
	stack_id_t id = stack_capture(0);

	sink++;
	return id;
}

static reg_handle_t
add(kind_t kind, ns_t ns, uintptr_t base, size_t size, int device,
    owner_id_t owner, stack_id_t st, const char *api)
{
	reg_rec_t r;
	reg_handle_t h = 0;

	memset(&r, 0, sizeof(r));
	r.base = base;
	r.size = size;
	r.kind = (uint8_t)kind;
	r.ns = (uint8_t)ns;
	r.device = (int16_t)device;
	r.owner = owner;
	r.alloc_stack = st;
	r.api = api;
	r.refcount = 1;
	ck_assert(!registry_insert(&r, &h, NULL, NULL));
	ck_assert_uint_ne(h, 0);
	return h;
}

/* Writes a report to a temporary file and returns its text (static). */
static const char *
render(cw_format_t fmt, const report_meta_t *meta)
{
	static char buf[1 << 20];
	char path[] = "/tmp/cw-check-report-XXXXXX";
	int fd = mkstemp(path);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_msg(!report_write(fd, fmt, meta), "report_write: errno %d",
	    errno);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)sizeof(buf) - 1);
	buf[n] = '\0';
	return buf;
}

static json_t *
render_json(const report_meta_t *meta)
{
	const char *text = render(CW_FORMAT_JSON, meta);
	json_error_t err;
	json_t *doc = json_loads(text, 0, &err);

	ck_assert_msg(doc != NULL, "invalid JSON: %s (line %d)\n%s", err.text,
	    err.line, text);
	ck_assert(json_is_object(doc));
	return doc;
}

static json_t *
member(json_t *obj, const char *name)
{
	json_t *v = json_object_get(obj, name);

	ck_assert_msg(v != NULL, "member \"%s\" missing", name);
	return v;
}

static long long
int_of(json_t *obj, const char *name)
{
	json_t *v = member(obj, name);

	ck_assert_msg(json_is_integer(v), "\"%s\" is not an integer", name);
	return json_integer_value(v);
}

static const char *
str_of(json_t *obj, const char *name)
{
	json_t *v = member(obj, name);

	ck_assert_msg(json_is_string(v), "\"%s\" is not a string", name);
	return json_string_value(v);
}

static unsigned long long
hex_of(json_t *obj, const char *name)
{
	const char *s = str_of(obj, name);
	char *end;
	unsigned long long v;

	ck_assert_msg(strncmp(s, "0x", 2) == 0, "\"%s\" = %s", name, s);
	v = strtoull(s + 2, &end, 16);
	ck_assert_msg(*end == '\0' && end > s + 2, "\"%s\" = %s", name, s);
	for (const char *p = s + 2; *p; p++)
		ck_assert_msg(!(*p >= 'A' && *p <= 'F'), "uppercase hex %s", s);
	return v;
}

/* A stack array: frames with a module index (or -1) and a hex offset. */
static size_t
check_stack(json_t *st, size_t nmodules)
{
	size_t i;
	json_t *f;

	ck_assert(json_is_array(st));
	json_array_foreach(st, i, f) {
		long long m = int_of(f, "module");

		ck_assert(m == -1 || (m >= 0 && (size_t)m < nmodules));
		(void)hex_of(f, "offset");
	}
	return json_array_size(st);
}

/* ----------------------------------------------------------------- tests */

START_TEST(test_report_json)
{
	static const report_meta_t meta = { "audit", "exit", 3, NULL };
	owner_id_t own;
	stack_id_t s1, s2;
	reg_handle_t dev;
	violation_t v;
	json_t *doc, *o, *a, *l, *mods;
	size_t nmod, i;
	char exe[PATH_MAX];
	ssize_t n;

	reset_all();
	own = owner_intern("libowner-test.so");
	ck_assert_uint_ne(own, 0);
	s1 = site_one();
	s2 = site_two();
	ck_assert_uint_ne(s1, 0);
	ck_assert_uint_ne(s1, s2);

	/* 3 x 1 MiB device (one group), 4 MiB managed, 64 MiB reservation,
	 * 1 MiB pinned without owner; a view and a mapping are not leaks. */
	dev = add(KIND_DEVICE, NS_ADDR, 0x10200000, MIB, 0, own, s1,
	    "cuMemAlloc_v2");
	add(KIND_DEVICE, NS_ADDR, 0x10000000, MIB, 0, own, s1, "cuMemAlloc_v2");
	add(KIND_DEVICE, NS_ADDR, 0x10100000, MIB, 0, own, s1, "cuMemAlloc_v2");
	add(KIND_MANAGED, NS_ADDR, 0x20000000, 4 * MIB, 1, own, s2,
	    "cuMemAllocManaged");
	add(KIND_VA, NS_VA, 0x40000000, 64 * MIB, -1, 0, s2,
	    "cuMemAddressReserve");
	add(KIND_PINNED, NS_ADDR, 0x7f0000000000, MIB, -1, 0, 0,
	    "cuMemHostAlloc");
	add(KIND_MAPPING, NS_MAP, 0x40000000, 2 * MIB, 0, 0, s2, "cuMemMap");
	{
		reg_rec_t r;

		memset(&r, 0, sizeof(r));
		r.kind = KIND_VIEW;
		r.ns = NS_NONE;
		r.base = 0x10200100;
		r.size = 256;
		r.parent = dev;
		r.refcount = 1;
		ck_assert(!registry_insert(&r, &dev, NULL, NULL));
	}

	memset(&v, 0, sizeof(v));
	v.type = V_DOUBLE_FREE;
	v.api = "cuMemFree_v2";
	v.address = 0x30000000;
	v.size = 2 * MIB;
	v.kind = KIND_DEVICE;
	v.device = 0;
	v.owner = own;
	v.cuda_error = 1; /* CUDA_ERROR_INVALID_VALUE */
	v.stack = s2;
	v.alloc_stack = s1;
	v.free_stack = s2;
	violation_record(&v);
	ledger_add(0x50000000, MIB, KIND_DEVICE, 700);
	ledger_add(0x50100000, MIB, KIND_DEVICE, 700);
	{
		/* 2 MiB freed only by a context's teardown. */
		teardown_rec_t t = { 0x60000000, 2 * MIB, "cuMemAlloc_v2",
		    s1, own, 0, KIND_DEVICE };

		teardown_keep(&t);
	}

	doc = render_json(&meta);
	ck_assert_str_eq(str_of(doc, "format"), "cuwarden-report");
	ck_assert_int_eq(int_of(doc, "version"), 1);
	ck_assert_int_eq(strncmp(str_of(doc, "tool"), "cuwarden ", 9), 0);
	ck_assert_int_eq(int_of(doc, "pid"), getpid());
	ck_assert_int_eq(int_of(doc, "ppid"), getppid());
	a = member(doc, "command");
	ck_assert(json_is_array(a) && json_array_size(a) >= 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(a, 0)),
	    "check_report"));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	ck_assert_str_eq(str_of(doc, "exe"), exe);
	{
		/* The host and boot of the process, as the system gives
		 * them. */
		char host[256], boot[64] = "";
		FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

		ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
		ck_assert_str_eq(str_of(doc, "host"), host);
		if (f != NULL) {
			if (fgets(boot, sizeof(boot), f) == NULL)
				boot[0] = '\0';
			fclose(f);
		}
		boot[strcspn(boot, "\n")] = '\0';
		ck_assert_str_eq(str_of(doc, "boot_id"), boot);
	}
	ck_assert_str_eq(str_of(doc, "mode"), "audit");
	{
		const char *t = str_of(doc, "time");
		int y, mo, d, h, mi, s;
		char z;

		ck_assert_int_eq(strlen(t), 20);
		ck_assert_int_eq(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo,
		    &d, &h, &mi, &s, &z), 7);
		ck_assert(y >= 2024 && z == 'Z');
	}
	o = member(doc, "exit");
	ck_assert_str_eq(str_of(o, "how"), "exit");
	ck_assert_int_eq(int_of(o, "status"), 3);

	o = member(doc, "coverage");
	ck_assert(json_is_boolean(member(o, "hooks_active")));
	{
		static const char *const cov[] = { "hooked_entry_points",
		    "allocations", "frees", "untracked_frees", "failed_calls",
		    "gpa_lookups", "gpa_redirects", "dlsym_redirects",
		    "teardown_frees" };

		for (i = 0; i < CW_ARRAY_SIZE(cov); i++)
			ck_assert_int_ge(int_of(o, cov[i]), 0);
	}

	o = member(doc, "summary");
	/* The reservation is address space, teardown's its own sum. */
	ck_assert_int_eq(int_of(o, "leaked_bytes"), 3 * MIB + 4 * MIB + MIB);
	ck_assert_int_eq(int_of(o, "leaked_allocations"), 5);
	ck_assert_int_eq(int_of(o, "address_ranges"), 1);
	ck_assert_int_eq(int_of(o, "address_range_bytes"), 64 * MIB);
	ck_assert_int_eq(int_of(o, "teardown_allocations"), 1);
	ck_assert_int_eq(int_of(o, "teardown_bytes"), 2 * MIB);
	ck_assert_int_eq(int_of(o, "teardown_not_kept"), 0);
	ck_assert(json_is_false(member(o, "teardown_bytes_saturated")));
	ck_assert_int_eq(int_of(o, "violations"), 1);
	ck_assert(json_is_false(member(o, "bytes_saturated")));

	o = member(doc, "failed_frees");
	ck_assert_int_eq(int_of(o, "count"), 2);
	ck_assert_int_eq(int_of(o, "overflow"), 0);
	a = member(o, "addresses");
	ck_assert_uint_eq(json_array_size(a), 2);

	mods = member(doc, "modules");
	nmod = json_array_size(mods);
	ck_assert_uint_ge(nmod, 2);
	{
		bool saw_exe = false;

		json_array_foreach(mods, i, o) {
			const char *bid = str_of(o, "build_id");

			(void)hex_of(o, "base");
			if (strcmp(str_of(o, "path"), exe) == 0)
				saw_exe = true;
			for (const char *p = bid; *p; p++)
				ck_assert(strchr("0123456789abcdef", *p));
		}
		ck_assert(saw_exe);
	}

	/* Leaks: five groups, largest first, each with its category. */
	a = member(doc, "leaks");
	ck_assert_uint_eq(json_array_size(a), 5);
	l = json_array_get(a, 0);
	ck_assert_str_eq(str_of(l, "kind"), "va");
	ck_assert_str_eq(str_of(l, "category"), "address_range");
	ck_assert_int_eq(int_of(l, "bytes"), 64 * MIB);
	ck_assert_int_eq(int_of(l, "device"), -1);
	ck_assert_str_eq(str_of(l, "owner"), "");
	ck_assert_str_eq(str_of(l, "api"), "cuMemAddressReserve");
	l = json_array_get(a, 1);
	ck_assert_str_eq(str_of(l, "kind"), "managed");
	ck_assert_int_eq(int_of(l, "size"), 4 * MIB);
	ck_assert_int_eq(int_of(l, "count"), 1);
	ck_assert_int_eq(int_of(l, "device"), 1);
	l = json_array_get(a, 2);
	ck_assert_str_eq(str_of(l, "kind"), "device");
	ck_assert_int_eq(int_of(l, "size"), MIB);
	ck_assert_int_eq(int_of(l, "count"), 3);
	ck_assert_int_eq(int_of(l, "bytes"), 3 * MIB);
	ck_assert_int_eq(int_of(l, "device"), 0);
	ck_assert_str_eq(str_of(l, "owner"), "libowner-test.so");
	ck_assert_str_eq(str_of(l, "api"), "cuMemAlloc_v2");
	{
		json_t *ad = member(l, "addresses");

		ck_assert_uint_eq(json_array_size(ad), 3);
		ck_assert_str_eq(json_string_value(json_array_get(ad, 0)),
		    "0x10000000");
		ck_assert_str_eq(json_string_value(json_array_get(ad, 1)),
		    "0x10100000");
		ck_assert_str_eq(json_string_value(json_array_get(ad, 2)),
		    "0x10200000");
	}
	{
		json_t *st = member(l, "stack"), *f0;
		stack_frame_t fr[STACK_MAX_DEPTH];
		size_t nf = stack_get(s1, fr, STACK_MAX_DEPTH);

		ck_assert_uint_eq(check_stack(st, nmod), nf);
		f0 = json_array_get(st, 0);
		ck_assert_int_eq(int_of(f0, "module"), fr[0].module);
		ck_assert_uint_eq(hex_of(f0, "offset"), fr[0].offset);
		/* Frame 0 lies in this program. */
		ck_assert_str_eq(str_of(json_array_get(mods,
		    (size_t)int_of(f0, "module")), "path"), exe);
	}
	ck_assert_str_eq(str_of(l, "category"), "leak");
	l = json_array_get(a, 3);
	ck_assert_str_eq(str_of(l, "kind"), "device");
	ck_assert_str_eq(str_of(l, "category"), "teardown");
	ck_assert_int_eq(int_of(l, "bytes"), 2 * MIB);
	ck_assert_str_eq(str_of(l, "owner"), "libowner-test.so");
	ck_assert_uint_gt(check_stack(member(l, "stack"), nmod), 0);
	l = json_array_get(a, 4);
	ck_assert_str_eq(str_of(l, "kind"), "pinned");
	ck_assert_uint_eq(check_stack(member(l, "stack"), nmod), 0);
	for (i = 0; i < 5; i++)
		check_stack(member(json_array_get(a, i), "stack"), nmod);

	/* The violation, every member. */
	a = member(doc, "violations");
	ck_assert_uint_eq(json_array_size(a), 1);
	l = json_array_get(a, 0);
	ck_assert_str_eq(str_of(l, "type"), "double_free");
	ck_assert_str_eq(str_of(l, "api"), "cuMemFree_v2");
	ck_assert_uint_eq(hex_of(l, "address"), 0x30000000);
	ck_assert_int_eq(int_of(l, "size"), 2 * MIB);
	ck_assert_str_eq(str_of(l, "kind"), "device");
	ck_assert_int_eq(int_of(l, "device"), 0);
	ck_assert_str_eq(str_of(l, "owner"), "libowner-test.so");
	ck_assert_str_eq(str_of(l, "cuda_error"), "CUDA_ERROR_INVALID_VALUE");
	ck_assert_int_eq(int_of(l, "cuda_error_code"), 1);
	ck_assert_uint_gt(check_stack(member(l, "stack"), nmod), 0);
	ck_assert_uint_gt(check_stack(member(l, "alloc_stack"), nmod), 0);
	ck_assert_uint_gt(check_stack(member(l, "free_stack"), nmod), 0);

	o = member(doc, "stats");
	ck_assert(json_is_object(member(member(o, "bytes"), "device")));
	ck_assert(json_is_object(member(member(o, "bytes"), "view")));
	ck_assert(json_is_object(member(member(o, "allocations"), "vmm")));
	{
		json_t *p = member(member(o, "pools"), "managed");

		ck_assert_int_ge(int_of(member(p, "reserved"), "peak"), 0);
		ck_assert(json_is_real(member(p, "fragmentation")));
	}
	ck_assert_int_ge(int_of(o, "stacks"), 2);
	ck_assert_int_gt(int_of(o, "stack_bytes"), 0);
	ck_assert_int_eq(int_of(o, "stacks_dropped"),
	    (long long)stack_dropped());
	ck_assert_int_ge(int_of(o, "log_lines_lost"), 0);
	json_decref(doc);
	reset_all();
}
END_TEST

/* The report's time of day, by arithmetic (report_utc_format), against
 * glibc's gmtime_r + strftime: every day from 1900 to 2400 at a time of
 * day that walks the seconds, hours and minutes, and the edges (the
 * epoch, leap days, century years, the year 2038's 32-bit limit). */
START_TEST(test_report_utc)
{
	static const int64_t edges[] = { 0, -1, 86399, 86400, 951782400,
		951868800, 4107542399LL, 4107542400LL, 2147483647LL,
		2147483648LL, 1796599606LL, -2208988800LL };
	char got[32], want[32];
	struct tm tm;
	size_t checked = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]) + 182622;
	    i++) {
		int64_t t = i < sizeof(edges) / sizeof(edges[0]) ? edges[i] :
		    -2208988800LL + (int64_t)(i - 12) * 86400 +
		    (int64_t)(i * 7919 % 86400);
		time_t tt = (time_t)t;

		ck_assert_ptr_nonnull(gmtime_r(&tt, &tm));
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		report_utc_format(t, got, sizeof(got));
		ck_assert_msg(strcmp(got, want) == 0, "%lld: %s, want %s",
		    (long long)t, got, want);
		checked++;
	}
	ck_assert_uint_gt(checked, 182000);
}
END_TEST

START_TEST(test_report_empty)
{
	json_t *doc, *o;

	reset_all();
	doc = render_json(NULL);
	ck_assert_str_eq(str_of(doc, "mode"), "library");
	o = member(doc, "exit");
	ck_assert_str_eq(str_of(o, "how"), "request");
	/* Not known: null, never -1. */
	ck_assert(json_is_null(member(o, "status")));
	o = member(doc, "summary");
	ck_assert_int_eq(int_of(o, "leaked_bytes"), 0);
	ck_assert_int_eq(int_of(o, "leaked_allocations"), 0);
	ck_assert_int_eq(int_of(o, "violations"), 0);
	ck_assert_uint_eq(json_array_size(member(doc, "leaks")), 0);
	ck_assert_uint_eq(json_array_size(member(doc, "violations")), 0);
	json_decref(doc);
}
END_TEST

START_TEST(test_report_text)
{
	static const report_meta_t meta = { "pool", "_exit", 0, NULL };
	const char *t;
	stack_id_t s1 = site_one();
	violation_t v;

	reset_all();
	add(KIND_DEVICE, NS_ADDR, 0x10000000, MIB, 0, 0, s1, "cuMemAlloc_v2");
	add(KIND_DEVICE, NS_ADDR, 0x10100000, MIB, 0, 0, s1, "cuMemAlloc_v2");
	add(KIND_PINNED, NS_ADDR, 0x7f0000000000, 3 * MIB, -1, 0, s1,
	    "cuMemHostAlloc");
	memset(&v, 0, sizeof(v));
	v.type = V_INVALID_FREE;
	v.api = "cuMemFree_v2";
	v.address = 0xdead0000;
	v.kind = -1;
	v.device = -1;
	v.family = 1u << KIND_DEVICE | 1u << KIND_MANAGED;
	v.stack = s1;
	violation_record(&v);
	memset(&v, 0, sizeof(v));
	v.type = V_OUT_OF_BOUNDS;
	v.api = "cuMemcpyHtoD_v2";
	v.address = 0x10000ff0;
	v.kind = KIND_DEVICE;
	v.size = MIB;
	v.device = 0;
	v.off = 1048560;
	v.len = 4096;
	v.stack = s1;
	violation_record(&v);

	t = render(CW_FORMAT_TEXT, &meta);
	/* Digits grouped, in the summary as in the groups (valgrind). */
	ck_assert_ptr_nonnull(strstr(t,
	    "LEAK SUMMARY: 5,242,880 bytes leaked in 3 allocations\n"));
	ck_assert_ptr_nonnull(strstr(t, "ERROR SUMMARY: 5 errors"));
	/* Largest first: the pinned group (3 MiB) before the device one. */
	ck_assert_ptr_nonnull(strstr(t, "3,145,728 bytes in 1 pinned"));
	ck_assert_ptr_nonnull(strstr(t, "2,097,152 bytes in 2 device"));
	ck_assert(strstr(t, "3,145,728 bytes in 1 pinned") <
	    strstr(t, "2,097,152 bytes in 2 device"));
	/* An invalid free names the family of its call; an out_of_bounds
	 * its range, in the library's form. */
	ck_assert_ptr_nonnull(strstr(t,
	    "invalid_free: cuMemFree_v2(0xdead0000), a free of device "
	    "memory\n"));
	ck_assert_ptr_nonnull(strstr(t, "out_of_bounds: cuMemcpyHtoD_v2("
	    "0x10000ff0) on device memory of 1,048,576 bytes, device 0, "
	    "range [1048560, 1048560 + 4096)\n"));
	ck_assert_ptr_nonnull(strstr(t, "#0  check_report+0x"));
	/* The modules the frames name, with their paths and build-ids. */
	{
		char exe[1024], line[1100];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		snprintf(line, sizeof(line), "modules:\n    %s (build-id ",
		    exe);
		ck_assert_ptr_nonnull(strstr(t, line));
	}
	ck_assert_ptr_nonnull(strstr(t, "mode pool"));
	reset_all();
}
END_TEST

/* A full stack depot is said in both formats: stats.stacks_dropped and
 * a line of the text report (the records without a stack are not the
 * program's doing). */
START_TEST(test_report_stacks_dropped)
{
	uintptr_t ips[8];
	json_t *doc;
	const char *t;

	reset_all();
	t = render(CW_FORMAT_TEXT, NULL);
	if (stack_dropped() == 0)
		ck_assert_ptr_null(strstr(t, "STACKS NOT KEPT"));
	stack_set_limit(stack_bytes()); /* no room for a new record */
	for (uintptr_t k = 0; k < 5; k++) {
		for (size_t i = 0; i < 8; i++)
			ips[i] = 0x5000000 + k * 0x1000 + i * 8;
		ck_assert_uint_eq(stack_intern(ips, 8), 0);
	}
	ck_assert_uint_ge(stack_dropped(), 5);
	doc = render_json(NULL);
	ck_assert_int_eq(int_of(member(doc, "stats"), "stacks_dropped"),
	    (long long)stack_dropped());
	json_decref(doc);
	t = render(CW_FORMAT_TEXT, NULL);
	ck_assert_ptr_nonnull(strstr(t, "STACKS NOT KEPT: "));
	stack_set_limit(SIZE_MAX); /* back to the default */
	reset_all();
}
END_TEST

START_TEST(test_report_grouping)
{
	uintptr_t ips[3] = { 0x1000, 0x2000, 0 };
	stack_id_t st[50];
	json_t *doc, *a, *l;
	size_t i;
	long long prev = -1, total = 0, count = 0;

	reset_all();
	for (int k = 0; k < 50; k++) {
		ips[2] = 0x3000 + (uintptr_t)k;
		st[k] = stack_intern(ips, 3);
	}
	/* 5000 records: stack k gets (k % 7 + 1) * 20 allocations of
	 * (k + 1) * 4 KiB. */
	for (int k = 0, n = 0; k < 50; k++)
		for (int j = 0; j < (k % 7 + 1) * 20; j++, n++)
			add(KIND_DEVICE, NS_ADDR, 0x900000000ULL -
			    (uintptr_t)n * 0x100000, (size_t)(k + 1) * 4096, 0,
			    0, st[k], "cuMemAlloc_v2");
	doc = render_json(NULL);
	a = member(doc, "leaks");
	ck_assert_uint_eq(json_array_size(a), 50);
	json_array_foreach(a, i, l) {
		long long b = int_of(l, "bytes");

		if (prev >= 0)
			ck_assert_int_le(b, prev);
		prev = b;
		ck_assert_int_eq(b, int_of(l, "size") * int_of(l, "count"));
		ck_assert_uint_eq(json_array_size(member(l, "addresses")),
		    int_of(l, "count") < 16 ? (size_t)int_of(l, "count") : 16);
		ck_assert_uint_eq(json_array_size(member(l, "stack")), 3);
		{
			json_t *ad = member(l, "addresses");

			/* The lowest addresses of the group, ascending. */
			for (size_t k = 1; k < json_array_size(ad); k++)
				ck_assert_uint_lt(strtoull(json_string_value(
				    json_array_get(ad, k - 1)), NULL, 16),
				    strtoull(json_string_value(
				    json_array_get(ad, k)), NULL, 16));
		}
		total += b;
		count += int_of(l, "count");
	}
	ck_assert_int_eq(int_of(member(doc, "summary"), "leaked_bytes"), total);
	ck_assert_int_eq(int_of(member(doc, "summary"),
	    "leaked_allocations"), count);
	ck_assert_int_eq(count, registry_live_count());
	json_decref(doc);
	reset_all();
}
END_TEST

START_TEST(test_report_strings)
{
	owner_id_t own;
	json_t *doc, *l;

	reset_all();
	own = owner_intern("odd \"name\" with \\ and /");
	ck_assert_uint_ne(own, 0);
	add(KIND_DEVICE, NS_ADDR, 0x1000, 16, 0, own, 0, "cuMemAlloc_v2");
	doc = render_json(NULL);
	l = json_array_get(member(doc, "leaks"), 0);
	ck_assert_str_eq(str_of(l, "owner"), "odd \"name\" with \\ and /");
	json_decref(doc);
	reset_all();
}
END_TEST

START_TEST(test_report_bad_fd)
{
	reset_all();
	errno = 0;
	ck_assert(report_write(-1, CW_FORMAT_JSON, NULL));
	ck_assert_int_eq(errno, EBADF);
	ck_assert(report_write(1, (cw_format_t)7, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_report_expand)
{
	char buf[64], want[64];

	snprintf(want, sizeof(want), "/tmp/r.%d.json", (int)getpid());
	ck_assert(!report_expand_path("/tmp/r.%p.json", buf, sizeof(buf)));
	ck_assert_str_eq(buf, want);
	ck_assert(!report_expand_path("a%%b%%%p", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "a%%b%%%d", (int)getpid());
	ck_assert_str_eq(buf, want);
	ck_assert(!report_expand_path("plain", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "plain");
	ck_assert(report_expand_path("bad%q", buf, sizeof(buf)));
	ck_assert(report_expand_path("trailing%", buf, sizeof(buf)));
	ck_assert(report_expand_path("", buf, sizeof(buf)));
	ck_assert(report_expand_path(NULL, buf, sizeof(buf)));
	ck_assert(report_expand_path("0123456789", buf, 10));
	ck_assert(!report_expand_path("012345678", buf, 10));
	ck_assert(report_expand_path("%p%p%p%p%p", buf, 12));
}
END_TEST

static long long
pid_in(const char *path)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);
	long long pid;

	ck_assert_msg(doc != NULL, "%s: %s", path, err.text);
	pid = int_of(doc, "pid");
	json_decref(doc);
	return pid;
}

/* The file this process (pid) wrote beside path when path was taken:
 * "<path>.<pid>-<starttime>[...]"; "" if none. */
static const char *
alt_of(const char *path, pid_t pid)
{
	static char found[PATH_MAX + 256];
	char dir[PATH_MAX], prefix[PATH_MAX];
	const char *slash = strrchr(path, '/');
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(prefix, sizeof(prefix), "%s.%d-", slash + 1, (int)pid);
	found[0] = '\0';
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		ck_assert_msg(found[0] == '\0', "two alternatives for %s",
		    path);
		snprintf(found, sizeof(found), "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return found;
}

/* Dot files (temporary reports) left in dir. */
static int
dot_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static const char *
fresh_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/cw-check-report-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

START_TEST(test_report_env_files)
{
	char path[256], child[PATH_MAX], other[PATH_MAX];
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	struct stat a, b;
	pid_t pid;
	int st;

	reset_all();
	ck_assert(!report_write_env(&meta)); /* unset: nothing, no error */

	snprintf(path, sizeof(path), "/tmp/cw-check-report-%d.json",
	    (int)getpid());
	unlink(path);
	use_report(path);
	ck_assert(!report_write_env(&meta));
	ck_assert_int_eq(pid_in(path), getpid());
	ck_assert_int_eq(stat(path, &a), 0);
	ck_assert_int_eq(a.st_mode & 0777, 0600);

	/* The same process again (an explicit report, then the one at
	 * exit): its own file is replaced (a new file renamed over it: a
	 * reader never sees it half written), no alternative name. */
	add(KIND_DEVICE, NS_ADDR, 0x1000, 4096, 0, 0, 0, "cuMemAlloc_v2");
	ck_assert(!report_write_env(&meta));
	ck_assert_str_eq(alt_of(path, getpid()), "");
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert_uint_ne(a.st_ino, b.st_ino);
	{
		json_error_t err;
		json_t *doc = json_load_file(path, 0, &err);

		ck_assert_ptr_nonnull(doc);
		ck_assert_int_eq(int_of(member(doc, "summary"),
		    "leaked_allocations"), 1);
		json_decref(doc);
	}

	/* A forked child never overwrites its parent's report. */
	pid = fork();
	if (pid == 0) {
		registry_postfork_child();
		_exit(report_write_env(&meta) ? 1 : 0);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(child, sizeof(child), "%s", alt_of(path, pid));
	ck_assert_str_ne(child, "");
	ck_assert_int_eq(pid_in(child), pid);
	ck_assert_int_eq(pid_in(path), getpid());
	unlink(child);
	unlink(path);

	/* With %p each process has its own file. */
	snprintf(other, sizeof(other), "/tmp/cw-check-report-%d-%%p.txt",
	    (int)getpid());
	setenv("CUWARDEN_REPORT_FORMAT", "text", 1);
	use_report(other);
	ck_assert(!report_write_env(&meta));
	snprintf(child, sizeof(child), "/tmp/cw-check-report-%d-%d.txt",
	    (int)getpid(), (int)getpid());
	{
		char buf[8192];

		unit_read_text(child, buf, sizeof(buf));
		ck_assert_ptr_nonnull(strstr(buf,
		    "LEAK SUMMARY: 4,096 bytes leaked in 1 allocations"));
	}
	unlink(child);

	/* A bad escape: an error, nothing written. */
	use_report("/tmp/cw-check-report-%q");
	ck_assert(report_write_env(&meta));
	ck_assert_int_eq(errno, EINVAL);

	/* An unwritable place: an error, logged, errno kept. */
	use_report("/nonexistent-dir/r.json");
	ck_assert(report_write_env(&meta));
	ck_assert_int_eq(errno, ENOENT);
	reset_all();
}
END_TEST

/* Any existing file this process did not write -- an earlier run's, a
 * sibling's -- is kept: "<path>.<pid>-<starttime>" instead.  "%%p" is no
 * pid. */
START_TEST(test_report_env_foreign)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	char path[256], alt[PATH_MAX], pat[300];
	char buf[16] = { 0 };
	int fd;

	reset_all();
	snprintf(path, sizeof(path), "/tmp/cw-check-report-f-%d.json",
	    (int)getpid());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "earlier", 7), 7);
	close(fd);
	use_report(path);
	ck_assert(!report_write_env(&meta));
	snprintf(alt, sizeof(alt), "%s", alt_of(path, getpid()));
	ck_assert_str_ne(alt, "");
	ck_assert_int_eq(pid_in(alt), getpid());
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, sizeof(buf) - 1), 7);
	close(fd);
	ck_assert_str_eq(buf, "earlier");
	/* Writing again replaces its own alternative, nothing more
	 * (alt_of fails on a second alternative). */
	ck_assert(!report_write_env(&meta));
	ck_assert_str_eq(alt_of(path, getpid()), alt);
	ck_assert_int_eq(pid_in(alt), getpid());
	unlink(alt);
	unlink(path);

	/* "%%p" is a literal "%p": the no-overwrite rule applies. */
	snprintf(pat, sizeof(pat), "/tmp/cw-check-report-%d-%%%%p.json",
	    (int)getpid());
	snprintf(path, sizeof(path), "/tmp/cw-check-report-%d-%%p.json",
	    (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	use_report(pat);
	ck_assert(!report_write_env(&meta));
	snprintf(alt, sizeof(alt), "%s", alt_of(path, getpid()));
	ck_assert_str_ne(alt, "");
	ck_assert_int_eq(pid_in(alt), getpid());
	unlink(alt);
	unlink(path);
	reset_all();
}
END_TEST

/* A %p path that exists already -- another user's empty file planted in a
 * shared directory (0666: they would read what we write), or the report
 * of an earlier process that had this pid -- is never written: the
 * report goes to a new file of its own, 0600. */
START_TEST(test_report_env_precreated)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	const char *dir = fresh_dir();
	char pat[PATH_MAX], path[PATH_MAX], alt[PATH_MAX], buf[64];
	struct stat st;
	int fd;

	reset_all();
	ck_assert_int_eq(chmod(dir, 01777), 0);
	snprintf(pat, sizeof(pat), "%s/cw.%%p.json", dir);
	snprintf(path, sizeof(path), "%s/cw.%d.json", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0666), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
	close(fd);
	add(KIND_DEVICE, NS_ADDR, 0x1000, 4096, 0, 0, 0, "cuMemAlloc_v2");
	use_report(pat);
	ck_assert(!report_write_env(&meta));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	snprintf(alt, sizeof(alt), "%s", alt_of(path, getpid()));
	ck_assert_str_ne(alt, "");
	ck_assert_int_eq(pid_in(alt), getpid());
	ck_assert_int_eq(stat(alt, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());

	/* The earlier process with this pid: its report is kept whole. */
	unlink(alt);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{\"earlier\": 1}", 14), 14);
	close(fd);
	report_paths_reset(); /* a new process: nothing written before */
	ck_assert(!report_write_env(&meta));
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "{\"earlier\": 1}");
	ck_assert_int_eq(pid_in(alt_of(path, getpid())), getpid());
	ck_assert_int_eq(dot_files(dir), 0);
	unlink(alt_of(path, getpid()));
	unlink(path);
	rmdir(dir);
	reset_all();
}
END_TEST

/* Whole or not at all: a write that fails half way (here the file size
 * limit, as a full disk would) leaves no report and no temporary file;
 * the previous report of this process stays as it was. */
START_TEST(test_report_env_whole)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	const char *dir = fresh_dir();
	char path[PATH_MAX];
	pid_t pid;
	int st;

	reset_all();
	/* 200 sizes: 200 groups, a report of some 40 KB. */
	for (int i = 0; i < 200; i++)
		add(KIND_DEVICE, NS_ADDR, 0x100000 + (uintptr_t)i * 8192,
		    4096 + (size_t)i, 0, 0, 0, "cuMemAlloc_v2");
	snprintf(path, sizeof(path), "%s/r.json", dir);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };

		signal(SIGXFSZ, SIG_IGN);
		use_report(path);
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(2);
		_exit(report_write_env(&meta) && errno == EFBIG ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x",
	    st);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(dot_files(dir), 0);

	/* Its own earlier report: kept whole when the new one fails.  (In
	 * a child: check's own messages need the file size limit.) */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };

		signal(SIGXFSZ, SIG_IGN);
		use_report(path);
		if (report_write_env(&meta))
			_exit(2);
		add(KIND_DEVICE, NS_ADDR, 0x90000000, 4096, 0, 0, 0,
		    "cuMemAlloc_v2");
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		_exit(report_write_env(&meta) && errno == EFBIG ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x",
	    st);
	{
		json_error_t err;
		json_t *doc = json_load_file(path, 0, &err);

		ck_assert_msg(doc != NULL, "%s", err.text);
		ck_assert_int_eq(int_of(member(doc, "summary"),
		    "leaked_allocations"), 200);
		json_decref(doc);
	}
	ck_assert_int_eq(dot_files(dir), 0);
	unlink(path);
	rmdir(dir);
	reset_all();
}
END_TEST

/* "-", /dev/stderr and /dev/fd/2 (cuwarden(7)'s own example) are the
 * process's standard error: the report is there, no file is made (not
 * "-", not /dev/stderr.PID). */
START_TEST(test_report_env_stderr)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	static const char *const names[] = { "-", "/dev/stderr", "/dev/fd/2" };
	const char *dir = fresh_dir();
	char err[PATH_MAX], buf[16384], devpid[64];
	int fd;

	reset_all();
	add(KIND_DEVICE, NS_ADDR, 0x1000, 4096, 0, 0, 0, "cuMemAlloc_v2");
	setenv("CUWARDEN_REPORT_FORMAT", "text", 1);
	ck_assert_int_eq(chdir(dir), 0);
	snprintf(err, sizeof(err), "%s/stderr", dir);
	snprintf(devpid, sizeof(devpid), "/dev/stderr.%d", (int)getpid());
	for (size_t i = 0; i < CW_ARRAY_SIZE(names); i++) {
		fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_ge(dup2(fd, 2), 0);
		close(fd);
		use_report(names[i]);
		ck_assert(!report_write_env(&meta));
		unit_read_text(err, buf, sizeof(buf));
		ck_assert_msg(strstr(buf, "LEAK SUMMARY: 4,096 bytes leaked in "
		    "1 allocations") != NULL, "%s: %s", names[i], buf);
		ck_assert_int_ne(access("-", F_OK), 0);
		ck_assert_int_ne(access(devpid, F_OK), 0);
		/* Twice: still fd 2, no "exists already" rule. */
		ck_assert(!report_write_env(&meta));
		ck_assert_int_ne(access(devpid, F_OK), 0);
	}
	ck_assert_int_eq(chdir("/"), 0);
	unlink(err);
	rmdir(dir);
	reset_all();
}
END_TEST

/* A FIFO (planted at the %p path, or named), a directory, a device other
 * than a terminal: refused at once with an error, never opened blocking,
 * nothing else written. */
START_TEST(test_report_env_not_regular)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	const char *dir = fresh_dir();
	char pat[PATH_MAX], path[PATH_MAX];

	reset_all();
	signal(SIGALRM, SIG_DFL);
	alarm(10); /* a blocking open would wait for a reader for ever */
	snprintf(pat, sizeof(pat), "%s/r.%%p.json", dir);
	snprintf(path, sizeof(path), "%s/r.%d.json", dir, (int)getpid());
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	use_report(pat);
	ck_assert(report_write_env(&meta));
	ck_assert_int_eq(errno, EINVAL);
	use_report(dir);
	ck_assert(report_write_env(&meta));
	ck_assert_int_eq(errno, EISDIR);
	use_report("/dev/null");
	ck_assert(report_write_env(&meta));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(alt_of(path, getpid()), "");
	ck_assert_int_eq(dot_files(dir), 0);
	unlink(path);
	rmdir(dir);
	reset_all();
}
END_TEST

/* A relative CUWARDEN_REPORT names a file of the directory the process
 * was in at report_paths_init (the shim's load), not at exit. */
START_TEST(test_report_env_relative)
{
	static const report_meta_t meta = { "audit", "exit", 0, NULL };
	const char *dir = fresh_dir();
	char a[PATH_MAX], b[PATH_MAX];

	reset_all();
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	ck_assert_int_eq(mkdir(a, 0700), 0);
	ck_assert_int_eq(mkdir(b, 0700), 0);
	ck_assert_int_eq(chdir(a), 0);
	use_report("rel.%p.json");
	report_paths_init();
	report_paths_init(); /* idempotent */
	ck_assert_int_eq(chdir(b), 0);
	ck_assert(!report_write_env(&meta));
	ck_assert_int_eq(chdir("/"), 0);
	snprintf(a, sizeof(a), "%s/a/rel.%d.json", dir, (int)getpid());
	snprintf(b, sizeof(b), "%s/b/rel.%d.json", dir, (int)getpid());
	ck_assert_int_ne(access(b, F_OK), 0);
	ck_assert_int_eq(pid_in(a), getpid());
	unlink(a);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
	reset_all();
}
END_TEST

static int quiet_lines;

static void
count_lines(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	quiet_lines++;
}

/* report_paths_init runs at the shim's load in every process, CUDA or
 * not: it says nothing about malformed options (the first real use of the
 * options does). */
START_TEST(test_report_paths_init_quiet)
{
	reset_all();
	setenv("CUWARDEN_MODE", "bogus", 1);
	setenv("CUWARDEN_LOG_FILE", "/tmp/cw-check-report-quiet.log", 1);
	use_report("/tmp/cw-check-report-quiet.json");
	log_reset();
	quiet_lines = 0;
	log_set_output(count_lines, NULL);
	report_paths_init();
	ck_assert_int_eq(quiet_lines, 0);
	ck_assert_int_eq((int)options_get(OPT_MODE), OPT_MODE_AUDIT);
	ck_assert_int_eq(quiet_lines, 1); /* the warning, now */
	log_set_output(NULL, NULL);
	unsetenv("CUWARDEN_MODE");
	unsetenv("CUWARDEN_LOG_FILE");
	log_reset();
	reset_all();
}
END_TEST

/* A relative path when the current directory is gone: kept as it is,
 * with one warning (not one per report). */
START_TEST(test_report_paths_no_cwd)
{
	const char *dir = fresh_dir();

	reset_all();
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	use_report("rel.json");
	log_reset();
	quiet_lines = 0;
	log_set_output(count_lines, NULL);
	report_paths_init();
	ck_assert_int_eq(quiet_lines, 1);
	report_paths_init();
	ck_assert(report_write_env(NULL)); /* the directory is gone */
	ck_assert_int_eq(quiet_lines, 2);  /* one more: the error */
	log_set_output(NULL, NULL);
	ck_assert_int_eq(chdir("/"), 0);
	reset_all();
}
END_TEST

/* Sums of leaked bytes past 2^64 saturate: the text says the sum
 * overflowed; the JSON (whose readers take signed 64-bit integers) has
 * INT64_MAX and "bytes_saturated": true, and parses. */
START_TEST(test_report_sum_saturates)
{
	const uint64_t big = (uint64_t)1 << 62;
	json_t *doc, *o, *l;
	const char *text;

	reset_all();
	/* Four handles of 2^62 bytes: one group of 2^64 bytes. */
	for (int i = 0; i < 4; i++)
		add(KIND_VMM, NS_VMM, 0x100 + (uintptr_t)i, (size_t)big, 0, 0,
		    0, "cuMemCreate");
	add(KIND_DEVICE, NS_ADDR, 0x1000, 4096, 0, 0, 0, "cuMemAlloc_v2");
	doc = render_json(NULL);
	o = member(doc, "summary");
	ck_assert_int_eq(int_of(o, "leaked_bytes"), INT64_MAX);
	ck_assert(json_is_true(member(o, "bytes_saturated")));
	ck_assert_int_eq(int_of(o, "leaked_allocations"), 5);
	l = json_array_get(member(doc, "leaks"), 0);
	ck_assert_str_eq(str_of(l, "kind"), "vmm");
	ck_assert_int_eq(int_of(l, "bytes"), INT64_MAX);
	ck_assert(json_is_true(member(l, "bytes_saturated")));
	ck_assert_int_eq(int_of(l, "size"), (long long)big);
	l = json_array_get(member(doc, "leaks"), 1);
	ck_assert_int_eq(int_of(l, "bytes"), 4096);
	ck_assert_ptr_null(json_object_get(l, "bytes_saturated"));
	json_decref(doc);

	text = render(CW_FORMAT_TEXT, NULL);
	ck_assert_ptr_nonnull(strstr(text, "18,446,744,073,709,551,615 bytes "
	    "(the sum overflowed) in 4 vmm allocations of "
	    "4,611,686,018,427,387,904 bytes"));
	ck_assert_ptr_nonnull(strstr(text, "the sum overflowed: at least "
	    "18,446,744,073,709,551,615 bytes"));
	ck_assert_ptr_nonnull(strstr(text, "LEAK SUMMARY: "
	    "18,446,744,073,709,551,615 bytes leaked in 5 allocations\n"));
	reset_all();
}
END_TEST

/* Names with control characters (here an entry point's; module paths
 * and arguments go through the same writer): escaped in the text report,
 * so no name starts a line of its own or reaches a terminal as an escape
 * sequence; a backslash is doubled (owners are printable already, but
 * may hold one); the JSON keeps them (escaped JSON). */
START_TEST(test_report_text_escapes)
{
	static const char api[] = "cuMemAlloc\r\n==1== LEAK SUMMARY: 0 "
	    "bytes\x1b[2J\xc2\x9b\x7f\xff";
	owner_id_t own;
	const char *text, *p;
	json_t *doc;

	reset_all();
	own = owner_intern("C:\\owner");
	ck_assert_uint_ne(own, 0);
	add(KIND_DEVICE, NS_ADDR, 0x1000, 4096, 0, own, 0, api);
	text = render(CW_FORMAT_TEXT, NULL);
	ck_assert_ptr_null(strchr(text, '\x1b'));
	ck_assert_ptr_null(strchr(text, '\r'));
	ck_assert_ptr_null(strchr(text, '\x7f'));
	ck_assert_ptr_null(strstr(text, "\xc2\x9b"));
	ck_assert_ptr_null(strchr(text, '\xff'));
	ck_assert_msg(strstr(text, "(cuMemAlloc\\r\\n==1== LEAK SUMMARY: 0 "
	    "bytes\\x1b[2J\\xc2\\x9b\\x7f\\xff, owner C:\\\\owner, first at "
	    "0x1000)\n") != NULL, "%s", text);
	/* Only the report's own lines start lines. */
	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL)
		ck_assert_msg(strncmp(p, "==1==", 5) != 0,
		    "a name made a line: %s", p);
	doc = render_json(NULL);
	ck_assert_str_eq(str_of(json_array_get(member(doc, "leaks"), 0),
	    "api"), "cuMemAlloc\r\n==1== LEAK SUMMARY: 0 bytes\x1b[2J\xc2\x9b"
	    "\x7f\xef\xbf\xbd");
	json_decref(doc);
	reset_all();
}
END_TEST

/* exit.status: the status or the signal when known, null when not (-1 is
 * never written as one). */
START_TEST(test_report_exit_status)
{
	static const report_meta_t st0 = { "audit", "exit", 0, NULL };
	static const report_meta_t unknown = { "audit", "exit", -1, NULL };
	static const report_meta_t sig = { "audit", "signal", 15, NULL };
	json_t *doc;

	reset_all();
	doc = render_json(&st0);
	ck_assert_int_eq(int_of(member(doc, "exit"), "status"), 0);
	json_decref(doc);
	doc = render_json(&unknown);
	ck_assert(json_is_null(member(member(doc, "exit"), "status")));
	json_decref(doc);
	doc = render_json(&sig);
	ck_assert_str_eq(str_of(member(doc, "exit"), "how"), "signal");
	ck_assert_int_eq(int_of(member(doc, "exit"), "status"), 15);
	json_decref(doc);
	ck_assert_ptr_null(strstr(render(CW_FORMAT_TEXT, &unknown),
	    "status"));
	ck_assert_ptr_nonnull(strstr(render(CW_FORMAT_TEXT, &st0),
	    ", exit status 0\n"));
	reset_all();
}
END_TEST

/* Reports written by 4 threads at once while 2 others allocate and free:
 * every document parses and its summary adds up. */
static volatile int churn_stop;

static void *
churn(void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	for (int i = 0; !churn_stop; i++) {
		reg_handle_t h = add(KIND_DEVICE, NS_ADDR,
		    base + (uintptr_t)(i % 64) * 4096, 4096, 0, 0, 0,
		    "cuMemAlloc_v2");

		(void)registry_remove(h, NULL, NULL, 0, NULL);
	}
	return NULL;
}

static void *
writer(void *arg)
{
	char path[] = "/tmp/cw-check-report-t-XXXXXX";
	int fd = mkstemp(path), *ok = arg;

	*ok = 0;
	if (fd < 0)
		return NULL;
	unlink(path);
	for (int r = 0; r < 10; r++) {
		json_error_t err;
		json_t *doc, *sum;

		if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0 ||
		    report_write(fd, CW_FORMAT_JSON, NULL) ||
		    lseek(fd, 0, SEEK_SET) != 0)
			return NULL;
		doc = json_loadfd(fd, 0, &err);
		if (doc == NULL) {
			fprintf(stderr, "bad JSON: %s\n", err.text);
			return NULL;
		}
		sum = json_object_get(doc, "summary");
		/* 100 fixed leaks, plus what the walk catches of the churn
		 * (registry_foreach is not a snapshot: a record moving to
		 * another slot during the walk can be seen twice). */
		if (json_integer_value(json_object_get(sum,
		    "leaked_allocations")) < 100 ||
		    json_integer_value(json_object_get(sum,
		    "leaked_allocations")) > 150) {
			fprintf(stderr, "leaked_allocations %lld\n",
			    (long long)json_integer_value(json_object_get(sum,
			    "leaked_allocations")));
			json_decref(doc);
			return NULL;
		}
		json_decref(doc);
	}
	close(fd);
	*ok = 1;
	return NULL;
}

START_TEST(test_report_concurrent)
{
	pthread_t c[2], w[4];
	int ok[4];

	reset_all();
	for (int i = 0; i < 100; i++)
		add(KIND_MANAGED, NS_ADDR, 0x200000000ULL + (uintptr_t)i * MIB,
		    MIB, 0, 0, 0, "cuMemAllocManaged");
	churn_stop = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&c[i], NULL, churn,
		    (void *)(uintptr_t)(0x300000000ULL + (uintptr_t)i *
		    0x10000000));
	for (int i = 0; i < 4; i++)
		pthread_create(&w[i], NULL, writer, &ok[i]);
	for (int i = 0; i < 4; i++)
		pthread_join(w[i], NULL);
	churn_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(ok[i], "writer %d failed", i);
	reset_all();
}
END_TEST

static Suite *
make_report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_report_json);
	tcase_add_test(tc, test_report_utc);
	tcase_add_test(tc, test_report_empty);
	tcase_add_test(tc, test_report_text);
	tcase_add_test(tc, test_report_stacks_dropped);
	tcase_add_test(tc, test_report_grouping);
	tcase_add_test(tc, test_report_strings);
	tcase_add_test(tc, test_report_bad_fd);
	tcase_add_test(tc, test_report_expand);
	tcase_add_test(tc, test_report_env_files);
	tcase_add_test(tc, test_report_env_foreign);
	tcase_add_test(tc, test_report_env_precreated);
	tcase_add_test(tc, test_report_env_whole);
	tcase_add_test(tc, test_report_env_stderr);
	tcase_add_test(tc, test_report_env_not_regular);
	tcase_add_test(tc, test_report_env_relative);
	tcase_add_test(tc, test_report_paths_init_quiet);
	tcase_add_test(tc, test_report_paths_no_cwd);
	tcase_add_test(tc, test_report_sum_saturates);
	tcase_add_test(tc, test_report_text_escapes);
	tcase_add_test(tc, test_report_exit_status);
	tcase_add_test(tc, test_report_concurrent);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_report_suite)
