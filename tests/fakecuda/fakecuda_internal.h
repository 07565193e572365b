/* fakecuda_internal.h: shared state of the simulated driver (fixture only).
 *
 * Glossary
 *   device    one simulated GPU: a PROT_NONE reservation of its memory size
 *             (device addresses) plus a read-write shadow of the same size at
 *             another address; device pointer p lives at shadow + (p - base).
 *   record    one live allocation of any kind, in one address-sorted table.
 *   stream    a queue of simulated work, reduced to the time its last work
 *             finishes (done, CLOCK_MONOTONIC ns).
 *   fence     the writer rwlock: taking it for write after a deadline has
 *             passed guarantees that no simulated writer still writes.
 *   capture   a stream capture: the stream, its mode, the thread that began
 *             it, the graph it builds and the nodes new work depends on.
 *   graph     nodes with their parameters, in the order they were added (a
 *             topological order); an exec is a copy of them, launched in
 *             that order.
 *   gmem      a graph allocation's address range: reserved when its alloc
 *             node is made, live (a record) from a launch until freed.
 *
 * Locking: one mutex (fc_lock) guards everything below; it is never held while
 * sleeping for simulated work. Exported functions take it through fc_enter().
 * Counters are atomics outside the lock.
 *
 * Compiled with __CUDA_API_VERSION_INTERNAL so that cuda.h declares every ABI
 * under its exported name (cuMemAlloc_v2, cuMemAllocAsync_ptsz, the v1 names),
 * exactly as the driver itself is built.
 */
#ifndef CUWARDEN_TESTS_FAKECUDA_INTERNAL_H
#define CUWARDEN_TESTS_FAKECUDA_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fakecuda.h"
#include "fakecuda_exports.h"

#define FC_EXPORT __attribute__((visibility("default")))
#define FC_MAX_DEVICES 8
/* The driver version simulated: 13000 (CUDA 13.0, driver 580, as on the
 * H200).  The build of tests/fakecuda/v12010/ sets 12010: a driver from
 * before the versions its exports table dates later (libcuda-12010.map
 * hides those exports; cuGetProcAddress does not find them). */
#ifndef FC_DRIVER_VERSION
#define FC_DRIVER_VERSION 13000
#endif
#define FC_GRANULARITY (2UL << 20)
#define FC_MIB (1UL << 20)

/* ------------------------------------------------------------------ calls */
enum fc_export_e {
#define FC_X(exp, base, abi, pt, fam) FC_IDX_##exp,
	FC_EXPORTS(FC_X)
#undef FC_X
	FC_NEXPORTS
};

extern unsigned long fc_calls[FC_NEXPORTS];
extern unsigned long fc_free_waits;
extern unsigned long fc_injected;
extern int fc_call_inj_on;
/* FAKECUDA_CALL_LOG: notes the first call of export idx. */
void fc_first_call(int idx);
/* The error to fail call idx with (FAKECUDA_FAIL_CALL), or CUDA_SUCCESS. */
CUresult fc_inject_call(int idx);
/* Counts one call of an export; when per-call injection chose this call, the
 * export returns the injected error at once, before any effect. */
#define FC_COUNT(exp) \
	do { \
		if (__builtin_expect(__atomic_fetch_add(&fc_calls[FC_IDX_##exp], 1, \
		    __ATOMIC_RELAXED) == 0, 0)) \
			fc_first_call(FC_IDX_##exp); \
		if (__builtin_expect(__atomic_load_n(&fc_call_inj_on, __ATOMIC_RELAXED), 0)) { \
			CUresult fc_inj_r_ = fc_inject_call(FC_IDX_##exp); \
			if (fc_inj_r_ != CUDA_SUCCESS) \
				return fc_inj_r_; \
		} \
	} while (0)

/* ------------------------------------------------------------------ types */
typedef struct fc_ctx_s fc_ctx_t;
typedef struct fc_stream_s fc_stream_t;
typedef struct fc_pool_s fc_pool_t;
typedef struct fc_capture_s fc_capture_t;
typedef struct fc_graph_s fc_graph_t;
typedef struct fc_node_s fc_node_t;
typedef struct fc_gmem_s fc_gmem_t;

typedef enum {
	FC_KIND_DEVICE,     /* cuMemAlloc_v2, cuMemAllocPitch_v2 */
	FC_KIND_MANAGED,
	FC_KIND_PINNED,     /* cuMemHostAlloc, cuMemAllocHost_v2 */
	FC_KIND_REGISTERED,
	FC_KIND_ASYNC,      /* cuMemAllocAsync, cuMemAllocFromPoolAsync,
	                       cuMemPoolImportPointer (imported) */
	FC_KIND_IPC,        /* cuIpcOpenMemHandle */
	FC_KIND_ARRAY,      /* backing store of a CUarray, not a pointer */
	FC_KIND_VARANGE     /* cuMemAddressReserve */
} fc_kind_t;

typedef struct fc_rec_s {
	uintptr_t base;
	size_t size;          /* requested */
	size_t span;          /* taken from the device range (0 for host kinds) */
	fc_kind_t kind;
	bool pitch;
	fc_ctx_t *ctx;        /* NULL for async, VMM */
	int device;
	unsigned flags;
	unsigned long long buffer_id;
	fc_pool_t *pool;      /* async */
	bool free_pending;    /* async: cuMemFreeAsync seen */
	bool imported;        /* async: cuMemPoolImportPointer; the memory is the
	                         exporter's (counted neither in device.used nor
	                         in pool->used) */
	uint64_t free_time;
	struct fc_rec_s *next_pending;
	fc_gmem_t *gmem;      /* async: a graph allocation (its range outlives
	                         the record; pool NULL) */
} fc_rec_t;

struct fc_ctx_s {
	uint32_t magic;
	int device;
	unsigned flags;
	bool primary;
	bool alive;           /* primary: active (refcount > 0) */
	int refcount;         /* primary only */
	unsigned long long id;
	fc_stream_t *legacy;  /* the NULL stream of this context */
	fc_ctx_t *next_all;
};

struct fc_stream_s {
	uint32_t magic;
	fc_ctx_t *ctx;
	unsigned flags;
	int priority;
	bool legacy;          /* the context's NULL stream */
	bool per_thread;      /* a thread's per-thread default stream */
	uint64_t done;        /* when its last work finishes */
	fc_capture_t *capture;  /* the capture it is in, or NULL */
	fc_stream_t *next_all;
};

struct fc_pool_s {
	uint32_t magic;
	int device;
	bool is_default;
	bool destroyed;
	bool imported;        /* cuMemPoolImportFromShareableHandle: no allocations */
	CUmemAllocationHandleType handle_types;  /* cuMemPoolCreate's; 0: no IPC */
	uint64_t release_threshold;
	uint64_t used, used_high;
	int reuse_follow, reuse_opportunistic, reuse_internal;
	fc_pool_t *next_all;
};

typedef struct {
	uintptr_t start;
	size_t len;
} fc_extent_t;

/* A range of simulated device addresses: PROT_NONE at base, read-write at
 * shadow, carved first-fit by a sorted list of free extents. */
typedef struct {
	char *base;
	char *shadow;
	size_t range;
	fc_extent_t *free;
	size_t nfree, capfree;
} fc_arena_t;

typedef struct {
	fc_arena_t va;        /* cuMemAlloc-family, async, IPC, arrays */
	size_t total;         /* simulated memory size */
	size_t used;          /* bytes taken (device, async, VMM physical, arrays) */
	fc_ctx_t primary;
	uint64_t done;        /* when all work enqueued on this device finishes */
	fc_pool_t default_pool;
	fc_pool_t *current_pool;
} fc_device_t;

typedef struct {
	bool no_device;
	bool no_concurrent_managed;
	int ndevices;
	size_t mem;
} fc_config_t;

/* ------------------------------------------------------------------ state */
extern pthread_mutex_t fc_lock;
extern bool fc_initialized;
extern fc_config_t fc_config;
extern fc_device_t fc_devices[FC_MAX_DEVICES];
extern fc_ctx_t *fc_all_ctx;

/* "fakecuda.c" */
void fc_enter(void);
void fc_leave(void);
uint64_t fc_now(void);
CUresult fc_check_init(void);
fc_ctx_t *fc_current(void);
/* Current context, checked: fills *ctx or returns the driver's error. Lock held. */
CUresult fc_need_ctx(fc_ctx_t **ctx);
bool fc_ctx_valid(const fc_ctx_t *ctx);
bool fc_inject_alloc(void);
bool fc_inject_free(void);
void fc_device_done(int dev, uint64_t t);
void fc_wait_until(uint64_t t);

/* "fakecuda_errors.c" */
struct fc_error_s {
	int code;
	const char *name;
	const char *string;
};
const struct fc_error_s *fc_error_lookup(int code);
const struct fc_error_s *fc_error_by_name(const char *name);

/* "fakecuda_mem.c" */
bool fc_mem_init_device(int dev, size_t bytes);
void fc_mem_ctx_teardown(fc_ctx_t *ctx);
void fc_mem_reap(void);
fc_rec_t *fc_rec_find(uintptr_t p);
/* Host-writable address of [p, p + n) when it lies in one live record or VMM
 * mapping; NULL otherwise. Lock held. */
void *fc_mem_translate(uintptr_t p, size_t n);
void fc_mem_pool_init(fc_pool_t *pool, int dev, bool is_default);
void fc_mem_live(struct fakecuda_counters *out);

/* One node's parameters: what the fixture can run. */
typedef struct {
	CUgraphNodeType type;
	union {
		struct { uintptr_t dst; size_t pitch, width, height; unsigned value, elem; } memset;
		struct { uintptr_t dst, src; size_t n; } memcpy;
		struct { fc_gmem_t *gmem; uintptr_t dptr; size_t size; int device; } alloc;
		struct { uintptr_t dptr; } free;
		/* fakecuda_launch_busy/writer: work of dur ns; a writer writes byte
		 * over [p, p + n) meanwhile */
		struct { uint64_t dur; uintptr_t p; size_t n; unsigned char byte; bool writer; } kernel;
		struct { fc_graph_t *graph; } child;
	} u;
} fc_nparams_t;

/* "fakecuda_mem.c": graph memory */
/* Reserves span bytes of device addresses (2 MiB aligned), neither committed
 * nor counted; 0 when none are left. Lock held. */
uintptr_t fc_mem_va_reserve(int dev, size_t span);
void fc_mem_va_release(int dev, uintptr_t p, size_t span);
/* Makes [p, p + size) of a reservation live memory: a stream-ordered record
 * owned by g. Returns the driver's code. Lock held. */
CUresult fc_mem_graph_map(fc_gmem_t *g, int dev, uintptr_t p, size_t size, size_t span,
    fc_rec_t **out);
fc_rec_t *fc_rec_exact(uintptr_t p);
/* Frees a record of any kind now. Lock held. */
void fc_mem_release(fc_rec_t *r);
/* Frees a stream-ordered record when the clock reaches t. Lock held. */
void fc_mem_free_at(fc_rec_t *r, uint64_t t);
/* A set or copy as a node runs it: the ranges are checked again (a range not
 * live is skipped). Lock held. */
CUresult fc_mem_set_now(uintptr_t dst, unsigned v, unsigned elem, size_t count);
CUresult fc_mem_copy_now(uintptr_t dst, uintptr_t src, size_t n);
/* The range lies in live memory (device kinds) or a graph reservation, or is
 * host memory: a node may name it. Lock held. */
bool fc_mem_node_range_ok(uintptr_t p, size_t n);

/* "fakecuda_capture.c" */
/* A potentially unsafe call (cuda.h, cuThreadExchangeStreamCaptureMode) by
 * this thread: when its mode prohibits it, the captures that prohibit it
 * are invalidated and CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED returned. Lock held. */
CUresult fc_capture_unsafe(void);
/* cuCtxSynchronize: refused while any stream of the device captures. */
CUresult fc_capture_ctx_sync(int dev);
/* Work enqueued on s: *cap is its capture when s captures (the work is to be
 * a node), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED when that capture was
 * invalidated, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (captures invalidated) for
 * the legacy stream while a blocking stream of its context captures. */
CUresult fc_capture_work(fc_stream_t *s, fc_capture_t **cap);
/* A synchronise or query of s itself. */
CUresult fc_capture_wait(fc_stream_t *s);
/* Adds a node to the capture, after its dependencies; fills p (alloc: the
 * address). Lock held. */
CUresult fc_capture_add(fc_capture_t *c, fc_nparams_t *p);
void fc_capture_invalidate(fc_capture_t *c);
bool fc_capture_active(const fc_capture_t *c);
/* A stream goes away: its capture ends, its graph is destroyed. */
void fc_capture_stream_gone(fc_stream_t *s);
/* The capture of that id while it goes on (not yet ended), or NULL. */
fc_capture_t *fc_capture_find(unsigned long long id);
unsigned long long fc_capture_id(const fc_capture_t *c);

/* "fakecuda_graph.c" */
fc_graph_t *fc_graph_new(void);
void fc_graph_free(fc_graph_t *g);
bool fc_graph_valid(const fc_graph_t *g);
bool fc_node_valid(const fc_node_t *n);
/* Adds a node after deps; fills p's outputs (alloc: the reserved address).
 * Returns the driver's code. Lock held. */
CUresult fc_graph_add(fc_graph_t *g, fc_node_t *const *deps, size_t ndeps,
    fc_nparams_t *p, fc_node_t **out);
/* The range is (part of) a graph allocation's reservation. Lock held. */
bool fc_graph_va_has(uintptr_t p, size_t n);
/* A graph allocation's record was freed (by any path). Lock held. */
void fc_graph_mem_released(fc_gmem_t *g, int dev, size_t span);

/* "fakecuda_stream.c" */
/* Starts a writer on s (fakecuda_launch_writer's work). Lock held. */
CUresult fc_stream_writer(fc_stream_t *s, uintptr_t p, size_t n, uint64_t dur,
    unsigned char byte);
/* Resolve a stream handle as seen by a legacy (ptsz false) or per-thread
 * (ptsz true) entry point. Lock held. */
CUresult fc_stream_get(CUstream h, bool ptsz, fc_stream_t **out);
/* Enqueue work of dur ns; returns its end time, *start its start. Lock held. */
uint64_t fc_stream_enqueue(fc_stream_t *s, uint64_t dur, uint64_t *start);
void fc_stream_ctx_teardown(fc_ctx_t *ctx);
/* Waits (lock NOT held) until t has passed and no writer still writes. */
void fc_fence(void);
void fc_writer_rdlock(void);
void fc_writer_unlock(void);

#endif /* CUWARDEN_TESTS_FAKECUDA_INTERNAL_H */
