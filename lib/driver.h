/*
 * driver.h -- the real CUDA driver, loaded at run time.
 *
 * libcuda.so.1 is dlopen'd on first use (RTLD_NOLOAD first: in the shim
 * it is usually loaded already), and every entry point is resolved with
 * the *real* dlsym (dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34") then
 * "GLIBC_2.2.5"), never the public dlsym, which the shim interposes.  So
 * the pointers here are always the driver's own, never the shim's hooks.
 * Missing optional entry points are NULL.
 *
 * Contexts: for each device used by the library, the primary context is
 * retained once per process (race-free) and never released by us; it is
 * made current on the calling thread before every driver call we make
 * (driver_bind).  Device attributes are cached.  Owner: driver.
 *
 * A program may change the current context behind our back (cuCtxSetCurrent,
 * cuCtxPushCurrent, cuCtxPopCurrent of its own).  So driver_bind trusts no
 * cache of "what is current": it asks the driver (cuCtxGetCurrent, a
 * thread-local read in the driver, a few ns) every time and sets the
 * primary context only when another one (or none) is current.  The primary
 * context's handle itself is cached: the driver keeps it valid while it is
 * retained, which we never undo.  (cuDevicePrimaryCtxReset by the program
 * keeps the handle valid too; the driver re-creates its state on next use.)
 *
 * Fork: after driver_postfork_child, driver_bind, driver_attr,
 * driver_device_count and direct_* fail (CW_ENODEV, 0) and never call CUDA
 * (CUDA is unusable in a child until exec).  driver_get still returns the
 * table when the driver was loaded before the fork (so the shim can pass
 * the program's own calls through), but never loads it in the child.
 */
#ifndef CUWARDEN_DRIVER_H
#define CUWARDEN_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* X-macro: (field, parameters); every entry returns CUresult.  The field is
 * the exported name but for a "_v1" suffix (below).  The table, its loader
 * and every driver call of lib/ and shim/ come from here. */
#define DRIVER_FUNCS(X) \
	X(cuInit, (unsigned int)) \
	X(cuDriverGetVersion, (int *)) \
	X(cuGetErrorName, (CUresult, const char **)) \
	X(cuGetErrorString, (CUresult, const char **)) \
	X(cuDeviceGet, (CUdevice *, int)) \
	X(cuDeviceGetCount, (int *)) \
	X(cuDeviceGetUuid_v2, (CUuuid *, CUdevice)) \
	X(cuDeviceGetAttribute, (int *, CUdevice_attribute, CUdevice)) \
	X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice)) \
	X(cuCtxGetCurrent, (CUcontext *)) \
	X(cuCtxSetCurrent, (CUcontext)) \
	X(cuCtxGetDevice, (CUdevice *)) \
	X(cuCtxSynchronize, (void)) \
	X(cuStreamSynchronize, (CUstream)) \
	X(cuStreamQuery, (CUstream)) \
	X(cuStreamWaitEvent, (CUstream, CUevent, unsigned int)) \
	X(cuEventCreate, (CUevent *, unsigned int)) \
	X(cuEventRecord, (CUevent, CUstream)) \
	X(cuEventQuery, (CUevent)) \
	X(cuEventSynchronize, (CUevent)) \
	X(cuEventDestroy_v2, (CUevent)) \
	X(cuMemAlloc_v2, (CUdeviceptr *, size_t)) \
	X(cuMemFree_v2, (CUdeviceptr)) \
	X(cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned int)) \
	X(cuMemHostAlloc, (void **, size_t, unsigned int)) \
	X(cuMemFreeHost, (void *)) \
	X(cuMemGetInfo_v2, (size_t *, size_t *)) \
	X(cuMemcpy, (CUdeviceptr, CUdeviceptr, size_t)) \
	X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t)) \
	X(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t)) \
	X(cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t)) \
	X(cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t)) \
	X(cuMemAdvise_v2, (CUdeviceptr, size_t, CUmem_advise, CUmemLocation)) \
	X(cuMemPrefetchAsync_v2, (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream)) \
	X(cuPointerGetAttribute, (void *, CUpointer_attribute, CUdeviceptr)) \
	X(cuPointerGetAttributes, (unsigned int, CUpointer_attribute *, void **, CUdeviceptr)) \
	X(cuStreamCreate, (CUstream *, unsigned int)) \
	X(cuStreamDestroy_v2, (CUstream)) \
	X(cuMemGetAddressRange_v2, (CUdeviceptr *, size_t *, CUdeviceptr)) \
	X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream)) \
	X(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	X(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUstream)) \
	X(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream)) \
	X(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream)) \
	X(cuMemFreeAsync, (CUdeviceptr, CUstream)) \
	X(cuIpcGetMemHandle, (CUipcMemHandle *, CUdeviceptr)) \
	X(cuCtxPushCurrent_v2, (CUcontext)) \
	X(cuCtxPopCurrent_v2, (CUcontext *)) \
	X(cuDevicePrimaryCtxRelease_v2, (CUdevice)) \
	X(cuDevicePrimaryCtxGetState, (CUdevice, unsigned int *, int *)) \
	X(cuDeviceTotalMem_v2, (size_t *, CUdevice)) \
	X(cuMemHostGetDevicePointer_v2, (CUdeviceptr *, void *, unsigned int)) \
	X(cuMemGetAllocationGranularity, (size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags)) \
	X(cuStreamGetCtx, (CUstream, CUcontext *)) \
	X(cuGetProcAddress_v2, (const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *)) \
	X(cuMemAdvise_v1, (CUdeviceptr, size_t, CUmem_advise, CUdevice)) \
	X(cuMemPrefetchAsync_v1, (CUdeviceptr, size_t, CUdevice, CUstream)) \
	X(cuStreamIsCapturing, (CUstream, CUstreamCaptureStatus *)) \
	X(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *)) \
	X(cuStreamGetCaptureInfo_v2, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **, size_t *)) \
	X(cuStreamGetCaptureInfo_v3, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **, const CUgraphEdgeData **, size_t *)) \
	X(cuGraphGetNodes, (CUgraph, CUgraphNode *, size_t *)) \
	X(cuGraphNodeGetType, (CUgraphNode, CUgraphNodeType *)) \
	X(cuGraphMemAllocNodeGetParams, (CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS *)) \
	X(cuGraphMemFreeNodeGetParams, (CUgraphNode, CUdeviceptr *)) \
	X(cuGraphChildGraphNodeGetGraph, (CUgraphNode, CUgraph *)) \
	X(cuArray3DGetDescriptor_v2, (CUDA_ARRAY3D_DESCRIPTOR *, CUarray))

/* Entry points without which the driver layer refuses to load (driver_get
 * returns NULL).  Every other entry of DRIVER_FUNCS is optional: NULL when
 * the loaded driver does not export it (check before calling).
 *
 * Names ending in "_v1" are the driver's unversioned exports ("cuMemAdvise",
 * "cuMemPrefetchAsync"): cuda.h #defines the plain names to the newest
 * version, so a field cannot carry them; the loader strips "_v1" when it
 * resolves the symbol (driver_export_name gives the exported name). */
#define DRIVER_REQUIRED(X) \
	X(cuInit) \
	X(cuGetErrorName) \
	X(cuDeviceGet) \
	X(cuDeviceGetCount) \
	X(cuDeviceGetAttribute) \
	X(cuDevicePrimaryCtxRetain) \
	X(cuCtxGetCurrent) \
	X(cuCtxSetCurrent) \
	X(cuMemAlloc_v2) \
	X(cuMemFree_v2) \
	X(cuMemAllocManaged) \
	X(cuMemHostAlloc) \
	X(cuMemFreeHost)

/* Most devices the driver layer serves (ordinals 0..DRIVER_MAX_DEVICES-1). */
#define DRIVER_MAX_DEVICES 64

typedef struct driver_fns_s {
#define DRIVER_FN_FIELD(name, params) CUresult (*name) params;
	DRIVER_FUNCS(DRIVER_FN_FIELD)
#undef DRIVER_FN_FIELD
} driver_fns_t;

/* The real driver's entry points, loaded on first call.  NULL when the
 * driver cannot be loaded (logged once). */
const driver_fns_t *driver_get(void);
/* True when libcuda.so.1 is already in the process (no load is forced). */
bool driver_is_loaded(void);
/* The real dlsym (never the shim's).  Exposed for the shim. */
void *driver_real_dlsym(void *handle, const char *name);
/* glibc's dlsym itself (dlvsym of its versions: RTLD_NEXT, then libc's and
 * libdl's handles), NULL if none: the tree's one finder; the shim's dlsym
 * trampoline calls through it. */
void *driver_dlsym_fn(void);
/* The handle of the loaded driver (NULL before driver_get). */
void *driver_handle(void);
/* libcuda.so.1's handle, opened on first call (RTLD_NOLOAD first, then a
 * real load) without a lock or cuInit: for the shim, which needs the
 * driver's entry points also where driver_get would refuse (a fork child,
 * inside our own first load).  NULL when it cannot be loaded (logged once
 * at debug level 1).  The one dlopen of libcuda in the tree. */
void *driver_open(void);
/* The driver's own entry point `name`, exported name as given (real dlsym
 * on driver_open's handle), or NULL. */
void *driver_sym(const char *name);

/* The symbol a DRIVER_FUNCS field is resolved from: its own name, or
 * without the "_v1" suffix.  Writes into buf (size >= 64) and returns it. */
const char *driver_export_name(const char *field, char *buf, size_t size);

/* Initialises the driver (cuInit once) and makes device's primary context
 * (retained once per process) current on the calling thread.  Returns
 * CW_OK, CW_ENODEV (no driver, no device, bad ordinal) or CW_ECUDA, with
 * cw_last_error filled. */
int driver_bind(int device);
/* Like driver_bind, but first saves the calling thread's current context
 * in *prev (NULL when none), so that driver_restore(prev) puts it back
 * after our own driver calls.  For the shim, which must not change the
 * context an unmodified program runs in.  Same returns as driver_bind.
 * On failure the thread's context is unchanged: there is nothing to
 * restore (and *prev, NULL before the driver was asked, must not be). */
int driver_bind_save(int device, CUcontext *prev);
/* Makes prev current again if it is not current (no-op in a forked child
 * or before the driver is loaded). */
void driver_restore(CUcontext prev);
/* The primary context of device (retained by driver_bind), or NULL. */
CUcontext driver_primary_ctx(int device);
/* Gives back the retain driver_bind took on device's primary context (the
 * shim, when the program released its last: the driver then destroys the
 * context, as it would without the pools).  The next bind retains again.
 * Returns whether there was one. */
bool driver_release_primary(int device);
int driver_device_count(void); /* 0 when no driver or no device */
/* A cached attribute; returns true on error. */
bool driver_attr(int device, CUdevice_attribute attr, int *value);
/* Fills cw_last_error for a failed driver call (status, function, "call
 * failed: NAME (code)", cuda_error, cuda_error_name) and returns status. */
int driver_fail(int status, const char *function, const char *call,
    CUresult r);
/* "CUDA_ERROR_..." for a CUresult: the driver's own name when loaded,
 * else driver_error_name_builtin's, else "CUDA_ERROR_UNRECOGNIZED". */
const char *driver_error_name(CUresult r);
/* "CUDA_ERROR_..." of a CUresult listed in cuerrors.h, never asking the
 * driver (safe at exit, in a fork child, without a driver); NULL for a
 * code not listed. */
const char *driver_error_name_builtin(CUresult r);

/* Fork: the child must never touch CUDA for the parent; the driver layer
 * forgets its contexts there. */
void driver_postfork_child(void);
/* For tests: forget everything (contexts, cache, handle). */
void driver_reset(void);

#endif /* CUWARDEN_DRIVER_H */
