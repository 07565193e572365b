#include "preamble.h"
/*
 * bounds.c -- range checks of copies and sets (CUWARDEN_CHECK_BOUNDS=1,
 * and always in pool mode for pooled device memory, where the driver
 * would refuse what runs past the allocation).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"

static int bounds_on = -1; /* CUWARDEN_CHECK_BOUNDS, read once */

static bool
bounds(void)
{
	int b = __atomic_load_n(&bounds_on, __ATOMIC_RELAXED);

	if (unlikely(b < 0)) {
		b = options_get_bool(OPT_CHECK_BOUNDS) ? 1 : 0;
		__atomic_store_n(&bounds_on, b, __ATOMIC_RELAXED);
	}
	return b != 0;
}

/* [p, p + n) against the tracked allocation containing p, if any, for a
 * call the shim refuses (refused) or forwards. */
static void
check_range(const char *api, uintptr_t p, size_t n, bool refused)
{
	reg_handle_t h;
	reg_rec_t rec;

	if (n == 0 || p == 0)
		return;
	if (registry_find_containing(NS_ADDR, p, &h, &rec))
		return; /* not ours to judge (untracked, VMM, host) */
	if (n <= rec.size && p - rec.base <= rec.size - n)
		return;
	shim_report_out_of_bounds(api, p, n, &rec, refused,
	    stack_capture_outside());
}

/* Pool mode: whether the driver would refuse [p, p + n) as the device
 * side of a copy or a set.  It checks the range against its device or
 * managed allocation (driver 580: probe.c, part exact), but it sees the
 * pool's segment: against the allocation the program holds, here.
 * Pinned host memory is not checked (outside a pinned allocation the
 * driver copies as from pageable memory). */
static bool
pool_range_refused(uintptr_t p, size_t n)
{
	reg_rec_t rec;
	kind_t kind;

	if (n == 0)
		return false; /* whatever the driver says of an empty range */
	pq_t q = shim_pooled_at(p, &rec, &kind);
	if (q == PQ_NONE || kind == KIND_PINNED)
		return false;
	if (q == PQ_DEAD)
		return true;
	return n > rec.size || p - rec.base > rec.size - n;
}

/* The checks before a copy of n bytes (dst_dev, src_dev: which sides
 * are device addresses).  Returns true when the copy must be refused
 * with CUDA_ERROR_INVALID_VALUE, as the driver would. */
static bool
copy_refused(const char *api, uintptr_t dst, bool dst_dev, uintptr_t src,
    bool src_dev, size_t n)
{
	bool refused = shim_pool_mode() &&
	    ((dst_dev && pool_range_refused(dst, n)) ||
	    (src_dev && pool_range_refused(src, n)));

	if (unlikely(bounds())) {
		check_range(api, dst, n, refused);
		check_range(api, src, n, refused);
	}
	return refused;
}

/* The same for a set of count elements of size bytes. */
static bool
set_refused(const char *api, uintptr_t dst, size_t count, size_t size)
{
	if (count > SIZE_MAX / size)
		return false; /* the driver says what is wrong */
	return copy_refused(api, dst, true, 0, false, count * size);
}

CUresult
track_memcpy(void *real, const char *api, CUdeviceptr dst, CUdeviceptr src,
    size_t n)
{
	if (copy_refused(api, dst, true, src, true, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t),
	    (dst, src, n));
}

CUresult
track_memcpy_async(void *real, const char *api, CUdeviceptr dst,
    CUdeviceptr src, size_t n, CUstream stream)
{
	if (copy_refused(api, dst, true, src, true, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t,
	    CUstream), (dst, src, n, stream));
}

CUresult
track_memcpy_htod(void *real, const char *api, CUdeviceptr dst,
    const void *src, size_t n)
{
	if (copy_refused(api, dst, true, (uintptr_t)src, false, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(CUdeviceptr, const void *, size_t),
	    (dst, src, n));
}

CUresult
track_memcpy_htod_async(void *real, const char *api, CUdeviceptr dst,
    const void *src, size_t n, CUstream stream)
{
	if (copy_refused(api, dst, true, (uintptr_t)src, false, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(CUdeviceptr, const void *, size_t,
	    CUstream), (dst, src, n, stream));
}

CUresult
track_memcpy_dtoh(void *real, const char *api, void *dst, CUdeviceptr src,
    size_t n)
{
	if (copy_refused(api, (uintptr_t)dst, false, src, true, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(void *, CUdeviceptr, size_t),
	    (dst, src, n));
}

CUresult
track_memcpy_dtoh_async(void *real, const char *api, void *dst,
    CUdeviceptr src, size_t n, CUstream stream)
{
	if (copy_refused(api, (uintptr_t)dst, false, src, true, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CALL(real, CUresult (*)(void *, CUdeviceptr, size_t, CUstream),
	    (dst, src, n, stream));
}

/* cuMemsetD8/D16/D32 and their Async forms: one definition per element
 * type (the prototypes are in track.h). */
#define TRACK_MEMSET(name, T) \
	CUresult \
	name(void *real, const char *api, CUdeviceptr dst, T v, size_t n) \
	{ \
		if (set_refused(api, dst, n, sizeof(v))) \
			return CUDA_ERROR_INVALID_VALUE; \
		return CALL(real, CUresult (*)(CUdeviceptr, T, size_t), \
		    (dst, v, n)); \
	} \
	CUresult \
	name##_async(void *real, const char *api, CUdeviceptr dst, T v, \
	    size_t n, CUstream stream) \
	{ \
		if (set_refused(api, dst, n, sizeof(v))) \
			return CUDA_ERROR_INVALID_VALUE; \
		return CALL(real, CUresult (*)(CUdeviceptr, T, size_t, \
		    CUstream), (dst, v, n, stream)); \
	}

TRACK_MEMSET(track_memset_d8, unsigned char)
TRACK_MEMSET(track_memset_d16, unsigned short)
TRACK_MEMSET(track_memset_d32, unsigned int)
