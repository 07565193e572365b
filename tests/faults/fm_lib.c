/*
 * fm_lib.c -- the fault matrix's workload for libcuwarden (linked).
 *
 *   fm_lib [-q]
 *
 * One fixed sequence of every public call that reaches the driver: device,
 * managed and pinned allocations (small and large), stream-ordered
 * allocations on the legacy stream with reuse, views, references, owners,
 * uploads, downloads, copies, sets, advice, prefetch to the device and to
 * the host, lookup, statistics, a report, frees and a trim.  The simulated
 * driver fails whatever FAKECUDA_FAIL_CALL names (check_faults_lib.sh sets
 * it, one export at a time).
 *
 * Every answer is checked against the contracts (doc/contracts.md):
 *   - a refusal is one the function documents for a driver failure
 *     (CW_ECUDA, CW_ENODEV, CW_ENOMEM, and CW_ENOTSUP where it says so);
 *     a CW_ECUDA names a driver error (cw_last_error()->cuda_error);
 *   - data that went in comes back out when every call on the way said OK;
 *   - contracts hold: a refused call changes nothing (refcount, owner);
 *   - cw_report writes a whole report while calls fail (and at the end to
 *     FM_REPORT, for the harness to parse);
 *   - at the end nothing is lost: no live allocation or view, no violation
 *     other than the failed frees and the planted ones (a transfer while
 *     shared, a second free of every allocation), and every driver allocation still live
 *     is accounted for: held by a pool (segments) or in the failed-free
 *     ledger.
 * Prints "fm_lib: ok ..." and exits 0, or prints each broken expectation
 * ("fm_lib: FAIL ...") and exits 1.  A crash or a hang is the harness's to
 * see.  99: harness error.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "cuwarden.h"
#include "fakecuda.h"

#define MAX_HELD 16

static int failures;
static int refused;
static int planted;     /* violations made on purpose */
static bool quiet;

static struct {
	cw_buf_t h;
	size_t size;
	cw_kind_t kind;
} held[MAX_HELD];
static int nheld;
static cw_stream_t async_stream; /* of cw_alloc_async and cw_free_async */

#define FAIL(...) do { \
	failures++; \
	printf("fm_lib: FAIL line %d: ", __LINE__); \
	printf(__VA_ARGS__); \
	printf("\n"); \
} while (0)

/* A status allowed for a driver failure, from the function's row in
 * doc/contracts.md: CW_ECUDA always; CW_ENODEV where "no driver / no
 * device" applies (allocations, transfers, advice, trim); CW_ENOMEM for
 * allocations (the pool's stages); extra as the caller says. */
static bool
allowed(int st, const char *fn, int extra)
{
	const cw_error_t *e = cw_last_error();

	if (st == CW_OK)
		return true;
	refused++;
	if (!quiet)
		printf("fm_lib: %s -> %s (%s)\n", fn, cw_strerror(st), e->message);
	if (st == CW_ECUDA) {
		if (e->cuda_error == 0 || !e->cuda_error_name) {
			FAIL("%s: CW_ECUDA without the driver's error", fn);
			return false;
		}
		return true;
	}
	if (st == CW_ENODEV || st == extra)
		return true;
	FAIL("%s: %s is not a documented answer to a driver failure (%s)", fn,
	    cw_strerror(st), e->message);
	return false;
}

static cw_buf_t
alloc(size_t size, cw_kind_t kind, cw_owner_t owner, bool async)
{
	cw_buf_t b = CW_BUF_NONE;
	int st = async ? cw_alloc_async(&b, size, kind, 0, owner, async_stream) :
	    cw_alloc(&b, size, kind, 0, owner);

	if (!allowed(st, async ? "cw_alloc_async" : "cw_alloc", CW_ENOMEM))
		return CW_BUF_NONE;
	if (st != CW_OK) {
		if (b != CW_BUF_NONE)
			FAIL("cw_alloc refused but set *buf");
		return CW_BUF_NONE;
	}
	if (cw_size(b) != size || cw_kind(b) != (int)kind)
		FAIL("size/kind of a new allocation: %zu/%d", cw_size(b), cw_kind(b));
	if (nheld == MAX_HELD) {
		FAIL("harness: too many held");
		exit(99);
	}
	held[nheld].h = b;
	held[nheld].size = size;
	held[nheld].kind = kind;
	nheld++;
	return b;
}

/* Upload a pattern, read it back: when both say OK the bytes must match. */
static void
roundtrip(cw_buf_t b, size_t off, size_t n, unsigned char seed)
{
	unsigned char in[4096], out[4096];
	int st;

	if (b == CW_BUF_NONE)
		return;
	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)(seed + i * 7);
	memset(out, 0, n);
	st = cw_upload(b, off, in, n);
	if (!allowed(st, "cw_upload", CW_ENOTSUP) || st != CW_OK)
		return;
	st = cw_download(b, off, out, n);
	if (!allowed(st, "cw_download", CW_ENOTSUP) || st != CW_OK)
		return;
	if (memcmp(in, out, n) != 0)
		FAIL("download after upload differs (kind %d)", cw_kind(b));
}

static void
free_all(void)
{
	for (int i = nheld - 1; i >= 0; i--) {
		int st = cw_free(held[i].h);

		if (st != CW_OK && st != CW_ECUDA)
			FAIL("cw_free of a live allocation: %s (%s)", cw_strerror(st),
			    cw_last_error()->message);
		else if (st == CW_ECUDA && strcmp(cw_last_error()->rule ? cw_last_error()->rule : "",
		    "failed_free") != 0)
			FAIL("cw_free CW_ECUDA without failed_free");
		if (st != CW_OK && st != CW_ECUDA)
			continue;
		if (cw_free(held[i].h) != CW_EFREED)
			FAIL("a freed handle is not CW_EFREED");
		planted++;      /* double_free */
		refused += st != CW_OK;
	}
	nheld = 0;
}

/* Driver allocations still live, against what the library says it holds. */
static void
account(const cw_stats_t *s)
{
	void (*counters)(struct fakecuda_counters *) =
	    (void (*)(struct fakecuda_counters *))dlsym(RTLD_DEFAULT, "fakecuda_counters");
	struct fakecuda_counters c;
	uint64_t pool_segments = 0, driver;

	if (!counters) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		counters = h ? (void (*)(struct fakecuda_counters *))dlsym(h,
		    "fakecuda_counters") : NULL;
	}
	if (!counters) {
		printf("fm_lib: harness: no fakecuda_counters (not the simulated driver)\n");
		exit(99);
	}
	counters(&c);
	for (int k = 0; k < 3; k++)
		pool_segments += s->pool[k].segments.current;
	driver = c.live_device + c.live_managed + c.live_pinned + c.live_async;
	if (driver != pool_segments + s->failed_free_ledger + s->failed_free_overflow)
		FAIL("driver holds %" PRIu64 " allocations (device %lu managed %lu pinned %lu "
		    "async %lu); the library accounts for %" PRIu64 " in pools + %" PRIu64
		    " in the ledger + %" PRIu64 " overflowed", driver, c.live_device,
		    c.live_managed, c.live_pinned, c.live_async, pool_segments,
		    s->failed_free_ledger, s->failed_free_overflow);
	if (!quiet)
		printf("fm_lib: driver live %" PRIu64 " = pools %" PRIu64 " + ledger %" PRIu64
		    "; injected failures %lu\n", driver, pool_segments,
		    s->failed_free_ledger, c.injected_failures);
}

static CUresult (*busy)(CUstream, unsigned);

/* A non-blocking stream from the driver the library uses, and the
 * simulated driver's busy kernel; NULL (the legacy stream) when either is
 * missing or the driver refuses. */
static cw_stream_t
make_stream(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	CUresult (*retain)(CUcontext *, CUdevice) = NULL;
	CUresult (*set)(CUcontext) = NULL;
	CUresult (*create)(CUstream *, unsigned) = NULL;
	CUcontext ctx = NULL;
	CUstream s = NULL;

	if (!h)
		return NULL;
	/* The library leaves no context current: the program binds the
	 * primary context itself, as a CUDA program would. */
	*(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&set = dlsym(h, "cuCtxSetCurrent");
	*(void **)&create = dlsym(h, "cuStreamCreate");
	*(void **)&busy = dlsym(h, "fakecuda_launch_busy");
	if (!retain || !set || !create || retain(&ctx, 0) != CUDA_SUCCESS ||
	    set(ctx) != CUDA_SUCCESS ||
	    create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return NULL;
	return s;
}

static void
noop_output(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

int
main(int argc, char **argv)
{
	cw_owner_t alice = CW_OWNER_NONE, bob = CW_OWNER_NONE, o;
	cw_buf_t dsmall, dlarge, managed, pinned, plarge, a1, a2, a3, v = CW_BUF_NONE, found;
	cw_stats_t s;
	cw_stream_t stream;
	FILE *rep;
	int st;

	quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
	cw_set_output(noop_output, NULL);

	if (cw_owner_register("alice", &alice) != CW_OK ||
	    cw_owner_register("bob", &bob) != CW_OK) {
		printf("fm_lib: harness: owners\n");
		return 99;
	}

	/* Allocations of every kind, small (pooled) and large. */
	dsmall = alloc(4096, CW_DEVICE, alice, false);
	dlarge = alloc((size_t)24 << 20, CW_DEVICE, alice, false);
	managed = alloc((size_t)64 << 10, CW_MANAGED, bob, false);
	pinned = alloc(8192, CW_PINNED, bob, false);
	plarge = alloc((size_t)4 << 20, CW_PINNED, alice, false);

	/* Data through every kind. */
	roundtrip(dsmall, 0, 4096, 1);
	roundtrip(dlarge, (size_t)1 << 20, 4000, 2);
	roundtrip(managed, 100, 1000, 3);
	roundtrip(pinned, 0, 4096, 4);
	roundtrip(plarge, (size_t)2 << 20, 4096, 8);
	if (dsmall && dlarge) {
		st = cw_memset(dlarge, 0, 0x5a, 4096);
		allowed(st, "cw_memset", 0);
		st = cw_copy(dsmall, 0, dlarge, 0, 4096);
		if (allowed(st, "cw_copy", 0) && st == CW_OK) {
			unsigned char out[64];

			st = cw_download(dsmall, 0, out, sizeof(out));
			if (allowed(st, "cw_download", 0) && st == CW_OK) {
				/* The set may have been refused: then the copy
				 * brought dlarge's earlier bytes. Only a full
				 * chain of OKs promises 0x5a, checked below. */
			}
		}
	}
	if (dsmall && pinned) {
		int s1 = cw_memset(pinned, 0, 0x33, 256);
		int s2 = s1 == CW_OK ? cw_copy(dsmall, 512, pinned, 0, 256) : s1;
		unsigned char out[256];
		int s3 = s2 == CW_OK ? cw_download(dsmall, 512, out, sizeof(out)) : s2;

		allowed(s1, "cw_memset", 0);
		if (s1 == CW_OK)
			allowed(s2, "cw_copy", 0);
		if (s2 == CW_OK)
			allowed(s3, "cw_download", 0);
		if (s3 == CW_OK)
			for (size_t i = 0; i < sizeof(out); i++)
				if (out[i] != 0x33) {
					FAIL("pinned -> device copy: byte %zu is %#x", i, out[i]);
					break;
				}
	}

	/* Managed memory advice and prefetch. */
	if (managed) {
		allowed(cw_advise(managed, CW_ADVISE_SET_READ_MOSTLY, 0), "cw_advise", 0);
		allowed(cw_advise(managed, CW_ADVISE_SET_PREFERRED_LOCATION, CW_CPU),
		    "cw_advise", 0);
		allowed(cw_prefetch(managed, 0, NULL), "cw_prefetch", 0);
		allowed(cw_prefetch(managed, CW_CPU, NULL), "cw_prefetch", 0);
	}

	/* Views, references, owners: refusals change nothing. */
	if (dlarge) {
		st = cw_view(&v, dlarge, 4096, 8192);
		if (st != CW_OK)
			FAIL("cw_view: %s", cw_strerror(st));
		if (cw_retain(dlarge) != CW_OK || cw_refcount(dlarge) != 3)
			FAIL("retain: refcount %d", cw_refcount(dlarge));
		if (cw_transfer(dlarge, bob) != CW_ECONTRACT)
			FAIL("transfer while shared was not refused");
		planted++;      /* transfer_while_shared */
		if (cw_owner_of(dlarge, &o) != CW_OK || o != alice)
			FAIL("a refused transfer changed the owner");
		if (cw_release(dlarge) != CW_OK)
			FAIL("release");
		roundtrip(v, 0, 4096, 9);
		if (v && cw_free(v) != CW_OK)
			FAIL("free of a view");
		if (cw_transfer(dlarge, bob) != CW_OK)
			FAIL("transfer");
	}
	if (dlarge && cw_lookup((char *)cw_ptr(dlarge) + 12345, &found) == CW_OK) {
		if (found != dlarge)
			FAIL("lookup found another allocation");
	} else if (dlarge) {
		FAIL("lookup of an interior pointer: %s", cw_last_error()->message);
	}

	/* A stream of the program's own (made through the driver; NULL when
	 * that fails): prefetch on it, and work still running on it when
	 * memory is freed, so that the pools' fence has events to record,
	 * query and destroy. */
	stream = make_stream();
	if (managed)
		allowed(cw_prefetch(managed, 0, stream), "cw_prefetch", 0);
	if (dsmall && busy) {
		cw_buf_t b;

		busy(stream, 2);
		b = alloc(4096, CW_DEVICE, alice, false);
		if (b) {
			st = cw_free(b);
			if (st != CW_OK && st != CW_ECUDA)
				FAIL("cw_free: %s", cw_strerror(st));
			held[--nheld].h = CW_BUF_NONE;
		}
		b = alloc(4096, CW_DEVICE, alice, false);
		roundtrip(b, 0, 4096, 10);
	}

	/* Stream-ordered, on that stream: allocate, free on the stream,
	 * allocate again (reuse on the same stream), and a second one. */
	async_stream = stream;
	a1 = alloc(65536, CW_DEVICE, alice, true);
	roundtrip(a1, 0, 4096, 5);
	if (a1) {
		if (busy && stream)
			busy(stream, 3);
		st = cw_free_async(a1, async_stream);
		if (st != CW_OK && st != CW_ECUDA)
			FAIL("cw_free_async: %s", cw_strerror(st));
		held[--nheld].h = CW_BUF_NONE;
	}
	a2 = alloc(65536, CW_DEVICE, alice, true);
	a3 = alloc(1000, CW_PINNED, bob, true);
	if (busy && stream) {
		/* Freed on the stream behind work, wanted elsewhere at once:
		 * the fence decides, the helper thread watches. */
		cw_buf_t b1 = alloc(131072, CW_DEVICE, bob, true), b2;

		if (b1) {
			busy(stream, 3);
			st = cw_free_async(b1, async_stream);
			if (st != CW_OK && st != CW_ECUDA)
				FAIL("cw_free_async: %s", cw_strerror(st));
			held[--nheld].h = CW_BUF_NONE;
		}
		b2 = alloc(131072, CW_DEVICE, bob, false);
		roundtrip(b2, 0, 4096, 11);
	}
	if (busy && stream) {
		/* 300 blocks freed on the stream behind work: 300 events at
		 * once, more than the 256 the fence keeps, so that releasing
		 * them destroys some (cuEventDestroy_v2). */
		busy(stream, 3);
		for (int i = 0; i < 300; i++) {
			cw_buf_t b = alloc(512, CW_DEVICE, bob, false);

			if (!b)
				continue;
			st = cw_free_async(b, async_stream);
			if (st != CW_OK && st != CW_ECUDA)
				FAIL("cw_free_async: %s", cw_strerror(st));
			held[--nheld].h = CW_BUF_NONE;
		}
	}
	roundtrip(a2, 0, 4096, 6);
	roundtrip(a3, 0, 1000, 7);

	/* Statistics and a report while driver calls fail. */
	if (cw_stats(&s) != CW_OK)
		FAIL("cw_stats");
	rep = tmpfile();
	if (!rep) {
		printf("fm_lib: harness: tmpfile\n");
		return 99;
	}
	st = cw_report(fileno(rep), CW_FORMAT_JSON);
	if (st != CW_OK || lseek(fileno(rep), 0, SEEK_END) < 100)
		FAIL("cw_report (JSON): %s, %ld bytes", cw_strerror(st),
		    (long)lseek(fileno(rep), 0, SEEK_END));
	fclose(rep);
	cw_stats_print(noop_output, NULL);

	/* Free everything, trim, account. */
	free_all();
	st = cw_trim(0);
	allowed(st, "cw_trim", 0);
	if (st != CW_OK)
		allowed(cw_trim(0), "cw_trim", 0);
	if (cw_stats(&s) != CW_OK)
		FAIL("cw_stats");
	for (int k = 0; k < 3; k++)
		if (s.allocations[k].current || s.bytes[k].current)
			FAIL("kind %d: %" PRIu64 " allocations, %" PRIu64 " bytes live after freeing all",
			    k, s.allocations[k].current, s.bytes[k].current);
	if (s.views_live)
		FAIL("%" PRIu64 " views live", s.views_live);
	if (s.violations != s.failed_frees + (uint64_t)planted)
		FAIL("%" PRIu64 " violations, %" PRIu64 " failed frees and %d planted: "
		    "a violation nobody made", s.violations, s.failed_frees, planted);
	account(&s);

	/* The final report, for the harness to read (FM_REPORT). */
	if (getenv("FM_REPORT")) {
		int fd = open(getenv("FM_REPORT"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0) {
			printf("fm_lib: harness: cannot create %s\n", getenv("FM_REPORT"));
			return 99;
		}
		st = cw_report(fd, CW_FORMAT_JSON);
		if (st != CW_OK)
			FAIL("final cw_report: %s", cw_strerror(st));
		close(fd);
	}
	printf("fm_lib: %s: %d refusals, %" PRIu64 " failed frees, planted=%d\n",
	    failures ? "FAIL" : "ok", refused, s.failed_frees, planted);
	return failures ? 1 : 0;
}
