/*
 * check_ledger.c -- the failed-free ledger: bounded set, counters.
 */
#include "preamble.h"

#include <pthread.h>

#include "ledger.h"
#include "unit.h"

START_TEST(test_ledger_add_contains)
{
	ck_assert(!ledger_contains(0x1000));
	ledger_add(0x1000, 4096, KIND_DEVICE, 700);
	ck_assert(ledger_contains(0x1000));
	ck_assert(!ledger_contains(0x2000));
	ck_assert(!ledger_contains(0));
	ck_assert_uint_eq(ledger_size(), 1);
	ck_assert_uint_eq(ledger_failures(), 1);
	ck_assert_uint_eq(ledger_overflow(), 0);
}
END_TEST

START_TEST(test_ledger_same_address_kept_once)
{
	ledger_add(0x1000, 4096, KIND_DEVICE, 700);
	ledger_add(0x1000, 4096, KIND_DEVICE, 700);
	ck_assert_uint_eq(ledger_size(), 1);
	ck_assert_uint_eq(ledger_failures(), 2);
	ck_assert_uint_eq(ledger_overflow(), 0);
}
END_TEST

START_TEST(test_ledger_overflow)
{
	for (uintptr_t i = 1; i <= LEDGER_MAX + 10; i++)
		ledger_add(i * 0x200000, 64, KIND_MANAGED, 1);
	ck_assert_uint_eq(ledger_size(), LEDGER_MAX);
	ck_assert_uint_eq(ledger_failures(), LEDGER_MAX + 10);
	ck_assert_uint_eq(ledger_overflow(), 10);
	/* The first LEDGER_MAX are kept, the rest are not. */
	ck_assert(ledger_contains(0x200000));
	ck_assert(ledger_contains((uintptr_t)LEDGER_MAX * 0x200000));
	ck_assert(!ledger_contains((uintptr_t)(LEDGER_MAX + 1) * 0x200000));
	/* A kept address failing again is not an overflow. */
	ledger_add(0x200000, 64, KIND_MANAGED, 1);
	ck_assert_uint_eq(ledger_overflow(), 10);
}
END_TEST

START_TEST(test_ledger_zero_address_counts_as_overflow)
{
	ledger_add(0, 64, KIND_DEVICE, 1);
	ck_assert_uint_eq(ledger_failures(), 1);
	ck_assert_uint_eq(ledger_overflow(), 1);
	ck_assert_uint_eq(ledger_size(), 0);
}
END_TEST

START_TEST(test_ledger_addresses)
{
	uintptr_t out[8];

	ledger_add(0x3000, 1, KIND_DEVICE, 1);
	ledger_add(0x5000, 1, KIND_DEVICE, 1);
	ledger_add(0x4000, 1, KIND_DEVICE, 1);
	ck_assert_uint_eq(ledger_addresses(out, 8), 3);
	uintptr_t sum = out[0] + out[1] + out[2];
	ck_assert_uint_eq(sum, 0xc000);
	ck_assert_uint_eq(ledger_addresses(out, 2), 2);
	ck_assert_uint_eq(ledger_addresses(NULL, 8), 0);
}
END_TEST

START_TEST(test_ledger_reset)
{
	ledger_add(0x3000, 1, KIND_DEVICE, 1);
	ledger_reset();
	ck_assert_uint_eq(ledger_size(), 0);
	ck_assert_uint_eq(ledger_failures(), 0);
	ck_assert(!ledger_contains(0x3000));
}
END_TEST

static void *
adder(void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	for (uintptr_t i = 0; i < 1000; i++)
		ledger_add(base + i * 16, 16, KIND_DEVICE, 1);
	return NULL;
}

START_TEST(test_ledger_threads)
{
	pthread_t th[8];

	for (uintptr_t i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, adder,
		    (void *)((i + 1) << 32));
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(ledger_failures(), 8000);
	ck_assert_uint_eq(ledger_size(), LEDGER_MAX);
	ck_assert_uint_eq(ledger_overflow(), 8000 - LEDGER_MAX);
}
END_TEST

START_TEST(test_ledger_fork_hooks)
{
	ledger_prefork();
	ledger_postfork_parent();
	ledger_prefork();
	ledger_postfork_child();
	ledger_add(0x10, 1, KIND_DEVICE, 1);
	ck_assert(ledger_contains(0x10));
}
END_TEST

static Suite *
make_ledger_suite(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc = tcase_create("ledger");

	tcase_add_test(tc, test_ledger_add_contains);
	tcase_add_test(tc, test_ledger_same_address_kept_once);
	tcase_add_test(tc, test_ledger_overflow);
	tcase_add_test(tc, test_ledger_zero_address_counts_as_overflow);
	tcase_add_test(tc, test_ledger_addresses);
	tcase_add_test(tc, test_ledger_reset);
	tcase_add_test(tc, test_ledger_threads);
	tcase_add_test(tc, test_ledger_fork_hooks);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_ledger_suite)
