/* fakecuda_exports.h: the one list of every cu* entry point the fixture exports.
 *
 * X(export, base, abi, pt, family)
 *   export  the exported symbol, exactly as the driver names it
 *   base    the base name cuGetProcAddress is asked for
 *   abi     the CUDA version (1000 * major + 10 * minor) that introduced this ABI
 *           of the base name (for _ptsz/_ptds: the version that introduced the
 *           per-thread variant of it, 7000 at the earliest)
 *   pt      1 for the per-thread default stream variant (_ptsz, _ptds), else 0
 *   family  field of struct fakecuda_counters summing this entry's calls, or
 *           total_calls for none
 *
 * cuGetProcAddress answers from this table, fakecuda_calls() counts by it, and
 * a check asserts that every entry is exported and dlsym finds the same
 * address, so the list cannot drift from the definitions.
 */
#define FC_EXPORTS(X) \
	X(cuInit, cuInit, 2000, 0, total_calls) \
	X(cuDriverGetVersion, cuDriverGetVersion, 2020, 0, total_calls) \
	X(cuGetErrorName, cuGetErrorName, 6000, 0, total_calls) \
	X(cuGetErrorString, cuGetErrorString, 6000, 0, total_calls) \
	X(cuGetProcAddress, cuGetProcAddress, 11030, 0, get_proc_address) \
	X(cuGetProcAddress_v2, cuGetProcAddress, 12000, 0, get_proc_address) \
	X(cuGetExportTable, cuGetExportTable, 3000, 0, total_calls) \
	X(cuDeviceGet, cuDeviceGet, 2000, 0, total_calls) \
	X(cuDeviceGetCount, cuDeviceGetCount, 2000, 0, total_calls) \
	X(cuDeviceGetName, cuDeviceGetName, 2000, 0, total_calls) \
	X(cuDeviceGetUuid, cuDeviceGetUuid, 9020, 0, total_calls) \
	X(cuDeviceGetUuid_v2, cuDeviceGetUuid, 11040, 0, total_calls) \
	X(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, 4010, 0, total_calls) \
	X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, 0, total_calls) \
	X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, 0, total_calls) \
	X(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020, 0, total_calls) \
	X(cuDeviceGetMemPool, cuDeviceGetMemPool, 11020, 0, total_calls) \
	X(cuDeviceSetMemPool, cuDeviceSetMemPool, 11020, 0, total_calls) \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, 0, total_calls) \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 7000, 0, total_calls) \
	X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, 11000, 0, total_calls) \
	X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, 7000, 0, total_calls) \
	X(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, 11000, 0, total_calls) \
	X(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags, 7000, 0, total_calls) \
	X(cuDevicePrimaryCtxSetFlags_v2, cuDevicePrimaryCtxSetFlags, 11000, 0, total_calls) \
	X(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState, 7000, 0, total_calls) \
	X(cuCtxCreate, cuCtxCreate, 2000, 0, total_calls) \
	X(cuCtxCreate_v2, cuCtxCreate, 3020, 0, total_calls) \
	X(cuCtxCreate_v3, cuCtxCreate, 11040, 0, total_calls) \
	X(cuCtxCreate_v4, cuCtxCreate, 12050, 0, total_calls) \
	X(cuCtxDestroy, cuCtxDestroy, 2000, 0, total_calls) \
	X(cuCtxDestroy_v2, cuCtxDestroy, 4000, 0, total_calls) \
	X(cuCtxPushCurrent, cuCtxPushCurrent, 2000, 0, total_calls) \
	X(cuCtxPushCurrent_v2, cuCtxPushCurrent, 4000, 0, total_calls) \
	X(cuCtxPopCurrent, cuCtxPopCurrent, 2000, 0, total_calls) \
	X(cuCtxPopCurrent_v2, cuCtxPopCurrent, 4000, 0, total_calls) \
	X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, 0, total_calls) \
	X(cuCtxSetCurrent, cuCtxSetCurrent, 4000, 0, total_calls) \
	X(cuCtxGetDevice, cuCtxGetDevice, 2000, 0, total_calls) \
	X(cuCtxGetDevice_v2, cuCtxGetDevice, 13000, 0, total_calls) \
	X(cuCtxGetFlags, cuCtxGetFlags, 7000, 0, total_calls) \
	X(cuCtxGetApiVersion, cuCtxGetApiVersion, 3020, 0, total_calls) \
	X(cuCtxSynchronize, cuCtxSynchronize, 2000, 0, ctx_synchronize) \
	X(cuCtxSynchronize_v2, cuCtxSynchronize, 13000, 0, ctx_synchronize) \
	X(cuStreamCreate, cuStreamCreate, 2000, 0, total_calls) \
	X(cuStreamCreateWithPriority, cuStreamCreateWithPriority, 5050, 0, total_calls) \
	X(cuStreamDestroy, cuStreamDestroy, 2000, 0, total_calls) \
	X(cuStreamDestroy_v2, cuStreamDestroy, 4000, 0, total_calls) \
	X(cuStreamSynchronize, cuStreamSynchronize, 2000, 0, stream_synchronize) \
	X(cuStreamSynchronize_ptsz, cuStreamSynchronize, 7000, 1, stream_synchronize) \
	X(cuStreamQuery, cuStreamQuery, 2000, 0, stream_query) \
	X(cuStreamQuery_ptsz, cuStreamQuery, 7000, 1, stream_query) \
	X(cuStreamWaitEvent, cuStreamWaitEvent, 3020, 0, total_calls) \
	X(cuStreamWaitEvent_ptsz, cuStreamWaitEvent, 7000, 1, total_calls) \
	X(cuStreamGetPriority, cuStreamGetPriority, 5050, 0, total_calls) \
	X(cuStreamGetPriority_ptsz, cuStreamGetPriority, 7000, 1, total_calls) \
	X(cuStreamGetFlags, cuStreamGetFlags, 5050, 0, total_calls) \
	X(cuStreamGetFlags_ptsz, cuStreamGetFlags, 7000, 1, total_calls) \
	X(cuStreamGetCtx, cuStreamGetCtx, 9020, 0, total_calls) \
	X(cuStreamGetCtx_ptsz, cuStreamGetCtx, 9020, 1, total_calls) \
	X(cuStreamGetCtx_v2, cuStreamGetCtx, 12050, 0, total_calls) \
	X(cuStreamGetCtx_v2_ptsz, cuStreamGetCtx, 12050, 1, total_calls) \
	X(cuEventCreate, cuEventCreate, 2000, 0, total_calls) \
	X(cuEventRecord, cuEventRecord, 2000, 0, event_record) \
	X(cuEventRecord_ptsz, cuEventRecord, 7000, 1, event_record) \
	X(cuEventRecordWithFlags, cuEventRecordWithFlags, 11010, 0, event_record) \
	X(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags, 11010, 1, event_record) \
	X(cuEventQuery, cuEventQuery, 2000, 0, event_query) \
	X(cuEventSynchronize, cuEventSynchronize, 2000, 0, event_synchronize) \
	X(cuEventDestroy, cuEventDestroy, 2000, 0, total_calls) \
	X(cuEventDestroy_v2, cuEventDestroy, 4000, 0, total_calls) \
	X(cuEventElapsedTime, cuEventElapsedTime, 2000, 0, total_calls) \
	X(cuEventElapsedTime_v2, cuEventElapsedTime, 12080, 0, total_calls) \
	X(cuMemGetInfo_v2, cuMemGetInfo, 3020, 0, total_calls) \
	X(cuMemAlloc_v2, cuMemAlloc, 3020, 0, mem_alloc) \
	X(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, 0, mem_alloc_pitch) \
	X(cuMemFree_v2, cuMemFree, 3020, 0, mem_free) \
	X(cuMemGetAddressRange_v2, cuMemGetAddressRange, 3020, 0, total_calls) \
	X(cuMemAllocHost_v2, cuMemAllocHost, 3020, 0, mem_alloc_host) \
	X(cuMemFreeHost, cuMemFreeHost, 2000, 0, mem_free_host) \
	X(cuMemHostAlloc, cuMemHostAlloc, 2020, 0, mem_host_alloc) \
	X(cuMemHostGetDevicePointer_v2, cuMemHostGetDevicePointer, 3020, 0, total_calls) \
	X(cuMemHostGetFlags, cuMemHostGetFlags, 2030, 0, total_calls) \
	X(cuMemAllocManaged, cuMemAllocManaged, 6000, 0, mem_alloc_managed) \
	X(cuMemHostRegister, cuMemHostRegister, 4000, 0, mem_host_register) \
	X(cuMemHostRegister_v2, cuMemHostRegister, 6050, 0, mem_host_register) \
	X(cuMemHostUnregister, cuMemHostUnregister, 4000, 0, mem_host_unregister) \
	X(cuMemcpy, cuMemcpy, 4000, 0, memcpy_calls) \
	X(cuMemcpy_ptds, cuMemcpy, 7000, 1, memcpy_calls) \
	X(cuMemcpyAsync, cuMemcpyAsync, 4000, 0, memcpy_calls) \
	X(cuMemcpyAsync_ptsz, cuMemcpyAsync, 7000, 1, memcpy_calls) \
	X(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020, 0, memcpy_calls) \
	X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD, 7000, 1, memcpy_calls) \
	X(cuMemcpyDtoH_v2, cuMemcpyDtoH, 3020, 0, memcpy_calls) \
	X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH, 7000, 1, memcpy_calls) \
	X(cuMemcpyDtoD_v2, cuMemcpyDtoD, 3020, 0, memcpy_calls) \
	X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD, 7000, 1, memcpy_calls) \
	X(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync, 3020, 0, memcpy_calls) \
	X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync, 7000, 1, memcpy_calls) \
	X(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync, 3020, 0, memcpy_calls) \
	X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync, 7000, 1, memcpy_calls) \
	X(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync, 3020, 0, memcpy_calls) \
	X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync, 7000, 1, memcpy_calls) \
	X(cuMemsetD8_v2, cuMemsetD8, 3020, 0, memset_calls) \
	X(cuMemsetD8_v2_ptds, cuMemsetD8, 7000, 1, memset_calls) \
	X(cuMemsetD16_v2, cuMemsetD16, 3020, 0, memset_calls) \
	X(cuMemsetD16_v2_ptds, cuMemsetD16, 7000, 1, memset_calls) \
	X(cuMemsetD32_v2, cuMemsetD32, 3020, 0, memset_calls) \
	X(cuMemsetD32_v2_ptds, cuMemsetD32, 7000, 1, memset_calls) \
	X(cuMemsetD8Async, cuMemsetD8Async, 3020, 0, memset_calls) \
	X(cuMemsetD8Async_ptsz, cuMemsetD8Async, 7000, 1, memset_calls) \
	X(cuMemsetD16Async, cuMemsetD16Async, 3020, 0, memset_calls) \
	X(cuMemsetD16Async_ptsz, cuMemsetD16Async, 7000, 1, memset_calls) \
	X(cuMemsetD32Async, cuMemsetD32Async, 3020, 0, memset_calls) \
	X(cuMemsetD32Async_ptsz, cuMemsetD32Async, 7000, 1, memset_calls) \
	X(cuMemAdvise, cuMemAdvise, 8000, 0, total_calls) \
	X(cuMemAdvise_v2, cuMemAdvise, 12020, 0, total_calls) \
	X(cuMemPrefetchAsync, cuMemPrefetchAsync, 8000, 0, total_calls) \
	X(cuMemPrefetchAsync_ptsz, cuMemPrefetchAsync, 8000, 1, total_calls) \
	X(cuMemPrefetchAsync_v2, cuMemPrefetchAsync, 12020, 0, total_calls) \
	X(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync, 12020, 1, total_calls) \
	X(cuMemAllocAsync, cuMemAllocAsync, 11020, 0, mem_alloc_async) \
	X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, 1, mem_alloc_async) \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, 0, mem_alloc_from_pool) \
	X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 11020, 1, mem_alloc_from_pool) \
	X(cuMemFreeAsync, cuMemFreeAsync, 11020, 0, mem_free_async) \
	X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, 1, mem_free_async) \
	X(cuMemPoolCreate, cuMemPoolCreate, 11020, 0, total_calls) \
	X(cuMemPoolDestroy, cuMemPoolDestroy, 11020, 0, total_calls) \
	X(cuMemPoolTrimTo, cuMemPoolTrimTo, 11020, 0, total_calls) \
	X(cuMemPoolSetAttribute, cuMemPoolSetAttribute, 11020, 0, total_calls) \
	X(cuMemPoolGetAttribute, cuMemPoolGetAttribute, 11020, 0, total_calls) \
	X(cuMemPoolExportToShareableHandle, cuMemPoolExportToShareableHandle, 11020, 0, total_calls) \
	X(cuMemPoolImportFromShareableHandle, cuMemPoolImportFromShareableHandle, 11020, 0, total_calls) \
	X(cuMemPoolExportPointer, cuMemPoolExportPointer, 11020, 0, total_calls) \
	X(cuMemPoolImportPointer, cuMemPoolImportPointer, 11020, 0, total_calls) \
	X(cuMemCreate, cuMemCreate, 10020, 0, mem_create) \
	X(cuMemRelease, cuMemRelease, 10020, 0, mem_release) \
	X(cuMemAddressReserve, cuMemAddressReserve, 10020, 0, mem_address_reserve) \
	X(cuMemAddressFree, cuMemAddressFree, 10020, 0, mem_address_free) \
	X(cuMemMap, cuMemMap, 10020, 0, mem_map) \
	X(cuMemUnmap, cuMemUnmap, 10020, 0, mem_unmap) \
	X(cuMemSetAccess, cuMemSetAccess, 10020, 0, total_calls) \
	X(cuMemGetAccess, cuMemGetAccess, 10020, 0, total_calls) \
	X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, 10020, 0, total_calls) \
	X(cuMemGetAllocationPropertiesFromHandle, cuMemGetAllocationPropertiesFromHandle, 10020, 0, total_calls) \
	X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, 11000, 0, total_calls) \
	X(cuMemExportToShareableHandle, cuMemExportToShareableHandle, 10020, 0, total_calls) \
	X(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, 10020, 0, total_calls) \
	X(cuPointerGetAttribute, cuPointerGetAttribute, 4000, 0, total_calls) \
	X(cuPointerGetAttributes, cuPointerGetAttributes, 7000, 0, total_calls) \
	X(cuPointerSetAttribute, cuPointerSetAttribute, 6000, 0, total_calls) \
	X(cuIpcGetMemHandle, cuIpcGetMemHandle, 4010, 0, total_calls) \
	X(cuIpcOpenMemHandle, cuIpcOpenMemHandle, 4010, 0, ipc_open) \
	X(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle, 11000, 0, ipc_open) \
	X(cuIpcCloseMemHandle, cuIpcCloseMemHandle, 4010, 0, ipc_close) \
	X(cuArrayCreate_v2, cuArrayCreate, 3020, 0, total_calls) \
	X(cuArray3DCreate_v2, cuArray3DCreate, 3020, 0, total_calls) \
	X(cuArrayDestroy, cuArrayDestroy, 2000, 0, total_calls) \
	X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, 0, total_calls) \
	X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, 0, total_calls)
