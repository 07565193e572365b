#include "preamble.h"
/*
 * advise.c -- unified memory hints: cw_advise and cw_prefetch.
 *
 * Managed memory only (a view of managed memory applies to the view's
 * range); other kinds are CW_ENOTSUP.  The target is any present device
 * or CW_CPU (the host), not only the allocation's device.
 *
 * cw_advise maps cw_advice_t (numbered as CUmem_advise) to
 * cuMemAdvise_v2 with a CUmemLocation (device, or host for CW_CPU), or to
 * the unversioned cuMemAdvise with CU_DEVICE_CPU on a driver without _v2.
 * cw_prefetch is gated on CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
 * of the target device (of the allocation's device for CW_CPU): where it
 * is 0, prefetching is an advisory no-op returning CW_OK, logged once per
 * process; otherwise cuMemPrefetchAsync_v2 (or the unversioned one), made
 * in the stream's context (cuStreamGetCtx) when a stream is given.
 *
 * State: one flag (warned once), atomic.  No locks.
 */
#include <stdio.h>

#include "contract.h"
#include "driver.h"
#include "lasterr.h"
#include "log.h"

static bool prefetch_warned;

static CUmemLocation
location(int device)
{
	CUmemLocation loc;

	if (device == CW_CPU) {
		loc.type = CU_MEM_LOCATION_TYPE_HOST;
		loc.id = 0;
	} else {
		loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
		loc.id = device;
	}
	return loc;
}

/* Resolves buf to managed memory and binds the driver to its device;
 * *prev gets the thread's context (put back by the callers). */
static int
prepare(cw_buf_t buf, int device, const char *fn, contract_target_t *t,
    const driver_fns_t **d, CUcontext *prev)
{
	int r;

	*prev = NULL;
	if ((r = contract_resolve(buf, fn, t)) != CW_OK)
		return r;
	if ((r = contract_check_device(device, true, fn)) != CW_OK)
		return r;
	if (t->kind != KIND_MANAGED)
		return lasterr_set(CW_ENOTSUP, fn, "handle %#llx is not "
		    "managed memory", (unsigned long long)buf);
	if ((*d = driver_get()) == NULL)
		return lasterr_set(CW_ENODEV, fn, "the CUDA driver cannot be "
		    "loaded");
	if ((r = driver_bind_save(t->device < 0 ? 0 : t->device, prev)) !=
	    CW_OK) {
		lasterr_get()->function = fn;
		return r;
	}
	return CW_OK;
}

static int advise_bound(const driver_fns_t *d, const contract_target_t *t,
    cw_advice_t advice, int device);
static int prefetch_bound(const driver_fns_t *d, const contract_target_t *t,
    int device, cw_stream_t stream);

/* The public calls bind the buffer's device, call (cw_prefetch if
 * prefetch, else cw_advise), and put the thread's context back: a thread
 * never finds itself on another device after. */
static int
bound_call(cw_buf_t buf, int device, const char *fn, bool prefetch,
    cw_advice_t advice, cw_stream_t stream)
{
	const driver_fns_t *d;
	contract_target_t t;
	CUcontext prev;
	int r;

	if ((r = prepare(buf, device, fn, &t, &d, &prev)) != CW_OK)
		return r;
	r = prefetch ? prefetch_bound(d, &t, device, stream) :
	    advise_bound(d, &t, advice, device);
	driver_restore(prev);
	return r;
}

int
cw_advise(cw_buf_t buf, cw_advice_t advice, int device)
{
	static const char fn[] = "cw_advise";

	if ((int)advice < CW_ADVISE_SET_READ_MOSTLY ||
	    (int)advice > CW_ADVISE_UNSET_ACCESSED_BY)
		return lasterr_set(CW_EINVAL, fn, "advice %d is not a "
		    "cw_advice_t", (int)advice);
	return bound_call(buf, device, fn, false, advice, NULL);
}

int
cw_prefetch(cw_buf_t buf, int device, cw_stream_t stream)
{
	return bound_call(buf, device, "cw_prefetch", true, (cw_advice_t)0,
	    stream);
}

static int
advise_bound(const driver_fns_t *d, const contract_target_t *t,
    cw_advice_t advice, int device)
{
	static const char fn[] = "cw_advise";
	CUresult cr;

	if (d->cuMemAdvise_v2 != NULL) {
		cr = d->cuMemAdvise_v2((CUdeviceptr)t->addr, t->size,
		    (CUmem_advise)advice, location(device));
		return cr == CUDA_SUCCESS ? CW_OK :
		    driver_fail(CW_ECUDA, fn, "cuMemAdvise_v2", cr);
	}
	if (d->cuMemAdvise_v1 != NULL) {
		cr = d->cuMemAdvise_v1((CUdeviceptr)t->addr, t->size,
		    (CUmem_advise)advice,
		    device == CW_CPU ? CU_DEVICE_CPU : (CUdevice)device);
		return cr == CUDA_SUCCESS ? CW_OK :
		    driver_fail(CW_ECUDA, fn, "cuMemAdvise", cr);
	}
	return lasterr_set(CW_ENOTSUP, fn, "the driver has no cuMemAdvise");
}

static int
prefetch_bound(const driver_fns_t *d, const contract_target_t *t, int device,
    cw_stream_t stream)
{
	static const char fn[] = "cw_prefetch";
	CUresult cr;
	int concurrent = 0;

	int gate = device == CW_CPU ? (t->device < 0 ? 0 : t->device) : device;
	if (driver_attr(gate, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
		&concurrent)) {
		/* driver_attr's status and driver error, under our name. */
		cw_error_t *e = lasterr_get();
		int st = e->status, cuerr = e->cuda_error;
		const char *cuname = e->cuda_error_name;
		char why[sizeof(e->message)];

		snprintf(why, sizeof(why), "%s", e->message);
		lasterr_set(st, fn, "cannot read CONCURRENT_MANAGED_ACCESS of "
		    "device %d: %s", gate, why);
		e->cuda_error = cuerr;
		e->cuda_error_name = cuname;
		return st;
	}
	if (!concurrent) {
		if (!__atomic_exchange_n(&prefetch_warned, true,
			__ATOMIC_RELAXED))
			log_warn("cw_prefetch: device %d has no concurrent "
			    "managed access; prefetching is a no-op there",
			    gate);
		return CW_OK;
	}
	/* The call is made in the stream's context: a program's stream may
	 * belong to another device's (or a non-primary) context. */
	if (stream != NULL && d->cuStreamGetCtx != NULL) {
		CUcontext sc = NULL;
		if (d->cuStreamGetCtx((CUstream)stream, &sc) == CUDA_SUCCESS &&
		    sc != NULL)
			d->cuCtxSetCurrent(sc);
	}
	if (d->cuMemPrefetchAsync_v2 != NULL) {
		cr = d->cuMemPrefetchAsync_v2((CUdeviceptr)t->addr, t->size,
		    location(device), 0, (CUstream)stream);
		return cr == CUDA_SUCCESS ? CW_OK :
		    driver_fail(CW_ECUDA, fn, "cuMemPrefetchAsync_v2", cr);
	}
	if (d->cuMemPrefetchAsync_v1 != NULL) {
		cr = d->cuMemPrefetchAsync_v1((CUdeviceptr)t->addr, t->size,
		    device == CW_CPU ? CU_DEVICE_CPU : (CUdevice)device,
		    (CUstream)stream);
		return cr == CUDA_SUCCESS ? CW_OK :
		    driver_fail(CW_ECUDA, fn, "cuMemPrefetchAsync", cr);
	}
	return lasterr_set(CW_ENOTSUP, fn, "the driver has no "
	    "cuMemPrefetchAsync");
}
