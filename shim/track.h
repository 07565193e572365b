/*
 * track.h -- the shim's engine: what happens around every hooked driver
 * call (preload/preload.c holds only the wrappers, generated from
 * preload/hooks.def, and calls these).
 *
 * Audit mode (CUWARDEN_MODE=audit, the default): each allocation is
 * recorded in the registry (kind, size, device, api, owner, stack,
 * context) after the driver answered; each free is forwarded unchanged
 * and classified after the driver answered (normal, failed_free,
 * double_free, interior_free, mismatched_free, invalid_free, or an
 * untracked free).  Context teardown frees the records of that context.
 * Pool mode (CUWARDEN_MODE=pool): device, managed and pinned allocations
 * are served by pool.h, and every driver query about a pooled pointer is
 * answered consistently (doc/shim.md).
 *
 * Every track_<family>() below makes the real call itself, with the
 * caller's exact arguments, through `real` (the driver's own entry point
 * of the variant that was called; never NULL) and returns the driver's
 * answer unchanged (pool mode: what the driver would have answered).  No
 * lock of ours is held across a driver call.  `api` is the exported name
 * of the variant (a static string, kept in records and reports).
 *
 * The wrappers call track_init() first (cheap after the first call), and
 * call the real function directly, not the engine, when the thread is
 * already inside a hook or when track_alive() is false (fork child).
 * Owner: shim.
 */
#ifndef CUWARDEN_TRACK_H
#define CUWARDEN_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "types.h"

typedef enum track_mode_e {
	TRACK_AUDIT = 0,
	TRACK_POOL = 1
} track_mode_t;

/* ------------------------------------------------------------ lifecycle */

/* At load (the shim's constructor, before any thread or vfork): records
 * the process the engine belongs to, and in a setuid or setgid process
 * (AT_SECURE) turns the engine off for good. */
void track_loaded(void);
/* Lazy initialisation at the first hook: options, fork handlers, the
 * driver handle, owner patterns.  Thread-safe, idempotent. */
void track_init(void);
/* False in a fork child (CUDA is unusable there until exec) and in a
 * setuid or setgid process: every call passes straight through, nothing
 * is recorded, printed or written. */
bool track_alive(void);
track_mode_t track_mode(void);
/* Marks the shim active (coverage.hooks_active); called by every hook and
 * by dlsym/cuGetProcAddress when they hand out one of our hooks. */
void track_hook_ran(void);

/* The driver's handle: dlopen("libcuda.so.1", RTLD_NOLOAD) first, then a
 * real load (only ever called from a hook, i.e. once CUDA is in use).
 * NULL when it cannot be loaded. */
void *track_driver_handle(void);
/* The driver's own entry point `name` (real dlsym on the driver handle),
 * or NULL. */
void *track_real(const char *name);
/* Number of hooked entry points the driver really exports (coverage). */
void track_set_hooked_entry_points(uint64_t n);

/* Writes the report (report_write_env) once per process, if a hook ever
 * ran and the engine is alive; never from a vfork child (another pid
 * than the one track_loaded saw: the parent's memory).  how: "exit",
 * "_exit", "signal"; status: the exit status, or the signal.  inside: the
 * calling thread was interrupted inside a wrapper (a signal handler that
 * exits), so it may hold the engine's locks: the report is written
 * without waiting for any (nowait.h) and says what it left out. */
void track_write_report(const char *how, int status, bool inside);
/* Whether track_write_report would write a report now (the engine alive,
 * this the process it belongs to, CUDA used or a report asked for, none
 * written yet): the exit paths arm their watchdog only then. */
bool track_report_due(void);

/* ------------------------------------------------------------ families
 * One function per signature family; `real` has the family's signature.
 * For the legacy/versioned variants of a family the ABI is the same. */

/* cuInit: nothing to track; proof that CUDA is in use (coverage). */
CUresult track_cu_init(void *real, const char *api, unsigned int flags);

/* Allocations. */
CUresult track_mem_alloc(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize);
CUresult track_mem_alloc_pitch(void *real, const char *api,
    CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
    unsigned int elem);
CUresult track_mem_alloc_managed(void *real, const char *api,
    CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult track_mem_alloc_async(void *real, const char *api,
    CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult track_mem_alloc_from_pool(void *real, const char *api,
    CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream);
CUresult track_mem_host_alloc(void *real, const char *api, void **pp,
    size_t bytesize, unsigned int flags);
CUresult track_mem_alloc_host(void *real, const char *api, void **pp,
    size_t bytesize);
CUresult track_mem_host_register(void *real, const char *api, void *p,
    size_t bytesize, unsigned int flags);
CUresult track_mem_pool_import(void *real, const char *api,
    CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *data);
CUresult track_ipc_open(void *real, const char *api, CUdeviceptr *pdptr,
    CUipcMemHandle handle, unsigned int flags);

/* Frees. */
CUresult track_mem_free(void *real, const char *api, CUdeviceptr dptr);
CUresult track_mem_free_async(void *real, const char *api, CUdeviceptr dptr,
    CUstream stream);
CUresult track_mem_free_host(void *real, const char *api, void *p);
CUresult track_mem_host_unregister(void *real, const char *api, void *p);
CUresult track_ipc_close(void *real, const char *api, CUdeviceptr dptr);

/* VMM: physical handles (NS_VMM), reservations (NS_VA), mappings
 * (NS_MAP). */
CUresult track_mem_create(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags);
CUresult track_mem_import(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, void *os_handle,
    CUmemAllocationHandleType type);
CUresult track_mem_release(void *real, const char *api,
    CUmemGenericAllocationHandle handle);
CUresult track_mem_address_reserve(void *real, const char *api,
    CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
    unsigned long long flags);
CUresult track_mem_address_free(void *real, const char *api, CUdeviceptr ptr,
    size_t size);
CUresult track_mem_map(void *real, const char *api, CUdeviceptr ptr,
    size_t size, size_t offset, CUmemGenericAllocationHandle handle,
    unsigned long long flags);
CUresult track_mem_unmap(void *real, const char *api, CUdeviceptr ptr,
    size_t size);

/* Arrays (NS_ARRAY). */
CUresult track_array_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY_DESCRIPTOR *desc);
CUresult track_array3d_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY3D_DESCRIPTOR *desc);
CUresult track_mipmapped_create(void *real, const char *api,
    CUmipmappedArray *handle, const CUDA_ARRAY3D_DESCRIPTOR *desc,
    unsigned int levels);
CUresult track_array_destroy(void *real, const char *api, CUarray handle);
CUresult track_mipmapped_destroy(void *real, const char *api,
    CUmipmappedArray handle);

/* Lifetime events. */
CUresult track_ctx_destroy(void *real, const char *api, CUcontext ctx);
CUresult track_primary_retain(void *real, const char *api, CUcontext *pctx,
    CUdevice dev);
CUresult track_primary_release(void *real, const char *api, CUdevice dev);
CUresult track_primary_reset(void *real, const char *api, CUdevice dev);
CUresult track_mem_pool_destroy(void *real, const char *api,
    CUmemoryPool pool);

/* Queries kept consistent in pool mode (pass-through in audit mode). */
CUresult track_mem_get_info(void *real, const char *api, size_t *free_bytes,
    size_t *total_bytes);
CUresult track_mem_get_address_range(void *real, const char *api,
    CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult track_pointer_get_attribute(void *real, const char *api, void *data,
    CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult track_pointer_get_attributes(void *real, const char *api,
    unsigned int count, CUpointer_attribute *attributes, void **data,
    CUdeviceptr ptr);
CUresult track_mem_host_get_flags(void *real, const char *api,
    unsigned int *pflags, void *p);
CUresult track_ipc_get_mem_handle(void *real, const char *api,
    CUipcMemHandle *handle, CUdeviceptr dptr);

/* Copies and sets: with CUWARDEN_CHECK_BOUNDS=1, each range that starts
 * inside a tracked allocation must end inside it, else an out_of_bounds
 * violation is recorded (the call is forwarded all the same); otherwise
 * straight through. */
CUresult track_memcpy(void *real, const char *api, CUdeviceptr dst,
    CUdeviceptr src, size_t n);
CUresult track_memcpy_async(void *real, const char *api, CUdeviceptr dst,
    CUdeviceptr src, size_t n, CUstream stream);
CUresult track_memcpy_htod(void *real, const char *api, CUdeviceptr dst,
    const void *src, size_t n);
CUresult track_memcpy_htod_async(void *real, const char *api,
    CUdeviceptr dst, const void *src, size_t n, CUstream stream);
CUresult track_memcpy_dtoh(void *real, const char *api, void *dst,
    CUdeviceptr src, size_t n);
CUresult track_memcpy_dtoh_async(void *real, const char *api, void *dst,
    CUdeviceptr src, size_t n, CUstream stream);
CUresult track_memset_d8(void *real, const char *api, CUdeviceptr dst,
    unsigned char v, size_t n);
CUresult track_memset_d16(void *real, const char *api, CUdeviceptr dst,
    unsigned short v, size_t n);
CUresult track_memset_d32(void *real, const char *api, CUdeviceptr dst,
    unsigned int v, size_t n);
CUresult track_memset_d8_async(void *real, const char *api, CUdeviceptr dst,
    unsigned char v, size_t n, CUstream stream);
CUresult track_memset_d16_async(void *real, const char *api, CUdeviceptr dst,
    unsigned short v, size_t n, CUstream stream);
CUresult track_memset_d32_async(void *real, const char *api, CUdeviceptr dst,
    unsigned int v, size_t n, CUstream stream);

/* ------------------------------------------- stream capture and graphs */
/* Captures: the table of captures in progress (capture.h), kept from the
 * begins and ends the driver accepted, and each thread's interaction
 * mode.  Graphs: allocation nodes (made or captured), execs' memory nodes
 * read at instantiation, and each launch turned into records of kind
 * graph and frees (graphmem.h, doc/shim.md "Graphs").  Attach: in pool
 * mode, a pooled managed block answers as a driver allocation of its
 * size. */
CUresult track_begin_capture_v1(void *real, const char *api, CUstream s);
CUresult track_begin_capture(void *real, const char *api, CUstream s,
    CUstreamCaptureMode m);
CUresult track_begin_capture_to_graph(void *real, const char *api,
    CUstream s, CUgraph g, const CUgraphNode *deps,
    const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode m);
CUresult track_end_capture(void *real, const char *api, CUstream s,
    CUgraph *pg);
CUresult track_exchange_capture_mode(void *real, const char *api,
    CUstreamCaptureMode *m);
CUresult track_graph_add_mem_alloc(void *real, const char *api,
    CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
    CUDA_MEM_ALLOC_NODE_PARAMS *p);
CUresult track_graph_add_mem_free(void *real, const char *api,
    CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
    CUdeviceptr dptr);
CUresult track_graph_add_node_v1(void *real, const char *api,
    CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
    CUgraphNodeParams *p);
CUresult track_graph_add_node(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
    size_t ndeps, CUgraphNodeParams *p);
CUresult track_graph_instantiate_v1(void *real, const char *api,
    CUgraphExec *pe, CUgraph g, CUgraphNode *err_node, char *log,
    size_t log_size);
CUresult track_graph_instantiate(void *real, const char *api,
    CUgraphExec *pe, CUgraph g, unsigned long long flags);
CUresult track_graph_instantiate_params(void *real, const char *api,
    CUgraphExec *pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
CUresult track_graph_launch(void *real, const char *api, CUgraphExec e,
    CUstream s);
CUresult track_graph_exec_destroy(void *real, const char *api,
    CUgraphExec e);
CUresult track_graph_destroy(void *real, const char *api, CUgraph g);
CUresult track_stream_attach_mem(void *real, const char *api, CUstream s,
    CUdeviceptr dptr, size_t length, unsigned int flags);

/* ------------------------------------------------------------ fork */
/* The child marks the engine dead and drops the parent's live set
 * (registered by track_init after fork_init, so it runs after the
 * modules' own child handlers). */
void track_postfork_child(void);

/* ------------------------------------------------------------ tests */
/* Forget everything (mode re-read, counters kept by stats.h). */
void track_reset(void);

#endif /* CUWARDEN_TRACK_H */
