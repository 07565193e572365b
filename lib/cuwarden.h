/*
 * cuwarden.h -- the public API of libcuwarden.
 *
 * CUDA device, managed and pinned host memory from fast pools, with
 * ownership, reference counts, views and leak accounting enforced as
 * contracts.  A broken contract is a clear error (a negative CW_E* status,
 * the detail in cw_last_error()) and nothing is freed or lost.
 *
 * Conventions:
 *   - Functions returning int return CW_OK (0) on success and a negative
 *     CW_E* status on failure, unless documented otherwise.
 *   - A handle (cw_buf_t) is an opaque 64-bit value; 0 (CW_BUF_NONE) is
 *     never a valid handle.  A freed handle is detected (CW_EFREED), as is
 *     one that was never issued (CW_EINVAL).
 *   - All functions are thread-safe.
 *   - Nothing here needs the CUDA headers: a CUstream or cudaStream_t
 *     converts to cw_stream_t without a cast.
 *
 * Every function is documented in cuwarden(3); the contracts in
 * doc/contracts.md.
 */
#ifndef CUWARDEN_H
#define CUWARDEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CW_EXPORT __attribute__((visibility("default")))
#else
#define CW_EXPORT
#endif

#define CW_VERSION_MAJOR 0
#define CW_VERSION_MINOR 1
#define CW_VERSION_PATCH 0

/* ------------------------------------------------------------------ status */
typedef enum cw_status_e {
	CW_OK = 0,
	CW_EINVAL = -1,    /* bad argument, unknown handle, never allocated */
	CW_ENOMEM = -2,    /* out of memory (detail: sizes in cw_last_error) */
	CW_ECONTRACT = -3, /* a contract refused the call; nothing changed */
	CW_EFREED = -4,    /* the handle was freed (double free, use after free) */
	CW_EBOUNDS = -5,   /* range outside the allocation; nothing written */
	CW_ENOTSUP = -6,   /* not supported for this kind or device */
	CW_ECUDA = -7,     /* the driver failed (detail: cuda_error) */
	CW_ENODEV = -8     /* no CUDA driver or no such device */
} cw_status_t;

/* ------------------------------------------------------------------ types */
typedef uint64_t cw_buf_t;   /* an allocation or a view; 0 = none */
#define CW_BUF_NONE ((cw_buf_t)0)

typedef uint32_t cw_owner_t; /* a registered owner; 0 = none */
#define CW_OWNER_NONE ((cw_owner_t)0)

/* The same struct tag as CUstream and cudaStream_t. */
typedef struct CUstream_st *cw_stream_t;

typedef enum cw_kind_e {
	CW_DEVICE = 0,  /* device memory (cuMemAlloc) */
	CW_MANAGED = 1, /* unified memory (cuMemAllocManaged) */
	CW_PINNED = 2   /* page-locked host memory (cuMemHostAlloc) */
} cw_kind_t;

#define CW_CPU (-1) /* cw_prefetch / cw_advise target: the host */

typedef enum cw_advice_e {
	CW_ADVISE_SET_READ_MOSTLY = 1,
	CW_ADVISE_UNSET_READ_MOSTLY = 2,
	CW_ADVISE_SET_PREFERRED_LOCATION = 3,
	CW_ADVISE_UNSET_PREFERRED_LOCATION = 4,
	CW_ADVISE_SET_ACCESSED_BY = 5,
	CW_ADVISE_UNSET_ACCESSED_BY = 6
} cw_advice_t;

typedef enum cw_format_e {
	CW_FORMAT_JSON = 0, /* the report document of doc/report-schema.md */
	CW_FORMAT_TEXT = 1  /* human-readable, largest leaks first */
} cw_format_t;

/* Detail of the last failure on the calling thread (cw_last_error). */
typedef struct cw_error_s {
	int status;           /* the CW_E* status returned */
	const char *function; /* the cw_* function that failed */
	const char *rule;     /* violation type (e.g. "double_free") or NULL */
	cw_buf_t buf;         /* the handle concerned, or 0 */
	uintptr_t address;    /* the address concerned, or 0 */
	int cuda_error;       /* CUresult of a failed driver call, or 0 */
	const char *cuda_error_name; /* its name ("CUDA_ERROR_..."), or NULL */
	size_t requested;     /* CW_ENOMEM: bytes asked for */
	size_t reserved;      /* CW_ENOMEM: bytes the pool holds from the driver */
	size_t allocated;     /* CW_ENOMEM: bytes handed out */
	size_t largest_free;  /* CW_ENOMEM: largest free block in the pool */
	char message[256];    /* one line, for people */
} cw_error_t;

/* Statistics (cw_stats).  Counters: current, peak, total. */
typedef struct cw_counter_s {
	uint64_t current;
	uint64_t peak;
	uint64_t total;
} cw_counter_t;

typedef struct cw_pool_stats_s {
	cw_counter_t allocated;   /* bytes handed out from the pool */
	cw_counter_t reserved;    /* bytes held from the driver */
	cw_counter_t segments;    /* driver allocations held */
	uint64_t fence_waits;     /* allocations that waited on the fence */
	uint64_t driver_allocs;   /* driver allocation calls */
	uint64_t driver_frees;    /* driver free calls */
	uint64_t trims;           /* trims (cw_trim or OOM staging) */
	uint64_t largest_free;    /* bytes: largest free block now */
	double fragmentation;     /* 1 - largest_free / free bytes; 0 if none */
} cw_pool_stats_t;

typedef struct cw_stats_s {
	cw_counter_t bytes[3];       /* by cw_kind_t: bytes live */
	cw_counter_t allocations[3]; /* by cw_kind_t: allocations live */
	uint64_t views_live;
	uint64_t violations;         /* contract violations recorded */
	uint64_t failed_frees;       /* driver frees that failed */
	uint64_t failed_free_overflow; /* failed frees not kept in the ledger */
	uint64_t failed_free_ledger; /* addresses in the ledger now (<= 4096) */
	uint64_t stacks;             /* unique stacks in the depot */
	uint64_t stack_bytes;        /* bytes the depot uses */
	cw_pool_stats_t pool[3];     /* by cw_kind_t; zero when pools are off */
} cw_stats_t;

/* All text cuwarden writes goes through one callback (one line at a time).
 * Default: standard error. */
typedef void (*cw_output_fn)(const char *msg, void *arg);

/* ------------------------------------------------------------ allocation */
/* Allocates size bytes of kind on device (a CUDA ordinal; pinned memory is
 * portable but still names one) for owner (CW_OWNER_NONE or a registered
 * owner), with a reference count of 1 (the owner's).  Memory is not zeroed.
 * *buf is set only on success.
 * Errors: CW_EINVAL (NULL buf, size 0 or above 2^47, bad kind, unknown
 * owner), CW_ENODEV (no driver, ordinal not present), CW_ENOMEM (sizes in
 * cw_last_error), CW_ECUDA.  Argument errors only: never a violation. */
CW_EXPORT int cw_alloc(cw_buf_t *buf, size_t size, cw_kind_t kind,
    int device, cw_owner_t owner);

/* cw_alloc in stream order: work queued on stream after this call may use
 * the memory at once.  A block that cw_free_async freed on the same stream
 * is handed out again without waiting (the work queued before that free
 * runs first); other memory comes as from cw_alloc.  Used on another
 * stream, the memory needs stream synchronised (or waited for with an
 * event) first, as with cuMemAllocAsync.  Errors: those of cw_alloc. */
CW_EXPORT int cw_alloc_async(cw_buf_t *buf, size_t size, cw_kind_t kind,
    int device, cw_owner_t owner, cw_stream_t stream);

/* Frees an allocation, or a view (which releases its reference on the
 * parent and never frees memory).  Refused with CW_ECONTRACT while other
 * references are held, views included (free_while_referenced); CW_EFREED
 * on a freed handle (double_free); CW_EINVAL on one never issued
 * (invalid_free) or on CW_BUF_NONE (no violation); CW_ECUDA when the
 * driver fails (failed_free: the handle is freed, the address goes to the
 * failed-free ledger).  Memory is reused only after all device work
 * submitted before the free has finished (the guarantee cudaFree gives by
 * waiting). */
CW_EXPORT int cw_free(cw_buf_t buf);

/* Frees in stream order: reusable at once on stream (by cw_alloc_async
 * on that stream), elsewhere once the stream has passed the free. */
CW_EXPORT int cw_free_async(cw_buf_t buf, cw_stream_t stream);

/* ------------------------------------------------------------ references */
/* References are counted on allocations; given a view, these act on its
 * allocation.  A freed handle is CW_EFREED (use_after_free). */
CW_EXPORT int cw_retain(cw_buf_t buf);   /* adds a reference */
/* Drops one taken by cw_retain; refused (CW_ECONTRACT, refcount_underflow)
 * when it would take the owner's reference or a live view's. */
CW_EXPORT int cw_release(cw_buf_t buf);
/* The reference count (>= 1, the owner's and the views' included), or a
 * negative status (CW_EFREED without a violation: asking is not using). */
CW_EXPORT int cw_refcount(cw_buf_t buf);

/* ---------------------------------------------------------------- owners */
/* Registers (or finds) the owner called name (1..127 printable bytes). */
CW_EXPORT int cw_owner_register(const char *name, cw_owner_t *owner);
/* The owner's name, or NULL for an unknown owner. */
CW_EXPORT const char *cw_owner_name(cw_owner_t owner);
CW_EXPORT int cw_owner_of(cw_buf_t buf, cw_owner_t *owner);
/* Hands buf to owner to (CW_OWNER_NONE disowns it); refused
 * (CW_ECONTRACT, transfer_while_shared) while the reference count is above
 * 1, views included; CW_EINVAL for an unknown owner. */
CW_EXPORT int cw_transfer(cw_buf_t buf, cw_owner_t to);

/* ------------------------------------------------------------------ views */
/* A non-owning byte range [offset, offset+len) of parent (an allocation
 * or a view) holding a reference on the allocation.  A view of a view
 * refers to the allocation (offsets added; bounds checked against the
 * parent view).  Freeing a view never frees memory.  Errors: CW_EINVAL
 * (NULL view, len 0, bad handle), CW_EFREED (use_after_free), CW_EBOUNDS
 * (out_of_bounds), CW_ENOTSUP (parent not made by cw_alloc). */
CW_EXPORT int cw_view(cw_buf_t *view, cw_buf_t parent, size_t offset,
    size_t len);

/* ------------------------------------------------------------- accessors */
/* The address a program uses (device pointer, or host pointer for pinned
 * and managed memory); NULL on a bad handle. */
CW_EXPORT void *cw_ptr(cw_buf_t buf);
CW_EXPORT size_t cw_size(cw_buf_t buf);   /* 0 on a bad handle */
CW_EXPORT int cw_kind(cw_buf_t buf);      /* cw_kind_t, or negative */
CW_EXPORT int cw_device(cw_buf_t buf);    /* ordinal, or negative */
/* The live allocation containing ptr, interior pointers included: any
 * live address-keyed record (under the preload shim, also the driver
 * allocations it recorded); never a view.  CW_EINVAL when none. */
CW_EXPORT int cw_lookup(const void *ptr, cw_buf_t *buf);

/* ---------------------------------------------------- data, bounds-checked */
/* Synchronous.  [off, off+n) is checked against the handle's own range
 * (a view's) first: outside it, or off+n overflowing, is CW_EBOUNDS
 * (out_of_bounds) and nothing is written.  n == 0 succeeds and does
 * nothing.  A freed handle is CW_EFREED (use_after_free); a driver failure
 * CW_ECUDA (cuda_error in cw_last_error).  cw_copy refuses (CW_EINVAL)
 * overlapping ranges in device or managed memory.  cw_memset writes
 * (unsigned char)value. */
CW_EXPORT int cw_upload(cw_buf_t buf, size_t off, const void *src, size_t n);
CW_EXPORT int cw_download(cw_buf_t buf, size_t off, void *dst, size_t n);
CW_EXPORT int cw_copy(cw_buf_t dst, size_t dst_off, cw_buf_t src,
    size_t src_off, size_t n);
CW_EXPORT int cw_memset(cw_buf_t buf, size_t off, int value, size_t n);

/* ---------------------------------------------------- unified memory hints */
/* Managed memory only (CW_ENOTSUP otherwise); device: a present CUDA
 * ordinal (any, not only the allocation's) or CW_CPU (CW_ENODEV
 * otherwise); advice outside cw_advice_t is CW_EINVAL. */
CW_EXPORT int cw_advise(cw_buf_t buf, cw_advice_t advice, int device);
/* Prefetches managed memory to device or CW_CPU on stream.  Where the
 * device lacks concurrent managed access this is an advisory no-op that
 * returns CW_OK (logged once). */
CW_EXPORT int cw_prefetch(cw_buf_t buf, int device, cw_stream_t stream);

/* ------------------------------------------------------------------ pools */
/* Returns cached memory of device's pools to the driver (after waiting
 * for the fence of every cached block). */
CW_EXPORT int cw_trim(int device);

/* ------------------------------------------------------ stats and reports */
CW_EXPORT int cw_stats(cw_stats_t *stats);
/* Prints the statistics through out (NULL: the output callback). */
CW_EXPORT int cw_stats_print(cw_output_fn out, void *arg);
/* Writes a report of live allocations (leaks so far) and violations to
 * fd: JSON (doc/report-schema.md, mode "library") or text.  CW_EINVAL for
 * a negative fd, an unknown format or a write error. */
CW_EXPORT int cw_report(int fd, cw_format_t format);
/* Routes all output (warnings, violations, stats) through fn. */
CW_EXPORT void cw_set_output(cw_output_fn fn, void *arg);

/* ----------------------------------------------------------------- errors */
/* A static string for a status ("invalid argument", ...). */
CW_EXPORT const char *cw_strerror(int status);
/* Detail of the calling thread's last failure (never NULL; status 0 when
 * no call has failed on this thread). */
CW_EXPORT const cw_error_t *cw_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* CUWARDEN_H */
