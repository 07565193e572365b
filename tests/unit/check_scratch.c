/*
 * check_scratch.c -- growable scratch memory: an empty scratch_t maps
 * nothing; the first reserve maps 64 KiB, a larger one the next power of
 * two that holds it; what was written survives a growth that moves it;
 * free unmaps and empties, twice is harmless; an impossible size fails
 * with *s unchanged (errno mremap's: ENOMEM, or EINVAL for a size beyond
 * the address space).
 */
#include "preamble.h"

#include <stdint.h>
#include <string.h>

#include "scratch.h"
#include "unit.h"

START_TEST(test_scratch_grow)
{
	scratch_t s = SCRATCH_INIT;

	ck_assert(!scratch_reserve(&s, 0)); /* room for nothing: no mapping */
	ck_assert_ptr_null(s.p);
	ck_assert(!scratch_reserve(&s, 100));
	ck_assert_ptr_nonnull(s.p);
	ck_assert_uint_eq(s.cap, 65536);
	memset(s.p, 0xab, 100);
	s.used = 100;
	ck_assert(!scratch_reserve(&s, 65436)); /* exactly full: no growth */
	ck_assert_uint_eq(s.cap, 65536);
	ck_assert(!scratch_reserve(&s, 65437));
	ck_assert_uint_eq(s.cap, 131072);
	ck_assert(!scratch_reserve(&s, 1u << 20));
	ck_assert_uint_eq(s.cap, 2u << 20);
	ck_assert_uint_eq(s.used, 100);
	for (size_t i = 0; i < 100; i++)
		ck_assert_uint_eq((unsigned char)s.p[i], 0xab);
	scratch_free(&s);
	ck_assert_ptr_null(s.p);
	ck_assert_uint_eq(s.cap, 0);
	ck_assert_uint_eq(s.used, 0);
	scratch_free(&s);
}
END_TEST

START_TEST(test_scratch_fails_whole)
{
	scratch_t s = SCRATCH_INIT;

	ck_assert(!scratch_reserve(&s, 10));
	s.p[0] = 'x';
	s.used = 1;
	ck_assert(scratch_reserve(&s, SIZE_MAX / 4));
	ck_assert(errno == ENOMEM || errno == EINVAL); /* mremap: too big */
	ck_assert_uint_eq(s.cap, 65536);
	ck_assert_uint_eq(s.used, 1);
	ck_assert_int_eq(s.p[0], 'x');
	/* Past what doubling can reach: refused at once (the doubling
	 * overflowed and looped for ever). */
	errno = 0;
	ck_assert(scratch_reserve(&s, SIZE_MAX - 10));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert(scratch_reserve(&s, SIZE_MAX / 2));
	ck_assert_uint_eq(s.cap, 65536);
	scratch_free(&s);
}
END_TEST

static Suite *
make_scratch_suite(void)
{
	Suite *s = suite_create("scratch");
	TCase *tc = tcase_create("scratch");

	tcase_add_test(tc, test_scratch_grow);
	tcase_add_test(tc, test_scratch_fails_whole);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_scratch_suite)
