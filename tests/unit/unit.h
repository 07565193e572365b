/*
 * unit.h -- what every unit test program shares.  One program per module
 * (tests/unit/check_<mod>.c) defining make_<mod>_suite(); UNIT_MAIN
 * runs it.  Exit: 0 pass, 1 fail, 77 skip, 99 harness error.
 */
#ifndef CUWARDEN_TESTS_UNIT_H
#define CUWARDEN_TESTS_UNIT_H

#include <check.h>
#include <stdlib.h>

#define UNIT_MAIN(make_suite) \
	int main(void) \
	{ \
		SRunner *sr = srunner_create(make_suite()); \
		srunner_run_all(sr, CK_ENV); \
		int failed = srunner_ntests_failed(sr); \
		srunner_free(sr); \
		return failed == 0 ? 0 : 1; \
	}

#endif /* CUWARDEN_TESTS_UNIT_H */
