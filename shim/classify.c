#include "preamble.h"
/*
 * classify.c -- what a free was (doc/shim.md "How frees are classified"):
 * normal, failed_free, double_free, interior_free, mismatched_free,
 * invalid_free or untracked, decided from the record seen before the
 * real call and the driver's answer.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"

void
shim_pre_lookup(ns_t ns, uintptr_t addr, pre_t *pre)
{
	pre->found = !registry_find(ns, addr, &pre->h, &pre->rec);
	pre->t = pre->found && unlikely(__atomic_load_n(&shim_tl_on,
	    __ATOMIC_RELAXED)) ? shim_tl_clock() : 0;
}

void
shim_remove_rec(reg_handle_t h, stack_id_t st, uint64_t t, const char *api)
{
	reg_rec_t out;

	if (registry_remove(h, NULL, NULL, st, &out) == 0) {
		stats_on_free((kind_t)out.kind, out.size);
		shim_recent_free(api, &out, st);
		shim_tl_free(TLF_FREE, &out, t);
	}
	/* else: replaced meanwhile by a new allocation at the same address
	 * (the driver had freed ours); record() accounted for it. */
}

/* The driver's answers for a pointer or handle it does not hold. */
bool
shim_unknown_to_driver(CUresult r)
{
	return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE ||
	    r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* The driver refused to free what rec describes and still holds it: a
 * failed_free, the address in the ledger, the record left live (a leak
 * if it is never freed). */
void
shim_failed_keep(const char *api, uintptr_t addr, const reg_rec_t *rec,
    CUresult r, stack_id_t st)
{
	shim_report_violation(V_FAILED_FREE, api, addr, rec, r, st);
	ledger_add(addr, rec->size, rec->kind, (int)r);
}

/* Whether the driver still holds the allocation rec describes, after it
 * refused to free it: asked of the driver (the pointer's range start, the
 * array's descriptor).  False where the driver cannot be asked (an
 * address reservation, a mapping, a mipmapped array, a VMM handle: driver
 * 580 still describes a released handle, probe.c): the refusal is then
 * taken as the driver not knowing it; the callers of the reservation and
 * the mapping have refused sizes handled before. */
static bool
still_held(ns_t ns, const reg_rec_t *rec)
{
	const driver_fns_t *d = driver_get();

	if (d == NULL)
		return false;
	switch (ns) {
	case NS_ADDR: {
		CUdeviceptr start = 0;
		return d->cuPointerGetAttribute != NULL &&
		    d->cuPointerGetAttribute(&start,
		    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		    (CUdeviceptr)rec->base) == CUDA_SUCCESS &&
		    start == (CUdeviceptr)rec->base;
	}
	case NS_ARRAY: {
		CUDA_ARRAY3D_DESCRIPTOR desc;
		return rec->aux == 0 && d->cuArray3DGetDescriptor_v2 != NULL &&
		    d->cuArray3DGetDescriptor_v2(&desc, (CUarray)rec->base) ==
		    CUDA_SUCCESS;
	}
	default:
		return false;
	}
}

/* Classifies a free of addr in ns by a function accepting the kinds in
 * accept, after the driver answered r. */
void
shim_classify_free(ns_t ns, unsigned accept, uintptr_t addr, CUresult r,
    const char *api, const pre_t *pre)
{
	reg_rec_t rec;
	reg_handle_t h;

	STATS_INC(frees);
	if (pre->found && shim_unknown_to_driver(r) &&
	    (accept & KBIT(pre->rec.kind)) && !still_held(ns, &pre->rec)) {
		/* We hold it live and the driver does not know it either:
		 * another thread freed it just now (both saw it live), or it
		 * went behind our back.  A double free, not a failed one.
		 * (A refusal for another argument -- a destroyed stream, a
		 * wrong size -- leaves it held: a failed_free below.) */
		reg_rec_t out;
		stack_id_t st = stack_capture_outside();
		if (registry_remove(pre->h, NULL, NULL, st, &out) == 0) {
			stats_on_free((kind_t)out.kind, out.size);
			shim_tl_free(TLF_FREE, &out, pre->t);
			shim_report_violation(V_DOUBLE_FREE, api, addr, &pre->rec, r,
			    st);
			return;
		}
		/* The other thread removed it first: its tombstone says
		 * where. */
	}
	bool live = pre->found && (r == CUDA_SUCCESS ||
	    registry_state(pre->h) == REG_LIVE);
	if (live) {
		stack_id_t st = stack_capture_outside();
		if (!(accept & KBIT(pre->rec.kind))) {
			shim_report_violation(V_MISMATCHED_FREE, api, addr,
			    &pre->rec, r, st);
			if (r == CUDA_SUCCESS)
				shim_remove_rec(pre->h, st, pre->t, api);
			return;
		}
		if (r != CUDA_SUCCESS) {
			shim_failed_keep(api, addr, &pre->rec, r, st);
			return;
		}
		if ((pre->rec.flags & REC_F_ANNOTATED) &&
		    pre->rec.refcount > 1)
			shim_report_violation(V_FREE_WHILE_REFERENCED, api, addr,
			    &pre->rec, r, st);
		shim_remove_rec(pre->h, st, pre->t, api);
		return;
	}
	if (r == CUDA_SUCCESS) {
		/* Memory we never saw allocated (before we loaded, IPC,
		 * graphs, an unhooked path): normal. */
		STATS_INC(untracked_frees);
		return;
	}
	stack_id_t st = stack_capture_outside();
	if (ns == NS_ADDR && graphmem_node_unlaunched(addr))
		/* Graph memory no launch made live (H200: the driver refuses
		 * it, CUDA_ERROR_INVALID_VALUE). */
		shim_report_invalid_free(api, addr, accept, r, st);
	else if (!registry_tomb_find(ns, addr, &rec))
		shim_report_violation(V_DOUBLE_FREE, api, addr, &rec, r, st);
	else if (ns == NS_ADDR &&
	    !registry_find_containing(ns, addr, &h, &rec))
		/* Only addresses have an inside; array and VMM handles
		 * are opaque values. */
		shim_report_violation(V_INTERIOR_FREE, api, addr, &rec, r, st);
	else
		shim_report_invalid_free(api, addr, accept, r, st);
}
