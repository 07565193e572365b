/*
 * check_registry.c -- unit tests of lib/registry.c: lookups by base, by
 * interior pointer and by handle; handle states and generations; tombstones
 * (bounded, by key and by handle); namespaces; replace on duplicate;
 * update and remove callbacks; foreach; 10^6 records within 128 bytes each;
 * 16 threads at once; fork hooks; reset.  No GPU, no driver.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "registry.h"
#include "unit.h"

/* ---------------------------------------------------------------- helpers */

static void
setup(void)
{
	unsetenv("CUWARDEN_TOMBSTONES");
	options_reset();
	registry_reset();
}

static reg_rec_t
mkrec(ns_t ns, uintptr_t base, size_t size)
{
	reg_rec_t r;
	memset(&r, 0, sizeof(r));
	r.ns = (uint8_t)ns;
	r.base = base;
	r.size = size;
	r.kind = ns == NS_NONE ? KIND_VIEW : KIND_DEVICE;
	r.refcount = 1;
	r.device = 0;
	r.api = "cuMemAlloc_v2";
	return r;
}

static reg_handle_t
put(ns_t ns, uintptr_t base, size_t size)
{
	reg_rec_t r = mkrec(ns, base, size);
	reg_handle_t h = 0;
	bool had = true;
	ck_assert(!registry_insert(&r, &h, NULL, &had));
	ck_assert(!had);
	ck_assert(h != 0);
	return h;
}

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_registry_insert_find)
{
	setup();
	reg_rec_t r = mkrec(NS_ADDR, 0x7f0000001000, 4096);
	r.ctx = 0x1234;
	r.aux = 77;
	r.parent = 0;
	r.alloc_stack = 42;
	r.owner = 7;
	r.refcount = 3;
	r.flags = REC_F_POOLED | REC_F_LIBRARY;
	r.kind = KIND_MANAGED;
	r.device = 2;
	reg_handle_t h;
	ck_assert(!registry_insert(&r, &h, NULL, NULL));
	ck_assert_uint_eq(registry_live_count(), 1);

	reg_rec_t o;
	reg_handle_t fh = 0;
	ck_assert(!registry_find(NS_ADDR, 0x7f0000001000, &fh, &o));
	ck_assert_uint_eq(fh, h);
	ck_assert_uint_eq(o.base, r.base);
	ck_assert_uint_eq(o.size, 4096);
	ck_assert_uint_eq(o.ctx, 0x1234);
	ck_assert_uint_eq(o.aux, 77);
	ck_assert_uint_eq(o.alloc_stack, 42);
	ck_assert_uint_eq(o.free_stack, 0);
	ck_assert_uint_eq(o.owner, 7);
	ck_assert_int_eq(o.refcount, 3);
	ck_assert_uint_eq(o.flags, REC_F_POOLED | REC_F_LIBRARY);
	ck_assert_uint_eq(o.kind, KIND_MANAGED);
	ck_assert_uint_eq(o.ns, NS_ADDR);
	ck_assert_int_eq(o.device, 2);
	ck_assert_str_eq(o.api, "cuMemAlloc_v2");

	memset(&o, 0, sizeof(o));
	ck_assert(!registry_get(h, &o));
	ck_assert_uint_eq(o.base, r.base);
	ck_assert_int_eq(o.refcount, 3);

	/* Not there: a neighbour, an interior pointer, another ns. */
	ck_assert(registry_find(NS_ADDR, 0x7f0000002000, NULL, NULL));
	ck_assert(registry_find(NS_ADDR, 0x7f0000001001, NULL, NULL));
	ck_assert(registry_find(NS_VMM, 0x7f0000001000, NULL, NULL));
	/* Out-of-range namespaces are refused. */
	ck_assert(registry_find(NS_NONE, 0x7f0000001000, NULL, NULL));
	ck_assert(registry_find((ns_t)99, 0x7f0000001000, NULL, NULL));
	r.ns = 99;
	ck_assert(registry_insert(&r, &h, NULL, NULL));
	registry_validate();
}
END_TEST

START_TEST(test_registry_find_containing)
{
	setup();
	/* One record per level, including ones crossing region edges. */
	struct {
		uintptr_t base;
		size_t size;
	} t[] = {
		{ 0x100000, 256 },                    /* level 0 */
		{ 0x20fff0, 0x20 },                   /* crosses a 64K edge */
		{ 0x30000000, 1u << 20 },             /* level 1 */
		{ 0x3ff00000, 3u << 20 },             /* crosses 16M edges */
		{ 0x500000000, 1ull << 31 },          /* level 2 */
		{ 0x10000000000, 1ull << 36 },        /* level 3 */
		{ 0x400000000000, 1ull << 42 },       /* level 4 */
	};
	reg_handle_t h[CW_ARRAY_SIZE(t)];
	for (size_t i = 0; i < CW_ARRAY_SIZE(t); i++)
		h[i] = put(NS_ADDR, t[i].base, t[i].size);
	registry_validate();
	for (size_t i = 0; i < CW_ARRAY_SIZE(t); i++) {
		uintptr_t probes[] = { t[i].base, t[i].base + 1,
			t[i].base + t[i].size / 2, t[i].base + t[i].size - 1 };
		for (size_t j = 0; j < CW_ARRAY_SIZE(probes); j++) {
			reg_handle_t fh = 0;
			reg_rec_t o;
			ck_assert_msg(!registry_find_containing(NS_ADDR,
			    probes[j], &fh, &o), "record %zu probe %zu", i, j);
			ck_assert_uint_eq(fh, h[i]);
			ck_assert_uint_eq(o.base, t[i].base);
		}
		/* One past the end and one before the start miss. */
		ck_assert(registry_find_containing(NS_ADDR,
		    t[i].base + t[i].size, NULL, NULL));
		ck_assert(registry_find_containing(NS_ADDR, t[i].base - 1,
		    NULL, NULL));
	}
	ck_assert(registry_find_containing(NS_ADDR, 0, NULL, NULL));
	ck_assert(registry_find_containing(NS_ADDR, UINTPTR_MAX, NULL, NULL));
	/* Another namespace never matches. */
	ck_assert(registry_find_containing(NS_VA, 0x100010, NULL, NULL));
	ck_assert(registry_find_containing(NS_MAP, 0x500000010, NULL, NULL));

	/* A size-0 record is found by base, never as a container. */
	reg_handle_t z = put(NS_ADDR, 0x900000, 0);
	ck_assert(!registry_find(NS_ADDR, 0x900000, NULL, NULL));
	ck_assert(registry_find_containing(NS_ADDR, 0x900000, NULL, NULL));
	(void)z;

	/* Many adjacent small records: each interior byte has its owner. */
	reg_handle_t hs[512];
	for (unsigned i = 0; i < 512; i++)
		hs[i] = put(NS_MAP, 0x7000000000 + (uintptr_t)i * 1000, 1000);
	for (unsigned i = 0; i < 512; i++) {
		reg_handle_t fh;
		ck_assert(!registry_find_containing(NS_MAP,
		    0x7000000000 + (uintptr_t)i * 1000 + 999, &fh, NULL));
		ck_assert_uint_eq(fh, hs[i]);
	}
	registry_validate();
}
END_TEST

START_TEST(test_registry_remove)
{
	setup();
	reg_handle_t a = put(NS_ADDR, 0x1000, 100);
	reg_handle_t b = put(NS_ADDR, 0x2000, 100);
	ck_assert_uint_eq(registry_live_count(), 2);
	reg_rec_t o;
	ck_assert_int_eq(registry_remove(a, NULL, NULL, 9, &o), 0);
	ck_assert_uint_eq(o.base, 0x1000);
	ck_assert_uint_eq(o.free_stack, 9);
	ck_assert_uint_eq(registry_live_count(), 1);
	ck_assert(registry_find(NS_ADDR, 0x1000, NULL, NULL));
	ck_assert(registry_find_containing(NS_ADDR, 0x1010, NULL, NULL));
	ck_assert(registry_get(a, &o));
	ck_assert(!registry_find(NS_ADDR, 0x2000, NULL, NULL));
	/* Twice: -1 (freed). */
	ck_assert_int_eq(registry_remove(a, NULL, NULL, 0, NULL),
	    -(int)REG_FREED);
	ck_assert_int_eq(registry_remove(b, NULL, NULL, 0, NULL), 0);
	ck_assert_uint_eq(registry_live_count(), 0);
	registry_validate();
}
END_TEST

START_TEST(test_registry_tombstones)
{
	setup();
	/* Double free vs invalid free. */
	reg_handle_t a = put(NS_ADDR, 0xa000, 64);
	ck_assert_int_eq(registry_remove(a, NULL, NULL, 11, NULL), 0);
	reg_rec_t o;
	ck_assert(!registry_tomb_find(NS_ADDR, 0xa000, &o));
	ck_assert_uint_eq(o.free_stack, 11);
	ck_assert_uint_eq(o.size, 64);
	ck_assert(registry_tomb_find(NS_ADDR, 0xb000, &o));
	ck_assert(registry_tomb_find(NS_VMM, 0xa000, &o));
	ck_assert(!registry_tomb_get(a, &o));
	ck_assert_uint_eq(o.base, 0xa000);
	ck_assert(registry_tomb_get(a + (1ull << 32), &o));
	ck_assert(registry_tomb_get(0, &o));

	/* The most recent of (ns, base) wins. */
	reg_handle_t b = put(NS_ADDR, 0xa000, 128);
	ck_assert_int_eq(registry_remove(b, NULL, NULL, 12, NULL), 0);
	ck_assert(!registry_tomb_find(NS_ADDR, 0xa000, &o));
	ck_assert_uint_eq(o.free_stack, 12);
	ck_assert_uint_eq(o.size, 128);
	ck_assert(!registry_tomb_get(a, &o));
	ck_assert_uint_eq(o.free_stack, 11);
	ck_assert(!registry_tomb_get(b, &o));
	ck_assert_uint_eq(o.free_stack, 12);

	/* Views (not keyed) leave a tombstone reachable by handle. */
	reg_handle_t v = put(NS_NONE, 0xa000, 16);
	ck_assert_int_eq(registry_remove(v, NULL, NULL, 13, NULL), 0);
	ck_assert(!registry_tomb_get(v, &o));
	ck_assert_uint_eq(o.kind, KIND_VIEW);
	ck_assert_uint_eq(o.free_stack, 13);

	/* Bounded by CUWARDEN_TOMBSTONES. */
	setenv("CUWARDEN_TOMBSTONES", "128", 1);
	options_reset();
	registry_reset();
	enum { N = 4000 };
	static reg_handle_t hs[N];
	for (unsigned i = 0; i < N; i++) {
		hs[i] = put(NS_ADDR, 0x10000000 + (uintptr_t)i * 256, 256);
		ck_assert_int_eq(registry_remove(hs[i], NULL, NULL, i + 1,
		    NULL), 0);
	}
	unsigned by_key = 0, by_handle = 0;
	for (unsigned i = 0; i < N; i++) {
		if (!registry_tomb_find(NS_ADDR, 0x10000000 +
		    (uintptr_t)i * 256, &o)) {
			by_key++;
			ck_assert_uint_eq(o.free_stack, i + 1);
		}
		if (!registry_tomb_get(hs[i], &o)) {
			by_handle++;
			ck_assert_uint_eq(o.free_stack, i + 1);
		}
	}
	ck_assert_uint_eq(by_key, by_handle);
	ck_assert_uint_le(by_key, 128);
	ck_assert_uint_ge(by_key, 64); /* most stripes saw frees */
	/* The last one is always remembered, the first never. */
	ck_assert(!registry_tomb_find(NS_ADDR, 0x10000000 +
	    (uintptr_t)(N - 1) * 256, NULL));
	ck_assert(registry_tomb_find(NS_ADDR, 0x10000000, NULL));
	/* Forgetting a tombstone never makes a handle live or invalid. */
	ck_assert_int_eq(registry_state(hs[0]), REG_FREED);
	registry_validate();

	/* 0 = none kept. */
	setenv("CUWARDEN_TOMBSTONES", "0", 1);
	options_reset();
	registry_reset();
	a = put(NS_ADDR, 0xa000, 64);
	ck_assert_int_eq(registry_remove(a, NULL, NULL, 11, NULL), 0);
	ck_assert(registry_tomb_find(NS_ADDR, 0xa000, NULL));
	ck_assert(registry_tomb_get(a, NULL));
	ck_assert_int_eq(registry_state(a), REG_FREED);
	registry_validate();
}
END_TEST

START_TEST(test_registry_state_transitions)
{
	setup();
	ck_assert_int_eq(registry_state(0), REG_INVALID);
	ck_assert_int_eq(registry_state(~0ull), REG_INVALID);
	reg_handle_t h = put(NS_ADDR, 0x5000, 10);
	ck_assert_int_eq(registry_state(h), REG_LIVE);
	/* Generation 0, a later generation, a slot never used. */
	ck_assert_int_eq(registry_state(h & 0xffffffffu), REG_INVALID);
	ck_assert_int_eq(registry_state(h + (1ull << 32)), REG_INVALID);
	ck_assert_int_eq(registry_state(h + 1), REG_INVALID);
	ck_assert_int_eq(registry_state(h + 100000), REG_INVALID);
	ck_assert_int_eq(registry_state((1ull << 32) | 0xfffffff0u),
	    REG_INVALID);
	reg_rec_t o;
	ck_assert(registry_get(h + (1ull << 32), &o));
	ck_assert_int_eq(registry_remove(h + (1ull << 32), NULL, NULL, 0,
	    NULL), -(int)REG_INVALID);
	ck_assert_int_eq(registry_remove(h + 1, NULL, NULL, 0, NULL),
	    -(int)REG_INVALID);

	ck_assert_int_eq(registry_remove(h, NULL, NULL, 0, NULL), 0);
	ck_assert_int_eq(registry_state(h), REG_FREED);
	ck_assert(registry_get(h, &o));
	ck_assert_int_eq(registry_update(h, NULL, NULL), -(int)REG_FREED);
	ck_assert_int_eq(registry_remove(h, NULL, NULL, 0, NULL),
	    -(int)REG_FREED);
	registry_validate();
}
END_TEST

START_TEST(test_registry_handle_reuse_generations)
{
	setup();
	reg_handle_t h1 = put(NS_ADDR, 0x5000, 10);
	ck_assert_int_eq(registry_remove(h1, NULL, NULL, 0, NULL), 0);
	/* The same key hashes to the same stripe: its freed slot is reused
	 * with the next generation. */
	reg_handle_t h2 = put(NS_ADDR, 0x5000, 10);
	ck_assert_uint_eq((uint32_t)h2, (uint32_t)h1);
	ck_assert_uint_eq(h2 >> 32, (h1 >> 32) + 1);
	ck_assert_int_eq(registry_state(h1), REG_FREED);
	ck_assert_int_eq(registry_state(h2), REG_LIVE);
	ck_assert_int_eq(registry_state(h2 + (1ull << 32)), REG_INVALID);
	ck_assert_int_eq(registry_remove(h1, NULL, NULL, 0, NULL),
	    -(int)REG_FREED);
	ck_assert_int_eq(registry_state(h2), REG_LIVE);
	reg_handle_t prev = h2;
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(registry_remove(prev, NULL, NULL, 0, NULL), 0);
		reg_handle_t n = put(NS_ADDR, 0x5000, 10);
		ck_assert_uint_eq((uint32_t)n, (uint32_t)h1);
		ck_assert_uint_gt(n, prev);
		ck_assert_int_eq(registry_state(prev), REG_FREED);
		prev = n;
	}
	ck_assert_int_eq(registry_state(h1), REG_FREED);
	ck_assert_int_eq(registry_state(prev), REG_LIVE);

	/* After a reset, no older handle reads LIVE again. */
	registry_reset();
	ck_assert_int_eq(registry_state(prev), REG_FREED);
	reg_handle_t n = put(NS_ADDR, 0x5000, 10);
	ck_assert(n != prev && n != h1 && n != h2);
	ck_assert_int_eq(registry_state(prev), REG_FREED);
	registry_validate();
}
END_TEST

START_TEST(test_registry_ns_separation)
{
	setup();
	reg_handle_t a = put(NS_ADDR, 0x10000, 0x1000);
	reg_handle_t v = put(NS_VMM, 0x10000, 0x2000);
	reg_handle_t r = put(NS_VA, 0x10000, 0x4000);
	ck_assert(a != v && v != r);
	reg_rec_t o;
	reg_handle_t fh;
	ck_assert(!registry_find(NS_VMM, 0x10000, &fh, &o));
	ck_assert_uint_eq(fh, v);
	ck_assert_uint_eq(o.size, 0x2000);
	ck_assert(!registry_find_containing(NS_VA, 0x13000, &fh, &o));
	ck_assert_uint_eq(fh, r);
	ck_assert(registry_find_containing(NS_ADDR, 0x13000, &fh, &o));
	ck_assert(registry_find_containing(NS_MAP, 0x10000, &fh, &o));
	ck_assert(registry_find(NS_ARRAY, 0x10000, &fh, &o));
	/* Removing one leaves the others. */
	ck_assert_int_eq(registry_remove(v, NULL, NULL, 0, NULL), 0);
	ck_assert(!registry_find(NS_ADDR, 0x10000, &fh, NULL));
	ck_assert_uint_eq(fh, a);
	ck_assert(!registry_tomb_find(NS_VMM, 0x10000, NULL));
	ck_assert(registry_tomb_find(NS_ADDR, 0x10000, NULL));

	/* NS_NONE records are reached by handle only. */
	reg_rec_t vr = mkrec(NS_NONE, 0x10100, 16);
	vr.parent = a;
	reg_handle_t view;
	ck_assert(!registry_insert(&vr, &view, NULL, NULL));
	reg_handle_t view2;
	ck_assert(!registry_insert(&vr, &view2, NULL, NULL));
	ck_assert(view != view2); /* no replacement among unkeyed */
	ck_assert(!registry_get(view, &o));
	ck_assert_uint_eq(o.parent, a);
	ck_assert(registry_find(NS_ADDR, 0x10100, &fh, NULL));
	ck_assert(!registry_find_containing(NS_ADDR, 0x10100, &fh, NULL));
	ck_assert_uint_eq(fh, a);
	ck_assert_uint_eq(registry_live_count(), 4);
	registry_validate();
}
END_TEST

START_TEST(test_registry_replace_on_duplicate)
{
	setup();
	reg_handle_t a = put(NS_ADDR, 0x40000, 0x100);
	reg_rec_t r = mkrec(NS_ADDR, 0x40000, 1u << 20);
	r.owner = 5;
	reg_handle_t b;
	reg_rec_t old;
	bool had = false;
	ck_assert(!registry_insert(&r, &b, &old, &had));
	ck_assert(had);
	ck_assert(a != b);
	ck_assert_uint_eq(old.size, 0x100);
	ck_assert_int_eq(registry_state(a), REG_FREED);
	ck_assert_int_eq(registry_state(b), REG_LIVE);
	ck_assert_uint_eq(registry_live_count(), 1);
	reg_rec_t o;
	reg_handle_t fh;
	ck_assert(!registry_find(NS_ADDR, 0x40000, &fh, &o));
	ck_assert_uint_eq(fh, b);
	ck_assert_uint_eq(o.owner, 5);
	/* The new size is what interior lookups see. */
	ck_assert(!registry_find_containing(NS_ADDR, 0x40000 + 0x8000, &fh,
	    NULL));
	ck_assert_uint_eq(fh, b);
	/* The replaced one left a tombstone. */
	ck_assert(!registry_tomb_get(a, &o));
	ck_assert_uint_eq(o.size, 0x100);
	/* Without out-parameters too. */
	reg_handle_t c;
	ck_assert(!registry_insert(&r, &c, NULL, NULL));
	ck_assert_int_eq(registry_state(b), REG_FREED);
	ck_assert_uint_eq(registry_live_count(), 1);
	registry_validate();
}
END_TEST

static int
bump(reg_rec_t *rec, void *arg)
{
	rec->refcount++;
	rec->owner = 99;
	rec->flags |= REC_F_ANNOTATED;
	rec->aux = 1234;
	/* These must be ignored. */
	rec->base = 1;
	rec->ns = NS_VMM;
	rec->kind = KIND_PINNED;
	if (arg != NULL)
		rec->size = *(size_t *)arg;
	return 17;
}

START_TEST(test_registry_update_callbacks)
{
	setup();
	reg_handle_t h = put(NS_ADDR, 0x800000, 4096);
	ck_assert_int_eq(registry_update(h, bump, NULL), 17);
	reg_rec_t o;
	ck_assert(!registry_get(h, &o));
	ck_assert_int_eq(o.refcount, 2);
	ck_assert_uint_eq(o.owner, 99);
	ck_assert_uint_eq(o.flags, REC_F_ANNOTATED);
	ck_assert_uint_eq(o.aux, 1234);
	ck_assert_uint_eq(o.base, 0x800000);
	ck_assert_uint_eq(o.ns, NS_ADDR);
	ck_assert_uint_eq(o.kind, KIND_DEVICE);
	ck_assert(!registry_find(NS_ADDR, 0x800000, NULL, NULL));
	ck_assert(registry_find(NS_VMM, 0x800000, NULL, NULL));

	/* Growing across levels keeps interior lookups right. */
	size_t sizes[] = { 1u << 20, 1ull << 33, 100, 1ull << 41, 4096 };
	for (size_t i = 0; i < CW_ARRAY_SIZE(sizes); i++) {
		ck_assert_int_eq(registry_update(h, bump, &sizes[i]), 17);
		reg_handle_t fh;
		ck_assert(!registry_find_containing(NS_ADDR,
		    0x800000 + sizes[i] - 1, &fh, &o));
		ck_assert_uint_eq(fh, h);
		ck_assert_uint_eq(o.size, sizes[i]);
		ck_assert(registry_find_containing(NS_ADDR,
		    0x800000 + sizes[i], NULL, NULL));
		registry_validate();
	}
	ck_assert_int_eq(registry_update(0, bump, NULL), -(int)REG_INVALID);
}
END_TEST

static int
refuse(reg_rec_t *rec, void *arg)
{
	(*(int *)arg)++;
	rec->refcount = 1000; /* must not stick */
	return rec->refcount > 1 ? 5 : 0;
}

static int
refuse_if_shared(reg_rec_t *rec, void *arg)
{
	(void)arg;
	return rec->refcount > 1 ? CW_ECONTRACT : 0;
}

START_TEST(test_registry_refusing_remove_changes_nothing)
{
	setup();
	reg_rec_t r = mkrec(NS_ADDR, 0xc0000, 512);
	r.refcount = 2;
	reg_handle_t h;
	ck_assert(!registry_insert(&r, &h, NULL, NULL));
	int calls = 0;
	reg_rec_t o;
	memset(&o, 0xa5, sizeof(o));
	reg_rec_t before = o;
	ck_assert_int_eq(registry_remove(h, refuse, &calls, 3, &o), 5);
	ck_assert_int_eq(calls, 1);
	ck_assert_mem_eq(&o, &before, sizeof(o)); /* *out untouched */
	ck_assert_int_eq(registry_state(h), REG_LIVE);
	ck_assert(!registry_get(h, &o));
	ck_assert_int_eq(o.refcount, 2);
	ck_assert(!registry_find(NS_ADDR, 0xc0000, NULL, NULL));
	ck_assert(!registry_find_containing(NS_ADDR, 0xc0100, NULL, NULL));
	ck_assert(registry_tomb_find(NS_ADDR, 0xc0000, NULL));
	ck_assert(registry_tomb_get(h, NULL));
	ck_assert_uint_eq(registry_live_count(), 1);
	registry_validate();

	ck_assert_int_eq(registry_remove(h, refuse_if_shared, NULL, 3, NULL),
	    CW_ECONTRACT);
	ck_assert_int_eq(registry_state(h), REG_LIVE);
	ck_assert(!registry_get(h, &o));
	ck_assert_int_eq(o.refcount, 2);
	registry_validate();
}
END_TEST

static int
set_single_ref(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->refcount = 1;
	return 0;
}

START_TEST(test_registry_check_accepts_and_removes)
{
	setup();
	reg_handle_t h = put(NS_ADDR, 0xd0000, 512);
	ck_assert_int_eq(registry_update(h, set_single_ref, NULL), 0);
	reg_rec_t o;
	ck_assert_int_eq(registry_remove(h, refuse_if_shared, NULL, 4, &o),
	    0);
	ck_assert_uint_eq(o.base, 0xd0000);
	ck_assert_uint_eq(o.free_stack, 4);
	ck_assert_int_eq(registry_state(h), REG_FREED);
	registry_validate();
}
END_TEST

typedef struct walk_s {
	reg_handle_t *seen;
	unsigned n;
	unsigned cap;
	unsigned stop_after;
} walk_t;

static int
walk(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	walk_t *w = arg;
	reg_rec_t o;
	/* Called with no lock held: the registry may be used from here. */
	if (registry_get(h, &o) || o.base != rec->base)
		return -100;
	if (w->n < w->cap)
		w->seen[w->n] = h;
	w->n++;
	return w->stop_after != 0 && w->n == w->stop_after ? 42 : 0;
}

static int
cmp_h(const void *a, const void *b)
{
	reg_handle_t x = *(const reg_handle_t *)a;
	reg_handle_t y = *(const reg_handle_t *)b;
	return x < y ? -1 : x > y;
}

START_TEST(test_registry_foreach_sees_every_live_record_once)
{
	setup();
	enum { N = 5000 };
	static reg_handle_t hs[N];
	static reg_handle_t seen[N + 10];
	for (unsigned i = 0; i < N; i++)
		hs[i] = put(i % 5 == 0 ? NS_NONE : NS_ADDR,
		    0x1000000 + (uintptr_t)i * 64, 64);
	unsigned live = N;
	for (unsigned i = 0; i < N; i += 3) {
		ck_assert_int_eq(registry_remove(hs[i], NULL, NULL, 0, NULL),
		    0);
		hs[i] = 0;
		live--;
	}
	walk_t w = { seen, 0, N + 10, 0 };
	ck_assert_int_eq(registry_foreach(walk, &w), 0);
	ck_assert_uint_eq(w.n, live);
	ck_assert_uint_eq(registry_live_count(), live);
	qsort(seen, w.n, sizeof(seen[0]), cmp_h);
	for (unsigned i = 1; i < w.n; i++)
		ck_assert(seen[i] != seen[i - 1]);
	unsigned found = 0;
	for (unsigned i = 0; i < N; i++) {
		if (hs[i] == 0)
			continue;
		ck_assert(bsearch(&hs[i], seen, w.n, sizeof(seen[0]), cmp_h));
		found++;
	}
	ck_assert_uint_eq(found, live);
	/* A non-zero return stops the walk and is returned. */
	walk_t w2 = { seen, 0, N + 10, 10 };
	ck_assert_int_eq(registry_foreach(walk, &w2), 42);
	ck_assert_uint_eq(w2.n, 10);
}
END_TEST

START_TEST(test_registry_million_records_128_bytes)
{
	setup();
	enum { N = 1000000 };
	uint64_t rng = 88172645463325252ull;
	/* No ck_assert in the loops: check logs every one it passes. */
	unsigned bad = 0;
	for (unsigned i = 0; i < N; i++) {
		reg_rec_t r = mkrec(NS_ADDR,
		    0x7f0000000000 + (uintptr_t)i * 4096, 256 + (i & 1023));
		reg_handle_t h;
		bad += registry_insert(&r, &h, NULL, NULL);
	}
	ck_assert_uint_eq(bad, 0);
	/* Free and make again a few thousand, so that every stripe's
	 * tombstone ring is mapped and counted too. */
	for (unsigned i = 0; i < N; i += 250) {
		uintptr_t base = 0x7f0000000000 + (uintptr_t)i * 4096;
		reg_handle_t h = 0;
		bad += registry_find(NS_ADDR, base, &h, NULL);
		bad += registry_remove(h, NULL, NULL, 1, NULL) != 0;
		reg_rec_t r = mkrec(NS_ADDR, base, 256 + (i & 1023));
		bad += registry_insert(&r, &h, NULL, NULL);
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert(!registry_tomb_find(NS_ADDR, 0x7f0000000000, NULL));
	size_t live = registry_live_count(), bytes = registry_bytes();
	ck_assert_uint_eq(live, N);
	ck_assert_msg(bytes / live <= 128, "%zu bytes for %zu records",
	    bytes, live);
	for (unsigned j = 0; j < 100000; j++) {
		unsigned i = (unsigned)(xorshift(&rng) % N);
		uintptr_t base = 0x7f0000000000 + (uintptr_t)i * 4096;
		reg_rec_t o;
		bad += registry_find(NS_ADDR, base, NULL, &o);
		bad += registry_find_containing(NS_ADDR, base + 255, NULL, &o);
		bad += o.base != base;
		bad += !registry_find_containing(NS_ADDR, base + 2000, NULL,
		    NULL);
	}
	ck_assert_uint_eq(bad, 0);
	registry_validate();
}
END_TEST

/* ---------------------------------------------------------- 16 threads */

enum { THREADS = 16, PER_THREAD = 20000, SHARED_KEYS = 256 };

static struct {
	unsigned long inserted;
	unsigned long replaced;
	unsigned long removed;
	unsigned long errors;
	unsigned long shared_removed[SHARED_KEYS];
} ctr;
static reg_handle_t shared_h[SHARED_KEYS];
static pthread_barrier_t barrier;

static int
incref(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->refcount++;
	return 0;
}

static int
resize(reg_rec_t *rec, void *arg)
{
	rec->size = (size_t)(uintptr_t)arg;
	return 0;
}

static void
add(unsigned long *c, unsigned long v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static void *
worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (t + 1);
	reg_handle_t mine[PER_THREAD];
	unsigned long errors = 0, inserted = 0, removed = 0, replaced = 0;
	pthread_barrier_wait(&barrier);
	/* Everyone removes the same shared records: one winner each. */
	for (unsigned k = 0; k < SHARED_KEYS; k++) {
		unsigned i = (k + t * 17) % SHARED_KEYS;
		int r = registry_remove(shared_h[i], NULL, NULL, t + 1, NULL);
		if (r == 0) {
			add(&ctr.shared_removed[i], 1);
			removed++;
		} else if (r != -(int)REG_FREED) {
			errors++;
		}
	}
	for (unsigned i = 0; i < PER_THREAD; i++) {
		/* Own records, own address range. */
		uintptr_t base = ((uintptr_t)(t + 1) << 36) +
		    (uintptr_t)i * 512;
		reg_rec_t r = mkrec(i % 7 == 0 ? NS_NONE : NS_ADDR, base, 300);
		r.owner = t;
		if (registry_insert(&r, &mine[i], NULL, NULL)) {
			errors++;
			continue;
		}
		inserted++;
		if (registry_update(mine[i], incref, NULL) != 0)
			errors++;
		reg_rec_t o;
		if (r.ns == NS_ADDR) {
			reg_handle_t fh;
			if (registry_find(NS_ADDR, base, &fh, &o) ||
			    fh != mine[i] || o.refcount != 2)
				errors++;
			if (registry_find_containing(NS_ADDR, base + 299, &fh,
			    NULL) || fh != mine[i])
				errors++;
			if (!registry_find_containing(NS_ADDR, base + 300,
			    NULL, NULL))
				errors++;
		}
		/* Grow to another level and back, under the lookups of
		 * other threads. */
		if (i % 3 == 0 &&
		    (registry_update(mine[i], resize, (void *)70000) != 0 ||
		    registry_update(mine[i], resize, (void *)300) != 0))
			errors++;
		/* Someone else's range: whatever is found must fit. */
		unsigned other = (unsigned)(xorshift(&rng) % THREADS);
		uintptr_t p = ((uintptr_t)(other + 1) << 36) +
		    (xorshift(&rng) % PER_THREAD) * 512 + 100;
		if (!registry_find_containing(NS_ADDR, p, NULL, &o) &&
		    (o.base > p || p - o.base >= o.size ||
		    o.owner != other))
			errors++;
		/* Keys shared by all threads: replacements race. */
		reg_rec_t s = mkrec(NS_VMM, 0x1000 + (xorshift(&rng) % 64),
		    64);
		reg_handle_t sh;
		bool had;
		if (registry_insert(&s, &sh, NULL, &had))
			errors++;
		else
			inserted++;
		if (had)
			replaced++;
		if ((xorshift(&rng) & 3) == 0) {
			int rr = registry_remove(sh, NULL, NULL, 0, NULL);
			if (rr == 0)
				removed++;
			else if (rr != -(int)REG_FREED)
				errors++;
		}
		/* Free every other own record, some of them late. */
		if (i % 2 == 1) {
			unsigned j = i - (unsigned)(xorshift(&rng) % 2) * 1;
			if (registry_state(mine[j]) == REG_LIVE) {
				if (registry_remove(mine[j], NULL, NULL, 1,
				    NULL) != 0)
					errors++;
				else
					removed++;
			}
		}
	}
	add(&ctr.errors, errors);
	add(&ctr.inserted, inserted);
	add(&ctr.removed, removed);
	add(&ctr.replaced, replaced);
	return NULL;
}

static int
count_walk(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	(void)h;
	(void)rec;
	(*(size_t *)arg)++;
	return 0;
}

START_TEST(test_registry_16_threads)
{
	setup();
	memset(&ctr, 0, sizeof(ctr));
	for (unsigned k = 0; k < SHARED_KEYS; k++)
		shared_h[k] = put(NS_ARRAY, 0x100 + k, 1);
	ctr.inserted = SHARED_KEYS;
	pthread_t th[THREADS];
	pthread_barrier_init(&barrier, NULL, THREADS);
	for (unsigned t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, worker,
		    (void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&barrier);
	ck_assert_uint_eq(ctr.errors, 0);
	for (unsigned k = 0; k < SHARED_KEYS; k++) {
		ck_assert_uint_eq(ctr.shared_removed[k], 1);
		ck_assert_int_eq(registry_state(shared_h[k]), REG_FREED);
	}
	size_t live = registry_live_count();
	ck_assert_uint_eq(live, ctr.inserted - ctr.replaced - ctr.removed);
	size_t walked = 0;
	ck_assert_int_eq(registry_foreach(count_walk, &walked), 0);
	ck_assert_uint_eq(walked, live);
	/* Exactly half of each thread's own records are left, plus the
	 * shared keys that are live. */
	size_t shared_live = 0;
	for (uintptr_t k = 0; k < 64; k++)
		shared_live += !registry_find(NS_VMM, 0x1000 + k, NULL, NULL);
	ck_assert_uint_eq(live, THREADS * PER_THREAD / 2 + shared_live);
	registry_validate();
}
END_TEST

START_TEST(test_registry_fork_hooks)
{
	setup();
	reg_handle_t h = put(NS_ADDR, 0xf000, 16);
	registry_prefork();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		registry_postfork_child();
		/* The child keeps the data and can use every lock. */
		int ok = registry_state(h) == REG_LIVE &&
		    !registry_find(NS_ADDR, 0xf000, NULL, NULL);
		reg_handle_t h2;
		reg_rec_t r = mkrec(NS_ADDR, 0xe000, 16);
		ok = ok && !registry_insert(&r, &h2, NULL, NULL);
		registry_validate();
		registry_reset();
		ok = ok && registry_live_count() == 0 &&
		    registry_state(h) == REG_FREED;
		_exit(ok ? 0 : 1);
	}
	registry_postfork_parent();
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* The parent is untouched by the child. */
	ck_assert_int_eq(registry_state(h), REG_LIVE);
	ck_assert(registry_find(NS_ADDR, 0xe000, NULL, NULL));
	ck_assert(!registry_insert(&(reg_rec_t){ .ns = NS_ADDR, .base = 1 },
	    &h, NULL, NULL));
	registry_validate();
}
END_TEST

START_TEST(test_registry_reset)
{
	setup();
	reg_handle_t h[100];
	for (unsigned i = 0; i < 100; i++)
		h[i] = put(i % 2 ? NS_ADDR : NS_NONE, 0x100000 + i * 16, 16);
	ck_assert_int_eq(registry_remove(h[1], NULL, NULL, 0, NULL), 0);
	registry_reset();
	ck_assert_uint_eq(registry_live_count(), 0);
	for (unsigned i = 0; i < 100; i++)
		ck_assert_int_eq(registry_state(h[i]), REG_FREED);
	ck_assert(registry_find(NS_ADDR, 0x100000 + 16, NULL, NULL));
	ck_assert(registry_find_containing(NS_ADDR, 0x100000 + 17, NULL,
	    NULL));
	ck_assert(registry_tomb_find(NS_ADDR, 0x100000 + 16, NULL));
	size_t walked = 0;
	ck_assert_int_eq(registry_foreach(count_walk, &walked), 0);
	ck_assert_uint_eq(walked, 0);
	registry_validate();
	/* Usable again; the same keys come back. */
	reg_handle_t n = put(NS_ADDR, 0x100000 + 16, 16);
	ck_assert(!registry_find_containing(NS_ADDR, 0x100000 + 17, NULL,
	    NULL));
	ck_assert_int_eq(registry_state(n), REG_LIVE);
	registry_validate();
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* Counts this thread's calls of the allocator while `counting` is set
 * (the sanitizers own malloc, so this test is left out of their builds). */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static __thread volatile int counting;
static __thread volatile unsigned allocs;

void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
int posix_memalign(void **p, size_t a, size_t n);
void *aligned_alloc(size_t a, size_t n);

void *
malloc(size_t n)
{
	allocs += counting;
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t m)
{
	allocs += counting;
	return __libc_calloc(n, m);
}

void *
realloc(void *p, size_t n)
{
	allocs += counting;
	return __libc_realloc(p, n);
}

int
posix_memalign(void **p, size_t a, size_t n)
{
	allocs += counting;
	*p = __libc_memalign(a, n);
	return *p == NULL ? 12 /* ENOMEM */ : 0;
}

void *
aligned_alloc(size_t a, size_t n)
{
	allocs += counting;
	return __libc_memalign(a, n);
}

static int
noop_walk(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	(void)h;
	(void)rec;
	(*(unsigned *)arg)++;
	return 0;
}

START_TEST(test_registry_never_mallocs)
{
	/* From the very first call (initialisation, option read, first
	 * mappings) through growth of every table. */
	enum { N = 20000 };
	static reg_handle_t hs[N];
	unsigned bad = 0, walked = 0;
	void *volatile probe = malloc(1); /* the counter itself works */
	free(probe);
	counting = 1;
	probe = malloc(1);
	counting = 0;
	free(probe);
	ck_assert_uint_eq(allocs, 1);
	allocs = 0;
	counting = 1;
	for (unsigned i = 0; i < N; i++) {
		reg_rec_t r = mkrec(i % 9 ? NS_ADDR : NS_NONE,
		    0x7e0000000000 + (uintptr_t)i * 8192, 100 + i);
		bad += registry_insert(&r, &hs[i], NULL, NULL);
		bad += registry_state(hs[i]) != REG_LIVE;
		bad += registry_update(hs[i], bump, NULL) != 17;
		if (r.ns == NS_ADDR) {
			bad += registry_find(NS_ADDR, r.base, NULL, &r);
			bad += registry_find_containing(NS_ADDR, r.base + 50,
			    NULL, &r);
		}
	}
	for (unsigned i = 0; i < N; i += 2) {
		reg_rec_t o;
		bad += registry_remove(hs[i], NULL, NULL, 5, &o) != 0;
		bad += registry_tomb_get(hs[i], &o);
	}
	bad += registry_foreach(noop_walk, &walked);
	registry_validate();
	(void)registry_bytes();
	(void)registry_live_count();
	registry_prefork();
	registry_postfork_parent();
	registry_reset();
	counting = 0;
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(walked, N / 2);
	ck_assert_uint_eq(allocs, 0);
}
END_TEST
#endif

START_TEST(test_registry_kind_names)
{
	const char *want[] = { "device", "managed", "pinned", "registered",
		"async", "vmm", "va", "mapping", "array", "ipc", "view",
		"graph" };
	ck_assert_uint_eq(CW_ARRAY_SIZE(want), KIND_COUNT);
	for (unsigned k = 0; k < KIND_COUNT; k++)
		ck_assert_str_eq(kind_name((kind_t)k), want[k]);
	ck_assert_str_eq(kind_name(KIND_COUNT), "unknown");
}
END_TEST

static Suite *
make_registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_registry_insert_find);
	tcase_add_test(tc, test_registry_find_containing);
	tcase_add_test(tc, test_registry_remove);
	tcase_add_test(tc, test_registry_tombstones);
	tcase_add_test(tc, test_registry_state_transitions);
	tcase_add_test(tc, test_registry_handle_reuse_generations);
	tcase_add_test(tc, test_registry_ns_separation);
	tcase_add_test(tc, test_registry_replace_on_duplicate);
	tcase_add_test(tc, test_registry_update_callbacks);
	tcase_add_test(tc, test_registry_refusing_remove_changes_nothing);
	tcase_add_test(tc, test_registry_check_accepts_and_removes);
	tcase_add_test(tc, test_registry_foreach_sees_every_live_record_once);
	tcase_add_test(tc, test_registry_fork_hooks);
	tcase_add_test(tc, test_registry_reset);
	tcase_add_test(tc, test_registry_kind_names);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	tcase_add_test(tc, test_registry_never_mallocs);
#endif
	suite_add_tcase(s, tc);
	tc = tcase_create("scale");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_registry_million_records_128_bytes);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_registry_16_threads);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_registry_suite)
