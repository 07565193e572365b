/*
 * check_api_gpu.c -- the public API against the real driver: every kind's
 * round trip, memset, views, copies across kinds, advise and prefetch
 * (device and host), stream-ordered frees, the contracts' answers, and a
 * report listing the one allocation left on purpose.
 *
 * Plain C, no check library (the GPU machine has none).  Exit 0 pass,
 * 1 fail, 77 skip (no GPU, or the simulated driver is the one loaded),
 * 99 harness error.  Run: make check-gpu, or on the GPU machine
 *   LD_LIBRARY_PATH=<dir with libunwind.so.8> tests/gpu/check_api_gpu
 */
#include "preamble.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

static int fails;

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fails++; \
			printf("FAIL %s:%d: %s (last error: %s)\n", __FILE__, \
			    __LINE__, #c, cw_last_error()->message); \
		} \
	} while (0)

static unsigned long lines;

static void
quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	lines++;
}

int
main(void)
{
	static unsigned char in[1 << 20], out[1 << 20];
	cw_owner_t o;

	if (access("/dev/nvidiactl", F_OK) != 0) {
		printf("check_api_gpu: no GPU here; skipped\n");
		return 77;
	}
	if (driver_get() == NULL || driver_device_count() <= 0) {
		printf("check_api_gpu: no CUDA driver or device; skipped\n");
		return 77;
	}
	if (dlsym(driver_handle(), "fakecuda_inject") != NULL) {
		printf("check_api_gpu: the simulated driver is loaded "
		    "(LD_LIBRARY_PATH); skipped\n");
		return 77;
	}
	cw_set_output(quiet, NULL);
	/* This program calls the driver itself (cuCtxSynchronize below):
	 * like any such program it makes a context current first; the
	 * library puts back whatever the thread had after each call. */
	CHECK(driver_bind(0) == CW_OK);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	CHECK(cw_owner_register("gpu-test", &o) == CW_OK);

	for (int k = CW_DEVICE; k <= CW_PINNED; k++) {
		cw_buf_t b, v, c;
		CHECK(cw_alloc(&b, sizeof(in), (cw_kind_t)k, 0, o) == CW_OK);
		CHECK(cw_upload(b, 0, in, sizeof(in)) == CW_OK);
		memset(out, 0, sizeof(out));
		CHECK(cw_download(b, 0, out, sizeof(out)) == CW_OK);
		CHECK(memcmp(in, out, sizeof(in)) == 0);
		CHECK(cw_memset(b, 100, 0x5a, 10) == CW_OK);
		CHECK(cw_download(b, 99, out, 12) == CW_OK);
		CHECK(out[0] == in[99] && out[1] == 0x5a && out[10] == 0x5a &&
		    out[11] == in[110]);

		CHECK(cw_view(&v, b, 4096, 8192) == CW_OK);
		CHECK(cw_refcount(b) == 2);
		CHECK(cw_free(b) == CW_ECONTRACT);
		CHECK(cw_transfer(b, 0) == CW_ECONTRACT);
		CHECK(cw_release(b) == CW_ECONTRACT);
		CHECK(cw_upload(v, 8000, in, 193) == CW_EBOUNDS);
		CHECK(cw_upload(v, 8000, in, 192) == CW_OK);
		CHECK(cw_ptr(v) == (char *)cw_ptr(b) + 4096);
		if (k == CW_MANAGED) {
			int cma = 0;
			driver_attr(0,
			    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
			    &cma);
			printf("check_api_gpu: concurrent managed access %d\n",
			    cma);
			for (int a = CW_ADVISE_SET_READ_MOSTLY;
			    a <= CW_ADVISE_UNSET_ACCESSED_BY; a++) {
				CHECK(cw_advise(v, (cw_advice_t)a, 0) == CW_OK);
				CHECK(cw_advise(b, (cw_advice_t)a, CW_CPU) ==
				    CW_OK);
			}
			CHECK(cw_prefetch(b, 0, NULL) == CW_OK);
			CHECK(cw_prefetch(v, CW_CPU, NULL) == CW_OK);
			CHECK(cw_prefetch(b, 0, NULL) == CW_OK);
			CHECK(driver_get()->cuCtxSynchronize() ==
			    CUDA_SUCCESS);
			CHECK(cw_download(b, 0, out, 4096) == CW_OK);
			CHECK(memcmp(in, out, 100) == 0);
		} else {
			CHECK(cw_prefetch(b, 0, NULL) == CW_ENOTSUP);
			CHECK(cw_advise(b, CW_ADVISE_SET_READ_MOSTLY, 0) ==
			    CW_ENOTSUP);
		}
		CHECK(cw_free(v) == CW_OK);
		CHECK(cw_refcount(b) == 1);

		/* To every other kind and back. */
		CHECK(cw_alloc(&c, sizeof(in), (cw_kind_t)((k + 1) % 3), 0,
		    0) == CW_OK);
		CHECK(cw_copy(c, 0, b, 0, sizeof(in)) == CW_OK);
		CHECK(cw_download(c, 0, out, sizeof(out)) == CW_OK);
		CHECK(out[5] == in[5] && out[99] == in[99] && out[100] == 0x5a);
		CHECK(cw_free(c) == CW_OK);

		CHECK(cw_free(b) == CW_OK);
		CHECK(cw_free(b) == CW_EFREED);
		CHECK(strcmp(cw_last_error()->rule, "double_free") == 0);
		CHECK(cw_upload(b, 0, in, 1) == CW_EFREED);
	}

	/* Stream-ordered frees on a stream of our own. */
	CUstream s = NULL;
	CHECK(driver_bind(0) == CW_OK);
	CHECK(driver_get()->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) ==
	    CUDA_SUCCESS);
	for (int i = 0; i < 100; i++) {
		cw_buf_t b;
		CHECK(cw_alloc(&b, 4096 + (size_t)i * 1000, CW_DEVICE, 0, 0) ==
		    CW_OK);
		CHECK(cw_memset(b, 0, i, 4096) == CW_OK);
		CHECK(cw_free_async(b, (cw_stream_t)s) == CW_OK);
	}
	CHECK(driver_get()->cuStreamSynchronize(s) == CUDA_SUCCESS);

	/* Devices that are not there. */
	cw_buf_t x;
	int n = driver_device_count();
	CHECK(cw_alloc(&x, 64, CW_DEVICE, n, 0) == CW_ENODEV);
	CHECK(cw_alloc(&x, 64, CW_DEVICE, CW_CPU, 0) == CW_ENODEV);

	/* One leak on purpose: the report lists it. */
	CHECK(cw_alloc(&x, 12345, CW_DEVICE, 0, o) == CW_OK);
	CHECK(cw_trim(0) == CW_OK);
	cw_stats_t st;
	CHECK(cw_stats(&st) == CW_OK);
	CHECK(st.bytes[CW_DEVICE].current == 12345);
	CHECK(st.allocations[CW_MANAGED].current == 0);
	CHECK(st.allocations[CW_PINNED].current == 0);
	CHECK(st.views_live == 0);
	CHECK(st.violations == 3 * 6);
	FILE *f = tmpfile();
	CHECK(f != NULL);
	if (f != NULL) {
		static char doc[1 << 16];
		CHECK(cw_report(fileno(f), CW_FORMAT_JSON) == CW_OK);
		rewind(f);
		size_t len = fread(doc, 1, sizeof(doc) - 1, f);
		doc[len] = '\0';
		CHECK(strstr(doc, "12345") != NULL);
		CHECK(strstr(doc, "gpu-test") != NULL);
		fclose(f);
	}
	printf("check_api_gpu: %s (%d failures, %lu lines logged)\n",
	    fails ? "FAIL" : "PASS", fails, lines);
	return fails ? 1 : 0;
}
