#include "preamble.h"
/*
 * lifetime.c -- contexts: the primary context table (the handle and the
 * retains minus releases the shim saw, per device), teardown of what a
 * destroyed context freed (each record kept for the report: teardown.h),
 * and the hooks of cuCtxDestroy, cuDevicePrimaryCtxRetain/Release/Reset
 * and cuMemPoolDestroy.
 *
 * Locking: plock (leaf) guards the table; tdlock the teardown buffer,
 * held over registry calls, never over a driver call.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "mutex.h"
#include "teardown.h"

/* The primary context of each device as seen through retain, and how many
 * retains minus releases we saw (-1 = never seen a retain). */
static cw_mutex_t plock = CW_MUTEX_INITIALIZER(LOCK_RANK_SHIM_PRIMARY);
static struct {
	CUcontext ctx;
	int refs;
	bool seen;
} primary[DRIVER_MAX_DEVICES];

/* What a context's destruction frees: its cuMemAlloc-family, managed,
 * pinned, registered and IPC-opened memory, and its arrays (NS_ARRAY).
 * Stream-ordered, graph and VMM memory belongs to no context (graph
 * memory stays live and freeable across cuDevicePrimaryCtxReset: H200). */
#define TEARDOWN_KINDS (KBIT(KIND_DEVICE) | KBIT(KIND_MANAGED) | \
	KBIT(KIND_PINNED) | KBIT(KIND_REGISTERED) | KBIT(KIND_IPC))

typedef struct td_s {
	uintptr_t ctx;
	int device;         /* match by device when ctx is 0 */
	bool pooled;        /* pooled records too: the pools' context died */
	reg_handle_t hs[512];
	size_t n;
} td_t;

static int
td_cb(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	td_t *td = arg;

	if ((rec->flags & REC_F_POOLED) && !td->pooled)
		return 0;
	if (rec->ns == NS_ADDR ? !(TEARDOWN_KINDS & KBIT(rec->kind)) :
	    rec->ns != NS_ARRAY)
		return 0;
	if (td->ctx != 0 ? rec->ctx != td->ctx :
	    (rec->device != td->device || td->device < 0))
		return 0;
	td->hs[td->n++] = h;
	return td->n == CW_ARRAY_SIZE(td->hs);
}

/* Marks freed every record of ctx (or, ctx NULL, of device) that the
 * driver frees with it (TEARDOWN_KINDS, arrays); VMM and stream-ordered
 * memory survive.  pooled: ctx is a primary context whose pools died with
 * it, so the blocks the program had from them go too. */
static td_t td; /* under tdlock: too big for a thread's stack */
static cw_mutex_t tdlock = CW_MUTEX_INITIALIZER(LOCK_RANK_SHIM_TEARDOWN);

static void
teardown(CUcontext ctx, int device, bool pooled)
{
	stack_id_t st = stack_capture_outside();
	size_t total = 0;

	cw_mutex_lock(&tdlock);
	for (;;) {
		td.ctx = (uintptr_t)ctx;
		td.device = device;
		td.pooled = pooled;
		td.n = 0;
		registry_foreach(td_cb, &td);
		for (size_t i = 0; i < td.n; i++) {
			reg_rec_t out;
			if (registry_remove(td.hs[i], NULL, NULL, st, &out)
			    == 0) {
				teardown_rec_t k = { out.base, out.size,
				    out.api, out.alloc_stack, out.owner,
				    out.device, out.kind };

				/* The program never freed it: a leak of its
				 * own category in the report (teardown.h). */
				teardown_keep(&k);
				stats_on_free((kind_t)out.kind, out.size);
				shim_tl_free(TLF_TEARDOWN, &out, 0);
				STATS_INC(teardown_frees);
				total++;
			}
		}
		if (td.n < CW_ARRAY_SIZE(td.hs))
			break;
	}
	cw_mutex_unlock(&tdlock);
	log_debug(1, "context teardown (ctx %p, device %d): %zu allocations "
	    "freed", (void *)ctx, device, total);
}

/* The device whose primary context is ctx (as we saw it retained, or as
 * the library's own driver_bind retained it), or -1. */
static int
primary_dev_of(CUcontext ctx)
{
	int dev = -1;

	if (ctx == NULL)
		return -1;
	cw_mutex_lock(&plock);
	for (int d = 0; d < DRIVER_MAX_DEVICES && dev < 0; d++)
		if (primary[d].ctx == ctx)
			dev = d;
	cw_mutex_unlock(&plock);
	for (int d = 0; d < DRIVER_MAX_DEVICES && dev < 0; d++)
		if (driver_primary_ctx(d) == ctx)
			dev = d;
	return dev;
}

/* The driver destroyed (or reset) dev's primary context and with it every
 * segment of the pools on dev: they must never hand those out again.
 * Harmless when the pools never served dev. */
static void
pools_forget(int dev)
{
	if (dev < 0 || dev >= DRIVER_MAX_DEVICES)
		return;
	pool_forget_device(dev);
	log_debug(1, "device %d: primary context torn down; pools forgotten",
	    dev);
}

CUresult
track_ctx_destroy(void *real, const char *api, CUcontext ctx)
{
	typedef CUresult (*fn_t)(CUcontext);
	int pdev = primary_dev_of(ctx);
	CUresult r = CALL(real, fn_t, (ctx));

	(void)api;
	if (r == CUDA_SUCCESS && ctx != NULL) {
		teardown(ctx, -1, pdev >= 0);
		pools_forget(pdev);
	}
	return r;
}

CUresult
track_primary_retain(void *real, const char *api, CUcontext *pctx,
    CUdevice dev)
{
	typedef CUresult (*fn_t)(CUcontext *, CUdevice);
	CUresult r = CALL(real, fn_t, (pctx, dev));

	(void)api;
	if (r != CUDA_SUCCESS || dev < 0 || dev >= DRIVER_MAX_DEVICES)
		return r;
	cw_mutex_lock(&plock);
	if (!primary[dev].seen) {
		primary[dev].seen = true;
		primary[dev].refs = 0;
	}
	primary[dev].refs++;
	primary[dev].ctx = *pctx;
	cw_mutex_unlock(&plock);
	return r;
}

/* The primary context of dev as we know it; when we never saw it
 * retained, asked of the driver if it is active (a retain and a release,
 * net zero), else NULL. */
CUcontext
shim_primary_ctx_of(CUdevice dev)
{
	CUcontext c = NULL;
	unsigned int flags;
	int active = 0;

	cw_mutex_lock(&plock);
	c = primary[dev].ctx;
	cw_mutex_unlock(&plock);
	if (c != NULL)
		return c;
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuDevicePrimaryCtxGetState == NULL ||
	    d->cuDevicePrimaryCtxRelease_v2 == NULL)
		return NULL;
	if (d->cuDevicePrimaryCtxGetState(dev, &flags, &active) !=
	    CUDA_SUCCESS || !active)
		return NULL;
	if (d->cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS)
		return NULL;
	d->cuDevicePrimaryCtxRelease_v2(dev);
	cw_mutex_lock(&plock);
	if (primary[dev].ctx == NULL)
		primary[dev].ctx = c; /* the handle is stable (driver 580) */
	cw_mutex_unlock(&plock);
	return c;
}

CUresult
track_primary_release(void *real, const char *api, CUdevice dev)
{
	typedef CUresult (*fn_t)(CUdevice);
	CUcontext c = NULL;
	bool last = false;

	(void)api;
	if (dev >= 0 && dev < DRIVER_MAX_DEVICES)
		c = shim_primary_ctx_of(dev);
	CUresult r = CALL(real, fn_t, (dev));
	if (r != CUDA_SUCCESS || dev < 0 || dev >= DRIVER_MAX_DEVICES)
		return r;
	cw_mutex_lock(&plock);
	if (primary[dev].seen && primary[dev].refs > 0 &&
	    --primary[dev].refs == 0) {
		last = true;
		primary[dev].ctx = NULL;
	}
	cw_mutex_unlock(&plock);
	/* The driver destroys the primary context with the last release;
	 * we only know it is the last when we saw every retain.  The pools
	 * (driver_bind) hold a retain of their own that the program does
	 * not know of: they give it back now, so that the context dies as
	 * it would without them (its memory, the pools' segments and the
	 * program's blocks, with it). */
	if (last) {
		if (c != NULL)
			teardown(c, -1, true);
		pools_forget(dev);
		driver_release_primary(dev);
	}
	return r;
}

CUresult
track_primary_reset(void *real, const char *api, CUdevice dev)
{
	typedef CUresult (*fn_t)(CUdevice);
	CUcontext c = NULL;

	(void)api;
	if (dev >= 0 && dev < DRIVER_MAX_DEVICES)
		c = shim_primary_ctx_of(dev);
	CUresult r = CALL(real, fn_t, (dev));
	if (r != CUDA_SUCCESS)
		return r;
	if (c != NULL)
		teardown(c, -1, true);
	pools_forget(dev);
	return r;
}

CUresult
track_mem_pool_destroy(void *real, const char *api, CUmemoryPool pool)
{
	typedef CUresult (*fn_t)(CUmemoryPool);

	/* Allocations still outstanding keep the pool alive until they are
	 * freed (cuda.h): they stay recorded. */
	(void)api;
	return CALL(real, fn_t, (pool));
}

/* ----------------------------------------------------------------- fork */

static void
td_prefork(void)
{
	cw_mutex_prefork(&tdlock);
}

static void
td_postfork_parent(void)
{
	cw_mutex_postfork_parent(&tdlock);
}

static void
td_postfork_child(void)
{
	cw_mutex_postfork_child(&tdlock);
}

static void
primary_prefork(void)
{
	cw_mutex_prefork(&plock);
}

static void
primary_postfork_parent(void)
{
	cw_mutex_postfork_parent(&plock);
}

/* The parent's contexts are unusable here: forgotten. */
static void
primary_postfork_child(void)
{
	cw_mutex_postfork_child(&plock);
	memset(primary, 0, sizeof(primary));
}

const fork_hooks_t shim_teardown_fork = { LOCK_RANK_SHIM_TEARDOWN,
	td_prefork, td_postfork_parent, td_postfork_child };
const fork_hooks_t shim_primary_fork = { LOCK_RANK_SHIM_PRIMARY,
	primary_prefork, primary_postfork_parent, primary_postfork_child };
