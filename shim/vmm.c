#include "preamble.h"
/*
 * vmm.c -- virtual memory management (physical handles, address
 * reservations, mappings) and CUDA arrays: their hooks and records.
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
track_mem_create(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle *, size_t,
	    const CUmemAllocationProp *, unsigned long long);
	CUresult r = CALL(real, fn_t, (handle, size, prop, flags));

	if (shim_refused_alloc(r, api, KIND_VMM, size))
		return r;
	int dev = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ?
	    prop->location.id : -1;
	shim_record(NS_VMM, KIND_VMM, (uintptr_t)*handle, size, dev, NULL, 0, api,
	    0);
	return r;
}

CUresult
track_mem_import(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, void *os_handle,
    CUmemAllocationHandleType type)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle *, void *,
	    CUmemAllocationHandleType);
	CUresult r = CALL(real, fn_t, (handle, os_handle, type));

	if (shim_refused(r))
		return r;
	shim_record(NS_VMM, KIND_VMM, (uintptr_t)*handle, 0, -1, NULL, 0, api, 0);
	return r;
}

/* A VMM handle's record counts its live mappings in aux (track_mem_map
 * adds one, an unmap takes one away): whether a handle is still mapped is
 * known without a walk.  PyTorch's expandable segments release every handle
 * right after mapping it. */
static int
maps_inc(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->aux++;
	return 0;
}

typedef struct maps_dec_s {
	bool drop;            /* out: released, and this was its last mapping */
} maps_dec_t;

static int
maps_dec(reg_rec_t *rec, void *arg)
{
	maps_dec_t *d = arg;

	if (rec->aux > 0)
		rec->aux--;
	d->drop = rec->aux == 0 && (rec->flags & REC_F_VMM_RELEASED);
	return 0;
}

static int
set_released(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->flags |= REC_F_VMM_RELEASED;
	return 0;
}

/* An unmap took away a mapping of handle: one mapping fewer; a handle
 * released while mapped goes with its last mapping. */
static void
unmapped(uintptr_t handle, const char *api)
{
	reg_handle_t h;
	reg_rec_t rec;
	maps_dec_t d = { false };

	if (registry_find(NS_VMM, handle, &h, &rec))
		return;
	if (registry_update(h, maps_dec, &d) == 0 && d.drop)
		shim_remove_rec(h, stack_capture_outside(), 0, api);
}

/* Whether a live mapping starts in [lo, lo + size): a walk, made only when
 * the driver refused to free a reservation. */
typedef struct map_q_s {
	uintptr_t lo, hi;
} map_q_t;

static int
map_in_range(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	const map_q_t *q = arg;

	(void)h;
	return rec->ns == NS_MAP && rec->base >= q->lo && rec->base < q->hi;
}

static bool
range_mapped(uintptr_t lo, size_t size)
{
	map_q_t q = { lo, lo + size };

	return registry_foreach(map_in_range, &q) != 0;
}

CUresult
track_mem_release(void *real, const char *api,
    CUmemGenericAllocationHandle handle)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle);
	pre_t pre;

	shim_pre_lookup(NS_VMM, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	/* Releasing a handle still mapped is legal: the physical memory
	 * lives until the last unmap.  The record stays, marked, and is a
	 * leak until then (doc/report-schema.md); the last unmap removes
	 * it. */
	if (r == CUDA_SUCCESS && pre.found &&
	    !(pre.rec.flags & REC_F_VMM_RELEASED) && pre.rec.aux > 0) {
		STATS_INC(frees);
		registry_update(pre.h, set_released, NULL);
		return r;
	}
	shim_classify_free(NS_VMM, KBIT(KIND_VMM), (uintptr_t)handle, r, api,
	    &pre);
	return r;
}

/* A VA free or an unmap refused when its size is not the record's: the
 * driver still holds the whole, which stays live (a failed free is
 * recorded).  Returns true if so. */
static bool
kept_for_size(const char *api, CUdeviceptr ptr, size_t size, CUresult r,
    const pre_t *pre)
{
	if (r == CUDA_SUCCESS || !pre->found || size == pre->rec.size)
		return false;
	STATS_INC(frees);
	shim_failed_keep(api, (uintptr_t)ptr, &pre->rec, r,
	    stack_capture_outside());
	return true;
}

CUresult
track_mem_address_reserve(void *real, const char *api, CUdeviceptr *ptr,
    size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
	    unsigned long long);
	CUresult r = CALL(real, fn_t, (ptr, size, alignment, addr, flags));

	if (shim_refused(r))
		return r;
	shim_record(NS_VA, KIND_VA, (uintptr_t)*ptr, size, -1, NULL, 0, api, 0);
	return r;
}

CUresult
track_mem_address_free(void *real, const char *api, CUdeviceptr ptr,
    size_t size)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t);
	pre_t pre;

	shim_pre_lookup(NS_VA, (uintptr_t)ptr, &pre);
	CUresult r = CALL(real, fn_t, (ptr, size));
	/* The driver frees only a whole reservation: it still holds it. */
	if (kept_for_size(api, ptr, size, r, &pre))
		return r;
	if (shim_unknown_to_driver(r) && pre.found &&
	    range_mapped((uintptr_t)ptr, pre.rec.size)) {
		/* Refused because memory is still mapped in it (the H200's
		 * driver 580 answers CUDA_ERROR_INVALID_VALUE: probe.c):
		 * neither a double free nor a lost reservation.  Nothing
		 * changes.  Any other refusal is the driver failing to free
		 * live memory: shim_classify_free makes it a failed_free. */
		STATS_INC(frees);
		return r;
	}
	shim_classify_free(NS_VA, KBIT(KIND_VA), (uintptr_t)ptr, r, api, &pre);
	return r;
}

CUresult
track_mem_map(void *real, const char *api, CUdeviceptr ptr, size_t size,
    size_t offset, CUmemGenericAllocationHandle handle,
    unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t, size_t,
	    CUmemGenericAllocationHandle, unsigned long long);
	CUresult r = CALL(real, fn_t, (ptr, size, offset, handle, flags));
	reg_rec_t hrec;
	reg_handle_t h;

	if (shim_refused(r))
		return r;
	bool known = !registry_find(NS_VMM, (uintptr_t)handle, &h, &hrec);
	shim_record(NS_MAP, KIND_MAPPING, (uintptr_t)ptr, size,
	    known ? hrec.device : -1, NULL, (uintptr_t)handle, api, 0);
	if (known)
		registry_update(h, maps_inc, NULL);
	return r;
}

CUresult
track_mem_unmap(void *real, const char *api, CUdeviceptr ptr, size_t size)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t);
	pre_t pre;

	shim_pre_lookup(NS_MAP, (uintptr_t)ptr, &pre);
	CUresult r = CALL(real, fn_t, (ptr, size));
	/* A part of a mapping, or past the mappings that start here:
	 * nothing was unmapped. */
	if (kept_for_size(api, ptr, size, r, &pre))
		return r;
	shim_classify_free(NS_MAP, KBIT(KIND_MAPPING), (uintptr_t)ptr, r, api,
	    &pre);
	if (r != CUDA_SUCCESS || !pre.found)
		return r;
	unmapped(pre.rec.aux, api);
	/* One unmap may cover several adjacent mappings. */
	stack_id_t st = 0;
	uintptr_t p = (uintptr_t)ptr + pre.rec.size;
	uintptr_t end = (uintptr_t)ptr + size;
	while (p < end) {
		reg_handle_t h;
		reg_rec_t rec;
		if (registry_find(NS_MAP, p, &h, &rec) || rec.size == 0)
			break;
		if (st == 0)
			st = stack_capture_outside();
		STATS_INC(frees);
		shim_remove_rec(h, st, 0, api);
		unmapped(rec.aux, api);
		p += rec.size;
	}
	return r;
}

static size_t
format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 1;
	}
}

static size_t
array_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
	return w * (h ? h : 1) * (d ? d : 1) * format_bytes(f) * (ch ? ch : 1);
}

CUresult
track_array_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY_DESCRIPTOR *desc)
{
	typedef CUresult (*fn_t)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
	CUresult r = CALL(real, fn_t, (handle, desc));

	if (shim_refused(r))
		return r;
	shim_record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, 1, desc->Format,
	    desc->NumChannels), shim_current_device(), shim_current_ctx(), 0, api, 0);
	return r;
}

CUresult
track_array3d_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	typedef CUresult (*fn_t)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
	CUresult r = CALL(real, fn_t, (handle, desc));

	if (shim_refused(r))
		return r;
	shim_record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format,
	    desc->NumChannels), shim_current_device(), shim_current_ctx(), 0, api, 0);
	return r;
}

CUresult
track_mipmapped_create(void *real, const char *api, CUmipmappedArray *handle,
    const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
	typedef CUresult (*fn_t)(CUmipmappedArray *,
	    const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int);
	CUresult r = CALL(real, fn_t, (handle, desc, levels));

	if (shim_refused(r))
		return r;
	/* Level 0's size (the whole chain is at most 4/3 of it). */
	shim_record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format,
	    desc->NumChannels), shim_current_device(), shim_current_ctx(), 1, api, 0);
	return r;
}

/* Arrays and mipmapped arrays share NS_ARRAY; the record's aux tells
 * them apart (1: mipmapped).  A live handle of the other sort given to a
 * destroy is a mismatched free: the driver refuses it and frees nothing,
 * so the record stays live (shim_classify_free would take the refusal of a
 * live handle for a double free and drop it). */
static void
classify_array_free(uintptr_t handle, uintptr_t aux, CUresult r,
    const char *api, const pre_t *pre)
{
	if (pre->found && pre->rec.aux != aux) {
		stack_id_t st = stack_capture_outside();
		STATS_INC(frees);
		shim_report_violation(V_MISMATCHED_FREE, api, handle, &pre->rec, r,
		    st);
		if (r == CUDA_SUCCESS)
			shim_remove_rec(pre->h, st, pre->t, api);
		return;
	}
	shim_classify_free(NS_ARRAY, KBIT(KIND_ARRAY), handle, r, api, pre);
}

CUresult
track_array_destroy(void *real, const char *api, CUarray handle)
{
	typedef CUresult (*fn_t)(CUarray);
	pre_t pre;

	shim_pre_lookup(NS_ARRAY, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	classify_array_free((uintptr_t)handle, 0, r, api, &pre);
	return r;
}

CUresult
track_mipmapped_destroy(void *real, const char *api, CUmipmappedArray handle)
{
	typedef CUresult (*fn_t)(CUmipmappedArray);
	pre_t pre;

	shim_pre_lookup(NS_ARRAY, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	classify_array_free((uintptr_t)handle, 1, r, api, &pre);
	return r;
}
