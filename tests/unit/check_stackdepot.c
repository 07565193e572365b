/*
 * check_stackdepot.c -- the stack depot: capture depth, dedup, module
 * resolution (test binary, libc, a dlclose'd module), build-ids,
 * stack_first_module_outside, no malloc during a capture, concurrent
 * captures.
 *
 * This program interposes malloc, calloc, realloc and free (forwarding to
 * glibc's __libc_* functions) to count calls made while stack_capture
 * runs.  libunwind may allocate on its first use in a thread (its
 * per-thread frame cache), so the test warms up with one capture first.
 */
#include "preamble.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"
#include "stackdepot.h"
#include "unit.h"

/* ------------------------------------------------------ malloc counting */

#if defined(__SANITIZE_ADDRESS__)
#define COUNT_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_MALLOC 0
#endif
#endif
#ifndef COUNT_MALLOC
#define COUNT_MALLOC 1
#endif

static CW_TLS volatile int counting;
static CW_TLS unsigned long mallocs;

#if COUNT_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);

void *
malloc(size_t n)
{
	if (counting)
		mallocs++;
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t m)
{
	if (counting)
		mallocs++;
	return __libc_calloc(n, m);
}

void *
realloc(void *p, size_t n)
{
	if (counting)
		mallocs++;
	return __libc_realloc(p, n);
}

void
free(void *p)
{
	if (counting && p != NULL)
		mallocs++;
	__libc_free(p);
}
#endif

/* ------------------------------------------------------------- helpers */

static void
set_depth(const char *v)
{
	if (v != NULL)
		setenv("CUWARDEN_STACK_DEPTH", v, 1);
	else
		unsetenv("CUWARDEN_STACK_DEPTH");
	options_reset();
}

static volatile int sink;

__attribute__((noinline)) static stack_id_t
site_a(void)
{
	stack_id_t id = stack_capture(0);

	sink++;
	return id;
}

__attribute__((noinline)) static stack_id_t
site_b(void)
{
	stack_id_t id = stack_capture(0);

	sink++;
	return id;
}

__attribute__((noinline)) static stack_id_t
recurse(int n)
{
	stack_id_t id = n == 0 ? stack_capture(0) : recurse(n - 1);

	sink++;
	return id;
}

/* Calls fn n times from one call site (n is opaque to the compiler, so
 * the loop is neither unrolled nor peeled into several call sites). */
static volatile int opaque_one = 1;

__attribute__((noinline)) static void
repeat(stack_id_t (*fn)(void), stack_id_t *out, int n)
{
	n *= opaque_one;
	for (int i = 0; i < n; i++)
		out[i] = fn();
}

__attribute__((noinline)) static stack_id_t
recurse_depth(int n, unsigned depth)
{
	stack_id_t id = n == 0 ? stack_capture_depth(0, depth) :
	    recurse_depth(n - 1, depth);

	sink++;
	return id;
}

static const char *
exe_path(void)
{
	static char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool
is_hex(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* --------------------------------------------------------------- tests */

START_TEST(test_stackdepot_depth)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	stack_id_t id;

	set_depth(NULL);
	id = recurse(40);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(stack_get(id, fr, STACK_MAX_DEPTH), 24);

	set_depth("8");
	id = recurse(40);
	ck_assert_uint_eq(stack_get(id, fr, STACK_MAX_DEPTH), 8);
	/* max bounds the copy */
	ck_assert_uint_eq(stack_get(id, fr, 3), 3);

	set_depth("64");
	id = recurse(80);
	ck_assert_uint_eq(stack_get(id, fr, STACK_MAX_DEPTH), 64);

	/* stack_capture_depth: the smaller of its depth and the option. */
	set_depth(NULL);
	ck_assert_uint_eq(stack_get(recurse_depth(40, 5), fr,
	    STACK_MAX_DEPTH), 5);
	ck_assert_uint_eq(stack_get(recurse_depth(40, 60), fr,
	    STACK_MAX_DEPTH), 24);
	ck_assert_uint_eq(recurse_depth(40, 0), 0);
	{
		uintptr_t ips[STACK_MAX_DEPTH];

		/* Frame 0 is recurse_depth's, as with stack_capture. */
		id = recurse_depth(0, 3);
		ck_assert_uint_eq(stack_get_ips(id, ips, STACK_MAX_DEPTH), 3);
		ck_assert_uint_gt(ips[0], (uintptr_t)&recurse_depth);
		ck_assert_uint_lt(ips[0], (uintptr_t)&recurse_depth + 256);
	}

	set_depth("0");
	ck_assert_uint_eq(recurse(3), 0);
	set_depth(NULL);
	ck_assert_uint_eq(stack_get(0, fr, STACK_MAX_DEPTH), 0);
	ck_assert_uint_eq(stack_get(0x7fffffff, fr, STACK_MAX_DEPTH), 0);
}
END_TEST

/* stack_capture_outside drops the innermost frames of the object it is
 * linked into (here the test program, which holds lib/ and this test) and
 * keeps the rest: from the frames of libc that called main on (the
 * outermost, _start, is the program's again). */
START_TEST(test_stackdepot_capture_outside)
{
	uintptr_t ips[STACK_MAX_DEPTH];
	Dl_info me, fr;
	stack_id_t id;
	size_t n;

	set_depth(NULL);
	ck_assert(dladdr((void *)&stack_capture_outside, &me) != 0);
	id = stack_capture_outside();
	ck_assert_uint_ne(id, 0);
	n = stack_get_ips(id, ips, STACK_MAX_DEPTH);
	ck_assert_uint_gt(n, 0);
	ck_assert(dladdr((void *)ips[0], &fr) != 0);
	ck_assert_ptr_ne(fr.dli_fbase, me.dli_fbase);
	/* stack_capture keeps the test's own frames. */
	n = stack_get_ips(stack_capture(0), ips, STACK_MAX_DEPTH);
	ck_assert_uint_gt(n, 0);
	ck_assert(dladdr((void *)ips[0], &fr) != 0);
	ck_assert_ptr_eq(fr.dli_fbase, me.dli_fbase);
	set_depth("0");
	ck_assert_uint_eq(stack_capture_outside(), 0);
	set_depth(NULL);
}
END_TEST

START_TEST(test_stackdepot_dedup)
{
	stack_id_t a[4], b;
	size_t before;

	stack_id_t bb[3];

	set_depth(NULL);
	repeat(site_a, a, 4);
	ck_assert_uint_ne(a[0], 0);
	for (int i = 1; i < 4; i++)
		ck_assert_uint_eq(a[i], a[0]);
	before = stack_count();
	repeat(site_b, bb, 3);
	b = bb[0];
	ck_assert_uint_ne(b, 0);
	ck_assert_uint_ne(b, a[0]);
	ck_assert_uint_eq(bb[1], b);
	ck_assert_uint_eq(bb[2], b);
	ck_assert_uint_eq(stack_count(), before + 1);
	ck_assert_uint_gt(stack_bytes(), 0);
}
END_TEST

START_TEST(test_stackdepot_intern)
{
	uintptr_t ips[5] = { 0x1000, 0x2000, 0x3000, 0x4000, 0x5000 };
	uintptr_t out[8];
	stack_frame_t fr[8];
	stack_id_t id, id2;

	ck_assert_uint_eq(stack_intern(ips, 0), 0);
	id = stack_intern(ips, 5);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(stack_intern(ips, 5), id);
	id2 = stack_intern(ips, 4);
	/* More stacks than buckets (65536): chains of several, each stack
	 * still found, the depot still valid. */
	for (uintptr_t k = 0; k < 100000; k++) {
		uintptr_t more[2] = { 0x100000 + k, 0xa000 };

		ck_assert_uint_ne(stack_intern(more, 2), 0);
	}
	for (uintptr_t k = 0; k < 100000; k += 997) {
		uintptr_t more[2] = { 0x100000 + k, 0xa000 };
		size_t before = stack_count();

		(void)stack_intern(more, 2);
		ck_assert_uint_eq(stack_count(), before);
	}
	stack_validate();
	ck_assert_uint_ne(id2, id);
	ck_assert_uint_eq(stack_get_ips(id, out, 8), 5);
	ck_assert_mem_eq(out, ips, sizeof(ips));
	/* Addresses in no module: module unknown, offset = the address. */
	ck_assert_uint_eq(stack_get(id, fr, 8), 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(fr[i].module, UINT32_MAX);
		ck_assert_uint_eq(fr[i].offset, ips[i]);
	}
}
END_TEST

/* Issue 7: a program that makes ever new stacks fills the depot up to
 * its byte limit, then new stacks get id 0 and are counted; the stacks
 * kept stay valid and the depot's memory stops growing. */
START_TEST(test_stackdepot_bounded)
{
	const size_t limit = (size_t)1 << 20;
	uintptr_t ips[STACK_MAX_DEPTH], out[STACK_MAX_DEPTH];
	stack_id_t first = 0, last = 0;
	size_t stored = 0, refused = 0;

	stack_set_limit(limit);
	size_t bytes0 = stack_bytes();
	for (uintptr_t k = 0; k < 4000; k++) {
		for (size_t i = 0; i < STACK_MAX_DEPTH; i++)
			ips[i] = 0x7000000 + k * 0x1000 + i * 8;
		stack_id_t id = stack_intern(ips, STACK_MAX_DEPTH);
		if (id == 0) {
			refused++;
			continue;
		}
		ck_assert_uint_eq(refused, 0); /* none stored once full */
		if (first == 0)
			first = id;
		last = id;
		stored++;
	}
	/* A record of 64 frames takes 24 + 64 * 12 bytes. */
	ck_assert_uint_eq(stored, limit / 792);
	ck_assert_uint_eq(refused, 4000 - stored);
	ck_assert_uint_eq(stack_dropped(), refused);
	ck_assert_uint_eq(stack_count(), stored);
	/* Records, plus at most one chunk being filled, their index, and
	 * -- when this test made the depot's first record, after which
	 * stack_bytes() counts them -- the bucket array (2^16 x 4 bytes) and
	 * the module table (under ASan a few more modules: 64 KiB allowed).
	 * Without the bound, the 4000 records alone would take 3.1 MB. */
	ck_assert_uint_le(stack_bytes() - bytes0,
	    limit + ((size_t)1 << 20) + stored * sizeof(void *) +
	    ((size_t)1 << 16) * sizeof(uint32_t) + ((size_t)64 << 10));
	/* A stack stored before is still found (no new record) and whole. */
	for (size_t i = 0; i < STACK_MAX_DEPTH; i++)
		ips[i] = 0x7000000 + i * 8;
	ck_assert_uint_eq(stack_intern(ips, STACK_MAX_DEPTH), first);
	ck_assert_uint_eq(stack_get_ips(first, out, STACK_MAX_DEPTH),
	    STACK_MAX_DEPTH);
	ck_assert_mem_eq(out, ips, sizeof(ips));
	ck_assert_uint_eq(stack_get_ips(last, out, STACK_MAX_DEPTH),
	    STACK_MAX_DEPTH);
	ck_assert_uint_eq(stack_dropped(), refused);
	/* A short stack may still fit in what is left, never more. */
	uintptr_t two[2] = { 0x6000000, 0x6000008 };
	stack_id_t s2 = stack_intern(two, 2);
	ck_assert(s2 == 0 || stack_count() == stored + 1);
	stack_validate();
	/* The limit is never raised above the documented one. */
	stack_set_limit(SIZE_MAX);
	ck_assert_uint_eq(STACK_DEPOT_MAX_BYTES, (size_t)256 << 20);
}
END_TEST

START_TEST(test_stackdepot_modules)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	uintptr_t ips[STACK_MAX_DEPTH];
	stack_module_t m;
	stack_id_t id;
	size_t n;
	bool saw_libc = false;

	set_depth("64");
	id = site_a();
	n = stack_get(id, fr, STACK_MAX_DEPTH);
	ck_assert_uint_eq(stack_get_ips(id, ips, STACK_MAX_DEPTH), n);
	ck_assert_uint_ge(n, 3);

	/* Frame 0 is the return address in site_a, in this program. */
	ck_assert_uint_gt(ips[0], (uintptr_t)&site_a);
	ck_assert_uint_lt(ips[0], (uintptr_t)&site_a + 256);
	ck_assert_uint_ne(fr[0].module, UINT32_MAX);
	ck_assert(!stack_module_get(fr[0].module, &m));
	ck_assert_str_eq(m.path, exe_path());
	ck_assert_uint_eq(fr[0].offset, ips[0] - m.base);
	ck_assert_uint_eq(fr[0].module, stack_self_module());

	for (size_t i = 0; i < n; i++) {
		if (fr[i].module == UINT32_MAX)
			continue;
		ck_assert(!stack_module_get(fr[i].module, &m));
		ck_assert_uint_eq(fr[i].offset, ips[i] - m.base);
		if (strstr(m.path, "/libc.so") != NULL) {
			saw_libc = true;
			ck_assert_msg(is_hex(m.build_id) &&
			    strlen(m.build_id) >= 32, "libc build-id '%s'",
			    m.build_id);
		}
	}
	ck_assert_msg(saw_libc, "no frame resolved to libc");
	ck_assert_uint_ge(stack_module_count(), 2);
	ck_assert(stack_module_get((uint32_t)stack_module_count(), &m));
	set_depth(NULL);
}
END_TEST

typedef stack_id_t (*capture_fn)(unsigned);
typedef stack_id_t (*via_fn)(capture_fn);

static void *
open_helper(void)
{
	const char *top = getenv("top_builddir");
	char path[PATH_MAX];
	void *h;

	snprintf(path, sizeof(path), "%s/tests/unit/.libs/libcwstk.so",
	    top != NULL ? top : ".");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
	return h;
}

START_TEST(test_stackdepot_first_outside)
{
	void *h = open_helper();
	via_fn via = (via_fn)(uintptr_t)dlsym(h, "cwstk_capture");
	stack_frame_t fr[STACK_MAX_DEPTH];
	stack_module_t m;
	stack_id_t id;
	uint32_t out, out2;
	const char *pat_stk[] = { "libcwstk*" };
	const char *pat_all[] = { "libcwstk*", "libc.so*", "ld-linux*" };
	const char *pat_none[] = { "nomatch*" };

	ck_assert(via != NULL);
	set_depth("64");
	id = via(stack_capture);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_gt(stack_get(id, fr, STACK_MAX_DEPTH), 3);

	/* No patterns: the helper (frames of this program are cuwarden's). */
	out = stack_first_module_outside(id, NULL, 0);
	ck_assert_uint_ne(out, UINT32_MAX);
	ck_assert(!stack_module_get(out, &m));
	ck_assert_ptr_nonnull(strstr(m.path, "libcwstk.so"));
	ck_assert(is_hex(m.build_id));
	ck_assert_uint_eq(stack_first_module_outside(id, pat_none, 1), out);

	/* Skipping the helper: this program is ours, so libc is next. */
	out2 = stack_first_module_outside(id, pat_stk, 1);
	ck_assert_uint_ne(out2, UINT32_MAX);
	ck_assert(!stack_module_get(out2, &m));
	ck_assert_ptr_nonnull(strstr(m.path, "libc.so"));
	/* The cache answers per pattern set. */
	ck_assert_uint_eq(stack_first_module_outside(id, NULL, 0), out);
	ck_assert_uint_eq(stack_first_module_outside(id, pat_stk, 1), out2);
	ck_assert_uint_eq(stack_first_module_outside(id, pat_all, 3),
	    UINT32_MAX);
	ck_assert_uint_eq(stack_first_module_outside(0, NULL, 0), UINT32_MAX);
	dlclose(h);
	set_depth(NULL);
}
END_TEST

START_TEST(test_stackdepot_dlclose)
{
	void *h = open_helper();
	via_fn via = (via_fn)(uintptr_t)dlsym(h, "cwstk_capture");
	stack_frame_t fr[STACK_MAX_DEPTH];
	stack_module_t m;
	char path[PATH_MAX], bid[256];
	stack_id_t id;
	size_t n;
	uint32_t mod;

	set_depth(NULL);
	id = via(stack_capture);
	n = stack_get(id, fr, STACK_MAX_DEPTH);
	ck_assert_uint_ge(n, 2);
	/* Frame 0 is in the helper, which called stack_capture. */
	mod = fr[0].module;
	ck_assert(!stack_module_get(mod, &m));
	ck_assert_ptr_nonnull(strstr(m.path, "libcwstk.so"));
	snprintf(path, sizeof(path), "%s", m.path);
	snprintf(bid, sizeof(bid), "%s", m.build_id);
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert_ptr_null(dlopen("libcwstk.so", RTLD_NOLOAD));

	/* Everything still there after the module is gone. */
	ck_assert_uint_eq(stack_get(id, fr, STACK_MAX_DEPTH), n);
	ck_assert_uint_eq(fr[0].module, mod);
	ck_assert(!stack_module_get(mod, &m));
	ck_assert_str_eq(m.path, path);
	ck_assert_str_eq(m.build_id, bid);
	ck_assert_uint_eq(stack_first_module_outside(id, NULL, 0), mod);
	stack_validate();
	/* And a new stack after the dlclose resolves normally. */
	id = site_b();
	ck_assert_uint_eq(stack_get(id, fr, STACK_MAX_DEPTH) > 0, 1);
	ck_assert_uint_eq(fr[0].module, stack_self_module());
}
END_TEST

START_TEST(test_stackdepot_no_malloc)
{
	stack_id_t ids[3];
	unsigned long n;

	if (!COUNT_MALLOC)
		return; /* sanitizer build: malloc belongs to ASan */
	set_depth(NULL);
	options_init();
	/* Warm-up: libunwind's first use in this thread may allocate. */
	(void)site_a();
	(void)recurse(5);

	mallocs = 0;
	counting = 1;
	for (int i = 0; i < 100; i++) {
		ids[0] = site_a();        /* stored already */
		ids[1] = recurse(i % 7);  /* new stacks the first time */
		ids[2] = site_b();
	}
	counting = 0;
	n = mallocs;
	ck_assert_uint_ne(ids[0], 0);
	ck_assert_uint_ne(ids[1], 0);
	ck_assert_uint_ne(ids[2], 0);
	ck_assert_msg(n == 0, "%lu malloc/free calls during captures", n);

	/* The counter does count (the test can fail). */
	{
		void *volatile p;

		counting = 1;
		p = malloc(16);
		free(p);
		counting = 0;
	}
	ck_assert_uint_eq(mallocs, 2);
}
END_TEST

#define NTHREADS 8

#define NCAPT 1000

static void *
thread_main(void *arg)
{
	stack_id_t *out = arg;
	static CW_TLS stack_id_t a[NCAPT], b[NCAPT];

	repeat(site_a, a, NCAPT);
	repeat(site_b, b, NCAPT);
	out[0] = a[0];
	out[1] = b[0];
	for (int i = 1; i < NCAPT; i++)
		if (a[i] != a[0] || b[i] != b[0])
			out[0] = out[1] = 0;
	return NULL;
}

START_TEST(test_stackdepot_threads)
{
	pthread_t t[NTHREADS];
	stack_id_t ids[NTHREADS][2];
	size_t before;

	set_depth(NULL);
	before = stack_count();
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, thread_main,
		    ids[i]), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_uint_ne(ids[i][0], 0);
		ck_assert_uint_ne(ids[i][1], 0);
		ck_assert_uint_eq(ids[i][0], ids[0][0]);
		ck_assert_uint_eq(ids[i][1], ids[0][1]);
	}
	ck_assert_uint_ne(ids[0][0], ids[0][1]);
	/* Two stacks in all, however the eight threads raced. */
	ck_assert_uint_eq(stack_count(), before + 2);
	stack_validate();
}
END_TEST

START_TEST(test_stackdepot_fork)
{
	stack_id_t a;
	uintptr_t ips[STACK_MAX_DEPTH];
	size_t n;
	pid_t pid;
	int st;

	a = site_a();
	n = stack_get_ips(a, ips, STACK_MAX_DEPTH);
	stack_prefork();
	pid = fork();
	if (pid == 0) {
		/* The child finds the parent's stacks and stores new ones. */
		stack_postfork_child();
		_exit(stack_intern(ips, n) == a && site_b() != 0 &&
		    site_b() != a ? 0 : 1);
	}
	stack_postfork_parent();
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_uint_ne(site_b(), 0);
}
END_TEST

static Suite *
make_stackdepot_suite(void)
{
	Suite *s = suite_create("stackdepot");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_stackdepot_depth);
	tcase_add_test(tc, test_stackdepot_capture_outside);
	tcase_add_test(tc, test_stackdepot_dedup);
	tcase_add_test(tc, test_stackdepot_intern);
	tcase_add_test(tc, test_stackdepot_bounded);
	tcase_add_test(tc, test_stackdepot_modules);
	tcase_add_test(tc, test_stackdepot_first_outside);
	tcase_add_test(tc, test_stackdepot_dlclose);
	tcase_add_test(tc, test_stackdepot_no_malloc);
	tcase_add_test(tc, test_stackdepot_threads);
	tcase_add_test(tc, test_stackdepot_fork);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_stackdepot_suite)
