/*
 * check_multidevice.c -- one process, two devices, over the simulated
 * driver with FAKECUDA_DEVICES=2 (set by main before any test loads the
 * driver; check forks each test, so each starts with a fresh driver).
 * The simulated driver's entry points and its fakecuda_* API are reached
 * with dlsym on the handle the library loaded (driver_handle()).
 *
 * What is proven:
 *   - threads bound to different devices (the device's primary context
 *     current), two per device, allocate device, managed and pinned memory
 *     on their own device with cw_alloc many times, some blocks live at
 *     once: cw_device() is the device asked for, and the driver says the
 *     memory is that device's (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, and
 *     CONTEXT is that device's primary context); data written is not
 *     touched by the other threads; the pool statistics are exact
 *     (allocated total = bytes asked for, nothing left allocated) and
 *     both devices' pools hold cached memory afterwards;
 *   - per device figures move only for the device used: device memory
 *     held on the device (cuMemGetInfo_v2 in that device's context) and
 *     pool_cached_bytes(device); cw_trim(d) gives back exactly d's
 *     segments (driver frees, live driver allocations, reserved bytes and
 *     segments of every kind) and leaves the other device's pools as they
 *     were, both ways round;
 *   - cw_prefetch of managed memory 0 -> 1 -> 0 -> CPU -> 1 (and the same
 *     from an allocation on device 1), on the NULL stream and on a stream
 *     of the target device's context: CW_OK, one cuMemPrefetchAsync_v2 per
 *     call, and data uploaded before reads back unchanged after each move.
 *     The simulated driver records no prefetch destination (it only
 *     validates the location and enqueues nothing that can be observed),
 *     so the target itself cannot be asserted here;
 *   - leaks on each device: the JSON report has one group per device even
 *     for the same call site, size and kind, names device 0 for the leak
 *     made there and device 1 for the others, per device totals add up,
 *     and the summary matches; the text report says "on device N";
 *   - an allocation on device 1 from a thread whose current context is
 *     device 0's primary context lands on device 1 (ordinal and context of
 *     the memory) and the thread's context is unchanged afterwards (also
 *     after cw_upload and cw_trim on device 1, and with no context).
 */
#include "preamble.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fakecuda/fakecuda.h"
#include "cuwarden.h"
#include "driver.h"
#include "options.h"
#include "pool.h"
#include "unit.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define NDEV 2

static void (*fc_counters)(struct fakecuda_counters *);
static unsigned long (*fc_calls)(const char *);
static void *(*fc_host_alias)(CUdeviceptr, size_t);
static CUresult (*fc_ctx_get)(CUcontext *);
static CUresult (*fc_ctx_set)(CUcontext);
static CUresult (*fc_ctx_retain)(CUcontext *, CUdevice);
static CUresult (*fc_ctx_release)(CUdevice);
static CUresult (*fc_ptr_attr)(void *, CUpointer_attribute, CUdeviceptr);
static CUresult (*fc_mem_info)(size_t *, size_t *);
static CUresult (*fc_stream_create)(CUstream *, unsigned);
static CUresult (*fc_stream_destroy)(CUstream);
static CUresult (*fc_stream_sync)(CUstream);
static CUresult (*fc_memset)(CUdeviceptr, unsigned char, size_t);

static CUcontext primary[NDEV]; /* retained by the test, released after */

static void *
sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (p == NULL) {
		fprintf(stderr, "libcuda.so.1 has no %s: not the simulated "
		    "driver\n", name);
		exit(99);
	}
	return p;
}

static void
setup(void)
{
	void *h;

	if (driver_get() == NULL || (h = driver_handle()) == NULL) {
		fprintf(stderr, "cannot load libcuda.so.1\n");
		exit(99);
	}
	*(void **)&fc_counters = sym(h, "fakecuda_counters");
	*(void **)&fc_calls = sym(h, "fakecuda_calls");
	*(void **)&fc_host_alias = sym(h, "fakecuda_host_alias");
	*(void **)&fc_ctx_get = sym(h, "cuCtxGetCurrent");
	*(void **)&fc_ctx_set = sym(h, "cuCtxSetCurrent");
	*(void **)&fc_ctx_retain = sym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&fc_ctx_release = sym(h, "cuDevicePrimaryCtxRelease_v2");
	*(void **)&fc_ptr_attr = sym(h, "cuPointerGetAttribute");
	*(void **)&fc_mem_info = sym(h, "cuMemGetInfo_v2");
	*(void **)&fc_stream_create = sym(h, "cuStreamCreate");
	*(void **)&fc_stream_destroy = sym(h, "cuStreamDestroy_v2");
	*(void **)&fc_stream_sync = sym(h, "cuStreamSynchronize");
	*(void **)&fc_memset = sym(h, "cuMemsetD8_v2");
	if (driver_device_count() != NDEV) {
		fprintf(stderr, "the simulated driver reports %d devices, not "
		    "%d (FAKECUDA_DEVICES)\n", driver_device_count(), NDEV);
		exit(99);
	}
	for (int d = 0; d < NDEV; d++)
		ck_assert_int_eq(fc_ctx_retain(&primary[d], d), CUDA_SUCCESS);
	ck_assert_ptr_ne(primary[0], primary[1]);
}

static void
teardown(void)
{
	for (int d = 0; d < NDEV; d++)
		fc_ctx_release(d);
}

static CUcontext
ctx_now(void)
{
	CUcontext c = (CUcontext)(uintptr_t)1;
	ck_assert_int_eq(fc_ctx_get(&c), CUDA_SUCCESS);
	return c;
}

/* The device the driver says the memory at p belongs to (-2: none). */
static int
ordinal_of(const void *p)
{
	int o = -3;
	if (fc_ptr_attr(&o, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
		return -4;
	return o;
}

static CUcontext
ctx_of(const void *p)
{
	CUcontext c = NULL;
	if (fc_ptr_attr(&c, CU_POINTER_ATTRIBUTE_CONTEXT,
	    (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* Device memory the driver has handed out on device d (cuMemGetInfo_v2
 * in d's primary context); the calling thread's context is put back. */
static size_t
mem_used(int d)
{
	CUcontext prev = ctx_now();
	size_t free_b = 0, total = 0;
	ck_assert_int_eq(fc_ctx_set(primary[d]), CUDA_SUCCESS);
	ck_assert_int_eq(fc_mem_info(&free_b, &total), CUDA_SUCCESS);
	ck_assert_int_eq(fc_ctx_set(prev), CUDA_SUCCESS);
	ck_assert_uint_ge(total, free_b);
	return total - free_b;
}

static void
pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed * 7 + 1);
}

/* ------------------------------------------------ threads on two devices */

#define THREADS_PER_DEV 2
#define ITERS 150
#define RING 4 /* allocations of each kind a thread keeps live at once */

typedef struct worker_s {
	int device, id;
	uint64_t bytes[3];     /* asked for, by kind */
	unsigned failures;
	char first[512];       /* the first failure */
} worker_t;

#define WFAIL(w, ...) \
	do { \
		if ((w)->failures++ == 0) \
			snprintf((w)->first, sizeof((w)->first), __VA_ARGS__); \
	} while (0)

static const size_t worker_sizes[] = { 512, 4000, 24 * KiB, 70 * KiB,
	300 * KiB, 1 * MiB + 3, 2 * MiB + 512 };

typedef struct live_s {
	cw_buf_t b;
	unsigned char tag[16];
} live_t;

/* Checks the tag of a live block and frees it. */
static void
worker_release(worker_t *w, live_t *l)
{
	unsigned char got[16];

	if (l->b == CW_BUF_NONE)
		return;
	if (cw_download(l->b, 0, got, sizeof(got)) != CW_OK)
		WFAIL(w, "download: %s", cw_last_error()->message);
	else if (memcmp(got, l->tag, sizeof(got)) != 0)
		WFAIL(w, "device %d: a live block was overwritten", w->device);
	if (cw_free(l->b) != CW_OK)
		WFAIL(w, "free: %s", cw_last_error()->message);
	l->b = CW_BUF_NONE;
}

static void *
worker(void *arg)
{
	worker_t *w = arg;
	int d = w->device;
	live_t ring[3][RING];

	memset(ring, 0, sizeof(ring));
	if (fc_ctx_set(primary[d]) != CUDA_SUCCESS) {
		WFAIL(w, "cuCtxSetCurrent failed");
		return NULL;
	}
	for (unsigned i = 0; i < ITERS; i++) {
		for (int k = 0; k < 3; k++) {
			live_t *l = &ring[k][i % RING];
			size_t size = worker_sizes[(i + (unsigned)k) %
			    CW_ARRAY_SIZE(worker_sizes)];
			cw_buf_t b;

			worker_release(w, l);
			if (cw_alloc(&b, size, (cw_kind_t)k, d, 0) != CW_OK) {
				WFAIL(w, "cw_alloc(%zu, kind %d, device %d): "
				    "%s", size, k, d,
				    cw_last_error()->message);
				continue;
			}
			w->bytes[k] += size;
			void *p = cw_ptr(b);
			int o = ordinal_of(p);
			if (cw_device(b) != d)
				WFAIL(w, "cw_device %d, asked %d",
				    cw_device(b), d);
			if (cw_kind(b) != k || cw_size(b) != size)
				WFAIL(w, "kind/size of the handle");
			if (o != d)
				WFAIL(w, "kind %d on device %d: the driver "
				    "says device %d", k, d, o);
			if (ctx_of(p) != primary[d])
				WFAIL(w, "kind %d on device %d: not in that "
				    "device's primary context", k, d);
			/* The last byte too: the whole block is d's. */
			if (ordinal_of((char *)p + size - 1) != d)
				WFAIL(w, "end of block not on device %d", d);
			l->b = b;
			for (size_t j = 0; j < sizeof(l->tag); j++)
				l->tag[j] = (unsigned char)(w->id * 37 + i +
				    j * 3);
			if (cw_upload(b, 0, l->tag, sizeof(l->tag)) != CW_OK)
				WFAIL(w, "upload: %s",
				    cw_last_error()->message);
			if (ctx_now() != primary[d])
				WFAIL(w, "current context changed");
		}
	}
	for (int k = 0; k < 3; k++)
		for (int r = 0; r < RING; r++)
			worker_release(w, &ring[k][r]);
	return NULL;
}

START_TEST(test_multidevice_threads)
{
	enum { N = NDEV * THREADS_PER_DEV };
	pthread_t th[N];
	worker_t w[N];
	uint64_t want[3] = { 0, 0, 0 };

	memset(w, 0, sizeof(w));
	for (int i = 0; i < N; i++) {
		w[i].device = i % NDEV;
		w[i].id = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &w[i]),
		    0);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(w[i].failures == 0, "thread %d (device %d): %u "
		    "failures, first: %s", i, w[i].device, w[i].failures,
		    w[i].first);
		for (int k = 0; k < 3; k++)
			want[k] += w[i].bytes[k];
	}
	/* Exact statistics, summed over both devices. */
	cw_stats_t st;
	ck_assert_int_eq(cw_stats(&st), CW_OK);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(st.bytes[k].current, 0);
		ck_assert_uint_eq(st.bytes[k].total, want[k]);
		ck_assert_uint_eq(st.allocations[k].total,
		    (uint64_t)N * ITERS);
		if (pool_enabled()) {
			ck_assert_uint_eq(st.pool[k].allocated.current, 0);
			ck_assert_uint_eq(st.pool[k].allocated.total, want[k]);
			ck_assert_uint_gt(st.pool[k].reserved.current, 0);
		}
	}
	/* Both devices' pools hold memory, on their own device. */
	for (int d = 0; d < NDEV && pool_enabled(); d++) {
		ck_assert_uint_gt(mem_used(d), 0);
		ck_assert_uint_gt(pool_cached_bytes(d), 0);
	}
	for (int d = 0; d < NDEV; d++)
		ck_assert_int_eq(cw_trim(d), CW_OK);
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.live_device, 0);
	ck_assert_uint_eq(c.live_managed, 0);
	ck_assert_uint_eq(c.live_pinned, 0);
	for (int d = 0; d < NDEV; d++) {
		ck_assert_uint_eq(mem_used(d), 0);
		ck_assert_uint_eq(pool_cached_bytes(d), 0);
	}
}
END_TEST

/* ------------------------------------------- per device figures, trim */

typedef struct figs_s {
	size_t used[NDEV];   /* device memory the driver handed out */
	size_t cached[NDEV]; /* pool_cached_bytes */
	cw_pool_stats_t pool[3];
	struct fakecuda_counters fc;
} figs_t;

static figs_t
figs(void)
{
	figs_t f;

	memset(&f, 0, sizeof(f));
	for (int d = 0; d < NDEV; d++) {
		f.used[d] = mem_used(d);
		f.cached[d] = pool_cached_bytes(d);
	}
	for (int k = 0; k < 3; k++)
		pool_stats((kind_t)k, &f.pool[k]);
	fc_counters(&f.fc);
	return f;
}

static unsigned long
driver_frees(const struct fakecuda_counters *c)
{
	return c->mem_free + c->mem_free_host;
}

static unsigned long
driver_live(const struct fakecuda_counters *c)
{
	return c->live_device + c->live_managed + c->live_pinned;
}

/* Allocates some of every kind on device d, frees them all. */
static void
churn(int d)
{
	static const size_t sizes[] = { 4000, 100 * KiB, 3 * MiB };
	cw_buf_t b[3][CW_ARRAY_SIZE(sizes)];

	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < CW_ARRAY_SIZE(sizes); i++) {
			ck_assert_int_eq(cw_alloc(&b[k][i], sizes[i],
			    (cw_kind_t)k, d, 0), CW_OK);
			ck_assert_int_eq(cw_device(b[k][i]), d);
			ck_assert_int_eq(ordinal_of(cw_ptr(b[k][i])), d);
		}
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < CW_ARRAY_SIZE(sizes); i++)
			ck_assert_int_eq(cw_free(b[k][i]), CW_OK);
}

/* Runs with device `first` used alone, then `other` too, then trims
 * `other`: what first's pools hold must come out as it was. */
static void
trim_isolated(int first, int other)
{
	figs_t f0 = figs();
	for (int d = 0; d < NDEV; d++) {
		ck_assert_uint_eq(f0.used[d], 0);
		ck_assert_uint_eq(f0.cached[d], 0);
	}

	/* A live allocation on `first`: only first's figures move. */
	cw_buf_t live;
	ck_assert_int_eq(cw_alloc(&live, 1 * MiB, CW_DEVICE, first, 0),
	    CW_OK);
	ck_assert_uint_ge(mem_used(first), 1 * MiB);
	ck_assert_uint_eq(mem_used(other), 0);
	ck_assert_uint_eq(pool_cached_bytes(other), 0);
	ck_assert_uint_eq(pool_cached_bytes(first), mem_used(first) - 1 * MiB);
	ck_assert_int_eq(cw_free(live), CW_OK);
	if (!pool_enabled())
		return; /* CUWARDEN_POOL=0: nothing is cached, nothing to trim */

	churn(first);
	figs_t f1 = figs();
	ck_assert_uint_gt(f1.used[first], 0);
	ck_assert_uint_gt(f1.cached[first], 0);
	ck_assert_uint_eq(f1.used[other], 0);
	ck_assert_uint_eq(f1.cached[other], 0);

	churn(other);
	figs_t f2 = figs();
	ck_assert_uint_eq(f2.used[first], f1.used[first]);
	ck_assert_uint_eq(f2.cached[first], f1.cached[first]);
	ck_assert_uint_gt(f2.used[other], 0);
	ck_assert_uint_gt(f2.cached[other], 0);
	for (int k = 0; k < 3; k++)
		ck_assert_uint_gt(f2.pool[k].reserved.current,
		    f1.pool[k].reserved.current);

	/* Trim `other`: exactly what `other` took from the driver goes
	 * back; `first` keeps everything. */
	ck_assert_int_eq(cw_trim(other), CW_OK);
	figs_t f3 = figs();
	ck_assert_uint_eq(f3.used[other], 0);
	ck_assert_uint_eq(f3.cached[other], 0);
	ck_assert_uint_eq(f3.used[first], f1.used[first]);
	ck_assert_uint_eq(f3.cached[first], f1.cached[first]);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(f3.pool[k].reserved.current,
		    f1.pool[k].reserved.current);
		ck_assert_uint_eq(f3.pool[k].segments.current,
		    f1.pool[k].segments.current);
	}
	ck_assert_uint_eq(driver_live(&f3.fc), driver_live(&f1.fc));
	ck_assert_uint_eq(driver_frees(&f3.fc) - driver_frees(&f2.fc),
	    driver_live(&f2.fc) - driver_live(&f1.fc));

	/* Trim `first`: now everything is back. */
	ck_assert_int_eq(cw_trim(first), CW_OK);
	figs_t f4 = figs();
	ck_assert_uint_eq(f4.used[first], 0);
	ck_assert_uint_eq(f4.cached[first], 0);
	ck_assert_uint_eq(driver_live(&f4.fc), 0);
	for (int k = 0; k < 3; k++)
		ck_assert_uint_eq(f4.pool[k].reserved.current, 0);
}

START_TEST(test_multidevice_trim_0_keeps_1)
{
	trim_isolated(1, 0);
}
END_TEST

START_TEST(test_multidevice_trim_1_keeps_0)
{
	trim_isolated(0, 1);
}
END_TEST

/* --------------------------------------------------------------- prefetch */

static void
prefetch_moves(int home)
{
	static unsigned char in[256 * KiB], out[256 * KiB];
	static const int targets[] = { 1, 0, CW_CPU, 1, CW_CPU, 0, 1 };
	CUstream s[NDEV];
	cw_buf_t b;

	ck_assert_int_eq(cw_alloc(&b, sizeof(in), CW_MANAGED, home, 0), CW_OK);
	ck_assert_int_eq(cw_device(b), home);
	ck_assert_int_eq(ordinal_of(cw_ptr(b)), home);
	pattern(in, sizeof(in), (unsigned)home + 5);
	ck_assert_int_eq(cw_upload(b, 0, in, sizeof(in)), CW_OK);
	for (int d = 0; d < NDEV; d++) {
		ck_assert_int_eq(fc_ctx_set(primary[d]), CUDA_SUCCESS);
		ck_assert_int_eq(fc_stream_create(&s[d], 0), CUDA_SUCCESS);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < CW_ARRAY_SIZE(targets); i++) {
			int t = targets[i];
			/* Pass 1: on a stream of the target's context (of
			 * the allocation's device for the host). */
			cw_stream_t st = pass == 0 ? NULL :
			    (cw_stream_t)s[t == CW_CPU ? home : t];
			unsigned long v2 = fc_calls("cuMemPrefetchAsync_v2"),
			    v1 = fc_calls("cuMemPrefetchAsync");
			ck_assert_msg(cw_prefetch(b, t, st) == CW_OK,
			    "cw_prefetch to %d (pass %d): %s", t, pass,
			    cw_last_error()->message);
			ck_assert_uint_eq(fc_calls("cuMemPrefetchAsync_v2"),
			    v2 + 1);
			ck_assert_uint_eq(fc_calls("cuMemPrefetchAsync"), v1);
			if (st != NULL)
				ck_assert_int_eq(fc_stream_sync((CUstream)st),
				    CUDA_SUCCESS);
			memset(out, 0, sizeof(out));
			ck_assert_int_eq(cw_download(b, 0, out, sizeof(out)),
			    CW_OK);
			ck_assert_msg(memcmp(in, out, sizeof(in)) == 0,
			    "data changed after the move to %d", t);
			/* Still the same allocation, on its device. */
			ck_assert_int_eq(cw_device(b), home);
			ck_assert_int_eq(ordinal_of(cw_ptr(b)), home);
		}
	}
	/* No such device: refused before the driver is asked. */
	unsigned long v2 = fc_calls("cuMemPrefetchAsync_v2");
	ck_assert_int_eq(cw_prefetch(b, NDEV, NULL), CW_ENODEV);
	ck_assert_uint_eq(fc_calls("cuMemPrefetchAsync_v2"), v2);
	for (int d = 0; d < NDEV; d++)
		ck_assert_int_eq(fc_stream_destroy(s[d]), CUDA_SUCCESS);
	ck_assert_int_eq(cw_free(b), CW_OK);
}

START_TEST(test_multidevice_prefetch_from_0)
{
	prefetch_moves(0);
}
END_TEST

START_TEST(test_multidevice_prefetch_from_1)
{
	prefetch_moves(1);
}
END_TEST

/* ------------------------------------------------------------------ leaks */

typedef struct leak_sum_s {
	uint64_t bytes[NDEV], count[NDEV];
	unsigned groups_with_size[NDEV]; /* groups of LEAK_SAME bytes */
	unsigned other_devices;          /* groups naming another device */
} leak_sum_t;

#define LEAK_SAME 12800      /* same call site, kind, size on each device */
#define LEAK_DEV0 (40 * KiB) /* device memory, device 0 only */
#define LEAK_DEV1 5000       /* managed, twice, device 1 only */
#define LEAK_PIN1 7000       /* pinned, device 1 only */

/* Reads the "leaks" array of a JSON report into per device sums. */
static leak_sum_t
leak_sums(const char *doc, uint64_t *summary_bytes)
{
	leak_sum_t s;
	const char *p = strstr(doc, "\"leaks\": [");
	const char *end = strstr(doc, "\"violations\": [");
	const char *sum = strstr(doc, "\"leaked_bytes\": ");

	memset(&s, 0, sizeof(s));
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(end);
	ck_assert_ptr_nonnull(sum);
	unsigned long long sb = 0;
	ck_assert_int_eq(sscanf(sum, "\"leaked_bytes\": %llu", &sb), 1);
	*summary_bytes = sb;
	while ((p = strstr(p, "{\"kind\": ")) != NULL && p < end) {
		char kind[16];
		unsigned long long size, count, bytes;
		int dev;
		ck_assert_int_eq(sscanf(p, "{\"kind\": \"%15[a-z]\", \"size\": "
		    "%llu, \"count\": %llu, \"bytes\": %llu, \"device\": %d",
		    kind, &size, &count, &bytes, &dev), 5);
		ck_assert_uint_eq(bytes, size * count);
		if (dev < 0 || dev >= NDEV) {
			s.other_devices++;
		} else {
			s.bytes[dev] += bytes;
			s.count[dev] += count;
			if (size == LEAK_SAME) {
				ck_assert_str_eq(kind, "device");
				ck_assert_uint_eq(count, 1);
				s.groups_with_size[dev]++;
			}
			if (size == LEAK_DEV0) {
				ck_assert_int_eq(dev, 0);
				ck_assert_str_eq(kind, "device");
			}
			if (size == LEAK_DEV1) {
				ck_assert_int_eq(dev, 1);
				ck_assert_str_eq(kind, "managed");
				ck_assert_uint_eq(count, 2);
			}
			if (size == LEAK_PIN1) {
				ck_assert_int_eq(dev, 1);
				ck_assert_str_eq(kind, "pinned");
			}
		}
		p++;
	}
	return s;
}

static char *
report_text(cw_format_t fmt)
{
	char path[] = "/tmp/cw_multidevice_reportXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(cw_report(fd, fmt), CW_OK);
	off_t n = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(n, 0);
	char *doc = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(pread(fd, doc, (size_t)n, 0), n);
	doc[n] = '\0';
	close(fd);
	return doc;
}

START_TEST(test_multidevice_leaks)
{
	cw_buf_t same[NDEV], d0, m1[2], p1, freed;
	/* Not a constant: an unrolled loop would make two call sites. */
	volatile int ndev = NDEV, two = 2;

	for (int d = 0; d < ndev; d++) /* one call site, both devices */
		ck_assert_int_eq(cw_alloc(&same[d], LEAK_SAME, CW_DEVICE, d,
		    0), CW_OK);
	ck_assert_int_eq(cw_alloc(&d0, LEAK_DEV0, CW_DEVICE, 0, 0), CW_OK);
	for (int i = 0; i < two; i++)
		ck_assert_int_eq(cw_alloc(&m1[i], LEAK_DEV1, CW_MANAGED, 1,
		    0), CW_OK);
	ck_assert_int_eq(cw_alloc(&p1, LEAK_PIN1, CW_PINNED, 1, 0), CW_OK);
	/* Freed memory is not a leak on either device. */
	for (int d = 0; d < NDEV; d++) {
		ck_assert_int_eq(cw_alloc(&freed, 999, CW_DEVICE, d, 0), CW_OK);
		ck_assert_int_eq(cw_free(freed), CW_OK);
	}

	char *doc = report_text(CW_FORMAT_JSON);
	uint64_t summary = 0;
	leak_sum_t s = leak_sums(doc, &summary);
	ck_assert_uint_eq(s.other_devices, 0);
	ck_assert_uint_eq(s.groups_with_size[0], 1);
	ck_assert_uint_eq(s.groups_with_size[1], 1);
	ck_assert_uint_eq(s.bytes[0], LEAK_SAME + LEAK_DEV0);
	ck_assert_uint_eq(s.count[0], 2);
	ck_assert_uint_eq(s.bytes[1], LEAK_SAME + 2 * LEAK_DEV1 + LEAK_PIN1);
	ck_assert_uint_eq(s.count[1], 4);
	ck_assert_uint_eq(summary, s.bytes[0] + s.bytes[1]);
	free(doc);

	doc = report_text(CW_FORMAT_TEXT);
	ck_assert_ptr_nonnull(strstr(doc, "device allocation of 40,960 bytes "
	    "leaked on device 0"));
	ck_assert_ptr_nonnull(strstr(doc, "managed allocations of 5,000 "
	    "bytes leaked on device 1"));
	ck_assert_ptr_nonnull(strstr(doc, "pinned allocation of 7,000 bytes "
	    "leaked on device 1"));
	ck_assert_ptr_nonnull(strstr(doc, "12,800 bytes leaked on device 0"));
	ck_assert_ptr_nonnull(strstr(doc, "12,800 bytes leaked on device 1"));
	free(doc);

	/* Freeing device 1's leaks leaves device 0's reported as before. */
	ck_assert_int_eq(cw_free(same[1]), CW_OK);
	ck_assert_int_eq(cw_free(m1[0]), CW_OK);
	ck_assert_int_eq(cw_free(m1[1]), CW_OK);
	ck_assert_int_eq(cw_free(p1), CW_OK);
	doc = report_text(CW_FORMAT_JSON);
	s = leak_sums(doc, &summary);
	ck_assert_uint_eq(s.bytes[0], LEAK_SAME + LEAK_DEV0);
	ck_assert_uint_eq(s.bytes[1], 0);
	ck_assert_uint_eq(summary, LEAK_SAME + LEAK_DEV0);
	free(doc);
	ck_assert_int_eq(cw_free(same[0]), CW_OK);
	ck_assert_int_eq(cw_free(d0), CW_OK);
}
END_TEST

/* --------------------------------------------------------------- contexts */

/*
 * A thread working in device 0's primary context allocates on device 1.
 * The memory must be device 1's, whatever context is current, and the
 * thread is still in device 0's context afterwards, whether the pool grew
 * (driver calls) or not, and after cw_upload, cw_prefetch and cw_trim on
 * device 1.  (Before, the library left the bound device's primary context
 * current after a driver call: a thread on device 0 found itself on device
 * 1 after some calls and not others, depending on the pool's state.)
 */
START_TEST(test_multidevice_context)
{
	cw_buf_t b, b2;

	ck_assert_int_eq(fc_ctx_set(primary[0]), CUDA_SUCCESS);
	ck_assert_int_eq(cw_alloc(&b, 1 * MiB, CW_DEVICE, 1, 0), CW_OK);
	ck_assert_int_eq(cw_device(b), 1);
	ck_assert_int_eq(ordinal_of(cw_ptr(b)), 1);
	ck_assert_ptr_eq(ctx_of(cw_ptr(b)), primary[1]);
	CUcontext after_grow = ctx_now();

	/* Again from device 0's context, served from the pool this time. */
	ck_assert_int_eq(fc_ctx_set(primary[0]), CUDA_SUCCESS);
	ck_assert_int_eq(cw_alloc(&b2, 4000, CW_DEVICE, 1, 0), CW_OK);
	ck_assert_int_eq(ordinal_of(cw_ptr(b2)), 1);
	ck_assert_ptr_eq(ctx_of(cw_ptr(b2)), primary[1]);
	CUcontext after_hit = ctx_now();
	ck_assert_ptr_eq(after_grow, primary[0]);
	ck_assert_ptr_eq(after_hit, primary[0]);
	unsigned char tag[16] = { 1, 2, 3 };
	ck_assert_int_eq(cw_upload(b, 0, tag, sizeof(tag)), CW_OK);
	ck_assert_ptr_eq(ctx_now(), primary[0]);
	ck_assert_int_eq(cw_trim(1), CW_OK);
	ck_assert_ptr_eq(ctx_now(), primary[0]);
	/* No context at all: none after. */
	ck_assert_int_eq(fc_ctx_set(NULL), CUDA_SUCCESS);
	cw_buf_t n;
	ck_assert_int_eq(cw_alloc(&n, 3 * MiB, CW_DEVICE, 1, 0), CW_OK);
	ck_assert_ptr_null(ctx_now());
	ck_assert_int_eq(cw_free(n), CW_OK);
	ck_assert_ptr_null(ctx_now());

	/* Device 0's context still works for the program's own calls. */
	ck_assert_int_eq(fc_ctx_set(primary[0]), CUDA_SUCCESS);
	cw_buf_t z;
	ck_assert_int_eq(cw_alloc(&z, 8192, CW_DEVICE, 0, 0), CW_OK);
	ck_assert_int_eq(fc_ctx_set(primary[0]), CUDA_SUCCESS);
	ck_assert_int_eq(fc_memset((CUdeviceptr)(uintptr_t)cw_ptr(z), 0x3c,
	    8192), CUDA_SUCCESS);
	unsigned char *h = fc_host_alias((CUdeviceptr)(uintptr_t)cw_ptr(z),
	    8192);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h[0], 0x3c);
	ck_assert_uint_eq(h[8191], 0x3c);

	ck_assert_int_eq(cw_free(b), CW_OK);
	ck_assert_int_eq(cw_free(b2), CW_OK);
	ck_assert_int_eq(cw_free(z), CW_OK);
}
END_TEST

static Suite *
make_multidevice_suite(void)
{
	Suite *s = suite_create("multidevice");
	TCase *tc = tcase_create("multidevice");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_multidevice_threads);
	tcase_add_test(tc, test_multidevice_trim_0_keeps_1);
	tcase_add_test(tc, test_multidevice_trim_1_keeps_0);
	tcase_add_test(tc, test_multidevice_prefetch_from_0);
	tcase_add_test(tc, test_multidevice_prefetch_from_1);
	tcase_add_test(tc, test_multidevice_leaks);
	tcase_add_test(tc, test_multidevice_context);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* Before the simulated driver is loaded (each test loads it in its
	 * own forked child); the simulated driver reads it at cuInit. */
	setenv("FAKECUDA_DEVICES", "2", 1);
	SRunner *sr = srunner_create(make_multidevice_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
