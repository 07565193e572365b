#include "preamble.h"

/*
 * driver_ctx.c -- the driver layer's per-device state: cuInit once, the
 * device count, the retained primary context of each device (driver_bind
 * and the rest) and the device-attribute cache.  The table it calls
 * through is driver.c's (driver_int.h).
 *
 * Owns: the result of cuInit, the device count, the retained primary
 * context of each device, and the device-attribute cache.
 *
 * Invariants:
 *  - A device's primary context is retained at most once per process
 *    (cuDevicePrimaryCtxRetain called once, under the init lock, rechecked
 *    there) and never released by us but through driver_release_primary.
 *    Published with release order.
 *  - In a fork child (driver_forked) nothing here calls CUDA.
 *
 * Locking: driver.c's init lock (driver_init_lock_take), on first-time
 * paths only: cuInit and the device count, the first retain of a device,
 * driver_release_primary.  The hot path (driver_bind on a bound device) is
 * lock-free: an acquire load of the context, then cuCtxGetCurrent and a
 * compare (see the note on context changes in driver.h).  The attribute
 * cache is relaxed atomics: two threads may both query the driver, both
 * store the same value.
 *
 * Re-entry: a path that would take the init lock on a thread that holds
 * it (driver_in_init: see driver.c) fails with CW_ENODEV instead.
 */

#include <stdatomic.h>
#include <string.h>

#include "driver.h"
#include "driver_int.h"
#include "lasterr.h"
#include "log.h"

/* cuInit: 0 not yet, 1 done with init_result. */
static _Atomic int init_done;
static CUresult init_result;
static _Atomic int device_count = -1;    /* -1: not asked yet */

static CUcontext _Atomic primary[DRIVER_MAX_DEVICES];

/* Attribute cache: bit 32 = valid, low 32 bits = value. */
#define ATTR_VALID ((uint64_t)1 << 32)
static _Atomic uint64_t attr_cache[DRIVER_MAX_DEVICES][CU_DEVICE_ATTRIBUTE_MAX];

/* ============================================================ errors */

static int
forked_fail(const char *function)
{
	return lasterr_set(CW_ENODEV, function,
	    "CUDA is unusable in a forked child until exec");
}

static int
no_driver_fail(const char *function)
{
	return lasterr_set(CW_ENODEV, function,
	    "no CUDA driver (libcuda.so.1 could not be loaded)");
}

/* ============================================================ init */

/* cuInit(0) once, and the device count.  Returns CW_OK or an error with
 * cw_last_error filled. */
static int
ensure_init(const char *function)
{
	const driver_fns_t *f;
	CUresult r;
	int n;

	if (unlikely(atomic_load(&driver_forked)))
		return forked_fail(function);
	if (!(f = driver_get()))
		return no_driver_fail(function);
	if (likely(atomic_load_explicit(&init_done, memory_order_acquire))) {
		r = init_result;
	} else {
		if (unlikely(driver_in_init))
			return lasterr_set(CW_ENODEV, function,
			    "re-entered while the driver initialises");
		driver_init_lock_take();
		if (!atomic_load_explicit(&init_done, memory_order_relaxed)) {
			init_result = f->cuInit(0);
			n = 0;
			if (init_result == CUDA_SUCCESS &&
			    f->cuDeviceGetCount(&n) != CUDA_SUCCESS)
				n = 0;
			if (n > DRIVER_MAX_DEVICES)
				n = DRIVER_MAX_DEVICES;
			atomic_store_explicit(&device_count, n,
			    memory_order_relaxed);
			atomic_store_explicit(&init_done, 1,
			    memory_order_release);
		}
		r = init_result;
		driver_init_lock_drop();
	}
	if (unlikely(r != CUDA_SUCCESS))
		return driver_fail(r == CUDA_ERROR_NO_DEVICE ? CW_ENODEV :
		    CW_ECUDA, function, "cuInit", r);
	return CW_OK;
}

int
driver_device_count(void)
{
	if (ensure_init(__func__) != CW_OK) {
		lasterr_clear();
		return 0;
	}
	return atomic_load_explicit(&device_count, memory_order_relaxed);
}

static int
check_ordinal(int device, const char *function)
{
	int n;

	if (device < 0 || device >= DRIVER_MAX_DEVICES)
		goto bad;
	n = atomic_load_explicit(&device_count, memory_order_relaxed);
	if (device < n)
		return CW_OK;
bad:
	lasterr_set(CW_ENODEV, function, "no CUDA device %d", device);
	lasterr_get()->cuda_error = CUDA_ERROR_INVALID_DEVICE;
	lasterr_get()->cuda_error_name = "CUDA_ERROR_INVALID_DEVICE";
	return CW_ENODEV;
}

/* ============================================================ contexts */

/* First use of device on any thread: retain its primary context once. */
static int
retain_slow(int device, CUcontext *out)
{
	const driver_fns_t *f;
	CUdevice dev;
	CUcontext ctx;
	CUresult r;
	int st;

	if ((st = ensure_init("driver_bind")))
		return st;
	if ((st = check_ordinal(device, "driver_bind")))
		return st;
	f = &driver_fns;
	if (unlikely(driver_in_init))
		return lasterr_set(CW_ENODEV, "driver_bind",
		    "re-entered while the driver initialises");
	driver_init_lock_take();
	ctx = atomic_load_explicit(&primary[device], memory_order_relaxed);
	if (ctx)
		goto out_unlock;
	if ((r = f->cuDeviceGet(&dev, device)) != CUDA_SUCCESS) {
		st = driver_fail(r == CUDA_ERROR_INVALID_DEVICE ? CW_ENODEV :
		    CW_ECUDA, "driver_bind", "cuDeviceGet", r);
		goto out_unlock;
	}
	if ((r = f->cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS) {
		st = driver_fail(CW_ECUDA, "driver_bind",
		    "cuDevicePrimaryCtxRetain", r);
		ctx = NULL;
		goto out_unlock;
	}
	log_debug(2, "retained the primary context of device %d", device);
	atomic_store_explicit(&primary[device], ctx, memory_order_release);
out_unlock:
	driver_init_lock_drop();
	*out = ctx;
	return st;
}

/* The bind itself; prev, when not NULL, receives the context current
 * before. */
static int
bind(int device, CUcontext *prev)
{
	CUcontext ctx, cur = NULL;
	CUresult r;
	int st;

	if (prev)
		*prev = NULL;
	if (unlikely(atomic_load_explicit(&driver_forked,
	    memory_order_relaxed)))
		return forked_fail("driver_bind");
	if (unlikely(device < 0 || device >= DRIVER_MAX_DEVICES))
		return check_ordinal(device, "driver_bind");
	ctx = atomic_load_explicit(&primary[device], memory_order_acquire);
	if (unlikely(!ctx) && (st = retain_slow(device, &ctx)))
		return st;
	/* Ask the driver every time: the program may have switched. */
	r = driver_fns.cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS)
		cur = NULL;
	if (prev)
		*prev = cur;
	if (likely(cur == ctx))
		return CW_OK;
	if ((r = driver_fns.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
		return driver_fail(CW_ECUDA, "driver_bind", "cuCtxSetCurrent",
		    r);
	return CW_OK;
}

int
driver_bind(int device)
{
	return bind(device, NULL);
}

int
driver_bind_save(int device, CUcontext *prev)
{
	CUcontext dummy;

	return bind(device, prev ? prev : &dummy);
}

void
driver_restore(CUcontext prev)
{
	CUcontext cur = NULL;

	if (atomic_load(&driver_forked) ||
	    atomic_load_explicit(&driver_load_state, memory_order_acquire) !=
	    LOAD_OK)
		return;
	if (driver_fns.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == prev)
		return;
	/* cuCtxSetCurrent(NULL) leaves the thread without a context, as it
	 * was. */
	(void)driver_fns.cuCtxSetCurrent(prev);
}

bool
driver_release_primary(int device)
{
	CUcontext ctx;
	CUresult r = CUDA_SUCCESS;

	if (device < 0 || device >= DRIVER_MAX_DEVICES ||
	    atomic_load(&driver_forked) ||
	    atomic_load_explicit(&driver_load_state, memory_order_acquire) !=
	    LOAD_OK)
		return false;
	driver_init_lock_take();
	ctx = atomic_load_explicit(&primary[device], memory_order_relaxed);
	if (ctx != NULL) {
		atomic_store_explicit(&primary[device], NULL,
		    memory_order_release);
		if (driver_fns.cuDevicePrimaryCtxRelease_v2 != NULL)
			r = driver_fns.cuDevicePrimaryCtxRelease_v2(
			    (CUdevice)device);
	}
	driver_init_lock_drop();
	if (ctx != NULL)
		log_debug(2, "released the primary context of device %d: %s",
		    device, driver_error_name(r));
	return ctx != NULL;
}

CUcontext
driver_primary_ctx(int device)
{
	if (device < 0 || device >= DRIVER_MAX_DEVICES)
		return NULL;
	return atomic_load_explicit(&primary[device], memory_order_acquire);
}

/* ============================================================ attributes */

bool
driver_attr(int device, CUdevice_attribute attr, int *value)
{
	uint64_t v;
	CUdevice dev;
	CUresult r;
	int iv = 0;

	if ((int)attr <= 0 || (int)attr >= CU_DEVICE_ATTRIBUTE_MAX) {
		lasterr_set(CW_EINVAL, __func__, "bad device attribute %d",
		    (int)attr);
		return true;
	}
	if (ensure_init(__func__) || check_ordinal(device, __func__))
		return true;
	v = atomic_load_explicit(&attr_cache[device][attr],
	    memory_order_relaxed);
	if (likely(v & ATTR_VALID)) {
		*value = (int)(uint32_t)v;
		return false;
	}
	if ((r = driver_fns.cuDeviceGet(&dev, device)) != CUDA_SUCCESS) {
		driver_fail(CW_ECUDA, __func__, "cuDeviceGet", r);
		return true;
	}
	if ((r = driver_fns.cuDeviceGetAttribute(&iv, attr, dev)) !=
	    CUDA_SUCCESS) {
		driver_fail(CW_ECUDA, __func__, "cuDeviceGetAttribute", r);
		return true;
	}
	atomic_store_explicit(&attr_cache[device][attr],
	    ATTR_VALID | (uint32_t)iv, memory_order_relaxed);
	*value = iv;
	return false;
}

/* ============================================================ fork, reset */

void
driver_ctx_forget(void)
{
	for (int d = 0; d < DRIVER_MAX_DEVICES; d++)
		atomic_store_explicit(&primary[d], NULL, memory_order_relaxed);
}

void
driver_ctx_reset(void)
{
	driver_ctx_forget();
	memset(attr_cache, 0, sizeof(attr_cache));
	atomic_store(&init_done, 0);
	init_result = CUDA_SUCCESS;
	atomic_store(&device_count, -1);
}
