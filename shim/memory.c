#include "preamble.h"
/*
 * memory.c -- the memory families' hooks: device, pitched, managed,
 * stream-ordered, pinned, registered, pool-imported and IPC-opened
 * allocations, and their frees (recorded after the driver answered,
 * classified by classify.c).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"

CUresult
track_cu_init(void *real, const char *api, unsigned int flags)
{
	typedef CUresult (*fn_t)(unsigned int);

	(void)api;
	return ((fn_t)real)(flags);
}

/* The context an allocation belongs to, asked of the driver: for when
 * cuCtxGetCurrent failed (a record without its context would survive the
 * context's destruction as a false leak).  NULL if the driver cannot say. */
static CUcontext
ctx_of(uintptr_t base)
{
	const driver_fns_t *d = driver_get();
	CUcontext c = NULL;

	if (d == NULL || d->cuPointerGetAttribute == NULL ||
	    d->cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT,
	    (CUdeviceptr)base) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* Records a successful NS_ADDR allocation of the current context. */
static void
record_addr(kind_t kind, uintptr_t base, size_t size, uintptr_t aux,
    const char *api)
{
	CUcontext ctx = shim_current_ctx();

	if (ctx == NULL)
		ctx = ctx_of(base);
	int dev = kind == KIND_PINNED || kind == KIND_REGISTERED ? -1 :
	    shim_current_device();
	shim_record(NS_ADDR, kind, base, size, dev, ctx, aux, api, 0);
}

CUresult
track_mem_alloc(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t);
	CUresult r;

	if (shim_pool_mode() && shim_pool_try_alloc(KIND_DEVICE, (uintptr_t *)dptr,
	    bytesize, 0, api, &r))
		return r;
	r = CALL(real, fn_t, (dptr, bytesize));
	if (shim_refused_alloc(r, api, KIND_DEVICE, bytesize))
		return r;
	record_addr(KIND_DEVICE, (uintptr_t)*dptr, bytesize, 0, api);
	return r;
}

CUresult
track_mem_alloc_pitch(void *real, const char *api, CUdeviceptr *dptr,
    size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t *, size_t, size_t,
	    unsigned int);
	CUresult r = CALL(real, fn_t, (dptr, pitch, width, height, elem));

	if (shim_refused_alloc(r, api, KIND_DEVICE, width * height))
		return r;
	record_addr(KIND_DEVICE, (uintptr_t)*dptr, *pitch * height, *pitch,
	    api);
	return r;
}

CUresult
track_mem_alloc_managed(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, unsigned int);
	CUresult r;

	if (shim_pool_mode() && flags == CU_MEM_ATTACH_GLOBAL &&
	    shim_pool_try_alloc(KIND_MANAGED, (uintptr_t *)dptr, bytesize, 0, api,
	    &r))
		return r;
	r = CALL(real, fn_t, (dptr, bytesize, flags));
	if (shim_refused_alloc(r, api, KIND_MANAGED, bytesize))
		return r;
	record_addr(KIND_MANAGED, (uintptr_t)*dptr, bytesize, flags, api);
	return r;
}

/* A stream-ordered allocation captured into a graph is an allocation
 * node: its address is reserved now, its memory live from a launch. */
static bool
captured_alloc(const char *api, CUstream stream, CUdeviceptr d, size_t size)
{
	CUgraph g;

	if (!shim_stream_capturing(api, stream, &g))
		return false;
	graphmem_node((uintptr_t)d, size, shim_current_device(), g, stack_capture_outside());
	return true;
}

CUresult
track_mem_alloc_async(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, CUstream);
	CUresult r = CALL(real, fn_t, (dptr, bytesize, stream));

	if (shim_refused_alloc(r, api, KIND_ASYNC, bytesize))
		return r;
	if (captured_alloc(api, stream, *dptr, bytesize))
		return r;
	/* Stream-ordered memory belongs to no context (survives teardown). */
	shim_record(NS_ADDR, KIND_ASYNC, (uintptr_t)*dptr, bytesize,
	    shim_current_device(), NULL, 0, api, 0);
	return r;
}

CUresult
track_mem_alloc_from_pool(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, CUmemoryPool pool, CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, CUmemoryPool,
	    CUstream);
	CUresult r = CALL(real, fn_t, (dptr, bytesize, pool, stream));

	if (shim_refused_alloc(r, api, KIND_ASYNC, bytesize))
		return r;
	if (captured_alloc(api, stream, *dptr, bytesize))
		return r;
	shim_record(NS_ADDR, KIND_ASYNC, (uintptr_t)*dptr, bytesize,
	    shim_current_device(), NULL, (uintptr_t)pool, api, 0);
	return r;
}

/* Pinned memory the pool can serve: the flags the pool's segments have
 * (cuMemHostAlloc(PORTABLE | DEVICEMAP), direct.h), or fewer. */
#define POOL_PINNED_FLAGS (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)

CUresult
track_mem_host_alloc(void *real, const char *api, void **pp, size_t bytesize,
    unsigned int flags)
{
	typedef CUresult (*fn_t)(void **, size_t, unsigned int);
	CUresult r;

	if (shim_pool_mode() && (flags & ~POOL_PINNED_FLAGS) == 0 &&
	    shim_pool_try_alloc(KIND_PINNED, (uintptr_t *)pp, bytesize, flags, api,
	    &r))
		return r;
	r = CALL(real, fn_t, (pp, bytesize, flags));
	if (shim_refused_alloc(r, api, KIND_PINNED, bytesize))
		return r;
	record_addr(KIND_PINNED, (uintptr_t)*pp, bytesize, flags, api);
	return r;
}

CUresult
track_mem_alloc_host(void *real, const char *api, void **pp, size_t bytesize)
{
	typedef CUresult (*fn_t)(void **, size_t);
	CUresult r;

	if (shim_pool_mode() && shim_pool_try_alloc(KIND_PINNED, (uintptr_t *)pp,
	    bytesize, 0, api, &r))
		return r;
	r = CALL(real, fn_t, (pp, bytesize));
	if (shim_refused_alloc(r, api, KIND_PINNED, bytesize))
		return r;
	record_addr(KIND_PINNED, (uintptr_t)*pp, bytesize, 0, api);
	return r;
}

CUresult
track_mem_host_register(void *real, const char *api, void *p,
    size_t bytesize, unsigned int flags)
{
	typedef CUresult (*fn_t)(void *, size_t, unsigned int);
	CUresult r = CALL(real, fn_t, (p, bytesize, flags));

	if (shim_refused(r))
		return r;
	/* The registration belongs to the context (teardown drops it). */
	shim_record(NS_ADDR, KIND_REGISTERED, (uintptr_t)p, bytesize, -1,
	    shim_current_ctx(), flags, api, 0);
	return r;
}

CUresult
track_mem_pool_import(void *real, const char *api, CUdeviceptr *ptr_out,
    CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, CUmemoryPool,
	    CUmemPoolPtrExportData *);
	CUresult r = CALL(real, fn_t, (ptr_out, pool, data));

	if (shim_refused(r))
		return r;
	shim_record(NS_ADDR, KIND_ASYNC, (uintptr_t)*ptr_out,
	    shim_driver_size_of(*ptr_out), shim_current_device(),
	    NULL, (uintptr_t)pool, api, 0);
	return r;
}

CUresult
track_ipc_open(void *real, const char *api, CUdeviceptr *pdptr,
    CUipcMemHandle handle, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, CUipcMemHandle, unsigned int);
	CUresult r = CALL(real, fn_t, (pdptr, handle, flags));

	if (shim_refused(r))
		return r;
	shim_record(NS_ADDR, KIND_IPC, (uintptr_t)*pdptr, shim_driver_size_of(*pdptr),
	    shim_current_device(),
	    shim_current_ctx(), 0, api, 0);
	return r;
}

CUresult
track_mem_free(void *real, const char *api, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr);
	pre_t pre;
	CUresult r;

	if (shim_pool_mode() && dptr != 0 &&
	    shim_pool_try_free(FREE_DEVICE_KINDS, (uintptr_t)dptr, NULL, false, api,
	    &r))
		return r;
	shim_pre_lookup(NS_ADDR, (uintptr_t)dptr, &pre);
	r = CALL(real, fn_t, (dptr));
	if (dptr != 0) /* freeing NULL is no free, whatever the driver says */
		shim_classify_free(NS_ADDR, FREE_DEVICE_KINDS, (uintptr_t)dptr, r,
		    api, &pre);
	return r;
}

CUresult
track_mem_free_async(void *real, const char *api, CUdeviceptr dptr,
    CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr, CUstream);
	CUresult r;
	CUgraph g;

	/* Captured, it is a free node: nothing is freed until a launch.  The
	 * driver makes free nodes of graph memory only (a cuMemAlloc pointer:
	 * CUDA_ERROR_INVALID_VALUE): so for a pooled block, never forwarded
	 * (the driver must not see the pools' pointers). */
	if (shim_stream_capturing(api, stream, &g)) {
		reg_rec_t rec;
		if (shim_pool_mode() && dptr != 0 &&
		    shim_pooled_at((uintptr_t)dptr, &rec, NULL) != PQ_NONE)
			return CUDA_ERROR_INVALID_VALUE;
		r = CALL(real, fn_t, (dptr, stream));
		if (r == CUDA_SUCCESS)
			STATS_INC(graph_free_nodes);
		return r;
	}
	if (shim_pool_mode() && dptr != 0 &&
	    shim_pool_try_free(FREE_DEVICE_KINDS, (uintptr_t)dptr, stream, true,
	    api, &r))
		return r;
	pre_t pre;
	shim_pre_lookup(NS_ADDR, (uintptr_t)dptr, &pre);
	r = CALL(real, fn_t, (dptr, stream));
	shim_classify_free(NS_ADDR, FREE_DEVICE_KINDS, (uintptr_t)dptr, r, api,
	    &pre);
	return r;
}

CUresult
track_mem_free_host(void *real, const char *api, void *p)
{
	typedef CUresult (*fn_t)(void *);
	pre_t pre;
	CUresult r;

	if (shim_pool_mode() && p != NULL &&
	    shim_pool_try_free(KBIT(KIND_PINNED), (uintptr_t)p, NULL, false, api,
	    &r))
		return r;
	shim_pre_lookup(NS_ADDR, (uintptr_t)p, &pre);
	r = CALL(real, fn_t, (p));
	if (p != NULL)
		shim_classify_free(NS_ADDR, KBIT(KIND_PINNED), (uintptr_t)p, r, api,
		    &pre);
	return r;
}

CUresult
track_mem_host_unregister(void *real, const char *api, void *p)
{
	typedef CUresult (*fn_t)(void *);
	pre_t pre;

	shim_pre_lookup(NS_ADDR, (uintptr_t)p, &pre);
	CUresult r = CALL(real, fn_t, (p));
	shim_classify_free(NS_ADDR, KBIT(KIND_REGISTERED), (uintptr_t)p, r, api,
	    &pre);
	return r;
}

CUresult
track_ipc_close(void *real, const char *api, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr);
	pre_t pre;

	/* Looked up first: once the driver has freed it, another thread may
	 * get the address again. */
	shim_pre_lookup(NS_ADDR, (uintptr_t)dptr, &pre);
	CUresult r = CALL(real, fn_t, (dptr));
	shim_classify_free(NS_ADDR, KBIT(KIND_IPC), (uintptr_t)dptr, r, api,
	    &pre);
	return r;
}
