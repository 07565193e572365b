/*
 * check_sizeclass.c -- the size classes of the pools: for both grids
 * (device, 8 per doubling; host, 4 per doubling), classes grow, are
 * granule multiples, map back to themselves, and round up by at most
 * 1/8 (device) or 1/4 (host) above 4 KiB.
 */
#include "preamble.h"

#include "pool_int.h"
#include "sizeclass.h"
#include "unit.h"

#define MiB ((size_t)1 << 20)

/* The thread caches' bins are the classes below TC_MAX_CLASS_SIZE at the
 * finest grid (pool_int.h), no more, no fewer; the host grid needs fewer. */
START_TEST(test_sizeclass_tcache_bins)
{
	ck_assert_uint_eq(sizeclass_of(TC_MAX_CLASS_SIZE - 1,
	    SIZECLASS_LGD_DEVICE) + 1, TC_NBINS);
	ck_assert_uint_lt(sizeclass_of(TC_MAX_CLASS_SIZE - 1,
	    SIZECLASS_LGD_HOST), TC_NBINS);
}
END_TEST

START_TEST(test_sizeclass_grid)
{
	for (unsigned lgd = 2; lgd <= 3; lgd++) {
		size_t prev = 0;
		for (unsigned c = 0; c < 120; c++) {
			size_t s = sizeclass_size(c, lgd);
			ck_assert_uint_gt(s, prev);
			ck_assert_uint_eq(s % SIZECLASS_GRANULE, 0);
			ck_assert_uint_eq(sizeclass_of(s, lgd), c);
			ck_assert_uint_eq(sizeclass_of(s - 1, lgd),
			    c == 0 ? 0 : (s - 1 <= prev ? c - 1 : c));
			prev = s;
		}
		for (size_t s = 1; s < 4 * MiB; s += 1 + s / 7) {
			size_t cs = sizeclass_round(s, lgd);
			ck_assert_uint_ge(cs, s);
			if (s > 4096)
				ck_assert_uint_le(cs, s + s / (lgd == 3 ? 8 :
				    4) + 1);
		}
	}
	/* Host classes (lgd 2) are jemalloc's: 2^k + i * 2^(k-2). */
	ck_assert_uint_eq(sizeclass_round(4097, SIZECLASS_LGD_HOST), 5120);
	ck_assert_uint_eq(sizeclass_round(4097, SIZECLASS_LGD_DEVICE), 4608);
	ck_assert_uint_eq(sizeclass_size(sizeclass_of(4097, 3), 3), 4608);
}
END_TEST

static Suite *
make_sizeclass_suite(void)
{
	Suite *s = suite_create("sizeclass");
	TCase *tc = tcase_create("grid");
	tcase_add_test(tc, test_sizeclass_grid);
	tcase_add_test(tc, test_sizeclass_tcache_bins);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_sizeclass_suite)
