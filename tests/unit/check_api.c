/*
 * check_api.c -- bad input for every public function, the status strings,
 * cw_last_error, statistics, reports, the output callback, cw_trim and
 * the fork registration.
 */
#include "preamble.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_test.h"
#include "fork.h"
#include "log.h"
#include "lockrank.h"
#include "unit.h"

static void
setup(void)
{
	load_fixture();
	quiet();
}

START_TEST(test_api_strerror)
{
	static const int all[] = { CW_OK, CW_EINVAL, CW_ENOMEM, CW_ECONTRACT,
		CW_EFREED, CW_EBOUNDS, CW_ENOTSUP, CW_ECUDA, CW_ENODEV };
	for (size_t i = 0; i < CW_ARRAY_SIZE(all); i++) {
		const char *s = cw_strerror(all[i]);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_ne(s, "unknown status");
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s, cw_strerror(all[j]));
	}
	ck_assert_str_eq(cw_strerror(CW_EINVAL), "invalid argument");
	ck_assert_str_eq(cw_strerror(-9), "unknown status");
	ck_assert_str_eq(cw_strerror(1), "unknown status");
	ck_assert_str_eq(cw_strerror(INT32_MIN), "unknown status");
}
END_TEST

static void *
fresh_thread(void *arg)
{
	const cw_error_t *e = cw_last_error();

	(void)arg;
	return (void *)(uintptr_t)(e != NULL && e->status == 0 &&
	    e->function == NULL);
}

START_TEST(test_api_last_error_thread_local)
{
	pthread_t t;
	void *ok;

	const cw_error_t *e = cw_last_error();
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->status, 0);
	ck_assert_int_eq(cw_alloc(NULL, 1, CW_DEVICE, 0, 0), CW_EINVAL);
	ck_assert_int_eq(e->status, CW_EINVAL); /* the same record */
	ck_assert_str_eq(e->function, "cw_alloc");
	ck_assert_str_eq(e->message, "buf is NULL");
	pthread_create(&t, NULL, fresh_thread, NULL);
	pthread_join(t, &ok);
	ck_assert_ptr_eq(ok, (void *)1);
	/* A success does not clear it (as errno). */
	setup();
	cw_buf_t b;
	ck_assert_int_eq(cw_alloc(&b, 1, CW_DEVICE, 0, 0), CW_OK);
	ck_assert_int_eq(cw_last_error()->status, CW_EINVAL);
	cw_free(b);
}
END_TEST

/* cw_alloc_async: cw_alloc's argument checks under its own name, and a
 * block freed by cw_free_async on a stream comes back at once to the next
 * stream-ordered allocation of that size on that stream. */
START_TEST(test_api_alloc_async)
{
	cw_buf_t b, b2, b3;

	setup();
	ck_assert_int_eq(cw_alloc_async(NULL, 1, CW_DEVICE, 0, 0, NULL),
	    CW_EINVAL);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc_async");
	ck_assert_int_eq(cw_alloc_async(&b, 0, CW_DEVICE, 0, 0, NULL),
	    CW_EINVAL);
	ck_assert_int_eq(cw_alloc_async(&b, 1, (cw_kind_t)7, 0, 0, NULL),
	    CW_EINVAL);
	ck_assert_int_eq(cw_alloc_async(&b, 1, CW_DEVICE, 0, 12345, NULL),
	    CW_EINVAL);
	for (int k = CW_DEVICE; k <= CW_PINNED; k++) {
		ck_assert_int_eq(cw_alloc_async(&b, 4096, (cw_kind_t)k, 0, 0,
		    NULL), CW_OK);
		void *p = cw_ptr(b);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(cw_free_async(b, NULL), CW_OK);
		ck_assert_int_eq(cw_alloc_async(&b2, 4096, (cw_kind_t)k, 0, 0,
		    NULL), CW_OK);
		ck_assert_ptr_eq(cw_ptr(b2), p);
		ck_assert_uint_ne(b2, b); /* a new handle */
		ck_assert_int_eq(cw_free(b), CW_EFREED);
		ck_assert_int_eq(cw_lookup(p, &b3), CW_OK);
		ck_assert_uint_eq(b3, b2);
		ck_assert_int_eq(cw_free(b2), CW_OK);
	}
}
END_TEST

START_TEST(test_api_random_handles_everywhere)
{
	char x[8] = { 0 };
	cw_buf_t v;
	cw_owner_t o;
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	setup();
	snapshot_t s0 = snap();
	for (int i = 0; i < 1000; i++) {
		h ^= h << 13;
		h ^= h >> 7;
		h ^= h << 17;
		ck_assert_int_eq(cw_retain(h), CW_EINVAL);
		ck_assert_int_eq(cw_release(h), CW_EINVAL);
		ck_assert_int_eq(cw_refcount(h), CW_EINVAL);
		ck_assert_int_eq(cw_owner_of(h, &o), CW_EINVAL);
		ck_assert_int_eq(cw_transfer(h, 0), CW_EINVAL);
		ck_assert_int_eq(cw_view(&v, h, 0, 1), CW_EINVAL);
		ck_assert_ptr_null(cw_ptr(h));
		ck_assert_uint_eq(cw_size(h), 0);
		ck_assert_int_lt(cw_kind(h), 0);
		ck_assert_int_lt(cw_device(h), 0);
		ck_assert_int_eq(cw_upload(h, 0, x, 1), CW_EINVAL);
		ck_assert_int_eq(cw_download(h, 0, x, 1), CW_EINVAL);
		ck_assert_int_eq(cw_copy(h, 0, h, 0, 1), CW_EINVAL);
		ck_assert_int_eq(cw_memset(h, 0, 0, 1), CW_EINVAL);
		ck_assert_int_eq(cw_advise(h, CW_ADVISE_SET_READ_MOSTLY, 0),
		    CW_EINVAL);
		ck_assert_int_eq(cw_prefetch(h, 0, NULL), CW_EINVAL);
		ck_assert_int_eq(cw_last_error()->status, CW_EINVAL);
		ck_assert_uint_eq(cw_last_error()->buf, h);
	}
	/* None of these is a violation (only frees of them are). */
	ck_assert_uint_eq(violation_count(), 0);
	for (int i = 0; i < 10; i++) {
		h ^= h << 13;
		h ^= h >> 7;
		h ^= h << 17;
		ck_assert_int_eq(cw_free(h), CW_EINVAL);
		ck_assert_int_eq(cw_free_async(h, NULL), CW_EINVAL);
	}
	ck_assert_uint_eq(violation_count_type(V_INVALID_FREE), 20);
	ck_assert_unchanged(s0, snap());
}
END_TEST

START_TEST(test_api_none_handle_everywhere)
{
	char x[8] = { 0 };
	cw_buf_t v;
	cw_owner_t o;
	const cw_buf_t h = CW_BUF_NONE;

	setup();
	ck_assert_int_eq(cw_free(h), CW_EINVAL);
	ck_assert_int_eq(cw_free_async(h, NULL), CW_EINVAL);
	ck_assert_int_eq(cw_retain(h), CW_EINVAL);
	ck_assert_int_eq(cw_release(h), CW_EINVAL);
	ck_assert_int_eq(cw_refcount(h), CW_EINVAL);
	ck_assert_int_eq(cw_owner_of(h, &o), CW_EINVAL);
	ck_assert_int_eq(cw_transfer(h, 0), CW_EINVAL);
	ck_assert_int_eq(cw_view(&v, h, 0, 1), CW_EINVAL);
	ck_assert_ptr_null(cw_ptr(h));
	ck_assert_uint_eq(cw_size(h), 0);
	ck_assert_int_eq(cw_kind(h), CW_EINVAL);
	ck_assert_int_eq(cw_device(h), CW_EINVAL);
	ck_assert_int_eq(cw_upload(h, 0, x, 1), CW_EINVAL);
	ck_assert_int_eq(cw_download(h, 0, x, 1), CW_EINVAL);
	ck_assert_int_eq(cw_copy(h, 0, h, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_memset(h, 0, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_advise(h, CW_ADVISE_SET_READ_MOSTLY, 0), CW_EINVAL);
	ck_assert_int_eq(cw_prefetch(h, 0, NULL), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

START_TEST(test_api_null_out_pointers)
{
	cw_buf_t b;

	setup();
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, 0, 0), CW_OK);
	ck_assert_int_eq(cw_owner_of(b, NULL), CW_EINVAL);
	ck_assert_int_eq(cw_view(NULL, b, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_lookup(cw_ptr(b), NULL), CW_EINVAL);
	ck_assert_int_eq(cw_owner_register("x", NULL), CW_EINVAL);
	ck_assert_int_eq(cw_stats(NULL), CW_EINVAL);
	ck_assert_int_eq(cw_alloc(NULL, 64, CW_DEVICE, 0, 0), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 0);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_api_owner_register)
{
	cw_owner_t a = 0, b = 0;
	char big[200];

	ck_assert_int_eq(cw_owner_register("net", &a), CW_OK);
	ck_assert_int_eq(cw_owner_register("net", &b), CW_OK);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_ne(a, CW_OWNER_NONE);
	ck_assert_str_eq(cw_owner_name(a), "net");
	b = 99;
	ck_assert_int_eq(cw_owner_register(NULL, &b), CW_EINVAL);
	ck_assert_int_eq(cw_owner_register("", &b), CW_EINVAL);
	ck_assert_int_eq(cw_owner_register("a\tb", &b), CW_EINVAL);
	ck_assert_ptr_nonnull(strstr(cw_last_error()->message,
	    "non-printable"));
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(cw_owner_register(big, &b), CW_EINVAL);
	big[127] = '\0';
	ck_assert_int_eq(cw_owner_register(big, &b), CW_OK);
	ck_assert_ptr_null(cw_owner_name(CW_OWNER_NONE));
	ck_assert_ptr_null(cw_owner_name(4242));
	ck_assert_int_eq(cw_last_error()->status, CW_EINVAL);
}
END_TEST

START_TEST(test_api_stats_and_print)
{
	cw_stats_t s;
	cw_buf_t b[3];

	setup();
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(cw_alloc(&b[k], 1000 * (size_t)(k + 1),
		    (cw_kind_t)k, 0, 0), CW_OK);
	ck_assert_int_eq(cw_stats(&s), CW_OK);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(s.bytes[k].current, 1000 * (uint64_t)(k + 1));
		ck_assert_uint_eq(s.bytes[k].peak, 1000 * (uint64_t)(k + 1));
		ck_assert_uint_eq(s.allocations[k].current, 1);
	}
	ck_assert_int_eq(cw_free(b[0]), CW_OK);
	ck_assert_int_eq(cw_stats(&s), CW_OK);
	ck_assert_uint_eq(s.bytes[0].current, 0);
	ck_assert_uint_eq(s.bytes[0].peak, 1000);
	ck_assert_uint_eq(s.bytes[0].total, 1000);
	ck_assert_uint_ne(s.stacks, 0);

	unsigned long before = out_lines;
	ck_assert_int_eq(cw_stats_print(out_capture, NULL), CW_OK);
	ck_assert_uint_ge(out_lines - before, 8);
	ck_assert_ptr_nonnull(strstr(out_last, "cuwarden: stats: pool"));
	ck_assert_uint_eq(out_last[strlen(out_last) - 1], '\n');
	/* NULL: through the output callback (here, the capture too). */
	before = out_lines;
	ck_assert_int_eq(cw_stats_print(NULL, NULL), CW_OK);
	ck_assert_uint_ge(out_lines - before, 8);
	ck_assert_ptr_nonnull(strstr(out_last, "cuwarden: "));
	cw_free(b[1]);
	cw_free(b[2]);
}
END_TEST

START_TEST(test_api_stats_counters)
{
	stats_counter_t c = { 0, 0, 0 };

	stats_counter_add(&c, 10);
	stats_counter_add(&c, 5);
	stats_counter_sub(&c, 12);
	stats_counter_add(&c, 1);
	ck_assert_uint_eq(c.current, 4);
	ck_assert_uint_eq(c.peak, 15);
	ck_assert_uint_eq(c.total, 16);

	/* Kinds beyond the public three are counted but not in bytes[]. */
	stats_on_alloc(KIND_REGISTERED, 4096);
	ck_assert_uint_eq(stats_bytes(KIND_REGISTERED).current, 4096);
	ck_assert_uint_eq(stats_allocations(KIND_REGISTERED).current, 1);
	stats_on_alloc((kind_t)KIND_COUNT, 1); /* ignored */
	ck_assert_uint_eq(stats_bytes((kind_t)KIND_COUNT).total, 0);
	cw_stats_t st;
	cw_stats(&st);
	for (int k = 0; k < 3; k++)
		ck_assert_uint_eq(st.bytes[k].total, 0);
	stats_on_free(KIND_REGISTERED, 4096);
	ck_assert_uint_eq(stats_bytes(KIND_REGISTERED).current, 0);
	ck_assert_uint_eq(stats_bytes(KIND_REGISTERED).peak, 4096);

	/* Ledger and violations are merged in. */
	ledger_add(0x1000, 1, KIND_DEVICE, 1);
	cw_stats(&st);
	ck_assert_uint_eq(st.failed_frees, 1);
	ck_assert_uint_eq(st.failed_free_ledger, 1);
	STATS_INC(allocations);
	ck_assert_uint_eq(stats_coverage.allocations, 1);
	stats_reset();
	ck_assert_uint_eq(stats_coverage.allocations, 0);
	ck_assert_uint_eq(stats_bytes(KIND_REGISTERED).total, 0);
}
END_TEST

static void
count_lines(const char *msg, void *arg)
{
	(void)msg;
	(*(int *)arg)++;
}

START_TEST(test_api_set_output)
{
	int n = 0;

	setup();
	cw_set_output(count_lines, &n);
	ck_assert_int_eq(cw_free(0x4242424242ULL), CW_EINVAL); /* logs */
	ck_assert_int_eq(n, 1);
	cw_set_output(out_capture, NULL);
	unsigned long before = out_lines;
	ck_assert_int_eq(cw_free(0x4242424243ULL), CW_EINVAL);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(out_lines, before + 1);
	ck_assert_ptr_nonnull(strstr(out_last, "invalid_free"));
}
END_TEST

START_TEST(test_api_report)
{
	char path[] = "/tmp/cw_api_reportXXXXXX";
	char buf[65536];
	cw_buf_t b;

	setup();
	ck_assert_int_eq(cw_alloc(&b, 12345, CW_MANAGED, 0, 0), CW_OK);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(cw_report(fd, CW_FORMAT_JSON), CW_OK);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\"library\""));
	ck_assert_ptr_nonnull(strstr(buf, "12345"));
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(cw_report(fd, CW_FORMAT_TEXT), CW_OK);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	close(fd);

	ck_assert_int_eq(cw_report(-1, CW_FORMAT_JSON), CW_EINVAL);
	ck_assert_int_eq(cw_report(1, (cw_format_t)2), CW_EINVAL);
	ck_assert_int_eq(cw_report(1, (cw_format_t)-1), CW_EINVAL);
	ck_assert_int_ne(cw_report(fd, CW_FORMAT_JSON), CW_OK); /* closed */
	cw_free(b);
}
END_TEST

START_TEST(test_api_trim)
{
	cw_buf_t b;

	setup();
	ck_assert_int_eq(cw_alloc(&b, 4096, CW_DEVICE, 0, 0), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_trim(0), CW_OK);
	ck_assert_int_eq(cw_trim(1), CW_ENODEV);
	ck_assert_int_eq(cw_trim(-1), CW_ENODEV);
	ck_assert_int_eq(cw_trim(CW_CPU), CW_ENODEV);
	ck_assert_str_eq(cw_last_error()->function, "cw_trim");
}
END_TEST

START_TEST(test_api_fork)
{
	cw_buf_t b, c;
	int status;

	setup();
	ck_assert(!fork_registered());
	ck_assert_int_eq(cw_alloc(&b, 4096, CW_PINNED, 0, 0), CW_OK);
	ck_assert(fork_registered()); /* made on first use */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Every lock works in the child; CUDA is off limits. */
		int ok = cw_ptr(b) != NULL && cw_refcount(b) == 1 &&
		    cw_alloc(&c, 64, CW_DEVICE, 0, 0) == CW_ENODEV &&
		    cw_free(0x1111111111ULL) == CW_EINVAL;
		cw_owner_t o;
		ok = ok && cw_owner_register("child", &o) == CW_OK;
		/* Inherited memory: the child forgets the handle (the pools
		 * decide whether to answer CW_OK or CW_ENODEV; they touch no
		 * CUDA) and no failed_free is recorded. */
		uint64_t n = violation_count();
		int r = cw_free(b);
		ok = ok && (r == CW_OK || r == CW_ENODEV) &&
		    violation_count() == n && registry_state(b) == REG_FREED;
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent goes on. */
	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_alloc(&c, 64, CW_DEVICE, 0, 0), CW_OK);
	ck_assert_int_eq(cw_free(c), CW_OK);
}
END_TEST

START_TEST(test_api_lockrank_order_ok)
{
	lockrank_check_take(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_OWNER);
	lockrank_check_take(LOCK_RANK_LOG);
	lockrank_check_drop(LOCK_RANK_LOG);
	lockrank_check_drop(LOCK_RANK_OWNER);
	lockrank_check_take(LOCK_RANK_VIOLATION);
	lockrank_check_drop(LOCK_RANK_VIOLATION);
	lockrank_check_drop(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_REGISTRY_H); /* all dropped: anything */
	lockrank_check_drop(LOCK_RANK_REGISTRY_H);
}
END_TEST

/* A nestable rank (the registry's stripes in lock_all) may be held
 * several times; a lower rank after it still stops (below). */
START_TEST(test_api_lockrank_nestable)
{
	lockrank_check_take(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_REGISTRY_T);
	lockrank_check_drop(LOCK_RANK_REGISTRY_T);
	lockrank_check_drop(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_REGISTRY_T); /* one H still held */
	lockrank_check_drop(LOCK_RANK_REGISTRY_T);
	lockrank_check_drop(LOCK_RANK_REGISTRY_H);
	lockrank_check_take(LOCK_RANK_SHIM_TEARDOWN); /* none held */
	lockrank_check_drop(LOCK_RANK_SHIM_TEARDOWN);
	ck_assert_str_eq(lockrank_name(LOCK_RANK_POOL_TCACHE), "POOL_TCACHE");
}
END_TEST

/* A trylock is not checked, but what it took counts as held. */
START_TEST(test_api_lockrank_trylock_counts)
{
	log_set_output(out_capture, NULL);
	lockrank_note_take(LOCK_RANK_LOG);
	lockrank_check_take(LOCK_RANK_POOL); /* lower than the held LOG */
}
END_TEST

START_TEST(test_api_lockrank_drop_unheld_aborts)
{
	log_set_output(out_capture, NULL);
	lockrank_check_drop(LOCK_RANK_FENCE);
}
END_TEST

START_TEST(test_api_lockrank_unranked_aborts)
{
	log_set_output(out_capture, NULL);
	lockrank_check_take(LOCK_RANK_NONE);
}
END_TEST

/* A prefork takes ranks in order whatever the thread holds; a lower rank
 * after a higher one in the same prefork stops; fork_done starts anew. */
START_TEST(test_api_lockrank_prefork_order)
{
	log_set_output(out_capture, NULL);
	lockrank_check_prefork(LOCK_RANK_REGISTRY_H);
	lockrank_check_prefork(LOCK_RANK_REGISTRY_H);
	lockrank_check_prefork(LOCK_RANK_POOL);
	lockrank_fork_done();
	lockrank_check_prefork(LOCK_RANK_VIOLATION);
	lockrank_check_prefork(LOCK_RANK_STACKDEPOT);
	lockrank_check_prefork(LOCK_RANK_REGISTRY_T); /* stops */
}
END_TEST

START_TEST(test_api_lockrank_out_of_order_aborts)
{
	log_set_output(out_capture, NULL);
	lockrank_check_take(LOCK_RANK_OWNER);
	lockrank_check_take(LOCK_RANK_VIOLATION); /* lower rank: stops */
}
END_TEST

START_TEST(test_api_lockrank_same_rank_twice_aborts)
{
	log_set_output(out_capture, NULL);
	lockrank_check_take(LOCK_RANK_LEDGER);
	lockrank_check_take(LOCK_RANK_LEDGER);
}
END_TEST

static Suite *
make_api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, test_api_strerror);
	tcase_add_test(tc, test_api_last_error_thread_local);
	tcase_add_test(tc, test_api_random_handles_everywhere);
	tcase_add_test(tc, test_api_alloc_async);
	tcase_add_test(tc, test_api_none_handle_everywhere);
	tcase_add_test(tc, test_api_null_out_pointers);
	tcase_add_test(tc, test_api_owner_register);
	tcase_add_test(tc, test_api_stats_and_print);
	tcase_add_test(tc, test_api_stats_counters);
	tcase_add_test(tc, test_api_set_output);
	tcase_add_test(tc, test_api_report);
	tcase_add_test(tc, test_api_trim);
	tcase_add_test(tc, test_api_fork);
	tcase_add_test(tc, test_api_lockrank_order_ok);
	tcase_add_test_raise_signal(tc, test_api_lockrank_out_of_order_aborts,
	    SIGABRT);
	tcase_add_test_raise_signal(tc,
	    test_api_lockrank_same_rank_twice_aborts, SIGABRT);
	tcase_add_test(tc, test_api_lockrank_nestable);
	tcase_add_test_raise_signal(tc, test_api_lockrank_trylock_counts,
	    SIGABRT);
	tcase_add_test_raise_signal(tc, test_api_lockrank_drop_unheld_aborts,
	    SIGABRT);
	tcase_add_test_raise_signal(tc, test_api_lockrank_unranked_aborts,
	    SIGABRT);
	tcase_add_test_raise_signal(tc, test_api_lockrank_prefork_order,
	    SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_api_suite)
