/* fakecuda.h: the test-only extension API of the simulated CUDA driver.
 *
 * tests/fakecuda/libcuda.so.1 is a test double of the NVIDIA driver library for
 * machines without a GPU. Besides the driver's own entry points it exports the
 * fakecuda_* functions below, which tests use to simulate kernels, read call
 * counters and inject faults. It is a fixture: never installed, never linked
 * into the product. See tests/fakecuda/README.md.
 *
 * Every function here is safe to call from any thread. Functions that touch a
 * stream need cuInit and a current context, like the driver's own stream calls.
 */
#ifndef CUWARDEN_TESTS_FAKECUDA_FAKECUDA_H
#define CUWARDEN_TESTS_FAKECUDA_FAKECUDA_H

#include <stddef.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Call counters, cumulative since load or the last fakecuda_reset_counters().
 * Families count every variant (_v2, _ptsz, v1) of their entry points; a call
 * counts whether it succeeds or fails. The live_* fields are state, not
 * counters: reset does not clear them. */
struct fakecuda_counters {
	/* allocations */
	unsigned long mem_alloc;              /* cuMemAlloc_v2 */
	unsigned long mem_alloc_pitch;        /* cuMemAllocPitch_v2 */
	unsigned long mem_alloc_managed;      /* cuMemAllocManaged */
	unsigned long mem_host_alloc;         /* cuMemHostAlloc */
	unsigned long mem_alloc_host;         /* cuMemAllocHost_v2 */
	unsigned long mem_host_register;      /* cuMemHostRegister(_v2) */
	unsigned long mem_alloc_async;        /* cuMemAllocAsync(_ptsz) */
	unsigned long mem_alloc_from_pool;    /* cuMemAllocFromPoolAsync(_ptsz) */
	unsigned long mem_create;             /* cuMemCreate */
	unsigned long mem_map;                /* cuMemMap */
	unsigned long mem_address_reserve;    /* cuMemAddressReserve */
	unsigned long ipc_open;               /* cuIpcOpenMemHandle(_v2) */
	/* frees */
	unsigned long mem_free;               /* cuMemFree_v2 */
	unsigned long mem_free_host;          /* cuMemFreeHost */
	unsigned long mem_host_unregister;    /* cuMemHostUnregister */
	unsigned long mem_free_async;         /* cuMemFreeAsync(_ptsz) */
	unsigned long mem_release;            /* cuMemRelease */
	unsigned long mem_unmap;              /* cuMemUnmap */
	unsigned long mem_address_free;       /* cuMemAddressFree */
	unsigned long ipc_close;              /* cuIpcCloseMemHandle */
	/* synchronisation */
	unsigned long ctx_synchronize;        /* cuCtxSynchronize(_v2) */
	unsigned long stream_synchronize;     /* cuStreamSynchronize(_ptsz) */
	unsigned long stream_query;           /* cuStreamQuery(_ptsz) */
	unsigned long event_record;           /* cuEventRecord(WithFlags)(_ptsz) */
	unsigned long event_synchronize;      /* cuEventSynchronize */
	unsigned long event_query;            /* cuEventQuery */
	unsigned long free_waits;             /* frees that waited for pending work */
	/* everything else of interest */
	unsigned long memcpy_calls;           /* every cuMemcpy* variant */
	unsigned long memset_calls;           /* every cuMemset* variant */
	unsigned long get_proc_address;       /* cuGetProcAddress(_v2) */
	unsigned long total_calls;            /* every exported cu* entry point */
	unsigned long injected_failures;      /* calls failed by fault injection */
	/* live state */
	unsigned long live_allocations;       /* every kind below, VMM handles included */
	unsigned long long live_bytes;        /* requested bytes of those */
	unsigned long live_device;            /* cuMemAlloc_v2 + cuMemAllocPitch_v2 */
	unsigned long live_managed;
	unsigned long live_pinned;            /* cuMemHostAlloc + cuMemAllocHost_v2 */
	unsigned long live_registered;
	unsigned long live_async;             /* stream-ordered, not yet freed (a cuMemFreeAsync
	                                         the stream has not reached counts) */
	unsigned long live_vmm_handles;       /* cuMemCreate handles not yet destroyed */
	unsigned long live_vmm_mappings;
	unsigned long live_ipc;
	unsigned long live_graph;             /* graph allocations made live by a launch,
	                                         not yet freed */
};

/* Fills *out. */
void fakecuda_counters(struct fakecuda_counters *out);

/* Zeroes the counters (not the live state). */
void fakecuda_reset_counters(void);

/* Number of calls of one exported entry point by its exact exported name
 * ("cuMemAlloc_v2", "cuMemAllocAsync_ptsz"); 0 for a name not exported. */
unsigned long fakecuda_calls(const char *exported_name);

/* Fault injection at run time. what, n:
 *   "fail_alloc", n       the n-th allocation call from now fails (1 = the next)
 *   "fail_alloc_from", n  every allocation call from the n-th from now fails
 *   "fail_free", n        the n-th free call from now fails, memory stays allocated
 *   "fail_free_from", n   every free call from the n-th from now fails
 *   "no_concurrent_managed", 0/1   CONCURRENT_MANAGED_ACCESS reads 0, prefetch fails
 *   "no_device", 0/1      cuInit answers CUDA_ERROR_NO_DEVICE (even after a success)
 *   "clear", 0            drops every allocation/free injection
 * Counting rules are those of FAKECUDA_FAIL_ALLOC / FAKECUDA_FAIL_FREE (README).
 * Returns 0, or -1 for an unknown name. */
int fakecuda_inject(const char *what, long n);

/* Same, with a list in the environment variables' syntax ("2,5,9+"),
 * counted from now: fakecuda_inject_spec("fail_alloc", "1,3+"). Returns 0, or
 * -1 for an unknown name or a malformed spec. */
int fakecuda_inject_spec(const char *what, const char *spec);

/* Fails calls of one export, by its exact exported name ("cuStreamSynchronize",
 * "cuMemAlloc_v2"): the calls spec lists ("1", "2,5", "3+"), counted for that
 * export from now, return code (0: CUDA_ERROR_UNKNOWN) at once, with no effect.
 * A NULL or empty spec clears the export's injection; fakecuda_inject("clear", 0)
 * clears all. Returns 0, or -1 for an unknown name or code or a malformed spec.
 * FAKECUDA_FAIL_CALL sets the same from the environment (README). */
int fakecuda_inject_call(const char *exported_name, const char *spec, int code);

/* Enqueue simulated work on stream s (0, CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD work as in the driver): it finishes ms milliseconds
 * after the stream's previous work finishes. Returns the driver's codes:
 * CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE. */
CUresult fakecuda_launch_busy(CUstream s, unsigned ms);

/* Enqueue simulated work that, from the moment the stream reaches it until ms
 * milliseconds later, keeps writing `byte` over [p, p + n) from a background
 * thread, the way a kernel still running would. p must lie, with n bytes,
 * inside one live device, managed, pinned, registered, stream-ordered or
 * mapped VMM allocation (CUDA_ERROR_INVALID_VALUE otherwise). Writes stop
 * before any wait (stream/event/context synchronise, a synchronous free) that
 * covers the work returns. */
CUresult fakecuda_launch_writer(CUstream s, CUdeviceptr p, size_t n, unsigned ms,
    unsigned char byte);

/* Host-addressable alias of device memory [p, p + n) (the private read-write
 * mapping behind the PROT_NONE device range), for tests that want to inspect
 * device memory without a copy; NULL if the range is not inside one live
 * allocation. Managed, pinned and registered memory alias to themselves. */
void *fakecuda_host_alias(CUdeviceptr p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CUWARDEN_TESTS_FAKECUDA_FAKECUDA_H */
