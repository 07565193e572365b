#include "preamble.h"
/*
 * poolmode.c -- pool mode: allocations served from the pools
 * (shim_pool_try_alloc), frees of pooled blocks and of any address in the
 * pools' segments (shim_pool_try_free), where an address stands
 * (shim_pooled_at), and the queries answered as the driver would for a
 * driver allocation of the size asked for (doc/shim.md "Pool mode").
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"

bool
shim_pool_mode(void)
{
	return shim_mode == TRACK_POOL && pool_enabled();
}

/* Serves an allocation of kind from the pool (hflags: the pinned flags
 * asked for).  Returns false when the driver must answer (no context,
 * odd arguments, pool unavailable). */
bool
shim_pool_try_alloc(kind_t kind, uintptr_t *out, size_t size, unsigned hflags,
    const char *api, CUresult *res)
{
	if (out == NULL || size == 0)
		return false; /* the driver says what is wrong */
	CUcontext ctx = shim_current_ctx();
	int dev = shim_current_device();
	if (ctx == NULL || dev < 0 || dev >= DRIVER_MAX_DEVICES)
		return false;
	/* The pools allocate in the device's primary context: memory for a
	 * context of the program's own comes from the driver, as asked. */
	if (shim_primary_ctx_of(dev) != ctx)
		return false;
	/* Managed memory only where a stream attachment changes no result
	 * (cuStreamAttachMemAsync of a pooled block: no driver call). */
	if (kind == KIND_MANAGED && !shim_concurrent_managed(dev))
		return false;
	/* During a stream capture that forbids this thread's cuMemAlloc,
	 * the driver refuses it and breaks the capture: it answers. */
	if (capture_forbids())
		return false;
	uintptr_t addr = 0;
	unsigned pflags = 0;
	/* The pools' own driver calls (a new segment) in relaxed mode, so
	 * that they break no capture of another thread. */
	int cm = capture_relax();
	int st = pool_alloc(kind, dev, size, &addr, &pflags);
	capture_unrelax(cm);
	/* pool_alloc binds the primary context: give the caller back its
	 * own. */
	CUcontext now = shim_current_ctx();
	const driver_fns_t *d = driver_get();
	if (now != ctx && d != NULL)
		d->cuCtxSetCurrent(ctx);
	switch (st) {
	case CW_OK:
		*out = addr;
		shim_record(NS_ADDR, kind, addr, size,
		    kind == KIND_PINNED ? -1 : dev, ctx, POOL_AUX(dev, hflags),
		    api, REC_F_POOLED);
		*res = CUDA_SUCCESS;
		return true;
	case CW_ENOMEM:
		STATS_INC(failed_calls);
		*res = CUDA_ERROR_OUT_OF_MEMORY;
		shim_oom(api, kind, size, *res);
		return true;
	case CW_ECUDA: {
		int e = lasterr_get()->cuda_error;
		STATS_INC(failed_calls);
		*res = e != 0 ? (CUresult)e : CUDA_ERROR_OUT_OF_MEMORY;
		if (*res == CUDA_ERROR_OUT_OF_MEMORY)
			shim_oom(api, kind, size, *res);
		return true;
	}
	default:
		return false;
	}
}

/* The driver's answer to a free it forbids during a stream capture
 * (capture.h), for a pooled block of kind: the same free call of no
 * memory, made for real so that the capture is broken as the driver
 * breaks it (H200: probe part capture). */
static CUresult
capture_refusal(int kind)
{
	const driver_fns_t *d = driver_get();
	CUresult r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;

	if (d == NULL)
		return r;
	if (kind == KIND_PINNED)
		r = d->cuMemFreeHost(NULL);
	else
		r = d->cuMemFree_v2(0);
	return r == CUDA_SUCCESS ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : r;
}

/* A free of a pooled pointer, or of any address in the pools' segments.
 * Returns false when addr is no pool's business (the driver answers).
 * An address in a segment that the program does not hold live is never
 * forwarded: the driver would free the whole segment (a block at its
 * base) or refuse; the answer is the driver's for an address it did not
 * hand out, CUDA_ERROR_INVALID_VALUE, and the free is recorded. */
bool
shim_pool_try_free(unsigned accept, uintptr_t addr, CUstream stream, bool async,
    const char *api, CUresult *res)
{
	reg_rec_t rec;
	reg_handle_t h;

	if (!registry_find(NS_ADDR, addr, &h, &rec)) {
		if (!(rec.flags & REC_F_POOLED))
			return false;
		/* A free the driver forbids during a capture: refused, the
		 * block kept, and the capture broken as the driver would. */
		if (capture_forbids()) {
			*res = capture_refusal(rec.kind);
			STATS_INC(failed_calls);
			return true;
		}
		stack_id_t st = stack_capture_outside();
		STATS_INC(frees);
		if (!(accept & KBIT(rec.kind))) {
			shim_report_violation(V_MISMATCHED_FREE, api, addr, &rec,
			    CUDA_ERROR_INVALID_VALUE, st);
			*res = CUDA_ERROR_INVALID_VALUE;
			return true;
		}
		if ((rec.flags & REC_F_ANNOTATED) && rec.refcount > 1)
			shim_report_violation(V_FREE_WHILE_REFERENCED, api, addr,
			    &rec, CUDA_SUCCESS, st);
		reg_rec_t out;
		if (registry_remove(h, NULL, NULL, st, &out) != 0) {
			/* Another thread freed it first. */
			shim_report_violation(V_DOUBLE_FREE, api, addr, &rec,
			    CUDA_ERROR_INVALID_VALUE, st);
			*res = CUDA_ERROR_INVALID_VALUE;
			return true;
		}
		stats_on_free((kind_t)out.kind, out.size);
		shim_tl_free(TLF_FREE, &out, 0);
		shim_recent_free(api, &out, st);
		int dev = POOL_AUX_DEV(out.aux);
		int cm = capture_relax(); /* as in shim_pool_try_alloc */
		int r = async ? pool_free_async((kind_t)out.kind, dev, addr,
		    out.size, stream) :
		    pool_free((kind_t)out.kind, dev, addr, out.size);
		capture_unrelax(cm);
		*res = r == CW_OK ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
		return true;
	}
	if (pool_segment_of(addr, NULL))
		return false;
	stack_id_t st = stack_capture_outside();
	STATS_INC(frees);
	if (!registry_tomb_find(NS_ADDR, addr, &rec) &&
	    (rec.flags & REC_F_POOLED))
		shim_report_violation(V_DOUBLE_FREE, api, addr, &rec,
		    CUDA_ERROR_INVALID_VALUE, st);
	else if (!registry_find_containing(NS_ADDR, addr, &h, &rec))
		shim_report_violation(V_INTERIOR_FREE, api, addr, &rec,
		    CUDA_ERROR_INVALID_VALUE, st);
	else
		/* A block freed so long ago that its tombstone is gone, or
		 * an address the pools never handed out. */
		shim_report_invalid_free(api, addr, accept,
		    CUDA_ERROR_INVALID_VALUE, st);
	*res = CUDA_ERROR_INVALID_VALUE;
	return true;
}

/* pq_t of p; *rec gets the allocation (PQ_LIVE), *kind the pool's kind
 * (PQ_LIVE, PQ_DEAD; may be NULL).  Lock-free for an address in no
 * pool's 2 MiB page; a hash lookup for one in a live block. */
pq_t
shim_pooled_at(uintptr_t p, reg_rec_t *rec, kind_t *kind)
{
	uintptr_t base;
	size_t size;
	unsigned flags;
	reg_handle_t h;
	kind_t k;

	if (!pool_block_of(p, &base, &size, &flags)) {
		/* A block handed out but not (or no longer) recorded is
		 * in flight between the pools and the registry: not the
		 * program's. */
		if (!registry_find(NS_ADDR, base, &h, rec) &&
		    (rec->flags & REC_F_POOLED) && p - rec->base < rec->size) {
			if (kind != NULL)
				*kind = (kind_t)rec->kind;
			return PQ_LIVE;
		}
		if (pool_segment_of(p, &k))
			return PQ_NONE; /* forgotten meanwhile */
	} else if (pool_segment_of(p, &k)) {
		return PQ_NONE;
	}
	if (kind != NULL)
		*kind = k;
	return PQ_DEAD;
}

CUresult
track_mem_get_info(void *real, const char *api, size_t *free_bytes,
    size_t *total_bytes)
{
	typedef CUresult (*fn_t)(size_t *, size_t *);
	CUresult r = CALL(real, fn_t, (free_bytes, total_bytes));

	(void)api;
	if (r != CUDA_SUCCESS || free_bytes == NULL || !shim_pool_mode())
		return r;
	int dev = shim_current_device();
	if (dev < 0)
		return r;
	size_t cached = pool_cached_bytes(dev);
	*free_bytes += cached;
	if (total_bytes != NULL && *free_bytes > *total_bytes)
		*free_bytes = *total_bytes;
	return r;
}

/* A host address the driver never handed out (nor was given to
 * register): asked about it, the driver answers what it answers for any
 * pointer it does not know. */
static const char unknown_probe[64] __attribute__((aligned(64)));
#define UNKNOWN_PTR ((CUdeviceptr)(uintptr_t)unknown_probe)

/* After the driver answered attribute a for UNKNOWN_PTR into data: the
 * answer it gives for ptr (the only attribute that echoes the pointer
 * is HOST_POINTER; cuPointerGetAttributes answers it for unknown
 * memory). */
static void
unknown_fix(CUpointer_attribute a, void *data, CUdeviceptr ptr)
{
	if (a == CU_POINTER_ATTRIBUTE_HOST_POINTER && data != NULL &&
	    *(void **)data == (void *)unknown_probe)
		*(void **)data = (void *)(uintptr_t)ptr;
}

CUresult
track_mem_get_address_range(void *real, const char *api, CUdeviceptr *pbase,
    size_t *psize, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t *, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!shim_pool_mode() ||
	    (q = shim_pooled_at((uintptr_t)dptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (pbase, psize, dptr));
	/* The driver is asked all the same, into our own variables (its
	 * range is the segment's): what it says about the call itself
	 * stands, a thread without a context gets its
	 * CUDA_ERROR_INVALID_CONTEXT. */
	CUdeviceptr b;
	size_t sz;
	CUresult r = CALL(real, fn_t, (&b, &sz, dptr));
	if (r != CUDA_SUCCESS)
		return r;
	if (q == PQ_DEAD)
		return CUDA_ERROR_NOT_FOUND; /* as for memory it freed */
	if (pbase != NULL)
		*pbase = (CUdeviceptr)rec.base;
	if (psize != NULL)
		*psize = rec.size;
	return CUDA_SUCCESS;
}

/* The buffer id we give a pooled block: never one the driver hands out
 * (those count up from 1). */
static unsigned long long
pooled_buffer_id(uintptr_t base)
{
	reg_handle_t h;
	reg_rec_t rec;

	if (registry_find(NS_ADDR, base, &h, &rec))
		return (1ULL << 63) | (unsigned long long)(base >> 8);
	return (1ULL << 63) | (unsigned long long)h;
}

/* Patches one attribute answer for a pooled allocation: the driver
 * described the segment. */
static void
patch_attr(CUpointer_attribute a, void *data, const reg_rec_t *rec)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = (CUdeviceptr)rec->base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = rec->size;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = pooled_buffer_id(rec->base);
		break;
	default:
		break;
	}
}

CUresult
track_pointer_get_attribute(void *real, const char *api, void *data,
    CUpointer_attribute attribute, CUdeviceptr ptr)
{
	typedef CUresult (*fn_t)(void *, CUpointer_attribute, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;
	CUresult r;

	(void)api;
	if (!shim_pool_mode() ||
	    (q = shim_pooled_at((uintptr_t)ptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (data, attribute, ptr));
	if (q == PQ_DEAD) {
		r = CALL(real, fn_t, (data, attribute, UNKNOWN_PTR));
		if (r == CUDA_SUCCESS)
			unknown_fix(attribute, data, ptr);
		return r;
	}
	r = CALL(real, fn_t, (data, attribute, ptr));
	if (r == CUDA_SUCCESS && data != NULL)
		patch_attr(attribute, data, &rec);
	return r;
}

CUresult
track_pointer_get_attributes(void *real, const char *api, unsigned int count,
    CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
	typedef CUresult (*fn_t)(unsigned int, CUpointer_attribute *,
	    void **, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!shim_pool_mode() ||
	    (q = shim_pooled_at((uintptr_t)ptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (count, attributes, data, ptr));
	CUresult r = CALL(real, fn_t, (count, attributes, data,
	    q == PQ_DEAD ? UNKNOWN_PTR : ptr));
	if (r != CUDA_SUCCESS || data == NULL || attributes == NULL)
		return r;
	for (unsigned i = 0; i < count; i++) {
		if (data[i] == NULL)
			continue;
		if (q == PQ_DEAD)
			unknown_fix(attributes[i], data[i], ptr);
		else
			patch_attr(attributes[i], data[i], &rec);
	}
	return r;
}

CUresult
track_mem_host_get_flags(void *real, const char *api, unsigned int *pflags,
    void *p)
{
	typedef CUresult (*fn_t)(unsigned int *, void *);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!shim_pool_mode() ||
	    (q = shim_pooled_at((uintptr_t)p, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (pflags, p));
	if (q == PQ_DEAD)
		return CALL(real, fn_t, (pflags, (void *)unknown_probe));
	CUresult r = CALL(real, fn_t, (pflags, p));
	/* The segment's flags are the pool's; the program asked for its
	 * own, and with unified addressing the driver adds DEVICEMAP to
	 * every pinned allocation's (driver 580: probe.c, part exact). */
	if (r == CUDA_SUCCESS && pflags != NULL)
		*pflags = POOL_AUX_HFLAGS(rec.aux) | CU_MEMHOSTALLOC_DEVICEMAP;
	return r;
}

CUresult
track_ipc_get_mem_handle(void *real, const char *api, CUipcMemHandle *handle,
    CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUipcMemHandle *, CUdeviceptr);
	uintptr_t base;
	size_t size;
	unsigned flags;

	if (shim_pool_mode() && !pool_block_of((uintptr_t)dptr, &base, &size,
	    &flags) && !((flags & POOL_F_OWN_SEGMENT) && base == dptr)) {
		/* A block carved from a shared segment has no IPC handle of
		 * its own; the segment's would map other blocks too. */
		static bool warned;
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			log_warn("%s(%#lx): a pooled block smaller than "
			    "CUWARDEN_LARGE_BLOCK has no IPC handle of its "
			    "own; answering CUDA_ERROR_INVALID_VALUE (use "
			    "CUWARDEN_MODE=audit, or a smaller "
			    "CUWARDEN_LARGE_BLOCK)", api,
			    (unsigned long)dptr);
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CALL(real, fn_t, (handle, dptr));
}
