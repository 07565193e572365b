/*
 * stress_api.c -- the public API of libcuwarden under load.
 *
 *   stress_api [-n OPS] [-t THREADS] [-s SEED] [-q]
 *
 * THREADS threads (16) each run OPS operations (1,000,000) chosen at
 * random: cw_alloc/cw_free of device, managed (few and small) and pinned
 * memory of 512 B to 1 MiB, cw_alloc_async/cw_free_async on a stream of
 * the thread's own, cw_retain/cw_release, cw_view (of allocations and of
 * views), cw_lookup of interior pointers, cw_transfer between the
 * thread's two owners, cw_upload/cw_download of a few bytes.  Each thread
 * keeps a model of what it holds (handles, sizes, kinds, reference
 * counts, views, owner, the last bytes written) and checks every answer
 * against it; it never breaks a contract on purpose.
 *
 * At the end every thread frees what it holds, and the process checks:
 * cw_stats shows nothing live and no violation, no failed free; after
 * cw_trim(0) the simulated driver (fakecuda_counters, reached with dlsym
 * as tests/unit/check_pool.c does) holds nothing.  It prints the run time
 * and the operations per second.
 *
 * Exit: 0 pass, 1 fail, 99 harness error.  On a real driver (no
 * fakecuda_counters) the driver check is skipped, the rest still runs.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "cuwarden.h"
#include "fakecuda.h"

#define MAX_HELD 32      /* allocations one thread holds at most */
#define MAX_VIEWS 4      /* views per allocation */
#define MAX_MANAGED 2    /* managed allocations per thread */
#define MANAGED_MAX_SIZE ((size_t)64 << 10)
#define MIN_SIZE ((size_t)512)
#define MAX_SIZE ((size_t)1 << 20)
#define DATA_MAX 16      /* bytes per upload/download */
#define MAX_REPORTED 20  /* failures printed in full */

typedef struct view_s {
	cw_buf_t h;
	size_t off, len;    /* in the allocation */
} view_t;

typedef struct held_s {
	cw_buf_t h;
	size_t size;
	cw_kind_t kind;
	int retains;        /* taken by cw_retain */
	int nviews;
	view_t views[MAX_VIEWS];
	int owner;          /* index into the thread's owners */
	bool pending;       /* cw_alloc_async: not yet synchronised */
	size_t data_off;    /* the last bytes uploaded ... */
	size_t data_len;    /* ... (0: none) */
	unsigned char data[DATA_MAX];
} held_t;

typedef struct thread_s {
	pthread_t tid;
	int index;
	uint64_t rng;
	long ops;
	CUstream stream;
	cw_owner_t owners[2];
	held_t held[MAX_HELD];
	int nheld;
	int nmanaged;
	long counts[12];
	long failures;
} thread_t;

enum {
	OP_ALLOC, OP_ALLOC_ASYNC, OP_FREE, OP_RETAIN, OP_RELEASE, OP_VIEW,
	OP_VIEW_FREE, OP_LOOKUP, OP_TRANSFER, OP_UPLOAD, OP_DOWNLOAD,
	OP_ACCESSORS, OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
	"alloc", "alloc_async", "free", "retain", "release", "view",
	"view_free", "lookup", "transfer", "upload", "download", "accessors",
};

static long nops = 1000000;
static int nthreads = 16;
static uint64_t seed = 0x5eed;
static bool quiet;
static CUcontext pctx;
static atomic_long reported;

static CUresult (*drv_stream_create)(CUstream *, unsigned);
static CUresult (*drv_stream_sync)(CUstream);
static CUresult (*drv_stream_destroy)(CUstream);
static CUresult (*drv_ctx_set_current)(CUcontext);

static uint64_t
rnd(thread_t *t)
{
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545F4914F6CDD1DULL;
}

static size_t
rnd_below(thread_t *t, size_t n)
{
	return n == 0 ? 0 : (size_t)(rnd(t) % n);
}

/* 512 B to 1 MiB, uniform in the logarithm. */
static size_t
rnd_size(thread_t *t, size_t max)
{
	size_t lo = MIN_SIZE;
	int shift = (int)rnd_below(t, 12); /* 2^9 .. 2^20 */
	size_t s = lo << shift;
	s += rnd_below(t, s);
	return s > max ? max : s;
}

#define FAIL(t, ...) \
	do { \
		(t)->failures++; \
		if (atomic_fetch_add(&reported, 1) < MAX_REPORTED) { \
			fprintf(stderr, "thread %d: ", (t)->index); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, " (last error: %s)\n", \
			    cw_last_error()->message); \
		} \
	} while (0)

#define EXPECT_OK(t, call) \
	do { \
		int r_ = (call); \
		if (r_ != CW_OK) \
			FAIL(t, "%s = %d (%s)", #call, r_, cw_strerror(r_)); \
	} while (0)

static int
refcount_model(const held_t *b)
{
	return 1 + b->retains + b->nviews;
}

static void
sync_if_pending(thread_t *t, held_t *b)
{
	if (!b->pending)
		return;
	CUresult r = drv_stream_sync(t->stream);
	if (r != CUDA_SUCCESS)
		FAIL(t, "cuStreamSynchronize = %d", (int)r);
	for (int i = 0; i < t->nheld; i++)
		t->held[i].pending = false;
}

static void
do_alloc(thread_t *t, bool async)
{
	if (t->nheld == MAX_HELD)
		return;
	held_t *b = &t->held[t->nheld];
	cw_kind_t kind;
	size_t size;
	unsigned k = (unsigned)rnd_below(t, 10);

	if (async || k < 6)
		kind = CW_DEVICE;
	else if (k < 9 || t->nmanaged >= MAX_MANAGED)
		kind = CW_PINNED;
	else
		kind = CW_MANAGED;
	size = rnd_size(t, kind == CW_MANAGED ? MANAGED_MAX_SIZE : MAX_SIZE);
	int owner = (int)rnd_below(t, 2);
	cw_buf_t h = CW_BUF_NONE;
	int r = async ? cw_alloc_async(&h, size, kind, 0, t->owners[owner],
	    (cw_stream_t)t->stream) : cw_alloc(&h, size, kind, 0,
	    t->owners[owner]);
	if (r != CW_OK || h == CW_BUF_NONE) {
		FAIL(t, "%s(%zu, kind %d) = %d", async ? "cw_alloc_async" :
		    "cw_alloc", size, (int)kind, r);
		return;
	}
	memset(b, 0, sizeof(*b));
	b->h = h;
	b->size = size;
	b->kind = kind;
	b->owner = owner;
	b->pending = async;
	if (kind == CW_MANAGED)
		t->nmanaged++;
	t->nheld++;
}

static void
drop_view(thread_t *t, held_t *b, int i)
{
	EXPECT_OK(t, cw_free(b->views[i].h));
	b->views[i] = b->views[--b->nviews];
}

/* Frees b's references one at a time; the allocation itself once only
 * the owner's is left. */
static void
do_free(thread_t *t, int i)
{
	held_t *b = &t->held[i];

	if (b->nviews > 0) {
		drop_view(t, b, (int)rnd_below(t, (size_t)b->nviews));
		return;
	}
	if (b->retains > 0) {
		EXPECT_OK(t, cw_release(b->h));
		b->retains--;
		return;
	}
	if (b->kind == CW_DEVICE && (rnd(t) & 1))
		EXPECT_OK(t, cw_free_async(b->h, (cw_stream_t)t->stream));
	else
		EXPECT_OK(t, cw_free(b->h));
	if (b->kind == CW_MANAGED)
		t->nmanaged--;
	t->held[i] = t->held[--t->nheld];
}

static void
do_view(thread_t *t, held_t *b)
{
	if (b->nviews == MAX_VIEWS)
		return;
	cw_buf_t parent = b->h;
	size_t base = 0, span = b->size;
	if (b->nviews > 0 && (rnd(t) & 1)) {
		/* A view of a view: offsets relative to that view. */
		view_t *pv = &b->views[rnd_below(t, (size_t)b->nviews)];
		parent = pv->h;
		base = pv->off;
		span = pv->len;
	}
	size_t off = rnd_below(t, span);
	size_t len = 1 + rnd_below(t, span - off);
	cw_buf_t v = CW_BUF_NONE;
	int r = cw_view(&v, parent, off, len);
	if (r != CW_OK) {
		FAIL(t, "cw_view(%zu, %zu) of %zu = %d", off, len, span, r);
		return;
	}
	if (cw_size(v) != len)
		FAIL(t, "cw_size(view) = %zu, want %zu", cw_size(v), len);
	if ((char *)cw_ptr(v) != (char *)cw_ptr(b->h) + base + off)
		FAIL(t, "cw_ptr(view) is not the allocation's + offset");
	b->views[b->nviews++] = (view_t){ v, base + off, len };
}

static void
do_lookup(thread_t *t, held_t *b)
{
	char *p = cw_ptr(b->h);
	cw_buf_t found = CW_BUF_NONE;

	if (p == NULL) {
		FAIL(t, "cw_ptr = NULL");
		return;
	}
	int r = cw_lookup(p + rnd_below(t, b->size), &found);
	if (r != CW_OK || found != b->h)
		FAIL(t, "cw_lookup = %d, handle %#" PRIx64 " want %#" PRIx64,
		    r, found, b->h);
	if (cw_lookup(p + b->size - 1, &found) != CW_OK || found != b->h)
		FAIL(t, "cw_lookup of the last byte");
}

static void
do_transfer(thread_t *t, held_t *b)
{
	cw_owner_t o = CW_OWNER_NONE;

	if (refcount_model(b) != 1)
		return; /* refused while shared: a violation */
	int to = 1 - b->owner;
	EXPECT_OK(t, cw_transfer(b->h, t->owners[to]));
	b->owner = to;
	if (cw_owner_of(b->h, &o) != CW_OK || o != t->owners[to])
		FAIL(t, "cw_owner_of after cw_transfer: %u, want %u",
		    (unsigned)o, (unsigned)t->owners[to]);
}

/* Through the allocation or through a view that covers the range. */
static cw_buf_t
data_handle(thread_t *t, held_t *b, size_t off, size_t n, size_t *hoff)
{
	for (int i = 0; i < b->nviews && (rnd(t) & 1); i++) {
		view_t *v = &b->views[i];
		if (off >= v->off && off + n <= v->off + v->len) {
			*hoff = off - v->off;
			return v->h;
		}
	}
	*hoff = off;
	return b->h;
}

static void
do_upload(thread_t *t, held_t *b)
{
	size_t n = 1 + rnd_below(t, DATA_MAX);
	if (n > b->size)
		n = b->size;
	size_t off = rnd_below(t, b->size - n + 1), hoff;
	unsigned char src[DATA_MAX];

	for (size_t i = 0; i < n; i++)
		src[i] = (unsigned char)rnd(t);
	sync_if_pending(t, b);
	cw_buf_t h = data_handle(t, b, off, n, &hoff);
	int r = cw_upload(h, hoff, src, n);
	if (r != CW_OK) {
		FAIL(t, "cw_upload(%zu, %zu) = %d", hoff, n, r);
		return;
	}
	b->data_off = off;
	b->data_len = n;
	memcpy(b->data, src, n);
}

static void
do_download(thread_t *t, held_t *b)
{
	unsigned char dst[DATA_MAX];
	size_t hoff;

	if (b->data_len == 0)
		return;
	sync_if_pending(t, b);
	cw_buf_t h = data_handle(t, b, b->data_off, b->data_len, &hoff);
	int r = cw_download(h, hoff, dst, b->data_len);
	if (r != CW_OK)
		FAIL(t, "cw_download(%zu, %zu) = %d", hoff, b->data_len, r);
	else if (memcmp(dst, b->data, b->data_len) != 0)
		FAIL(t, "cw_download: not the bytes uploaded (%zu at %zu, "
		    "kind %d)", b->data_len, b->data_off, (int)b->kind);
}

static void
do_accessors(thread_t *t, held_t *b)
{
	int rc = cw_refcount(b->h);
	if (rc != refcount_model(b))
		FAIL(t, "cw_refcount = %d, want %d", rc, refcount_model(b));
	if (cw_size(b->h) != b->size)
		FAIL(t, "cw_size = %zu, want %zu", cw_size(b->h), b->size);
	if (cw_kind(b->h) != (int)b->kind)
		FAIL(t, "cw_kind = %d, want %d", cw_kind(b->h), (int)b->kind);
	if (cw_device(b->h) != 0)
		FAIL(t, "cw_device = %d", cw_device(b->h));
}

static void
one_op(thread_t *t)
{
	/* Weights out of 100; a thread holding more than 3/4 of its
	 * maximum frees a little more often. */
	unsigned w = (unsigned)rnd_below(t, 100);
	int op;

	if (t->nheld == 0)
		op = w < 70 ? OP_ALLOC : OP_ALLOC_ASYNC;
	else if (t->nheld > MAX_HELD * 3 / 4 && (rnd(t) & 7) == 0)
		op = OP_FREE;
	else if (w < 12)
		op = OP_ALLOC;
	else if (w < 20)
		op = OP_ALLOC_ASYNC;
	else if (w < 36)
		op = OP_FREE;
	else if (w < 45)
		op = OP_RETAIN;
	else if (w < 52)
		op = OP_RELEASE;
	else if (w < 60)
		op = OP_VIEW;
	else if (w < 65)
		op = OP_VIEW_FREE;
	else if (w < 75)
		op = OP_LOOKUP;
	else if (w < 80)
		op = OP_TRANSFER;
	else if (w < 87)
		op = OP_UPLOAD;
	else if (w < 94)
		op = OP_DOWNLOAD;
	else
		op = OP_ACCESSORS;

	int i = (int)rnd_below(t, (size_t)t->nheld);
	held_t *b = &t->held[i];
	switch (op) {
	case OP_ALLOC:
		do_alloc(t, false);
		break;
	case OP_ALLOC_ASYNC:
		do_alloc(t, true);
		break;
	case OP_FREE:
		do_free(t, i);
		break;
	case OP_RETAIN:
		if (b->retains < 8) {
			EXPECT_OK(t, cw_retain(b->h));
			b->retains++;
		}
		break;
	case OP_RELEASE:
		if (b->retains > 0) {
			EXPECT_OK(t, cw_release(b->h));
			b->retains--;
		}
		break;
	case OP_VIEW:
		do_view(t, b);
		break;
	case OP_VIEW_FREE:
		if (b->nviews > 0)
			drop_view(t, b, (int)rnd_below(t, (size_t)b->nviews));
		break;
	case OP_LOOKUP:
		do_lookup(t, b);
		break;
	case OP_TRANSFER:
		do_transfer(t, b);
		break;
	case OP_UPLOAD:
		do_upload(t, b);
		break;
	case OP_DOWNLOAD:
		do_download(t, b);
		break;
	case OP_ACCESSORS:
		do_accessors(t, b);
		break;
	}
	t->counts[op]++;
}

static void *
worker(void *arg)
{
	thread_t *t = arg;
	char name[64];
	CUresult r;

	if ((r = drv_ctx_set_current(pctx)) != CUDA_SUCCESS ||
	    (r = drv_stream_create(&t->stream, CU_STREAM_NON_BLOCKING)) !=
	    CUDA_SUCCESS) {
		FAIL(t, "stream: %d", (int)r);
		return NULL;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "stress/thread%d/%c", t->index,
		    'a' + k);
		EXPECT_OK(t, cw_owner_register(name, &t->owners[k]));
	}
	for (long n = 0; n < t->ops; n++)
		one_op(t);
	/* Everything back. */
	while (t->nheld > 0)
		do_free(t, t->nheld - 1);
	if ((r = drv_stream_sync(t->stream)) != CUDA_SUCCESS)
		FAIL(t, "cuStreamSynchronize = %d", (int)r);
	if ((r = drv_stream_destroy(t->stream)) != CUDA_SUCCESS)
		FAIL(t, "cuStreamDestroy = %d", (int)r);
	return NULL;
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
usage(void)
{
	fprintf(stderr, "usage: stress_api [-n OPS] [-t THREADS] [-s SEED] "
	    "[-q]\n");
	return 99;
}

int
main(int argc, char **argv)
{
	int c, failures = 0;

	while ((c = getopt(argc, argv, "n:t:s:q")) != -1) {
		switch (c) {
		case 'n':
			nops = strtol(optarg, NULL, 0);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return usage();
		}
	}
	if (nops < 1 || nthreads < 1 || nthreads > 256)
		return usage();

	/* The driver the library finds (the simulated one in make check). */
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (drv == NULL) {
		fprintf(stderr, "stress_api: libcuda.so.1: %s\n", dlerror());
		return 99;
	}
	CUresult (*drv_init)(unsigned) = (CUresult (*)(unsigned))dlsym(drv,
	    "cuInit");
	CUresult (*drv_retain)(CUcontext *, CUdevice) =
	    (CUresult (*)(CUcontext *, CUdevice))dlsym(drv,
	    "cuDevicePrimaryCtxRetain");
	*(void **)&drv_ctx_set_current = dlsym(drv, "cuCtxSetCurrent");
	*(void **)&drv_stream_create = dlsym(drv, "cuStreamCreate");
	*(void **)&drv_stream_sync = dlsym(drv, "cuStreamSynchronize");
	*(void **)&drv_stream_destroy = dlsym(drv, "cuStreamDestroy_v2");
	void (*fc_counters)(struct fakecuda_counters *) =
	    (void (*)(struct fakecuda_counters *))dlsym(drv,
	    "fakecuda_counters");
	if (!drv_init || !drv_retain || !drv_ctx_set_current ||
	    !drv_stream_create || !drv_stream_sync || !drv_stream_destroy) {
		fprintf(stderr, "stress_api: driver entry points missing\n");
		return 99;
	}
	if (drv_init(0) != CUDA_SUCCESS || drv_retain(&pctx, 0) !=
	    CUDA_SUCCESS) {
		fprintf(stderr, "stress_api: no device\n");
		return 99;
	}

	thread_t *ts = calloc((size_t)nthreads, sizeof(*ts));
	if (ts == NULL)
		return 99;
	printf("stress_api: %d threads x %ld operations, seed %#" PRIx64
	    "\n", nthreads, nops, seed);
	fflush(stdout);
	double t0 = now();
	for (int i = 0; i < nthreads; i++) {
		ts[i].index = i;
		ts[i].ops = nops;
		ts[i].rng = (seed + 1) * 0x9E3779B97F4A7C15ULL ^
		    (uint64_t)(i + 1) * 0xD1B54A32D192ED03ULL;
		if (ts[i].rng == 0)
			ts[i].rng = 1;
		if (pthread_create(&ts[i].tid, NULL, worker, &ts[i]) != 0) {
			fprintf(stderr, "stress_api: pthread_create\n");
			return 99;
		}
	}
	long counts[OP_COUNT] = { 0 };
	for (int i = 0; i < nthreads; i++) {
		pthread_join(ts[i].tid, NULL);
		failures += (int)ts[i].failures;
		for (int k = 0; k < OP_COUNT; k++)
			counts[k] += ts[i].counts[k];
	}
	double dt = now() - t0;
	double total = (double)nops * nthreads;
	printf("stress_api: %.0f operations in %.2f s: %.0f ops/s\n", total,
	    dt, total / dt);
	if (!quiet) {
		for (int k = 0; k < OP_COUNT; k++)
			printf("  %-12s %ld\n", op_names[k], counts[k]);
	}

	cw_stats_t st;
	if (cw_stats(&st) != CW_OK) {
		fprintf(stderr, "FAIL: cw_stats\n");
		return 1;
	}
	static const char *const kn[3] = { "device", "managed", "pinned" };
	for (int k = 0; k < 3; k++) {
		if (st.bytes[k].current != 0 || st.allocations[k].current != 0) {
			fprintf(stderr, "FAIL: %s: %" PRIu64 " bytes in %" PRIu64
			    " allocations still live\n", kn[k],
			    st.bytes[k].current, st.allocations[k].current);
			failures++;
		}
		printf("  %-8s allocations total %" PRIu64 ", peak %" PRIu64
		    " bytes; pool: %" PRIu64 " driver allocs, %" PRIu64
		    " driver frees, %" PRIu64 " fence waits\n", kn[k],
		    st.allocations[k].total, st.bytes[k].peak,
		    st.pool[k].driver_allocs, st.pool[k].driver_frees,
		    st.pool[k].fence_waits);
	}
	if (st.views_live != 0 || st.violations != 0 || st.failed_frees != 0) {
		fprintf(stderr, "FAIL: views_live %" PRIu64 ", violations %"
		    PRIu64 ", failed_frees %" PRIu64 "\n", st.views_live,
		    st.violations, st.failed_frees);
		failures++;
	}

	int r = cw_trim(0);
	if (r != CW_OK) {
		fprintf(stderr, "FAIL: cw_trim(0) = %d\n", r);
		failures++;
	}
	if (cw_stats(&st) == CW_OK) {
		for (int k = 0; k < 3; k++)
			if (st.pool[k].reserved.current != 0) {
				fprintf(stderr, "FAIL: %s pool still reserves "
				    "%" PRIu64 " bytes after cw_trim\n", kn[k],
				    st.pool[k].reserved.current);
				failures++;
			}
	}
	if (fc_counters != NULL) {
		struct fakecuda_counters fc;
		fc_counters(&fc);
		if (fc.live_allocations != 0 || fc.live_bytes != 0 ||
		    fc.live_device != 0 || fc.live_managed != 0 ||
		    fc.live_pinned != 0 || fc.live_async != 0) {
			fprintf(stderr, "FAIL: the driver still holds %lu "
			    "allocations, %llu bytes (device %lu, managed %lu, "
			    "pinned %lu, async %lu) after cw_trim\n",
			    fc.live_allocations, fc.live_bytes, fc.live_device,
			    fc.live_managed, fc.live_pinned, fc.live_async);
			failures++;
		}
		printf("  driver: %lu calls, %lu allocations, %lu frees\n",
		    fc.total_calls, fc.mem_alloc + fc.mem_alloc_managed +
		    fc.mem_host_alloc + fc.mem_alloc_async, fc.mem_free +
		    fc.mem_free_host + fc.mem_free_async);
	} else {
		printf("  (not the simulated driver: live driver state not "
		    "checked)\n");
	}
	free(ts);
	if (failures != 0) {
		fprintf(stderr, "stress_api: %d failure(s)\n", failures);
		return 1;
	}
	printf("stress_api: pass\n");
	return 0;
}
