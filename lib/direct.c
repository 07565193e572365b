#include "preamble.h"

/*
 * direct.c -- one driver call per allocation, per public kind: device
 * (cuMemAlloc_v2), managed (cuMemAllocManaged, CU_MEM_ATTACH_GLOBAL) and
 * pinned (cuMemHostAlloc, PORTABLE | DEVICEMAP).
 *
 * Owns nothing but the mapping kind -> driver call and the error mapping:
 * CUDA_ERROR_OUT_OF_MEMORY -> CW_ENOMEM, anything else -> CW_ECUDA, each
 * with cuda_error and the requested size in cw_last_error.  A failed free
 * goes to the failed-free ledger here, and only here.
 *
 * Invariants: the device's primary context is current (driver_bind_save)
 * during every driver call, and the thread's previous context (or none) is
 * put back afterwards (driver_restore), in the library as in the shim: a
 * program that runs in a context of its own, or on another device, never
 * finds its thread switched after an allocation.  No state, no locks: safe from any
 * thread.  After a fork, driver_bind fails (CW_ENODEV) so nothing is
 * allocated or freed for the parent (nor added to the ledger).
 */

#include "direct.h"
#include "driver.h"
#include "lasterr.h"
#include "ledger.h"

static bool
kind_ok(kind_t kind)
{
	return kind == KIND_DEVICE || kind == KIND_MANAGED ||
	    kind == KIND_PINNED;
}

static const char *
alloc_call(kind_t kind)
{
	switch (kind) {
	case KIND_DEVICE:
		return "cuMemAlloc_v2";
	case KIND_MANAGED:
		return "cuMemAllocManaged";
	default:
		return "cuMemHostAlloc";
	}
}

static void
fill_cuda(CUresult r)
{
	cw_error_t *e = lasterr_get();

	e->cuda_error = (int)r;
	e->cuda_error_name = driver_error_name(r);
}

int
direct_alloc(kind_t kind, int device, size_t size, uintptr_t *addr)
{
	const driver_fns_t *f;
	CUdeviceptr dp = 0;
	CUcontext prev;
	void *hp = NULL;
	CUresult r;
	int st;

	if (!addr)
		return lasterr_set(CW_EINVAL, __func__, "addr is NULL");
	*addr = 0;
	if (size == 0)
		return lasterr_set(CW_EINVAL, __func__, "size is 0");
	if (!kind_ok(kind))
		return lasterr_set(CW_EINVAL, __func__,
		    "kind %d cannot be allocated directly", (int)kind);
	if ((st = driver_bind_save(device, &prev)))
		return st;
	f = driver_get();
	switch (kind) {
	case KIND_DEVICE:
		r = f->cuMemAlloc_v2(&dp, size);
		break;
	case KIND_MANAGED:
		r = f->cuMemAllocManaged(&dp, size, CU_MEM_ATTACH_GLOBAL);
		break;
	default:
		r = f->cuMemHostAlloc(&hp, size, CU_MEMHOSTALLOC_PORTABLE |
		    CU_MEMHOSTALLOC_DEVICEMAP);
		dp = (CUdeviceptr)(uintptr_t)hp;
		break;
	}
	driver_restore(prev);
	if (unlikely(r != CUDA_SUCCESS)) {
		st = r == CUDA_ERROR_OUT_OF_MEMORY ? CW_ENOMEM : CW_ECUDA;
		lasterr_set(st, __func__, "%s of %zu bytes on device %d: %s",
		    alloc_call(kind), size, device, driver_error_name(r));
		fill_cuda(r);
		lasterr_get()->requested = size;
		return st;
	}
	*addr = (uintptr_t)dp;
	return CW_OK;
}

int
direct_free(kind_t kind, int device, uintptr_t addr, size_t size)
{
	const driver_fns_t *f;
	CUcontext prev;
	CUresult r;
	int st;

	if (!kind_ok(kind))
		return lasterr_set(CW_EINVAL, __func__,
		    "kind %d was not allocated directly", (int)kind);
	if (addr == 0)
		return lasterr_set(CW_EINVAL, __func__, "address is 0");
	if ((st = driver_bind_save(device, &prev)))
		return st;
	f = driver_get();
	if (kind == KIND_PINNED)
		r = f->cuMemFreeHost((void *)addr);
	else
		r = f->cuMemFree_v2((CUdeviceptr)addr);
	driver_restore(prev);
	if (unlikely(r != CUDA_SUCCESS)) {
		lasterr_set(CW_ECUDA, __func__,
		    "%s of %#lx (%zu bytes) failed: %s; the memory is lost",
		    kind == KIND_PINNED ? "cuMemFreeHost" : "cuMemFree_v2",
		    (unsigned long)addr, size, driver_error_name(r));
		fill_cuda(r);
		lasterr_get()->address = addr;
		/* The one place a failed free enters the ledger. */
		ledger_add(addr, size, (int)kind, (int)r);
		return CW_ECUDA;
	}
	return CW_OK;
}
