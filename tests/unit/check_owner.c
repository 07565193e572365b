/*
 * check_owner.c -- owner names: interning, ids, validation, threads.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "owner.h"
#include "unit.h"

START_TEST(test_owner_intern_same_name_same_id)
{
	owner_id_t a = owner_intern("decoder");
	owner_id_t b = owner_intern("encoder");
	ck_assert_uint_ne(a, 0);
	ck_assert_uint_ne(b, 0);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(owner_intern("decoder"), a);
	ck_assert_str_eq(owner_name(a), "decoder");
	ck_assert_str_eq(owner_name(b), "encoder");
	ck_assert(owner_valid(a));
	ck_assert(owner_valid(b));
}
END_TEST

START_TEST(test_owner_prefix_names_distinct)
{
	owner_id_t a = owner_intern("ab");
	owner_id_t b = owner_intern("abc");
	owner_id_t c = owner_intern("a");
	ck_assert_uint_ne(a, b);
	ck_assert_uint_ne(a, c);
	ck_assert_uint_ne(b, c);
	ck_assert_str_eq(owner_name(b), "abc");
}
END_TEST

START_TEST(test_owner_invalid_names)
{
	char big[200];

	ck_assert_uint_eq(owner_intern(NULL), 0);
	ck_assert_uint_eq(owner_intern(""), 0);
	ck_assert_uint_eq(owner_intern("tab\there"), 0);
	ck_assert_uint_eq(owner_intern("nl\n"), 0);
	ck_assert_uint_eq(owner_intern("\x80high"), 0);
	memset(big, 'x', sizeof(big));
	big[128] = '\0'; /* 128 bytes: one too many */
	ck_assert_uint_eq(owner_intern(big), 0);
	big[127] = '\0'; /* 127 bytes: the longest */
	owner_id_t id = owner_intern(big);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(strlen(owner_name(id)), 127);
	ck_assert_uint_ne(owner_intern(" "), 0); /* printable */
}
END_TEST

START_TEST(test_owner_unknown_ids)
{
	ck_assert_ptr_null(owner_name(0));
	ck_assert_ptr_null(owner_name(1));
	ck_assert(!owner_valid(0));
	ck_assert(!owner_valid(1));
	owner_id_t a = owner_intern("x");
	ck_assert_uint_eq(a, 1); /* ids are handed out from 1 */
	ck_assert(owner_valid(1));
	ck_assert(!owner_valid(2));
	ck_assert_ptr_null(owner_name(0xffffffffu));
}
END_TEST

START_TEST(test_owner_reset)
{
	owner_id_t a = owner_intern("x");
	owner_reset();
	ck_assert(!owner_valid(a));
	ck_assert_ptr_null(owner_name(a));
	ck_assert_uint_eq(owner_intern("y"), 1);
	ck_assert_str_eq(owner_name(1), "y");
}
END_TEST

/* Interning is O(1): a name sits at most a few slots past its hash's own
 * (the cost of every lookup of a known name), measured as probes rather
 * than as time, which a loaded machine would make fail. */
START_TEST(test_owner_many_names_fast)
{
	char name[32];

	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "owner-%d", i);
		ck_assert_uint_eq(owner_intern(name), (owner_id_t)i + 1);
	}
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "owner-%d", i);
		ck_assert_uint_eq(owner_intern(name), (owner_id_t)i + 1);
	}
	/* 20,000 names in 131,072 slots: 4 measured; a hash that sent
	 * the names to a few slots would give thousands. */
	ck_assert_uint_le(owner_longest_probe(), 16);
	ck_assert_str_eq(owner_name(12345), "owner-12344");
}
END_TEST

/* Issue 7: the table is bounded in ids and in bytes, however many names
 * come (the worst case: every name of the longest length). */
START_TEST(test_owner_table_bounded)
{
	char name[OWNER_NAME_MAX + 1];

	ck_assert_uint_eq(owner_count(), 0);
	ck_assert_uint_le(owner_bytes(), OWNER_BYTES_MAX);
	memset(name, 'n', OWNER_NAME_MAX);
	name[OWNER_NAME_MAX] = '\0';
	for (unsigned i = 1; i < OWNER_MAX; i++) {
		snprintf(name, sizeof(name), "%08x", i);
		name[8] = '-'; /* the rest stays: OWNER_NAME_MAX bytes */
		ck_assert_uint_eq(strlen(name), OWNER_NAME_MAX);
		ck_assert_uint_eq(owner_intern(name), i);
	}
	ck_assert_uint_eq(owner_count(), OWNER_MAX - 1);
	/* Full, half the slots taken: still a short walk (23 measured). */
	ck_assert_uint_le(owner_longest_probe(), 64);
	size_t full = owner_bytes();
	ck_assert_uint_le(full, OWNER_BYTES_MAX);
	/* Full: a new name gets no id and no bytes; known ones still do. */
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "more-%u", i);
		ck_assert_uint_eq(owner_intern(name), 0);
	}
	ck_assert_uint_eq(owner_count(), OWNER_MAX - 1);
	ck_assert_uint_eq(owner_bytes(), full);
	memset(name, 'n', OWNER_NAME_MAX);
	snprintf(name, sizeof(name), "%08x", 777u);
	name[8] = '-';
	ck_assert_uint_eq(owner_intern(name), 777);
	/* The longest valid name, and one byte more. */
	ck_assert_uint_eq(strlen(owner_name(OWNER_MAX - 1)), OWNER_NAME_MAX);
	char longer[OWNER_NAME_MAX + 2];
	memset(longer, 'l', OWNER_NAME_MAX + 1);
	longer[OWNER_NAME_MAX + 1] = '\0';
	ck_assert_uint_eq(owner_intern(longer), 0);
}
END_TEST

static owner_id_t ids[8][64];

static void *
interner(void *arg)
{
	int t = (int)(uintptr_t)arg;
	char name[32];

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "shared-%d", (i * 7 + t) % 64);
		ids[t][(i * 7 + t) % 64] = owner_intern(name);
	}
	return NULL;
}

START_TEST(test_owner_threads_agree)
{
	pthread_t th[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, interner, (void *)(uintptr_t)i);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	for (int n = 0; n < 64; n++) {
		ck_assert_uint_ne(ids[0][n], 0);
		for (int t = 1; t < 8; t++)
			ck_assert_uint_eq(ids[t][n], ids[0][n]);
	}
	ck_assert(owner_valid(64));
	ck_assert(!owner_valid(65)); /* each name interned exactly once */
}
END_TEST

static Suite *
make_owner_suite(void)
{
	Suite *s = suite_create("owner");
	TCase *tc = tcase_create("owner");

	tcase_add_test(tc, test_owner_intern_same_name_same_id);
	tcase_add_test(tc, test_owner_prefix_names_distinct);
	tcase_add_test(tc, test_owner_invalid_names);
	tcase_add_test(tc, test_owner_unknown_ids);
	tcase_add_test(tc, test_owner_reset);
	tcase_add_test(tc, test_owner_many_names_fast);
	tcase_add_test(tc, test_owner_threads_agree);
	tcase_add_test(tc, test_owner_table_bounded);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_owner_suite)
