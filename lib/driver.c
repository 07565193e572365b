#include "preamble.h"

/*
 * driver.c -- the real CUDA driver, loaded at run time: the real dlsym,
 * libcuda.so.1's handle and the table of its entry points, error names,
 * fork and reset.  The contexts and attributes are driver_ctx.c's
 * (driver_int.h lists the files).
 *
 * Owns: the dlopen handle of libcuda.so.1, the table of its entry points
 * (driver_fns_t, filled once with the *real* dlsym), the load state, the
 * forked flag and the init lock both files take.
 *
 * Invariants:
 *  - Every pointer in the table comes from the real dlsym
 *    (get_real_dlsym), never from the public dlsym, which the preload shim
 *    interposes (it would hand back the shim's own hooks, and our calls
 *    would be recorded as the program's).
 *  - The table is published (state LOAD_OK) only once complete; readers load
 *    the state with acquire and then read the table without a lock.
 *  - After driver_postfork_child, nothing here or in driver_ctx.c calls
 *    CUDA.
 *
 * Locking: one leaf mutex, init_lock, taken only on first-time paths (load
 * here; cuInit, device count, first retain and release of a device in
 * driver_ctx.c): never on the hot path, and nothing else of ours is locked
 * under it.  It is held across those first driver calls (dlopen's
 * constructors, cuInit, cuDevicePrimaryCtxRetain) as pthread_once would
 * be: the driver never calls back into this module, so it cannot
 * deadlock.  driver_postfork_child re-initialises init_lock (another
 * thread may have held it at fork time) and has driver_ctx.c forget every
 * context.
 *
 * Re-entry: while a thread holds init_lock it is inside dlopen (libcuda's
 * constructors), cuInit or the first retain, any of which may call dlsym,
 * which the shim interposes.  Should that path come back here on the same
 * thread, the thread-local driver_in_init makes it fail (driver_get NULL,
 * binding CW_ENODEV) instead of deadlocking on init_lock.
 */

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cuerrors.h"
#include "driver.h"
#include "driver_int.h"
#include "lasterr.h"
#include "log.h"
#include "mutex.h"

/* ============================================================ state */

static cw_mutex_t init_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_DRIVER);

driver_fns_t driver_fns;                /* written once, under init_lock */
_Atomic int driver_load_state;          /* LOAD_* */
static void *_Atomic lib_handle;          /* published once loaded */
static void *_Atomic open_handle;         /* driver_open's */
static _Atomic bool open_warned;
_Atomic bool driver_forked;             /* set in the fork child */
static bool load_warned;

CW_TLS bool driver_in_init;

void
driver_init_lock_take(void)
{
	cw_mutex_lock(&init_lock);
	driver_in_init = true;
}

void
driver_init_lock_drop(void)
{
	driver_in_init = false;
	cw_mutex_unlock(&init_lock);
}

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym_ptr;

/* ============================================================ dlsym */

/* The real dlsym: glibc >= 2.34 versions it GLIBC_2.34 (libc), older ones
 * GLIBC_2.2.5 (x86_64) / GLIBC_2.17 (aarch64) in libdl.  RTLD_NEXT finds
 * the one after us (the shim defines its own dlsym, unversioned); failing
 * that, an explicit handle on libc, which only libc and its dependencies
 * answer for.  Not instrumented: the shim's dlsym calls it for the ASan
 * runtime's own interceptor set-up, before ASan's shadow memory exists
 * (an instrumented read of versions[] there crashed every sanitized run). */
static CW_NO_SANITIZE dlsym_fn
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

static CW_NO_SANITIZE dlsym_fn
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

CW_NO_SANITIZE void *
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

	memset(&driver_fns, 0, sizeof(driver_fns));
#define DRIVER_LOAD(name, params) \
	driver_fns.name = (CUresult (*)params)resolve(h, #name);
	DRIVER_FUNCS(DRIVER_LOAD)
#undef DRIVER_LOAD

#define DRIVER_CHECK(name) \
	if (!missing && !driver_fns.name) \
		missing = #name;
	DRIVER_REQUIRED(DRIVER_CHECK)
#undef DRIVER_CHECK
	if (missing) {
		if (!load_warned) {
			log_error("libcuda.so.1 lacks %s: driver too old?",
			    missing);
			load_warned = true;
		}
		memset(&driver_fns, 0, sizeof(driver_fns));
		return true;
	}
	atomic_store_explicit(&lib_handle, h, memory_order_release);
	return false;
}

const driver_fns_t *
driver_get(void)
{
	int st = atomic_load_explicit(&driver_load_state, memory_order_acquire);

	if (likely(st == LOAD_OK))
		return &driver_fns;
	if (st == LOAD_FAILED || atomic_load(&driver_forked) || driver_in_init)
		return NULL;
	driver_init_lock_take();
	st = atomic_load_explicit(&driver_load_state, memory_order_relaxed);
	if (st == LOAD_NONE) {
		st = load_locked() ? LOAD_FAILED : LOAD_OK;
		atomic_store_explicit(&driver_load_state, st,
		    memory_order_release);
	}
	driver_init_lock_drop();
	return st == LOAD_OK ? &driver_fns : NULL;
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

	if (atomic_load_explicit(&driver_load_state, memory_order_acquire) ==
	    LOAD_OK && !atomic_load(&driver_forked) &&
	    driver_fns.cuGetErrorName &&
	    driver_fns.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
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

/* ============================================================ fork, reset */

void
driver_postfork_child(void)
{
	/* No CUDA here: only our own memory. */
	atomic_store(&driver_forked, true);
	driver_ctx_forget();
	cw_mutex_postfork_child(&init_lock);
	driver_in_init = false;
}

void
driver_reset(void)
{
	driver_init_lock_take();
	driver_ctx_reset();
	/* The library stays loaded (a dlclose could unmap code other modules
	 * still point at); the next driver_get resolves again. */
	atomic_store(&lib_handle, NULL);
	atomic_store(&open_handle, NULL);
	atomic_store(&open_warned, false);
	atomic_store(&driver_load_state, LOAD_NONE);
	atomic_store(&driver_forked, false);
	load_warned = false;
	driver_init_lock_drop();
}
