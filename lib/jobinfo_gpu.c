#include "preamble.h"

/*
 * jobinfo_gpu.c -- the GPUs the process used, ordinal and UUID
 * (jobinfo.h).
 *
 * Owns: jobinfo_seen, claimed, no_uuid, uuids.  The first allocation on
 * device d claims d (an atomic or on claimed), asks the driver its UUID
 * (cuDeviceGetUuid_v2, once), then publishes it (jobinfo_seen, release),
 * so a report reads only UUIDs written whole.  The hot path reads
 * jobinfo_seen only (jobinfo_note_device).
 */

#include <string.h>

#include "driver.h"
#include "fmt.h"
#include "jobinfo.h"

uint64_t jobinfo_seen;                    /* atomic */
static uint64_t claimed;                  /* atomic */
static uint64_t no_uuid;                  /* atomic: the driver said no */
static unsigned char uuids[JOBINFO_MAX_GPUS][16];

void
jobinfo_device_first(int dev)
{
	const driver_fns_t *fns;
	uint64_t bit = 1ULL << dev;
	CUdevice d;

	if (__atomic_fetch_or(&claimed, bit, __ATOMIC_ACQ_REL) & bit)
		return; /* another thread asks */
	fns = driver_get();
	if (fns == NULL || fns->cuDeviceGetUuid_v2 == NULL ||
	    fns->cuDeviceGet(&d, dev) != CUDA_SUCCESS ||
	    fns->cuDeviceGetUuid_v2((CUuuid *)uuids[dev], d) != CUDA_SUCCESS)
		__atomic_fetch_or(&no_uuid, bit, __ATOMIC_RELAXED);
	__atomic_fetch_or(&jobinfo_seen, bit, __ATOMIC_RELEASE);
}

bool
jobinfo_uuid(int dev, char *buf, size_t size)
{
	const unsigned char *u;

	if (size > 0)
		buf[0] = '\0';
	if ((unsigned)dev >= JOBINFO_MAX_GPUS ||
	    !(__atomic_load_n(&jobinfo_seen, __ATOMIC_ACQUIRE) & (1ULL << dev)) ||
	    (__atomic_load_n(&no_uuid, __ATOMIC_RELAXED) & (1ULL << dev)))
		return false;
	u = uuids[dev];
	fmt_snprintf(buf, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
	    u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
	    u[15]);
	return true;
}
