/*
 * check_xfer.c -- data movement and unified-memory hints through the
 * simulated driver: upload/download round trips for every kind, views,
 * memset, copies across kinds, driver failures, advise and prefetch
 * (including the no-op where concurrent managed access is missing).
 */
#include "preamble.h"

#include "core_test.h"
#include "unit.h"

#define KIB ((size_t)1 << 10)

static void
setup(void)
{
	load_fixture();
	quiet();
}

static cw_buf_t
alloc_ok(size_t size, cw_kind_t kind)
{
	cw_buf_t b = CW_BUF_NONE;

	ck_assert_int_eq(cw_alloc(&b, size, kind, 0, 0), CW_OK);
	return b;
}

static void
pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

/* Host view of what a handle holds (device memory through the fixture's
 * alias, host-addressable kinds directly). */
static unsigned char *
host_of(cw_buf_t b)
{
	void *p = cw_ptr(b);

	if (cw_kind(b) == CW_DEVICE)
		return fc_host_alias((CUdeviceptr)p, cw_size(b));
	return p;
}

static void
roundtrip(cw_kind_t kind)
{
	static unsigned char in[64 * KIB], out[64 * KIB];

	setup();
	cw_buf_t b = alloc_ok(sizeof(in), kind);
	pattern(in, sizeof(in), (unsigned)kind);
	ck_assert_int_eq(cw_upload(b, 0, in, sizeof(in)), CW_OK);
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(cw_download(b, 0, out, sizeof(out)), CW_OK);
	ck_assert_int_eq(memcmp(in, out, sizeof(in)), 0);
	ck_assert_int_eq(memcmp(host_of(b), in, sizeof(in)), 0);

	/* At an offset, partial. */
	ck_assert_int_eq(cw_upload(b, 1000, "hello", 5), CW_OK);
	ck_assert_int_eq(cw_download(b, 999, out, 7), CW_OK);
	ck_assert_uint_eq(out[0], in[999]);
	ck_assert_int_eq(memcmp(out + 1, "hello", 5), 0);
	ck_assert_uint_eq(out[6], in[1005]);

	/* memset, then read back around it. */
	ck_assert_int_eq(cw_memset(b, 4096, 0x5a, 100), CW_OK);
	ck_assert_int_eq(cw_download(b, 4095, out, 102), CW_OK);
	ck_assert_uint_eq(out[0], in[4095]);
	for (int i = 1; i <= 100; i++)
		ck_assert_uint_eq(out[i], 0x5a);
	ck_assert_uint_eq(out[101], in[4196]);
	ck_assert_int_eq(cw_memset(b, 0, 0x1ff, 1), CW_OK); /* as memset */
	ck_assert_int_eq(cw_download(b, 0, out, 1), CW_OK);
	ck_assert_uint_eq(out[0], 0xff);

	/* Through a view: offsets are the view's. */
	cw_buf_t v;
	ck_assert_int_eq(cw_view(&v, b, 8192, 1024), CW_OK);
	ck_assert_int_eq(cw_upload(v, 10, "view", 4), CW_OK);
	ck_assert_int_eq(cw_download(b, 8202, out, 4), CW_OK);
	ck_assert_int_eq(memcmp(out, "view", 4), 0);
	ck_assert_int_eq(cw_download(v, 1020, out, 5), CW_EBOUNDS);
	ck_assert_int_eq(cw_free(v), CW_OK);

	/* n == 0: nothing, successfully; NULL with n == 0 is fine. */
	ck_assert_int_eq(cw_upload(b, 0, NULL, 0), CW_OK);
	ck_assert_int_eq(cw_download(b, sizeof(in), NULL, 0), CW_OK);
	ck_assert_int_eq(cw_memset(b, 0, 0, 0), CW_OK);
	/* NULL with n > 0: an argument error, no violation. */
	ck_assert_int_eq(cw_upload(b, 0, NULL, 1), CW_EINVAL);
	ck_assert_int_eq(cw_download(b, 0, NULL, 1), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 1); /* the view's bounds */
	ck_assert_int_eq(cw_free(b), CW_OK);
}

START_TEST(test_xfer_roundtrip_device)
{
	roundtrip(CW_DEVICE);
}
END_TEST

START_TEST(test_xfer_roundtrip_managed)
{
	roundtrip(CW_MANAGED);
}
END_TEST

START_TEST(test_xfer_roundtrip_pinned)
{
	roundtrip(CW_PINNED);
}
END_TEST

START_TEST(test_xfer_paths_by_kind)
{
	struct fakecuda_counters c0, c1;
	char x[16] = "0123456789abcde";

	setup();
	cw_buf_t d = alloc_ok(4096, CW_DEVICE);
	cw_buf_t m = alloc_ok(4096, CW_MANAGED);
	cw_buf_t p = alloc_ok(4096, CW_PINNED);

	/* Pinned: host memcpy/memset, no driver call. */
	fc_counters(&c0);
	ck_assert_int_eq(cw_upload(p, 0, x, 16), CW_OK);
	ck_assert_int_eq(cw_download(p, 0, x, 16), CW_OK);
	ck_assert_int_eq(cw_memset(p, 0, 1, 16), CW_OK);
	fc_counters(&c1);
	ck_assert_uint_eq(c1.memcpy_calls, c0.memcpy_calls);
	ck_assert_uint_eq(c1.memset_calls, c0.memset_calls);

	/* Device and managed: through the driver. */
	ck_assert_int_eq(cw_upload(d, 0, x, 16), CW_OK);
	ck_assert_int_eq(cw_upload(m, 0, x, 16), CW_OK);
	ck_assert_int_eq(cw_download(m, 0, x, 16), CW_OK);
	ck_assert_int_eq(cw_memset(d, 0, 1, 16), CW_OK);
	ck_assert_int_eq(cw_memset(m, 0, 1, 16), CW_OK);
	fc_counters(&c0);
	ck_assert_uint_eq(c0.memcpy_calls, c1.memcpy_calls + 3);
	ck_assert_uint_eq(c0.memset_calls, c1.memset_calls + 2);

	ck_assert_int_eq(cw_free(d), CW_OK);
	ck_assert_int_eq(cw_free(m), CW_OK);
	ck_assert_int_eq(cw_free(p), CW_OK);
}
END_TEST

START_TEST(test_xfer_copy_across_kinds)
{
	static unsigned char in[8 * KIB], out[8 * KIB];
	cw_buf_t b[3];

	setup();
	pattern(in, sizeof(in), 7);
	for (int k = 0; k < 3; k++)
		b[k] = alloc_ok(sizeof(in), (cw_kind_t)k);
	ck_assert_int_eq(cw_upload(b[CW_PINNED], 0, in, sizeof(in)), CW_OK);
	/* pinned -> device -> managed -> pinned (shifted by 100) */
	ck_assert_int_eq(cw_copy(b[CW_DEVICE], 0, b[CW_PINNED], 0, sizeof(in)),
	    CW_OK);
	ck_assert_int_eq(cw_copy(b[CW_MANAGED], 0, b[CW_DEVICE], 0,
	    sizeof(in)), CW_OK);
	ck_assert_int_eq(cw_memset(b[CW_PINNED], 0, 0, sizeof(in)), CW_OK);
	ck_assert_int_eq(cw_copy(b[CW_PINNED], 100, b[CW_MANAGED], 0,
	    sizeof(in) - 100), CW_OK);
	ck_assert_int_eq(cw_download(b[CW_PINNED], 100, out, sizeof(in) - 100),
	    CW_OK);
	ck_assert_int_eq(memcmp(out, in, sizeof(in) - 100), 0);
	/* Overlap in host memory: memmove semantics. */
	ck_assert_int_eq(cw_copy(b[CW_PINNED], 1, b[CW_PINNED], 0, 100),
	    CW_OK);
	/* Overlap in device memory: refused, an argument error. */
	ck_assert_int_eq(cw_copy(b[CW_DEVICE], 1, b[CW_DEVICE], 0, 100),
	    CW_EINVAL);
	cw_buf_t v;
	ck_assert_int_eq(cw_view(&v, b[CW_DEVICE], 50, 100), CW_OK);
	ck_assert_int_eq(cw_copy(v, 0, b[CW_DEVICE], 0, 100), CW_EINVAL);
	ck_assert_int_eq(cw_copy(v, 0, b[CW_DEVICE], 1000, 100), CW_OK);
	ck_assert_int_eq(cw_free(v), CW_OK);
	ck_assert_int_eq(cw_copy(b[CW_DEVICE], 0, b[CW_DEVICE], 0, 0), CW_OK);
	ck_assert_uint_eq(violation_count(), 0);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(cw_free(b[k]), CW_OK);
}
END_TEST

START_TEST(test_xfer_driver_failure)
{
	char x[16] = { 0 };

	setup();
	pools_off();
	cw_buf_t b = alloc_ok(4096, CW_DEVICE);
	/* The memory goes away behind our back: the driver refuses. */
	ck_assert_int_eq(driver_get()->cuMemFree_v2((CUdeviceptr)cw_ptr(b)),
	    CUDA_SUCCESS);
	ck_assert_int_eq(cw_upload(b, 0, x, 16), CW_ECUDA);
	const cw_error_t *e = cw_last_error();
	ck_assert_str_eq(e->function, "cw_upload");
	ck_assert_int_ne(e->cuda_error, 0);
	ck_assert_ptr_nonnull(e->cuda_error_name);
	ck_assert_msg(strncmp(e->cuda_error_name, "CUDA_ERROR_", 11) == 0,
	    "%s", e->cuda_error_name);
	ck_assert_ptr_nonnull(strstr(e->message, "cuMemcpyHtoD_v2"));
	ck_assert_int_eq(cw_download(b, 0, x, 16), CW_ECUDA);
	ck_assert_int_eq(cw_memset(b, 0, 0, 16), CW_ECUDA);
	ck_assert_str_eq(cw_last_error()->function, "cw_memset");
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

START_TEST(test_xfer_bad_handles)
{
	char x[16] = { 0 };

	setup();
	cw_buf_t b = alloc_ok(64, CW_DEVICE);
	uint64_t foreign = 0x5eed5eed5eed5eedULL;
	ck_assert_int_eq(cw_upload(foreign, 0, x, 1), CW_EINVAL);
	ck_assert_int_eq(cw_download(foreign, 0, x, 1), CW_EINVAL);
	ck_assert_int_eq(cw_memset(foreign, 0, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_copy(foreign, 0, b, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_copy(b, 0, foreign, 0, 1), CW_EINVAL);
	ck_assert_int_eq(cw_upload(CW_BUF_NONE, 0, x, 1), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 0);
	ck_assert_int_eq(cw_free(b), CW_OK);
}
END_TEST

/* ============================================================= advise */

START_TEST(test_xfer_advise)
{
	setup();
	cw_buf_t m = alloc_ok(64 * KIB, CW_MANAGED);
	for (int a = CW_ADVISE_SET_READ_MOSTLY; a <= CW_ADVISE_UNSET_ACCESSED_BY;
	    a++) {
		ck_assert_int_eq(cw_advise(m, (cw_advice_t)a, 0), CW_OK);
		ck_assert_int_eq(cw_advise(m, (cw_advice_t)a, CW_CPU), CW_OK);
	}
	cw_buf_t v;
	ck_assert_int_eq(cw_view(&v, m, 4096, 4096), CW_OK);
	ck_assert_int_eq(cw_advise(v, CW_ADVISE_SET_PREFERRED_LOCATION, 0),
	    CW_OK);
	ck_assert_int_eq(cw_free(v), CW_OK);

	/* Bad advice, bad devices, wrong kinds. */
	ck_assert_int_eq(cw_advise(m, (cw_advice_t)0, 0), CW_EINVAL);
	ck_assert_int_eq(cw_advise(m, (cw_advice_t)7, 0), CW_EINVAL);
	ck_assert_int_eq(cw_advise(m, (cw_advice_t)-1, 0), CW_EINVAL);
	ck_assert_int_eq(cw_advise(m, CW_ADVISE_SET_READ_MOSTLY, 1),
	    CW_ENODEV);
	ck_assert_int_eq(cw_advise(m, CW_ADVISE_SET_READ_MOSTLY, -2),
	    CW_ENODEV);
	cw_buf_t d = alloc_ok(4096, CW_DEVICE), p = alloc_ok(4096, CW_PINNED);
	ck_assert_int_eq(cw_advise(d, CW_ADVISE_SET_READ_MOSTLY, 0),
	    CW_ENOTSUP);
	ck_assert_int_eq(cw_advise(p, CW_ADVISE_SET_READ_MOSTLY, CW_CPU),
	    CW_ENOTSUP);
	ck_assert_int_eq(cw_advise(0x77777777ULL, CW_ADVISE_SET_READ_MOSTLY,
	    0), CW_EINVAL);
	ck_assert_uint_eq(violation_count(), 0);
	cw_free(d);
	cw_free(p);
	cw_free(m);
}
END_TEST

/* =========================================================== prefetch */

START_TEST(test_xfer_prefetch)
{
	setenv("FAKECUDA_DEVICES", "2", 1);
	setup();
	cw_buf_t m = alloc_ok(64 * KIB, CW_MANAGED);
	ck_assert_int_eq(cw_prefetch(m, 0, NULL), CW_OK);
	ck_assert_int_eq(cw_prefetch(m, 1, NULL), CW_OK); /* any device */
	ck_assert_int_eq(cw_prefetch(m, CW_CPU, NULL), CW_OK);
	ck_assert_int_eq(cw_prefetch(m, 2, NULL), CW_ENODEV);
	ck_assert_int_eq(cw_prefetch(m, -5, NULL), CW_ENODEV);
	cw_buf_t d = alloc_ok(4096, CW_DEVICE), p = alloc_ok(4096, CW_PINNED);
	ck_assert_int_eq(cw_prefetch(d, 0, NULL), CW_ENOTSUP);
	ck_assert_int_eq(cw_prefetch(p, CW_CPU, NULL), CW_ENOTSUP);
	ck_assert_int_eq(cw_prefetch(0x1234ULL, 0, NULL), CW_EINVAL);
	ck_assert_uint_eq(out_lines, 0); /* nothing logged */
	cw_free(d);
	cw_free(p);
	cw_free(m);
}
END_TEST

START_TEST(test_xfer_prefetch_noop_without_concurrent_access)
{
	setenv("FAKECUDA_NO_CONCURRENT_MANAGED", "1", 1);
	setup();
	int v = 1;
	ck_assert(!driver_attr(0, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
	    &v));
	ck_assert_int_eq(v, 0);
	cw_buf_t m = alloc_ok(64 * KIB, CW_MANAGED);
	unsigned long before = out_lines;
	/* The simulated driver fails every prefetch here: CW_OK proves
	 * that none was made. */
	ck_assert_int_eq(cw_prefetch(m, 0, NULL), CW_OK);
	ck_assert_uint_eq(out_lines, before + 1); /* logged */
	ck_assert_ptr_nonnull(strstr(out_last, "no-op"));
	ck_assert_int_eq(cw_prefetch(m, CW_CPU, NULL), CW_OK);
	ck_assert_int_eq(cw_prefetch(m, 0, NULL), CW_OK);
	ck_assert_uint_eq(out_lines, before + 1); /* once */
	/* The checks before the gate still apply. */
	ck_assert_int_eq(cw_prefetch(m, 3, NULL), CW_ENODEV);
	cw_free(m);
}
END_TEST

START_TEST(test_xfer_second_device)
{
	static unsigned char in[4096], out[4096];
	CUstream s = NULL;

	setenv("FAKECUDA_DEVICES", "2", 1);
	setup();
	pattern(in, sizeof(in), 3);
	for (int k = 0; k < 3; k++) {
		cw_buf_t b;
		ck_assert_int_eq(cw_alloc(&b, sizeof(in), (cw_kind_t)k, 1, 0),
		    CW_OK);
		ck_assert_int_eq(cw_device(b), 1);
		ck_assert_int_eq(cw_upload(b, 0, in, sizeof(in)), CW_OK);
		ck_assert_int_eq(cw_download(b, 0, out, sizeof(out)), CW_OK);
		ck_assert_int_eq(memcmp(in, out, sizeof(in)), 0);
		if (k == CW_MANAGED) {
			/* Prefetch on a stream of device 0's context. */
			ck_assert_int_eq(driver_bind(0), CW_OK);
			ck_assert_int_eq(driver_get()->cuStreamCreate(&s, 0),
			    CUDA_SUCCESS);
			ck_assert_int_eq(cw_prefetch(b, 0, (cw_stream_t)s),
			    CW_OK);
			ck_assert_int_eq(cw_prefetch(b, 1, NULL), CW_OK);
			ck_assert_int_eq(driver_get()->cuStreamSynchronize(s),
			    CUDA_SUCCESS);
		}
		ck_assert_int_eq(cw_free(b), CW_OK);
	}
	ck_assert_int_eq(cw_trim(1), CW_OK);
	ck_assert_uint_eq(violation_count(), 0);
}
END_TEST

static Suite *
make_xfer_suite(void)
{
	Suite *s = suite_create("xfer");
	TCase *tc = tcase_create("xfer");

	tcase_add_test(tc, test_xfer_roundtrip_device);
	tcase_add_test(tc, test_xfer_roundtrip_managed);
	tcase_add_test(tc, test_xfer_roundtrip_pinned);
	tcase_add_test(tc, test_xfer_paths_by_kind);
	tcase_add_test(tc, test_xfer_copy_across_kinds);
	tcase_add_test(tc, test_xfer_driver_failure);
	tcase_add_test(tc, test_xfer_bad_handles);
	tcase_add_test(tc, test_xfer_advise);
	tcase_add_test(tc, test_xfer_prefetch);
	tcase_add_test(tc, test_xfer_prefetch_noop_without_concurrent_access);
	tcase_add_test(tc, test_xfer_second_device);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_xfer_suite)
