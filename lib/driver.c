#include "preamble.h"

/*
 * driver.c -- the real CUDA driver, loaded at run time, and the per-device
 * primary contexts.
 *
 * Owns: the dlopen handle of libcuda.so.1, the table of its entry points
 * (driver_fns_t, filled once with the *real* dlsym), the result of cuInit,
 * the device count, the retained primary context of each device, and the
 * device-attribute cache.
 *
 * Invariants:
 *  - Every pointer in the table comes from real_dlsym(handle, name): never
 *    from the public dlsym, which the preload shim interposes (it would hand
 *    back the shim's own hooks, and our calls would be recorded as the
 *    program's).
 *  - The table is published (state LOADED) only once complete; readers load
 *    the state with acquire and then read the table without a lock.
 *  - A device's primary context is retained at most once per process
 *    (cuDevicePrimaryCtxRetain called once, under init_lock, rechecked
 *    there) and never released by us.  Published with release order.
 *  - After driver_postfork_child, nothing here calls CUDA.
 *
 * Locking: one leaf mutex, init_lock, taken only on first-time paths (load,
 * cuInit, device count, first retain of a device): never on the hot path,
 * and nothing else of ours is locked under it.  It is held across those
 * first driver calls (cuInit, cuDevicePrimaryCtxRetain) as pthread_once
 * would be: the driver never calls back into this module, so it cannot
 * deadlock.  The hot path (driver_bind on a bound device) is lock-free: an
 * acquire load of the context, then cuCtxGetCurrent and a compare (see the
 * note on context changes in driver.h).  The attribute cache is relaxed
 * atomics: two threads may both query the driver, both store the same value.
 * driver_postfork_child re-initialises init_lock (another thread may have
 * held it at fork time) and forgets every context.
 *
 * Re-entry: while a thread holds init_lock it is inside dlopen (libcuda's
 * constructors), cuInit or the first retain, any of which may call dlsym,
 * which the shim interposes.  Should that path come back here on the same
 * thread, the thread-local in_init makes it fail (driver_get NULL, binding
 * CW_ENODEV) instead of deadlocking on init_lock.
 */

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cuerrors.h"
#include "driver.h"
#include "lasterr.h"
#include "log.h"
#include "mutex.h"

/* ============================================================ state */

enum { LOAD_NONE = 0, LOAD_OK = 1, LOAD_FAILED = 2 };

static cw_mutex_t init_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_DRIVER);

static driver_fns_t fns;                 /* written once, under init_lock */
static _Atomic int load_state;           /* LOAD_* */
static void *_Atomic lib_handle;          /* published once loaded */
static void *_Atomic open_handle;         /* driver_open's */
static _Atomic bool open_warned;
static _Atomic bool forked;              /* set in the fork child */
static bool load_warned;

/* cuInit: 0 not yet, 1 done with init_result. */
static _Atomic int init_done;
static CUresult init_result;
static _Atomic int device_count = -1;    /* -1: not asked yet */

static CUcontext _Atomic primary[DRIVER_MAX_DEVICES];

/* Attribute cache: bit 32 = valid, low 32 bits = value. */
#define ATTR_VALID ((uint64_t)1 << 32)
static _Atomic uint64_t attr_cache[DRIVER_MAX_DEVICES][CU_DEVICE_ATTRIBUTE_MAX];

/* This thread holds init_lock (see "Re-entry" above). */
static CW_TLS bool in_init;

static void
init_lock_take(void)
{
	cw_mutex_lock(&init_lock);
	in_init = true;
}

static void
init_lock_drop(void)
{
	in_init = false;
	cw_mutex_unlock(&init_lock);
}

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym_ptr;

/* ============================================================ dlsym */

/* The real dlsym: glibc >= 2.34 versions it GLIBC_2.34 (libc), older ones
 * GLIBC_2.2.5 (x86_64) / GLIBC_2.17 (aarch64) in libdl.  RTLD_NEXT finds
 * the one after us (the shim defines its own dlsym, unversioned); failing
 * that, an explicit handle on libc, which only libc and its dependencies
 * answer for. */
static dlsym_fn
find_real_dlsym(void)
{
	static const char *const versions[] = {
		"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"
	};
	void *libc;
	void *p = NULL;

	for (size_t i = 0; i < CW_ARRAY_SIZE(versions) && !p; i++)
		p = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	if (!p && (libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD))) {
		for (size_t i = 0; i < CW_ARRAY_SIZE(versions) && !p; i++)
			p = dlvsym(libc, "dlsym", versions[i]);
		dlclose(libc);
	}
	if (!p && (libc = dlopen("libdl.so.2", RTLD_NOW | RTLD_NOLOAD))) {
		for (size_t i = 0; i < CW_ARRAY_SIZE(versions) && !p; i++)
			p = dlvsym(libc, "dlsym", versions[i]);
		dlclose(libc);
	}
	/* Converting an object pointer to a function pointer: POSIX allows it. */
	return (dlsym_fn)p;
}

static dlsym_fn
get_real_dlsym(void)
{
	dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);

	if (unlikely(!f)) {
		/* Racing threads find the same pointer: no lock needed. */
		f = find_real_dlsym();
		if (f)
			atomic_store_explicit(&real_dlsym_ptr, f,
			    memory_order_release);
	}
	return f;
}

void *
driver_dlsym_fn(void)
{
	/* Converting a function pointer to an object pointer: POSIX. */
	return (void *)get_real_dlsym();
}

void *
driver_real_dlsym(void *handle, const char *name)
{
	dlsym_fn f = get_real_dlsym();

	return f ? f(handle, name) : NULL;
}

const char *
driver_export_name(const char *field, char *buf, size_t size)
{
	size_t n = strlen(field);

	if (size == 0)
		return field;
	if (n >= 3 && strcmp(field + n - 3, "_v1") == 0)
		n -= 3;
	if (n >= size)
		n = size - 1;
	memcpy(buf, field, n);
	buf[n] = '\0';
	return buf;
}

/* ============================================================ loading */

static void *
resolve(void *h, const char *field)
{
	char name[96];

	return driver_real_dlsym(h, driver_export_name(field, name,
	    sizeof(name)));
}

void *
driver_open(void)
{
	void *h = atomic_load_explicit(&open_handle, memory_order_acquire);
	void *expected = NULL;

	if (likely(h != NULL))
		return h;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		if (!atomic_exchange(&open_warned, true)) {
			const char *e = dlerror();

			log_debug(1, "cannot load libcuda.so.1: %s",
			    e ? e : "unknown error");
		}
		return NULL;
	}
	if (!atomic_compare_exchange_strong_explicit(&open_handle, &expected,
	    h, memory_order_acq_rel, memory_order_acquire)) {
		dlclose(h); /* another thread won: drop our reference */
		h = expected;
	}
	return h;
}

void *
driver_sym(const char *name)
{
	void *h = driver_open();

	return h != NULL ? driver_real_dlsym(h, name) : NULL;
}

/* Called with init_lock held.  Returns true on error. */
static bool
load_locked(void)
{
	void *h;
	const char *missing = NULL;

	if (!(h = driver_open()))
		return true;
	if (!get_real_dlsym()) {
		log_error("cannot find the real dlsym (dlvsym GLIBC_2.34)");
		return true;
	}

	memset(&fns, 0, sizeof(fns));
#define DRIVER_LOAD(name, params) \
	fns.name = (CUresult (*)params)resolve(h, #name);
	DRIVER_FUNCS(DRIVER_LOAD)
#undef DRIVER_LOAD

#define DRIVER_CHECK(name) \
	if (!missing && !fns.name) \
		missing = #name;
	DRIVER_REQUIRED(DRIVER_CHECK)
#undef DRIVER_CHECK
	if (missing) {
		if (!load_warned) {
			log_error("libcuda.so.1 lacks %s: driver too old?",
			    missing);
			load_warned = true;
		}
		memset(&fns, 0, sizeof(fns));
		return true;
	}
	atomic_store_explicit(&lib_handle, h, memory_order_release);
	return false;
}

const driver_fns_t *
driver_get(void)
{
	int st = atomic_load_explicit(&load_state, memory_order_acquire);

	if (likely(st == LOAD_OK))
		return &fns;
	if (st == LOAD_FAILED || atomic_load(&forked) || in_init)
		return NULL;
	init_lock_take();
	st = atomic_load_explicit(&load_state, memory_order_relaxed);
	if (st == LOAD_NONE) {
		st = load_locked() ? LOAD_FAILED : LOAD_OK;
		atomic_store_explicit(&load_state, st, memory_order_release);
	}
	init_lock_drop();
	return st == LOAD_OK ? &fns : NULL;
}

bool
driver_is_loaded(void)
{
	void *h;

	if (atomic_load_explicit(&lib_handle, memory_order_acquire))
		return true;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return false;
	dlclose(h);
	return true;
}

void *
driver_handle(void)
{
	return atomic_load_explicit(&lib_handle, memory_order_acquire);
}

/* ============================================================ errors */

static const struct {
	CUresult r;
	const char *name;
} error_names[] = {
#define CUERR_NAME(code) { code, #code },
	CUERR_LIST(CUERR_NAME)
#undef CUERR_NAME
};

const char *
driver_error_name_builtin(CUresult r)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(error_names); i++) {
		if (error_names[i].r == r)
			return error_names[i].name;
	}
	return NULL;
}

const char *
driver_error_name(CUresult r)
{
	const char *name = NULL;

	if (atomic_load_explicit(&load_state, memory_order_acquire) ==
	    LOAD_OK && !atomic_load(&forked) && fns.cuGetErrorName &&
	    fns.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
		return name;
	name = driver_error_name_builtin(r);
	return name != NULL ? name : "CUDA_ERROR_UNRECOGNIZED";
}

int
driver_fail(int status, const char *function, const char *call, CUresult r)
{
	const char *name = driver_error_name(r);
	cw_error_t *e;

	lasterr_set(status, function, "%s failed: %s (%d)", call, name,
	    (int)r);
	e = lasterr_get();
	e->cuda_error = (int)r;
	e->cuda_error_name = name;
	return status;
}

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

	if (unlikely(atomic_load(&forked)))
		return forked_fail(function);
	if (!(f = driver_get()))
		return no_driver_fail(function);
	if (likely(atomic_load_explicit(&init_done, memory_order_acquire))) {
		r = init_result;
	} else {
		if (unlikely(in_init))
			return lasterr_set(CW_ENODEV, function,
			    "re-entered while the driver initialises");
		init_lock_take();
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
		init_lock_drop();
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
	f = &fns;
	if (unlikely(in_init))
		return lasterr_set(CW_ENODEV, "driver_bind",
		    "re-entered while the driver initialises");
	init_lock_take();
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
	init_lock_drop();
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
	if (unlikely(atomic_load_explicit(&forked, memory_order_relaxed)))
		return forked_fail("driver_bind");
	if (unlikely(device < 0 || device >= DRIVER_MAX_DEVICES))
		return check_ordinal(device, "driver_bind");
	ctx = atomic_load_explicit(&primary[device], memory_order_acquire);
	if (unlikely(!ctx) && (st = retain_slow(device, &ctx)))
		return st;
	/* Ask the driver every time: the program may have switched. */
	r = fns.cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS)
		cur = NULL;
	if (prev)
		*prev = cur;
	if (likely(cur == ctx))
		return CW_OK;
	if ((r = fns.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
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

	if (atomic_load(&forked) ||
	    atomic_load_explicit(&load_state, memory_order_acquire) != LOAD_OK)
		return;
	if (fns.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == prev)
		return;
	/* cuCtxSetCurrent(NULL) leaves the thread without a context, as it
	 * was. */
	(void)fns.cuCtxSetCurrent(prev);
}

bool
driver_release_primary(int device)
{
	CUcontext ctx;
	CUresult r = CUDA_SUCCESS;

	if (device < 0 || device >= DRIVER_MAX_DEVICES ||
	    atomic_load(&forked) ||
	    atomic_load_explicit(&load_state, memory_order_acquire) != LOAD_OK)
		return false;
	init_lock_take();
	ctx = atomic_load_explicit(&primary[device], memory_order_relaxed);
	if (ctx != NULL) {
		atomic_store_explicit(&primary[device], NULL,
		    memory_order_release);
		if (fns.cuDevicePrimaryCtxRelease_v2 != NULL)
			r = fns.cuDevicePrimaryCtxRelease_v2((CUdevice)device);
	}
	init_lock_drop();
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
	if ((r = fns.cuDeviceGet(&dev, device)) != CUDA_SUCCESS) {
		driver_fail(CW_ECUDA, __func__, "cuDeviceGet", r);
		return true;
	}
	if ((r = fns.cuDeviceGetAttribute(&iv, attr, dev)) != CUDA_SUCCESS) {
		driver_fail(CW_ECUDA, __func__, "cuDeviceGetAttribute", r);
		return true;
	}
	atomic_store_explicit(&attr_cache[device][attr],
	    ATTR_VALID | (uint32_t)iv, memory_order_relaxed);
	*value = iv;
	return false;
}

/* ============================================================ fork, reset */

static void
forget_contexts(void)
{
	for (int d = 0; d < DRIVER_MAX_DEVICES; d++)
		atomic_store_explicit(&primary[d], NULL, memory_order_relaxed);
}

void
driver_postfork_child(void)
{
	/* No CUDA here: only our own memory. */
	atomic_store(&forked, true);
	forget_contexts();
	cw_mutex_postfork_child(&init_lock);
	in_init = false;
}

void
driver_reset(void)
{
	init_lock_take();
	forget_contexts();
	memset(attr_cache, 0, sizeof(attr_cache));
	atomic_store(&init_done, 0);
	init_result = CUDA_SUCCESS;
	atomic_store(&device_count, -1);
	/* The library stays loaded (a dlclose could unmap code other modules
	 * still point at); the next driver_get resolves again. */
	atomic_store(&lib_handle, NULL);
	atomic_store(&open_handle, NULL);
	atomic_store(&open_warned, false);
	atomic_store(&load_state, LOAD_NONE);
	atomic_store(&forked, false);
	load_warned = false;
	init_lock_drop();
}
