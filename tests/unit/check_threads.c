/*
 * check_threads.c -- 16 threads allocating, publishing, retaining,
 * viewing, releasing and freeing shared buffers at once.  Every race the
 * program makes on purpose has an exact answer (a retain either succeeds
 * or sees a freed handle; a free either succeeds or is refused while a
 * reference is held), so at the end the violation counts equal what the
 * threads saw, and the registry and stats hold nothing: no record lost,
 * none counted twice.
 */
#include "preamble.h"

#include "core_test.h"
#include "unit.h"

#define THREADS 16
#define ITERS 1500
#define SLOTS 32

static cw_buf_t shared[SLOTS];

typedef struct tally_s {
	unsigned long allocs, views, refused_frees, uaf, retains;
	unsigned long bytes[3];
	int failed;
} tally_t;

static tally_t tallies[THREADS];

static uint64_t
next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Frees h, which this thread owns, retrying while readers hold it. */
static void
free_owned(cw_buf_t h, tally_t *t)
{
	int r;

	while ((r = cw_free(h)) == CW_ECONTRACT) {
		t->refused_frees++;
		sched_yield();
	}
	if (r != CW_OK)
		t->failed = 1000 + r;
}

static void *
worker(void *arg)
{
	int id = (int)(uintptr_t)arg;
	tally_t *t = &tallies[id];
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(id + 1);
	unsigned char byte = (unsigned char)id;

	for (int i = 0; i < ITERS && !t->failed; i++) {
		/* A private buffer: the full life cycle. */
		cw_kind_t k = (cw_kind_t)(next(&s) % 3);
		size_t size = 512 + next(&s) % 65536;
		cw_buf_t b, v;
		if (cw_alloc(&b, size, k, 0, 0) != CW_OK) {
			t->failed = 1;
			break;
		}
		t->allocs++;
		t->bytes[k] += size;
		if (cw_view(&v, b, size / 2, size / 4 + 1) != CW_OK ||
		    cw_retain(b) != CW_OK || cw_refcount(b) != 3 ||
		    cw_release(b) != CW_OK || cw_free(v) != CW_OK) {
			t->failed = 2;
			break;
		}
		t->views++;

		/* Publish it; whatever was in the slot is now ours to free. */
		cw_buf_t old = __atomic_exchange_n(&shared[next(&s) % SLOTS], b,
		    __ATOMIC_ACQ_REL);
		if (old != CW_BUF_NONE)
			free_owned(old, t);

		/* Use someone's buffer: it may be freed under us. */
		cw_buf_t h = __atomic_load_n(&shared[next(&s) % SLOTS],
		    __ATOMIC_ACQUIRE);
		if (h == CW_BUF_NONE)
			continue;
		int r = cw_retain(h);
		if (r == CW_OK) {
			t->retains++;
			/* Held: it cannot go away; write one byte, this
			 * thread's own (threads writing one byte at once
			 * would race on the program's data, which is not
			 * what this test is about). */
			if (cw_memset(h, (size_t)id, byte, 1) != CW_OK ||
			    cw_release(h) != CW_OK) {
				t->failed = 3;
				break;
			}
		} else if (r == CW_EFREED) {
			t->uaf++;
		} else {
			t->failed = 4;
			break;
		}
		r = cw_view(&v, h, 0, 1);
		if (r == CW_OK) {
			t->views++;
			if (cw_free(v) != CW_OK) {
				t->failed = 5;
				break;
			}
		} else if (r == CW_EFREED) {
			t->uaf++;
		} else {
			t->failed = 6;
			break;
		}
	}
	return NULL;
}

START_TEST(test_threads_shared_buffers_exact)
{
	pthread_t th[THREADS];

	load_fixture();
	quiet();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);

	tally_t sum;
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < THREADS; i++) {
		ck_assert_msg(tallies[i].failed == 0, "thread %d failed: %d", i,
		    tallies[i].failed);
		sum.allocs += tallies[i].allocs;
		sum.views += tallies[i].views;
		sum.refused_frees += tallies[i].refused_frees;
		sum.uaf += tallies[i].uaf;
		sum.retains += tallies[i].retains;
		for (int k = 0; k < 3; k++)
			sum.bytes[k] += tallies[i].bytes[k];
	}
	/* Drain the slots: nobody else holds anything now. */
	for (int i = 0; i < SLOTS; i++)
		if (shared[i] != CW_BUF_NONE)
			ck_assert_int_eq(cw_free(shared[i]), CW_OK);

	ck_assert_uint_eq(sum.allocs, THREADS * ITERS);
	ck_assert_uint_eq(registry_live_count(), 0);
	cw_stats_t st;
	cw_stats(&st);
	uint64_t total = 0;
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(st.allocations[k].current, 0);
		ck_assert_uint_eq(st.bytes[k].current, 0);
		ck_assert_uint_eq(st.bytes[k].total, sum.bytes[k]);
		total += st.allocations[k].total;
	}
	ck_assert_uint_eq(total, sum.allocs);
	ck_assert_uint_eq(st.views_live, 0);
	ck_assert_uint_eq(stats_allocations(KIND_VIEW).total, sum.views);
	/* Exactly the violations the threads saw. */
	ck_assert_uint_eq(violation_count_type(V_FREE_WHILE_REFERENCED),
	    sum.refused_frees);
	ck_assert_uint_eq(violation_count_type(V_USE_AFTER_FREE), sum.uaf);
	ck_assert_uint_eq(violation_count(), sum.refused_frees + sum.uaf);
	ck_assert_uint_gt(sum.retains, 0);
}
END_TEST

static cw_buf_t one;
static int refused_counts[THREADS];

static void *
hammer(void *arg)
{
	int id = (int)(uintptr_t)arg;

	for (int i = 0; i < 2000; i++) {
		if (cw_retain(one) != CW_OK)
			refused_counts[id] = -1000;
		if (cw_release(one) != CW_OK)
			refused_counts[id] = -2000;
		/* The owner's reference is never released. */
		if (i % 100 == 0 && cw_transfer(one, 0) == CW_ECONTRACT)
			refused_counts[id]++;
	}
	return NULL;
}

START_TEST(test_threads_refcount_exact_under_contention)
{
	pthread_t th[THREADS];

	load_fixture();
	quiet();
	ck_assert_int_eq(cw_alloc(&one, 4096, CW_DEVICE, 0, 0), CW_OK);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, hammer, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	int refused = 0;
	for (int i = 0; i < THREADS; i++) {
		ck_assert_int_ge(refused_counts[i], 0);
		refused += refused_counts[i];
	}
	ck_assert_int_eq(cw_refcount(one), 1);
	ck_assert_uint_eq(violation_count_type(V_TRANSFER_WHILE_SHARED),
	    (uint64_t)refused);
	ck_assert_uint_eq(violation_count(), (uint64_t)refused);
	ck_assert_int_eq(cw_free(one), CW_OK);
}
END_TEST

static Suite *
make_threads_suite(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("threads");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_threads_shared_buffers_exact);
	tcase_add_test(tc, test_threads_refcount_exact_under_contention);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_threads_suite)
