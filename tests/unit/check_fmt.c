/*
 * check_fmt.c -- the fixed-buffer formatter against the C library's
 * snprintf on many formats (fixed and random), truncation, NULL strings
 * and pointers, unknown conversions.
 */
#include "preamble.h"

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "fmt.h"
#include "unit.h"

/* Formats with both and compares the text and the returned length. */
#define SAME(fmt, ...) \
	do { \
		char a_[256], b_[256]; \
		int na_ = fmt_snprintf(a_, sizeof(a_), fmt, __VA_ARGS__); \
		int nb_ = snprintf(b_, sizeof(b_), fmt, __VA_ARGS__); \
		ck_assert_msg(strcmp(a_, b_) == 0 && na_ == nb_, \
		    "format \"%s\": got \"%s\" (%d), libc \"%s\" (%d)", fmt, \
		    a_, na_, b_, nb_); \
	} while (0)

START_TEST(test_fmt_ints)
{
	static const long long vals[] = { 0, 1, -1, 7, -42, 255, 4096,
	    2147483647LL, -2147483647LL - 1, 9223372036854775807LL,
	    -9223372036854775807LL - 1 };

	for (size_t i = 0; i < CW_ARRAY_SIZE(vals); i++) {
		long long v = vals[i];
		int iv = (int)v;
		unsigned uv = (unsigned)v;

		SAME("%d", iv);
		SAME("%i|%5d|%-5d|%05d|%+d|% d", iv, iv, iv, iv, iv, iv);
		SAME("%.3d|%8.3d|%-8.3d|%.0d", iv, iv, iv, iv);
		SAME("%u|%x|%X|%o|%#x|%#o|%08x|%-8x|", uv, uv, uv, uv, uv, uv,
		    uv, uv);
		SAME("%ld|%lu|%lx", (long)v, (unsigned long)v,
		    (unsigned long)v);
		SAME("%lld|%llu|%llx|%#llx|%20lld|%-20llu|", v,
		    (unsigned long long)v, (unsigned long long)v,
		    (unsigned long long)v, v, (unsigned long long)v);
		SAME("%zu|%zd|%zx", (size_t)v, (ssize_t)v, (size_t)v);
		SAME("%hd|%hu|%hhd|%hhu|%hx", (short)v, (unsigned short)v,
		    (signed char)v, (unsigned char)v, (unsigned short)v);
		SAME("%jd|%td", (intmax_t)v, (ptrdiff_t)v);
		SAME("%*d|%-*d|%.*d", 7, iv, 7, iv, 4, iv);
	}
}
END_TEST

START_TEST(test_fmt_strings)
{
	int x;

	SAME("%s", "hello");
	SAME("[%10s][%-10s][%.3s][%10.2s][%-6.1s]", "abc", "abc", "abcdef",
	    "abcdef", "xyz");
	SAME("%c%c%c|%3c|%-3c|", 'a', 'b', 'c', 'x', 'y');
	SAME("100%% %s %%d", "done");
	SAME("%p", (void *)&x);
	SAME("%20p|%-20p|", (void *)&x, (void *)&x);
	SAME("%p", (void *)0x1000);
	SAME("%*s|%-*s|%.*s", 6, "ab", 6, "ab", 2, "abcdef");
	SAME("no conversions at all %s", "");
	SAME("%s=%d, %s=%lu, %s=%#lx", "a", 1, "b", 2UL, "c", 0xbeefUL);
}
END_TEST

/* Random conversions from the supported grammar, against snprintf. */
START_TEST(test_fmt_random)
{
	static const char *const flagsets[] = { "", "-", "0", "#", "+", " ",
	    "-#", "0#", "+0", "- ", "#0-" };
	static const char *const convs[] = { "d", "i", "u", "x", "X", "o",
	    "ld", "lu", "lx", "lld", "llu", "llx", "zu", "zx", "hd", "hhu",
	    "s", "c", "p" };
	unsigned long long seed = 88172645463325252ULL;

	for (int iter = 0; iter < 20000; iter++) {
		char fmt[64], a[512], b[512];
		const char *conv, *fl;
		unsigned long long r;
		int width, prec, na, nb;
		size_t o = 0;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		r = seed;
		conv = convs[r % CW_ARRAY_SIZE(convs)];
		fl = flagsets[(r >> 8) % CW_ARRAY_SIZE(flagsets)];
		width = (int)((r >> 16) % 25) - 2;
		prec = (int)((r >> 24) % 22) - 2;
		/* Combinations the C standard leaves undefined are skipped:
		 * '#' with d/i/u/s/c/p, '0' with s/c/p, precision with c/p. */
		if (strchr(fl, '#') && !strpbrk(conv, "xXo"))
			continue;
		if (strchr(fl, '0') && strpbrk(conv, "scp"))
			continue;
		if ((strchr(fl, '+') || strchr(fl, ' ')) &&
		    strpbrk(conv, "scp"))
			continue;
		if (prec >= 0 && strpbrk(conv, "cp"))
			continue;
		o += (size_t)snprintf(fmt + o, sizeof(fmt) - o, "<%%%s", fl);
		if (width >= 0)
			o += (size_t)snprintf(fmt + o, sizeof(fmt) - o, "%d",
			    width);
		if (prec >= 0)
			o += (size_t)snprintf(fmt + o, sizeof(fmt) - o, ".%d",
			    prec);
		snprintf(fmt + o, sizeof(fmt) - o, "%s>", conv);

		r = seed * 0x9e3779b97f4a7c15ULL;
		if ((seed >> 40) % 4 == 0)
			r >>= (seed >> 32) % 64; /* small values too */
		if (strcmp(conv, "s") == 0) {
			static const char *const strs[] = { "", "a", "hello",
			    "a longer string of text" };
			const char *str = strs[r % 4];

			na = fmt_snprintf(a, sizeof(a), fmt, str);
			nb = snprintf(b, sizeof(b), fmt, str);
		} else if (strcmp(conv, "p") == 0) {
			void *ptr = (void *)(uintptr_t)(r | 1);

			na = fmt_snprintf(a, sizeof(a), fmt, ptr);
			nb = snprintf(b, sizeof(b), fmt, ptr);
		} else if (conv[0] == 'l' || conv[0] == 'z') {
			na = fmt_snprintf(a, sizeof(a), fmt, r);
			nb = snprintf(b, sizeof(b), fmt, r);
		} else {
			na = fmt_snprintf(a, sizeof(a), fmt, (int)r);
			nb = snprintf(b, sizeof(b), fmt, (int)r);
		}
		ck_assert_msg(na == nb && strcmp(a, b) == 0,
		    "format \"%s\" value %llx: got \"%s\", libc \"%s\"", fmt,
		    r, a, b);
	}
}
END_TEST

START_TEST(test_fmt_edge)
{
	char buf[16];
	int n;

	/* NULL string and pointer, as glibc writes them. */
	{
		const char *volatile nul = NULL;

		n = fmt_snprintf(buf, sizeof(buf), "%s", nul);
	}
	ck_assert_str_eq(buf, "(null)");
	ck_assert_int_eq(n, 6);
	fmt_snprintf(buf, sizeof(buf), "%p", (void *)NULL);
	ck_assert_str_eq(buf, "(nil)");

	/* Truncation: NUL-terminated, returns the full length. */
	n = fmt_snprintf(buf, sizeof(buf), "%s-%d", "abcdefghijklmnop", 1234);
	ck_assert_int_eq(n, 21);
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1);
	ck_assert_str_eq(buf, "abcdefghijklmno");
	n = fmt_snprintf(buf, 1, "%d", 12345);
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(buf, "");
	n = fmt_snprintf(NULL, 0, "%d", 12345);
	ck_assert_int_eq(n, 5);
	n = fmt_snprintf(buf, 4, "%x", 0xabcdefu);
	ck_assert_int_eq(n, 6);
	ck_assert_str_eq(buf, "abc");

	/* Unknown conversions are copied; a trailing % stays. */
	{
		const char *volatile f = "a%qb";

		fmt_snprintf(buf, sizeof(buf), f, 0);
	}
	ck_assert_str_eq(buf, "a%qb");
}
END_TEST

/* ' groups decimal digits by three with ',' whatever the locale (the
 * report's numbers: "3,407,872 bytes"). */
START_TEST(test_fmt_grouped)
{
	static const struct {
		unsigned long long v;
		const char *want;
	} cases[] = {
		{ 0, "0" }, { 7, "7" }, { 999, "999" }, { 1000, "1,000" },
		{ 65536, "65,536" }, { 100000, "100,000" },
		{ 3407872, "3,407,872" },
		{ 18446744073709551615ULL, "18,446,744,073,709,551,615" },
	};
	char buf[64];

	for (size_t i = 0; i < CW_ARRAY_SIZE(cases); i++) {
		fmt_snprintf(buf, sizeof(buf), "%'llu", cases[i].v);
		ck_assert_str_eq(buf, cases[i].want);
	}
	fmt_snprintf(buf, sizeof(buf), "%'d|%'zu|%'5u", -1234567,
	    (size_t)1048576, 12u);
	ck_assert_str_eq(buf, "-1,234,567|1,048,576|   12");
}
END_TEST

static Suite *
make_fmt_suite(void)
{
	Suite *s = suite_create("fmt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_fmt_ints);
	tcase_add_test(tc, test_fmt_strings);
	tcase_add_test(tc, test_fmt_random);
	tcase_add_test(tc, test_fmt_edge);
	tcase_add_test(tc, test_fmt_grouped);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_fmt_suite)
