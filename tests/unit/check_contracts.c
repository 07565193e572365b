/*
 * check_contracts.c -- every rule of doc/contracts.md through the public
 * API against the simulated driver: the answer the table gives, the
 * violation record (type, api, address, stacks), and that a refused call
 * changes nothing (refcount, owner, registry count, stats).  Fault
 * injection: allocation failures, failed frees and the ledger.
 */
#include "preamble.h"

#include <signal.h>
#include <stdint.h>

#include "core_test.h"
#include "owner.h"
#include "unit.h"

#define MIB ((size_t)1 << 20)

/* cuwarden_annotate.h declares these weak, and a weak reference does not
 * pull annotate.o out of the convenience archive: declare them plainly. */
int cw_annotate_owner(const void *ptr, const char *owner);
int cw_annotate_retain(const void *ptr);
int cw_annotate_release(const void *ptr);
int cw_annotate_transfer(const void *ptr, const char *new_owner);

static cw_owner_t alice, bob;

static void
setup(void)
{
	load_fixture();
	quiet();
	ck_assert_int_eq(cw_owner_register("alice", &alice), CW_OK);
	ck_assert_int_eq(cw_owner_register("bob", &bob), CW_OK);
}

static cw_buf_t
alloc_ok(size_t size, cw_kind_t kind, cw_owner_t owner)
{
	cw_buf_t b = CW_BUF_NONE;

	ck_assert_int_eq(cw_alloc(&b, size, kind, 0, owner), CW_OK);
	ck_assert_uint_ne(b, CW_BUF_NONE);
	return b;
}

/* The last violation is type/api/address with the stacks expected. */
static void
assert_violation(vtype_t type, const char *api, uintptr_t address,
    bool alloc_stack, bool free_stack)
{
	violation_t v = last_violation();

	ck_assert_msg(v.type == type, "type %s, expected %s",
	    violation_name(v.type), violation_name(type));
	ck_assert_str_eq(v.api, api);
	ck_assert_uint_eq(v.address, address);
	ck_assert_uint_ne(v.stack, 0);
	if (alloc_stack)
		ck_assert_uint_ne(v.alloc_stack, 0);
	else
		ck_assert_uint_eq(v.alloc_stack, 0);
	if (free_stack)
		ck_assert_uint_ne(v.free_stack, 0);
	else
		ck_assert_uint_eq(v.free_stack, 0);
	ck_assert_str_eq(cw_last_error()->rule, violation_name(type));
}

/* ========================================================= allocation */

START_TEST(test_contracts_alloc_free_roundtrip)
{
	setup();
	snapshot_t s0 = snap();
	cw_buf_t b = alloc_ok(MIB, CW_DEVICE, alice);

	ck_assert_uint_eq(registry_live_count(), s0.live + 1);
	ck_assert_ptr_nonnull(cw_ptr(b));
	ck_assert_uint_eq(cw_size(b), MIB);
	ck_assert_int_eq(cw_kind(b), CW_DEVICE);
	ck_assert_int_eq(cw_device(b), 0);
	ck_assert_int_eq(cw_refcount(b), 1);
	cw_owner_t o = 0;
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_uint_eq(o, alice);
	cw_stats_t st;
	cw_stats(&st);
	ck_assert_uint_eq(st.bytes[CW_DEVICE].current, MIB);
	ck_assert_uint_eq(st.allocations[CW_DEVICE].current, 1);

	reg_rec_t rec;
	ck_assert(!registry_get(b, &rec));
	ck_assert_str_eq(rec.api, "cw_alloc");
	ck_assert_uint_ne(rec.alloc_stack, 0);
	ck_assert(rec.flags & REC_F_LIBRARY);
	ck_assert_uint_eq(rec.ns, NS_ADDR);

	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_uint_eq(registry_live_count(), s0.live);
	cw_stats(&st);
	ck_assert_uint_eq(st.bytes[CW_DEVICE].current, 0);
	ck_assert_uint_eq(st.bytes[CW_DEVICE].total, MIB);
	ck_assert_uint_eq(st.violations, 0);
}
END_TEST

START_TEST(test_contracts_alloc_every_kind)
{
	setup();
	for (int k = CW_DEVICE; k <= CW_PINNED; k++) {
		cw_buf_t b = alloc_ok(4096 + (size_t)k, (cw_kind_t)k, 0);
		ck_assert_int_eq(cw_kind(b), k);
		ck_assert_uint_eq(cw_size(b), 4096 + (size_t)k);
		ck_assert_int_eq(cw_free(b), CW_OK);
	}
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

START_TEST(test_contracts_alloc_bad_arguments)
{
	cw_buf_t b = 77;

	setup();
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_alloc(NULL, 64, CW_DEVICE, 0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_alloc(&b, 0, CW_DEVICE, 0, 0), CW_EINVAL);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc");
	ck_assert_int_eq(cw_alloc(&b, ((size_t)1 << 47) + 1, CW_DEVICE, 0, 0),
	    CW_EINVAL);
	ck_assert_uint_eq(cw_last_error()->requested, ((size_t)1 << 47) + 1);
	ck_assert_int_eq(cw_alloc(&b, SIZE_MAX, CW_MANAGED, 0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_alloc(&b, 64, (cw_kind_t)3, 0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_alloc(&b, 64, (cw_kind_t)-1, 0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, -1, 0), CW_ENODEV);
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, CW_CPU, 0), CW_ENODEV);
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, 1, 0), CW_ENODEV);
	ck_assert_int_eq(cw_alloc(&b, 64, CW_PINNED, 1000, 0), CW_ENODEV);
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, 0, 12345), CW_EINVAL);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc");
	ck_assert_ptr_null(cw_last_error()->rule);
	ck_assert_uint_eq(b, 77); /* *buf is set only on success */
	ck_assert_uint_eq(violation_count(), 0); /* argument errors only */
	ck_assert_unchanged(s0, snap());
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.live_allocations, 0);
}
END_TEST

START_TEST(test_contracts_alloc_failure_injected)
{
	cw_buf_t b = 77;

	setup();
	pools_off();
	snapshot_t s0 = snap();
	fc_inject("fail_alloc", 1);
	int r = cw_alloc(&b, 3 * MIB, CW_DEVICE, 0, alice);
	ck_assert_msg(r == CW_ENOMEM || r == CW_ECUDA, "status %d", r);
	ck_assert_int_eq(cw_last_error()->status, r);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc");
	ck_assert_uint_eq(cw_last_error()->requested, 3 * MIB);
	if (r == CW_ECUDA)
		ck_assert_int_ne(cw_last_error()->cuda_error, 0);
	ck_assert_uint_eq(b, 77);
	ck_assert_unchanged(s0, snap());
	ck_assert_uint_eq(violation_count(), 0);
	/* The next one works. */
	b = alloc_ok(3 * MIB, CW_DEVICE, alice);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_alloc_failure_pooled)
{
	cw_buf_t b = 77;

	setup();
	fc_inject("fail_alloc_from", 1); /* the driver gives nothing more */
	int r = cw_alloc(&b, 64 * MIB, CW_DEVICE, 0, alice);
	ck_assert_msg(r == CW_ENOMEM || r == CW_ECUDA, "status %d", r);
	ck_assert_uint_eq(cw_last_error()->requested, 64 * MIB);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc");
	ck_assert_uint_eq(b, 77);
	ck_assert_uint_eq(registry_live_count(), 0);
	fc_inject("clear", 0);
}
END_TEST

START_TEST(test_contracts_no_device)
{
	cw_buf_t b = 0;

	fc_inject = NULL;
	setenv("FAKECUDA_NO_DEVICE", "1", 1);
	quiet();
	ck_assert_int_eq(cw_alloc(&b, 64, CW_DEVICE, 0, 0), CW_ENODEV);
	ck_assert_str_eq(cw_last_error()->function, "cw_alloc");
	ck_assert_int_eq(cw_trim(0), CW_ENODEV);
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

/* ============================================================== frees */

START_TEST(test_contracts_double_free)
{
	setup();
	cw_buf_t b = alloc_ok(MIB, CW_DEVICE, alice);
	uintptr_t base = (uintptr_t)cw_ptr(b);
	ck_assert_int_eq(cw_free(b), CW_OK);
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_free(b), CW_EFREED);
	assert_violation(V_DOUBLE_FREE, "cw_free", base, true, true);
	violation_t v = last_violation();
	ck_assert_uint_eq(v.size, MIB);
	ck_assert_int_eq(v.kind, KIND_DEVICE);
	ck_assert_int_eq(v.device, 0);
	ck_assert_uint_eq(v.owner, alice);
	ck_assert_uint_eq(cw_last_error()->buf, b);
	ck_assert_uint_eq(cw_last_error()->address, base);
	ck_assert_int_eq(cw_last_error()->status, CW_EFREED);
	ck_assert_str_eq(cw_last_error()->function, "cw_free");
	ck_assert_unchanged(s0, snap());
	ck_assert_uint_eq(violation_count_type(V_DOUBLE_FREE), 1);
	/* The async flavour says the same under its own name. */
	ck_assert_int_eq(cw_free_async(b, NULL), CW_EFREED);
	assert_violation(V_DOUBLE_FREE, "cw_free_async", base, true, true);
}
END_TEST

START_TEST(test_contracts_invalid_free)
{
	setup();
	snapshot_t s0 = snap();
	uint64_t foreign[] = { 0x1, 0xdeadbeefcafef00dULL, 0xffffffffffffffffULL,
	    0x0000000100000000ULL, 0x123456789ULL };
	for (size_t i = 0; i < CW_ARRAY_SIZE(foreign); i++) {
		ck_assert_int_eq(cw_free(foreign[i]), CW_EINVAL);
		assert_violation(V_INVALID_FREE, "cw_free", foreign[i], false,
		    false);
		ck_assert_int_eq(cw_free_async(foreign[i], NULL), CW_EINVAL);
	}
	ck_assert_uint_eq(violation_count_type(V_INVALID_FREE),
	    2 * CW_ARRAY_SIZE(foreign));
	/* CW_BUF_NONE is an argument error, not a violation. */
	uint64_t n = violation_count();
	ck_assert_int_eq(cw_free(CW_BUF_NONE), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), n);
	ck_assert_unchanged(s0, snap());
}
END_TEST

START_TEST(test_contracts_free_while_retained)
{
	setup();
	cw_buf_t b = alloc_ok(MIB, CW_MANAGED, alice);
	void *p = cw_ptr(b);
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 2);
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_free(b), CW_ECONTRACT);
	assert_violation(V_FREE_WHILE_REFERENCED, "cw_free", (uintptr_t)p,
	    true, false);
	ck_assert_int_eq(cw_free_async(b, NULL), CW_ECONTRACT);
	ck_assert_unchanged(s0, snap());
	ck_assert_int_eq(cw_refcount(b), 2); /* nothing freed */
	ck_assert_ptr_eq(cw_ptr(b), p);
	cw_owner_t o;
	cw_owner_of(b, &o);
	ck_assert_uint_eq(o, alice);
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 1);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_free_while_viewed)
{
	setup();
	cw_buf_t b = alloc_ok(MIB, CW_DEVICE, alice), v;
	ck_assert_int_eq(cw_view(&v, b, 4096, 4096), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 2); /* the view's reference */
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_free(b), CW_ECONTRACT);
	assert_violation(V_FREE_WHILE_REFERENCED, "cw_free",
	    (uintptr_t)cw_ptr(b), true, false);
	ck_assert_unchanged(s0, snap());
	ck_assert_int_eq(cw_free(v), CW_OK); /* a view frees no memory */
	ck_assert_int_eq(cw_refcount(b), 1);
	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_uint_eq(registry_live_count(), 0);
}
END_TEST

START_TEST(test_contracts_free_view_frees_no_memory)
{
	struct fakecuda_counters c0, c1;

	setup();
	pools_off();
	cw_buf_t b = alloc_ok(MIB, CW_DEVICE, 0), v;
	ck_assert_int_eq(cw_view(&v, b, 0, MIB), CW_OK);
	fc_counters(&c0);
	ck_assert_int_eq(cw_free(v), CW_OK);
	fc_counters(&c1);
	ck_assert_uint_eq(c1.mem_free, c0.mem_free);
	ck_assert_uint_eq(c1.live_device, c0.live_device);
	cw_stats_t st;
	cw_stats(&st);
	ck_assert_uint_eq(st.views_live, 0);
	ck_assert_uint_eq(st.bytes[CW_DEVICE].current, MIB);
	/* A freed view is freed: double free, use after free. */
	ck_assert_int_eq(cw_free(v), CW_EFREED);
	ck_assert_int_eq(last_violation().type, V_DOUBLE_FREE);
	ck_assert_int_eq(cw_upload(v, 0, "x", 1), CW_EFREED);
	ck_assert_int_eq(last_violation().type, V_USE_AFTER_FREE);
	ck_assert_int_eq(cw_free(b), CW_OK);
	fc_counters(&c1);
	ck_assert_uint_eq(c1.live_device, c0.live_device - 1);
}
END_TEST

/* ========================================================= references */

START_TEST(test_contracts_refcount_underflow)
{
	setup();
	cw_buf_t b = alloc_ok(8192, CW_PINNED, alice);
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_release(b), CW_ECONTRACT);
	assert_violation(V_REFCOUNT_UNDERFLOW, "cw_release",
	    (uintptr_t)cw_ptr(b), true, false);
	ck_assert_int_eq(cw_refcount(b), 1);
	ck_assert_unchanged(s0, snap());
	/* Retain twice, release twice, the third is refused. */
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 3);
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_ECONTRACT);
	ck_assert_uint_eq(violation_count_type(V_REFCOUNT_UNDERFLOW), 2);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_release_cannot_drop_views_reference)
{
	setup();
	cw_buf_t b = alloc_ok(8192, CW_DEVICE, 0), v;
	ck_assert_int_eq(cw_view(&v, b, 0, 16), CW_OK);
	/* refcount 2 = owner + view: neither is the caller's to release. */
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_release(b), CW_ECONTRACT);
	assert_violation(V_REFCOUNT_UNDERFLOW, "cw_release",
	    (uintptr_t)cw_ptr(b), true, false);
	ck_assert_int_eq(cw_release(v), CW_ECONTRACT);
	ck_assert_int_eq(cw_refcount(b), 2);
	ck_assert_unchanged(s0, snap());
	/* With a retain on top, one release is allowed, not two. */
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_ECONTRACT);
	ck_assert_int_eq(cw_free(b), CW_ECONTRACT); /* still viewed */
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 1);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_transfer)
{
	setup();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE, alice);
	cw_owner_t o = 0;

	ck_assert_int_eq(cw_transfer(b, bob), CW_OK);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_uint_eq(o, bob);

	ck_assert_int_eq(cw_retain(b), CW_OK);
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_transfer(b, alice), CW_ECONTRACT);
	assert_violation(V_TRANSFER_WHILE_SHARED, "cw_transfer",
	    (uintptr_t)cw_ptr(b), true, false);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_uint_eq(o, bob); /* unchanged */
	ck_assert_int_eq(cw_refcount(b), 2);
	ck_assert_unchanged(s0, snap());
	ck_assert_int_eq(cw_release(b), CW_OK);

	/* Unknown owner: an argument error, nothing changes. */
	uint64_t n = violation_count();
	ck_assert_int_eq(cw_transfer(b, 999), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), n);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_uint_eq(o, bob);
	/* To no owner: allowed. */
	ck_assert_int_eq(cw_transfer(b, CW_OWNER_NONE), CW_OK);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_uint_eq(o, CW_OWNER_NONE);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_transfer_of_viewed_is_shared)
{
	setup();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE, alice), v;
	ck_assert_int_eq(cw_view(&v, b, 0, 16), CW_OK);
	ck_assert_int_eq(cw_transfer(b, bob), CW_ECONTRACT);
	ck_assert_int_eq(last_violation().type, V_TRANSFER_WHILE_SHARED);
	/* Through the view: the same allocation, the same answer. */
	ck_assert_int_eq(cw_transfer(v, bob), CW_ECONTRACT);
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_transfer(b, bob), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

/* ===================================================== use after free */

START_TEST(test_contracts_use_after_free_everywhere)
{
	char buf[16] = { 0 };
	cw_buf_t v;

	setup();
	cw_buf_t live = alloc_ok(4096, CW_MANAGED, 0);
	cw_buf_t b = alloc_ok(4096, CW_MANAGED, alice);
	uintptr_t base = (uintptr_t)cw_ptr(b);
	ck_assert_int_eq(cw_free(b), CW_OK);
	snapshot_t s0 = snap();

	ck_assert_int_eq(cw_view(&v, b, 0, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_view", base, true, true);
	ck_assert_int_eq(cw_upload(b, 0, buf, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_upload", base, true, true);
	ck_assert_int_eq(cw_download(b, 0, buf, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_download", base, true, true);
	ck_assert_int_eq(cw_copy(live, 0, b, 0, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_copy", base, true, true);
	ck_assert_int_eq(cw_copy(b, 0, live, 0, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_copy", base, true, true);
	ck_assert_int_eq(cw_memset(b, 0, 0, 16), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_memset", base, true, true);
	ck_assert_int_eq(cw_advise(b, CW_ADVISE_SET_READ_MOSTLY, 0),
	    CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_advise", base, true, true);
	ck_assert_int_eq(cw_prefetch(b, 0, NULL), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_prefetch", base, true, true);
	ck_assert_int_eq(cw_retain(b), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_retain", base, true, true);
	ck_assert_int_eq(cw_release(b), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_release", base, true, true);
	ck_assert_int_eq(cw_transfer(b, bob), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_transfer", base, true, true);
	ck_assert_uint_eq(violation_count_type(V_USE_AFTER_FREE), 11);
	/* n == 0 is still a use of a freed handle. */
	ck_assert_int_eq(cw_upload(b, 0, buf, 0), CW_EFREED);

	/* Queries answer CW_EFREED without a violation. */
	uint64_t n = violation_count();
	cw_owner_t o;
	ck_assert_int_eq(cw_refcount(b), CW_EFREED);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_EFREED);
	ck_assert_int_eq(cw_kind(b), CW_EFREED);
	ck_assert_int_eq(cw_device(b), CW_EFREED);
	ck_assert_ptr_null(cw_ptr(b));
	ck_assert_int_eq(cw_last_error()->status, CW_EFREED);
	ck_assert_uint_eq(cw_size(b), 0);
	ck_assert_uint_eq(violation_count(), n);
	ck_assert_unchanged(s0, snap());
	ck_assert_int_eq(cw_free(live), CW_OK);
}
END_TEST

/* ============================================================= bounds */

START_TEST(test_contracts_out_of_bounds_writes_nothing)
{
	char src[64], dst[64];

	setup();
	cw_buf_t b = alloc_ok(256, CW_PINNED, 0);
	unsigned char *p = cw_ptr(b);
	memset(p, 0xab, 256);
	memset(src, 0x11, sizeof(src));
	snapshot_t s0 = snap();

	ck_assert_int_eq(cw_upload(b, 200, src, 64), CW_EBOUNDS);
	assert_violation(V_OUT_OF_BOUNDS, "cw_upload", (uintptr_t)p, true,
	    false);
	ck_assert_int_eq(cw_upload(b, 257, src, 0), CW_EBOUNDS);
	ck_assert_int_eq(cw_upload(b, SIZE_MAX, src, 2), CW_EBOUNDS);
	ck_assert_int_eq(cw_upload(b, 8, src, SIZE_MAX - 4), CW_EBOUNDS);
	ck_assert_int_eq(cw_memset(b, 1, 0, 256), CW_EBOUNDS);
	assert_violation(V_OUT_OF_BOUNDS, "cw_memset", (uintptr_t)p, true,
	    false);
	ck_assert_int_eq(cw_download(b, 255, dst, 2), CW_EBOUNDS);
	ck_assert_int_eq(cw_copy(b, 0, b, 200, 64), CW_EBOUNDS);
	ck_assert_int_eq(cw_copy(b, 250, b, 0, 8), CW_EBOUNDS);
	for (int i = 0; i < 256; i++)
		ck_assert_uint_eq(p[i], 0xab);
	ck_assert_uint_eq(violation_count_type(V_OUT_OF_BOUNDS), 8);
	ck_assert_unchanged(s0, snap());
	/* Exactly at the end is fine. */
	ck_assert_int_eq(cw_upload(b, 192, src, 64), CW_OK);
	ck_assert_int_eq(cw_upload(b, 256, src, 0), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_view_bounds)
{
	cw_buf_t v, w;

	setup();
	cw_buf_t b = alloc_ok(1000, CW_DEVICE, 0);
	snapshot_t s0 = snap();
	ck_assert_int_eq(cw_view(&v, b, 900, 101), CW_EBOUNDS);
	assert_violation(V_OUT_OF_BOUNDS, "cw_view", (uintptr_t)cw_ptr(b),
	    true, false);
	ck_assert_int_eq(cw_view(&v, b, SIZE_MAX, 2), CW_EBOUNDS);
	ck_assert_int_eq(cw_view(&v, b, 1, SIZE_MAX), CW_EBOUNDS);
	ck_assert_unchanged(s0, snap());
	ck_assert_int_eq(cw_refcount(b), 1);
	/* Argument errors. */
	ck_assert_int_eq(cw_view(NULL, b, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_view(&v, b, 0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_view(&v, 0xabcdef0123ULL, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_view(&v, CW_BUF_NONE, 0, 1), CW_EINVAL);
	ck_assert_uint_eq(violation_count_type(V_OUT_OF_BOUNDS), 3);

	ck_assert_int_eq(cw_view(&v, b, 100, 500), CW_OK);
	ck_assert_int_eq(cw_view(&w, v, 100, 401), CW_EBOUNDS); /* the view's */
	ck_assert_int_eq(cw_view(&w, v, 100, 400), CW_OK);
	ck_assert_int_eq(cw_free(w), CW_OK);
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_views_of_views)
{
	cw_buf_t v1, v2;

	setup();
	cw_buf_t b = alloc_ok(4096, CW_PINNED, alice);
	char *p = cw_ptr(b);
	ck_assert_int_eq(cw_view(&v1, b, 100, 1000), CW_OK);
	ck_assert_int_eq(cw_view(&v2, v1, 10, 20), CW_OK);
	ck_assert_ptr_eq(cw_ptr(v1), p + 100);
	ck_assert_ptr_eq(cw_ptr(v2), p + 110);
	ck_assert_uint_eq(cw_size(v2), 20);
	ck_assert_int_eq(cw_kind(v2), CW_PINNED);
	ck_assert_int_eq(cw_device(v2), 0);
	ck_assert_int_eq(cw_refcount(b), 3); /* owner + two views */
	ck_assert_int_eq(cw_refcount(v2), 3); /* the allocation's */
	cw_owner_t o;
	ck_assert_int_eq(cw_owner_of(v2, &o), CW_OK);
	ck_assert_uint_eq(o, alice);
	reg_rec_t rec;
	ck_assert(!registry_get(v2, &rec));
	ck_assert_uint_eq(rec.parent, b); /* the allocation, not v1 */
	/* Freeing the middle view leaves the inner one valid. */
	ck_assert_int_eq(cw_free(v1), CW_OK);
	ck_assert_int_eq(cw_upload(v2, 0, "0123456789abcdefghij", 20), CW_OK);
	ck_assert_int_eq(memcmp(p + 110, "0123456789abcdefghij", 20), 0);
	ck_assert_int_eq(cw_upload(v2, 1, "0123456789abcdefghij", 20),
	    CW_EBOUNDS);
	ck_assert_int_eq(cw_refcount(b), 2);
	/* Retain through a view acts on the allocation. */
	ck_assert_int_eq(cw_retain(v2), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 3);
	ck_assert_int_eq(cw_release(v2), CW_OK);
	ck_assert_int_eq(cw_free(v2), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
	cw_stats_t st;
	cw_stats(&st);
	ck_assert_uint_eq(st.views_live, 0);
}
END_TEST

/* ======================================================== failed frees */

START_TEST(test_contracts_failed_free_goes_to_ledger)
{
	setup();
	pools_off();
	cw_buf_t b = alloc_ok(MIB, CW_DEVICE, alice);
	uintptr_t base = (uintptr_t)cw_ptr(b);
	fc_inject("fail_free", 1);
	ck_assert_int_eq(cw_free(b), CW_ECUDA);
	assert_violation(V_FAILED_FREE, "cw_free", base, true, false);
	violation_t v = last_violation();
	ck_assert_int_ne(v.cuda_error, 0);
	ck_assert_int_ne(cw_last_error()->cuda_error, 0);
	ck_assert_ptr_nonnull(cw_last_error()->cuda_error_name);
	ck_assert(ledger_contains(base));
	ck_assert_uint_eq(ledger_failures(), 1); /* added exactly once */
	ck_assert_uint_eq(ledger_size(), 1);
	/* The handle is freed, the memory counted as gone. */
	ck_assert_uint_eq(registry_live_count(), 0);
	ck_assert_int_eq(cw_free(b), CW_EFREED);
	cw_stats_t st;
	cw_stats(&st);
	ck_assert_uint_eq(st.failed_frees, 1);
	ck_assert_uint_eq(st.failed_free_ledger, 1);
	ck_assert_uint_eq(st.bytes[CW_DEVICE].current, 0);
	ck_assert_uint_eq(st.allocations[CW_DEVICE].current, 0);
}
END_TEST

START_TEST(test_contracts_ledger_overflow)
{
	enum { N = LEDGER_MAX + 8 };
	static cw_buf_t bufs[N];

	setup();
	pools_off();
	setenv("CUWARDEN_STACK_DEPTH", "0", 1); /* keep it fast */
	options_reset();
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(cw_alloc(&bufs[i], 256, CW_PINNED, 0, 0),
		    CW_OK);
	fc_inject("fail_free_from", 1);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(cw_free(bufs[i]), CW_ECUDA);
	fc_inject("clear", 0);
	ck_assert_uint_eq(ledger_failures(), N);
	ck_assert_uint_eq(ledger_size(), LEDGER_MAX);
	ck_assert_uint_eq(ledger_overflow(), 8);
	cw_stats_t st;
	cw_stats(&st);
	ck_assert_uint_eq(st.failed_frees, N);
	ck_assert_uint_eq(st.failed_free_overflow, 8);
	ck_assert_uint_eq(st.failed_free_ledger, LEDGER_MAX);
	ck_assert_uint_eq(st.allocations[CW_PINNED].current, 0);
	ck_assert_uint_eq(violation_count_type(V_FAILED_FREE), N);
	ck_assert_uint_eq(registry_live_count(), 0);
}
END_TEST

/* ========================================================== annotations */

START_TEST(test_contracts_annotations)
{
	setup();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE, alice);
	void *p = cw_ptr(b);
	cw_owner_t o;

	ck_assert_int_eq(cw_annotate_owner(p, "carol"), CW_OK);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_str_eq(cw_owner_name(o), "carol");
	reg_rec_t rec;
	ck_assert(!registry_get(b, &rec));
	ck_assert(rec.flags & REC_F_ANNOTATED);

	ck_assert_int_eq(cw_annotate_retain(p), CW_OK);
	ck_assert_int_eq(cw_refcount(b), 2);
	ck_assert_int_eq(cw_free(b), CW_ECONTRACT);
	ck_assert_int_eq(cw_annotate_transfer(p, "dave"), CW_ECONTRACT);
	assert_violation(V_TRANSFER_WHILE_SHARED, "cw_annotate_transfer",
	    (uintptr_t)p, true, false);
	ck_assert_int_eq(cw_annotate_release(p), CW_OK);
	ck_assert_int_eq(cw_annotate_release(p), CW_ECONTRACT);
	assert_violation(V_REFCOUNT_UNDERFLOW, "cw_annotate_release",
	    (uintptr_t)p, true, false);
	ck_assert_int_eq(cw_annotate_transfer(p, "dave"), CW_OK);
	ck_assert_int_eq(cw_owner_of(b, &o), CW_OK);
	ck_assert_str_eq(cw_owner_name(o), "dave");

	/* Only the base of a live allocation; names 1..127 printable. */
	uint64_t n = violation_count();
	ck_assert_int_eq(cw_annotate_retain((char *)p + 1), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_owner((char *)p + 8, "x"), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_release(NULL), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_owner(p, ""), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_owner(p, NULL), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_transfer(p, "bad\nname"), CW_EINVAL);
	ck_assert_int_eq(cw_annotate_retain((void *)0x12345), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), n);
	ck_assert_int_eq(cw_refcount(b), 1);

	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_annotate_retain(p), CW_EINVAL); /* gone */
}
END_TEST

START_TEST(test_contracts_annotations_on_foreign_records)
{
	/* The shim's records (driver allocations) are NS_ADDR records
	 * without REC_F_LIBRARY: annotations apply, cw_free refuses. */
	reg_rec_t rec;
	reg_handle_t h;

	setup();
	memset(&rec, 0, sizeof(rec));
	rec.base = 0x7f0000200000;
	rec.size = 2 * MIB;
	rec.api = "cuMemAlloc_v2";
	rec.refcount = 1;
	rec.kind = KIND_DEVICE;
	rec.ns = NS_ADDR;
	ck_assert(!registry_insert(&rec, &h, NULL, NULL));

	ck_assert_int_eq(cw_annotate_retain((void *)rec.base), CW_OK);
	ck_assert_int_eq(cw_refcount(h), 2);
	cw_buf_t found;
	ck_assert_int_eq(cw_lookup((void *)(rec.base + 4096), &found), CW_OK);
	ck_assert_uint_eq(found, h);
	ck_assert_int_eq(cw_annotate_release((void *)rec.base), CW_OK);
	ck_assert_int_eq(cw_free(h), CW_EINVAL);
	assert_violation(V_INVALID_FREE, "cw_free", rec.base, false, false);
	ck_assert_int_eq(registry_state(h), REG_LIVE); /* still there */
}
END_TEST

/* ============================================================= lookup */

START_TEST(test_contracts_lookup)
{
	cw_buf_t f = 0;

	setup();
	cw_buf_t b = alloc_ok(10000, CW_MANAGED, 0);
	char *p = cw_ptr(b);
	ck_assert_int_eq(cw_lookup(p, &f), CW_OK);
	ck_assert_uint_eq(f, b);
	ck_assert_int_eq(cw_lookup(p + 9999, &f), CW_OK);
	ck_assert_uint_eq(f, b);
	f = 0;
	ck_assert_int_eq(cw_lookup(p + 10000, &f), CW_EINVAL);
	ck_assert_int_eq(cw_lookup(p - 1, &f), CW_EINVAL);
	ck_assert_int_eq(cw_lookup(NULL, &f), CW_EINVAL);
	ck_assert_int_eq(cw_lookup(p, NULL), CW_EINVAL);
	ck_assert_uint_eq(f, 0);
	/* A view is not found by address: its allocation is. */
	cw_buf_t v;
	ck_assert_int_eq(cw_view(&v, b, 5000, 10), CW_OK);
	ck_assert_int_eq(cw_lookup(p + 5000, &f), CW_OK);
	ck_assert_uint_eq(f, b);
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_lookup(p, &f), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

START_TEST(test_contracts_free_async)
{
	setup();
	for (int k = CW_DEVICE; k <= CW_PINNED; k++) {
		cw_buf_t b = alloc_ok(MIB, (cw_kind_t)k, 0);
		ck_assert_int_eq(cw_free_async(b, NULL), CW_OK);
		ck_assert_int_eq(registry_state(b), REG_FREED);
	}
	cw_stats_t st;
	cw_stats(&st);
	for (int k = 0; k < 3; k++)
		ck_assert_uint_eq(st.allocations[k].current, 0);
}
END_TEST

START_TEST(test_contracts_freed_without_tombstone)
{
	/* No tombstones kept: a freed handle is still told from one never
	 * issued (generations), only its stacks are gone. */
	setenv("CUWARDEN_TOMBSTONES", "0", 1);
	options_reset();
	setup();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE, 0);
	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_EFREED);
	assert_violation(V_DOUBLE_FREE, "cw_free", b, false, false);
	ck_assert_ptr_nonnull(strstr(cw_last_error()->message, "forgotten"));
	ck_assert_int_eq(cw_retain(b), CW_EFREED);
	assert_violation(V_USE_AFTER_FREE, "cw_retain", b, false, false);
}
END_TEST

START_TEST(test_contracts_refusal_messages)
{
	cw_buf_t v;

	setup();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE, 0);
	ck_assert_int_eq(cw_view(&v, b, 0, 8), CW_OK);
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_ECONTRACT);
	ck_assert_msg(strstr(cw_last_error()->message,
	    "2 retain(s) and 1 view(s)") != NULL, "%s",
	    cw_last_error()->message);
	ck_assert_int_eq(cw_transfer(b, 0), CW_ECONTRACT);
	ck_assert_ptr_nonnull(strstr(cw_last_error()->message,
	    "owner unchanged"));
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_ECONTRACT);
	ck_assert_ptr_nonnull(strstr(cw_last_error()->message,
	    "no retained reference"));
	ck_assert_int_eq(cw_last_error()->status, CW_ECONTRACT);
	ck_assert_str_eq(cw_last_error()->function, "cw_release");
	ck_assert_uint_eq(cw_last_error()->buf, b);
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

START_TEST(test_contracts_abort_on_violation)
{
	setenv("CUWARDEN_ON_VIOLATION", "abort", 1);
	setup();
	options_reset();
	cw_buf_t b = alloc_ok(64, CW_DEVICE, 0);
	ck_assert_int_eq(cw_retain(b), CW_OK);
	ck_assert_int_eq(cw_release(b), CW_OK); /* no violation: goes on */
	cw_free(b);
	cw_free(b); /* double_free: logged, then abort() */
}
END_TEST

static Suite *
make_contracts_suite(void)
{
	Suite *s = suite_create("contracts");
	TCase *tc = tcase_create("contracts");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_contracts_alloc_free_roundtrip);
	tcase_add_test(tc, test_contracts_alloc_every_kind);
	tcase_add_test(tc, test_contracts_alloc_bad_arguments);
	tcase_add_test(tc, test_contracts_alloc_failure_injected);
	tcase_add_test(tc, test_contracts_alloc_failure_pooled);
	tcase_add_test(tc, test_contracts_no_device);
	tcase_add_test(tc, test_contracts_double_free);
	tcase_add_test(tc, test_contracts_invalid_free);
	tcase_add_test(tc, test_contracts_free_while_retained);
	tcase_add_test(tc, test_contracts_free_while_viewed);
	tcase_add_test(tc, test_contracts_free_view_frees_no_memory);
	tcase_add_test(tc, test_contracts_refcount_underflow);
	tcase_add_test(tc, test_contracts_release_cannot_drop_views_reference);
	tcase_add_test(tc, test_contracts_transfer);
	tcase_add_test(tc, test_contracts_transfer_of_viewed_is_shared);
	tcase_add_test(tc, test_contracts_use_after_free_everywhere);
	tcase_add_test(tc, test_contracts_out_of_bounds_writes_nothing);
	tcase_add_test(tc, test_contracts_view_bounds);
	tcase_add_test(tc, test_contracts_views_of_views);
	tcase_add_test(tc, test_contracts_failed_free_goes_to_ledger);
	tcase_add_test(tc, test_contracts_ledger_overflow);
	tcase_add_test(tc, test_contracts_annotations);
	tcase_add_test(tc, test_contracts_annotations_on_foreign_records);
	tcase_add_test(tc, test_contracts_lookup);
	tcase_add_test(tc, test_contracts_free_async);
	tcase_add_test(tc, test_contracts_freed_without_tombstone);
	tcase_add_test(tc, test_contracts_refusal_messages);
	tcase_add_test_raise_signal(tc, test_contracts_abort_on_violation,
	    SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_contracts_suite)
