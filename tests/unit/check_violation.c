/*
 * check_violation.c -- violation records: kept, counted, named, logged,
 * and CUWARDEN_ON_VIOLATION=abort.
 */
#include "preamble.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "unit.h"
#include "violation.h"

static char last_line[512];
static unsigned long lines;

static void
capture(const char *msg, void *arg)
{
	(void)arg;
	snprintf(last_line, sizeof(last_line), "%s", msg);
	lines++;
}

static violation_t
make(vtype_t t, uintptr_t addr)
{
	violation_t v;

	memset(&v, 0, sizeof(v));
	v.type = t;
	v.api = "cuMemFree_v2";
	v.address = addr;
	v.size = 1048576;
	v.kind = KIND_DEVICE;
	v.device = 0;
	v.stack = 7;
	v.alloc_stack = 8;
	v.free_stack = 9;
	return v;
}

typedef struct walk_s {
	size_t n;
	uintptr_t first, last;
	int stop_at;
} walk_t;

static int
walk_cb(const violation_t *v, void *arg)
{
	walk_t *w = arg;

	if (w->n == 0)
		w->first = v->address;
	w->last = v->address;
	w->n++;
	return w->stop_at != 0 && (int)w->n == w->stop_at ? 42 : 0;
}

START_TEST(test_violation_names)
{
	ck_assert_str_eq(violation_name(V_INVALID_FREE), "invalid_free");
	ck_assert_str_eq(violation_name(V_DOUBLE_FREE), "double_free");
	ck_assert_str_eq(violation_name(V_INTERIOR_FREE), "interior_free");
	ck_assert_str_eq(violation_name(V_MISMATCHED_FREE), "mismatched_free");
	ck_assert_str_eq(violation_name(V_FREE_WHILE_REFERENCED),
	    "free_while_referenced");
	ck_assert_str_eq(violation_name(V_TRANSFER_WHILE_SHARED),
	    "transfer_while_shared");
	ck_assert_str_eq(violation_name(V_REFCOUNT_UNDERFLOW),
	    "refcount_underflow");
	ck_assert_str_eq(violation_name(V_USE_AFTER_FREE), "use_after_free");
	ck_assert_str_eq(violation_name(V_OUT_OF_BOUNDS), "out_of_bounds");
	ck_assert_str_eq(violation_name(V_FAILED_FREE), "failed_free");
	ck_assert_str_eq(violation_name(V_COUNT), "unknown");
	ck_assert_str_eq(violation_name((vtype_t)-1), "unknown");
}
END_TEST

START_TEST(test_violation_record_kept_and_counted)
{
	log_set_output(capture, NULL);
	violation_t v = make(V_DOUBLE_FREE, 0x7000);
	violation_record(&v);
	v = make(V_OUT_OF_BOUNDS, 0x8000);
	violation_record(&v);

	ck_assert_uint_eq(violation_count(), 2);
	ck_assert_uint_eq(violation_count_type(V_DOUBLE_FREE), 1);
	ck_assert_uint_eq(violation_count_type(V_OUT_OF_BOUNDS), 1);
	ck_assert_uint_eq(violation_count_type(V_INVALID_FREE), 0);
	ck_assert_uint_eq(violation_count_type(V_COUNT), 0);

	walk_t w = { 0, 0, 0, 0 };
	ck_assert_int_eq(violation_foreach(walk_cb, &w), 0);
	ck_assert_uint_eq(w.n, 2);
	ck_assert_uint_eq(w.first, 0x7000);
	ck_assert_uint_eq(w.last, 0x8000);
	/* A non-zero answer stops the walk and is returned. */
	w = (walk_t){ 0, 0, 0, 1 };
	ck_assert_int_eq(violation_foreach(walk_cb, &w), 42);
	ck_assert_uint_eq(w.n, 1);
}
END_TEST

static int
copy_cb(const violation_t *v, void *arg)
{
	*(violation_t *)arg = *v;
	return 1;
}

START_TEST(test_violation_record_is_a_copy)
{
	log_set_output(capture, NULL);
	violation_t v = make(V_USE_AFTER_FREE, 0x1234), got;
	violation_record(&v);
	v.address = 0; /* the caller's copy changes; the record must not */
	violation_foreach(copy_cb, &got);
	ck_assert_int_eq(got.type, V_USE_AFTER_FREE);
	ck_assert_uint_eq(got.address, 0x1234);
	ck_assert_str_eq(got.api, "cuMemFree_v2");
	ck_assert_uint_eq(got.size, 1048576);
	ck_assert_uint_eq(got.stack, 7);
	ck_assert_uint_eq(got.alloc_stack, 8);
	ck_assert_uint_eq(got.free_stack, 9);
}
END_TEST

START_TEST(test_violation_log_line)
{
	log_set_output(capture, NULL);
	violation_t v = make(V_DOUBLE_FREE, 0x7f0000001000);
	violation_record(&v);
	ck_assert_uint_eq(lines, 1);
	ck_assert_msg(strstr(last_line, "cuwarden: double_free: "
	    "cuMemFree_v2(0x7f0000001000) of device memory (1048576 bytes) "
	    "already freed") != NULL, "line: %s", last_line);

	v = make(V_INVALID_FREE, 0xdead);
	v.kind = -1;
	violation_record(&v);
	ck_assert_uint_eq(lines, 2);
	ck_assert_msg(strstr(last_line, "invalid_free: cuMemFree_v2(0xdead) "
	    "was never allocated") != NULL, "line: %s", last_line);

	v = make(V_FAILED_FREE, 0x1000);
	v.cuda_error = 700;
	violation_record(&v);
	ck_assert_msg(strstr(last_line, "CUresult 700") != NULL, "line: %s",
	    last_line);

	/* The driver's answer on every line that has one, whatever is
	 * known of the memory. */
	v = make(V_INVALID_FREE, 0xbeef);
	v.kind = -1;
	v.cuda_error = 1;
	violation_record(&v);
	ck_assert_msg(strstr(last_line, "invalid_free: cuMemFree_v2(0xbeef) "
	    "was never allocated (CUresult 1)") != NULL, "line: %s",
	    last_line);
}
END_TEST

/* An out_of_bounds gives its range in the library's form and says what
 * the call did: refused (the library), forwarded (the shim, audit mode);
 * a shim free while referenced was done all the same. */
START_TEST(test_violation_log_outcome)
{
	log_set_output(capture, NULL);
	violation_t v = make(V_OUT_OF_BOUNDS, 0x2000);
	v.api = "cw_upload";
	v.size = 64;
	v.off = 60;
	v.len = 8;
	v.outcome = V_OUTCOME_REFUSED;
	violation_record(&v);
	ck_assert_msg(strstr(last_line, "cuwarden: out_of_bounds: "
	    "cw_upload(0x2000) of device memory (64 bytes): [60, 60 + 8) "
	    "outside it; refused, nothing done") != NULL, "line: %s",
	    last_line);
	v.api = "cuMemcpyHtoD_v2";
	v.outcome = V_OUTCOME_FORWARDED;
	violation_record(&v);
	ck_assert_msg(strstr(last_line, "[60, 60 + 8) outside it; forwarded "
	    "to the driver") != NULL, "line: %s", last_line);
	ck_assert_ptr_null(strstr(last_line, "nothing done"));
	v = make(V_FREE_WHILE_REFERENCED, 0x3000);
	v.outcome = V_OUTCOME_DONE;
	violation_record(&v);
	ck_assert_msg(strstr(last_line, "while references are still held; "
	    "done all the same") != NULL, "line: %s", last_line);
	ck_assert_ptr_null(strstr(last_line, "refused"));
	/* The family: the first kind of the call. */
	v = make(V_INVALID_FREE, 0x4000);
	v.kind = -1;
	ck_assert_int_eq(violation_family(&v), -1);
	v.family = 1u << KIND_PINNED;
	ck_assert_int_eq(violation_family(&v), KIND_PINNED);
	v.family = 1u << KIND_DEVICE | 1u << KIND_GRAPH;
	ck_assert_int_eq(violation_family(&v), KIND_DEVICE);
}
END_TEST

START_TEST(test_violation_keep_limit)
{
	log_set_output(capture, NULL);
	for (uintptr_t i = 0; i < VIOLATION_KEEP + 100; i++) {
		violation_t v = make(V_OUT_OF_BOUNDS, i + 1);
		violation_record(&v);
	}
	ck_assert_uint_eq(violation_count(), VIOLATION_KEEP + 100);
	ck_assert_uint_eq(violation_count_type(V_OUT_OF_BOUNDS),
	    VIOLATION_KEEP + 100);
	walk_t w = { 0, 0, 0, 0 };
	violation_foreach(walk_cb, &w);
	ck_assert_uint_eq(w.n, VIOLATION_KEEP);
	ck_assert_uint_eq(w.first, 1);            /* the first ones are kept */
	ck_assert_uint_eq(w.last, VIOLATION_KEEP);
}
END_TEST

START_TEST(test_violation_reset)
{
	log_set_output(capture, NULL);
	violation_t v = make(V_DOUBLE_FREE, 1);
	violation_record(&v);
	violation_reset();
	ck_assert_uint_eq(violation_count(), 0);
	ck_assert_uint_eq(violation_count_type(V_DOUBLE_FREE), 0);
	walk_t w = { 0, 0, 0, 0 };
	violation_foreach(walk_cb, &w);
	ck_assert_uint_eq(w.n, 0);
}
END_TEST

static void *
recorder(void *arg)
{
	vtype_t t = (vtype_t)(uintptr_t)arg;

	for (int i = 0; i < 1000; i++) {
		violation_t v = make(t, (uintptr_t)i + 1);
		violation_record(&v);
	}
	return NULL;
}

START_TEST(test_violation_threads_count_exactly)
{
	pthread_t th[8];

	log_set_output(capture, NULL);
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, recorder,
		    (void *)(uintptr_t)(i % V_COUNT));
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(violation_count(), 8000);
	for (int t = 0; t < 8; t++)
		ck_assert_uint_eq(violation_count_type((vtype_t)t), 1000);
	walk_t w = { 0, 0, 0, 0 };
	violation_foreach(walk_cb, &w);
	ck_assert_uint_eq(w.n, VIOLATION_KEEP);
}
END_TEST

START_TEST(test_violation_abort_option)
{
	log_set_output(capture, NULL);
	setenv("CUWARDEN_ON_VIOLATION", "abort", 1);
	options_reset();
	violation_t v = make(V_DOUBLE_FREE, 0x10);
	violation_record(&v); /* logs, then abort() */
}
END_TEST

START_TEST(test_violation_report_option_continues)
{
	log_set_output(capture, NULL);
	setenv("CUWARDEN_ON_VIOLATION", "report", 1);
	options_reset();
	violation_t v = make(V_DOUBLE_FREE, 0x10);
	violation_record(&v);
	ck_assert_uint_eq(violation_count(), 1);
}
END_TEST

START_TEST(test_violation_fork_hooks)
{
	log_set_output(capture, NULL);
	violation_prefork();
	violation_postfork_parent();
	violation_prefork();
	violation_postfork_child();
	violation_t v = make(V_DOUBLE_FREE, 0x10);
	violation_record(&v); /* the lock is usable again */
	ck_assert_uint_eq(violation_count(), 1);
}
END_TEST

static Suite *
make_violation_suite(void)
{
	Suite *s = suite_create("violation");
	TCase *tc = tcase_create("violation");

	tcase_add_test(tc, test_violation_names);
	tcase_add_test(tc, test_violation_record_kept_and_counted);
	tcase_add_test(tc, test_violation_record_is_a_copy);
	tcase_add_test(tc, test_violation_log_line);
	tcase_add_test(tc, test_violation_log_outcome);
	tcase_add_test(tc, test_violation_keep_limit);
	tcase_add_test(tc, test_violation_reset);
	tcase_add_test(tc, test_violation_threads_count_exactly);
	tcase_add_test_raise_signal(tc, test_violation_abort_option, SIGABRT);
	tcase_add_test(tc, test_violation_report_option_continues);
	tcase_add_test(tc, test_violation_fork_hooks);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_violation_suite)
