/* fakecuda.c: the simulated driver's core — initialisation, configuration from
 * the environment, fault injection, counters, devices, contexts, error names
 * and cuGetProcAddress.
 *
 * A test fixture, never installed: see README.md. Memory lives in
 * fakecuda_mem.c, streams and simulated work in fakecuda_stream.c.
 *
 * Invariants: context structures are never freed (a destroyed context keeps
 * its memory with alive = false), so a stale CUcontext is detected, not
 * dereferenced into freed memory. Each thread has its own context stack.
 * Locking: fc_lock guards all state (see fakecuda_internal.h); atfork handlers
 * take it around fork.
 */
#include "fakecuda_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;
bool fc_initialized;
fc_config_t fc_config;
fc_device_t fc_devices[FC_MAX_DEVICES];
fc_ctx_t *fc_all_ctx;
unsigned long fc_calls[FC_NEXPORTS];
unsigned long fc_free_waits;
unsigned long fc_injected;

static bool forked_child;     /* fork after cuInit: CUDA is unusable here */
static unsigned long long next_ctx_id = 1;

#define CTX_MAGIC 0xc0c7c0c7u
#define CTX_STACK 32
static __thread fc_ctx_t *tl_stack[CTX_STACK];
static __thread int tl_depth;

/* ========================================================= lock and time */

void
fc_enter(void)
{
	pthread_mutex_lock(&fc_lock);
	if (fc_initialized)
		fc_mem_reap();
}

void
fc_leave(void)
{
	pthread_mutex_unlock(&fc_lock);
}

uint64_t
fc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
fc_wait_until(uint64_t t)
{
	struct timespec ts;

	while (fc_now() < t) {
		ts.tv_sec = (time_t)(t / 1000000000u);
		ts.tv_nsec = (long)(t % 1000000000u);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	fc_fence();
}

void
fc_device_done(int dev, uint64_t t)
{
	if (fc_devices[dev].done < t)
		fc_devices[dev].done = t;
}

static void call_inj_atfork_child(void);

static void
atfork_prepare(void)
{
	pthread_mutex_lock(&fc_lock);
}

static void
atfork_parent(void)
{
	pthread_mutex_unlock(&fc_lock);
}

/* The child's only thread has a new thread id: rather than unlocking a
 * lock taken by "another" thread (fine for a normal glibc mutex, undefined
 * by POSIX and wrong for every owner-checking lock), start it afresh.
 * (fakecuda_stream.c's writer rwlock needs the same; until it has it, a
 * fork inside a forked child deadlocks in that lock.) */
static void
atfork_child(void)
{
	if (fc_initialized)
		forked_child = true;
	pthread_mutex_init(&fc_lock, NULL);
	call_inj_atfork_child();
}

static void read_load_config(void);

__attribute__((constructor)) static void
fc_constructor(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	read_load_config();
}

/* ====================================================== configuration */

/* Fault injection: allocation and free calls are numbered from 1; a call fails
 * when its number is listed or >= from. */
#define INJ_MAX 64
typedef struct {
	unsigned long count;
	unsigned long at[INJ_MAX];
	int nat;
	unsigned long from;   /* 0: none */
} inj_t;
static inj_t inj_alloc, inj_free;

/* Parses "N", "N,M", "N+" (and mixtures) relative to base. Returns true on error. */
static bool
inj_parse(inj_t *inj, const char *spec, unsigned long base)
{
	inj_t tmp = *inj;
	const char *s = spec;

	while (*s) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(s, &end, 10);
		if (end == s || errno || n == 0)
			return true;
		s = end;
		if (*s == '+') {
			tmp.from = base + n;
			s++;
		} else {
			if (tmp.nat == INJ_MAX)
				return true;
			tmp.at[tmp.nat++] = base + n;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return true;
	}
	*inj = tmp;
	return false;
}

static bool
inj_hit(inj_t *inj)
{
	unsigned long n = ++inj->count;

	if (inj->from && n >= inj->from)
		goto hit;
	for (int i = 0; i < inj->nat; i++)
		if (inj->at[i] == n)
			goto hit;
	return false;
hit:
	__atomic_fetch_add(&fc_injected, 1, __ATOMIC_RELAXED);
	return true;
}

bool
fc_inject_alloc(void)
{
	return inj_hit(&inj_alloc);
}

bool
fc_inject_free(void)
{
	return inj_hit(&inj_free);
}

/* Per-export injection (FAKECUDA_FAIL_CALL, fakecuda_inject_call): any
 * export fails chosen calls of its own, numbered from 1 from when it was set,
 * with a chosen error. fc_call_inj_on says whether any is set, so that
 * FC_COUNT costs one load otherwise. */
typedef struct {
	inj_t inj;
	CUresult code;
	bool on;
} call_inj_t;
static call_inj_t call_inj[FC_NEXPORTS];
static pthread_mutex_t call_inj_lock = PTHREAD_MUTEX_INITIALIZER;
int fc_call_inj_on;

static const char *const export_names[FC_NEXPORTS] = {
#define FC_X(exp, base, abi, pt, fam) #exp,
	FC_EXPORTS(FC_X)
#undef FC_X
};

static int
export_index(const char *name, size_t len)
{
	for (int i = 0; i < FC_NEXPORTS; i++)
		if (strlen(export_names[i]) == len && memcmp(export_names[i], name, len) == 0)
			return i;
	return -1;
}

CUresult
fc_inject_call(int idx)
{
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&call_inj_lock);
	if (call_inj[idx].on && inj_hit(&call_inj[idx].inj))
		r = call_inj[idx].code;
	pthread_mutex_unlock(&call_inj_lock);
	return r;
}

/* Sets (spec non-empty) or clears (spec NULL or "") export idx's injection.
 * Returns true on error. Takes call_inj_lock. */
static bool
call_inj_set(int idx, const char *spec, CUresult code)
{
	bool err = false;
	int any = 0;

	pthread_mutex_lock(&call_inj_lock);
	if (!spec || !*spec) {
		memset(&call_inj[idx], 0, sizeof(call_inj[idx]));
	} else {
		inj_t tmp = { .count = call_inj[idx].inj.count };

		err = inj_parse(&tmp, spec, tmp.count);
		if (!err) {
			call_inj[idx].inj = tmp;
			call_inj[idx].code = code;
			call_inj[idx].on = true;
		}
	}
	for (int i = 0; i < FC_NEXPORTS; i++)
		any |= call_inj[i].on;
	__atomic_store_n(&fc_call_inj_on, any, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&call_inj_lock);
	return err;
}

/* A fork while another thread held the lock must not leave it held in
 * the child (the injection table itself is inherited). */
static void
call_inj_atfork_child(void)
{
	pthread_mutex_init(&call_inj_lock, NULL);
}

static void
call_inj_clear_all(void)
{
	pthread_mutex_lock(&call_inj_lock);
	memset(call_inj, 0, sizeof(call_inj));
	__atomic_store_n(&fc_call_inj_on, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&call_inj_lock);
}

/* "CUDA_ERROR_UNKNOWN", "999" -> the code; 0 when malformed or CUDA_SUCCESS. */
static CUresult
parse_code(const char *s, size_t len)
{
	char buf[64];
	const struct fc_error_s *e;
	char *end;
	unsigned long n;

	if (len == 0 || len >= sizeof(buf))
		return CUDA_SUCCESS;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if ((e = fc_error_by_name(buf)))
		return (CUresult)e->code;
	errno = 0;
	n = strtoul(buf, &end, 10);
	if (errno || *end || !fc_error_lookup((int)n))
		return CUDA_SUCCESS;
	return (CUresult)n;
}

/* "NAME=SPEC[@CODE];NAME=SPEC[@CODE]...". Applies every item or none.
 * Returns true on error. */
static bool
call_inj_parse_env(const char *v)
{
	struct { int idx; char spec[256]; CUresult code; } items[16];
	int n = 0;
	const char *s = v;

	while (*s) {
		const char *semi = strchr(s, ';');
		const char *stop = semi ? semi : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(stop - s));
		const char *at;
		size_t speclen;

		if (!eq || n == (int)(sizeof(items) / sizeof(items[0])))
			return true;
		items[n].idx = export_index(s, (size_t)(eq - s));
		if (items[n].idx < 0)
			return true;
		at = memchr(eq + 1, '@', (size_t)(stop - eq - 1));
		speclen = (size_t)((at ? at : stop) - (eq + 1));
		if (speclen == 0 || speclen >= sizeof(items[n].spec))
			return true;
		memcpy(items[n].spec, eq + 1, speclen);
		items[n].spec[speclen] = '\0';
		items[n].code = at ? parse_code(at + 1, (size_t)(stop - at - 1)) :
		    CUDA_ERROR_UNKNOWN;
		if (items[n].code == CUDA_SUCCESS)
			return true;
		{
			inj_t probe = { 0 };

			if (inj_parse(&probe, items[n].spec, 0))
				return true;
		}
		n++;
		s = semi ? semi + 1 : stop;
	}
	for (int i = 0; i < n; i++)
		call_inj_set(items[i].idx, items[i].spec, items[i].code);
	return false;
}

/* FAKECUDA_CALL_LOG: the first call of each export in the process appends
 * its name and a newline to this file (one write, O_APPEND), so that a test
 * learns which entry points a program reaches, up to its last instruction. */
static int call_log_fd = -1;

void
fc_first_call(int idx)
{
	char line[128];
	int len;

	if (call_log_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%s\n", export_names[idx]);
	if (len > 0 && (size_t)len < sizeof(line))
		(void)!write(call_log_fd, line, (size_t)len);
}

static const char *
env(const char *name)
{
	const char *v = secure_getenv(name);

	return v && *v ? v : NULL;
}

static bool
env_flag(const char *name)
{
	const char *v = env(name);

	return v && strcmp(v, "0") != 0 && strcasecmp(v, "no") != 0 &&
	    strcasecmp(v, "off") != 0;
}

/* "80G", "512M", "1048576". Returns 0 when malformed. */
static size_t
parse_size(const char *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return 0;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	case 't': case 'T': n <<= 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end++;
	if (*end == 'B')
		end++;
	return *end ? 0 : (size_t)n;
}

static void
warn(const char *name, const char *v)
{
	fprintf(stderr, "fakecuda: ignoring malformed %s=%s\n", name, v);
}

/* Read when the library loads (they concern calls that may come before
 * cuInit: cuGetProcAddress, cuInit itself). */
static void
read_load_config(void)
{
	const char *v;

	if ((v = env("FAKECUDA_CALL_LOG")))
		call_log_fd = open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if ((v = env("FAKECUDA_FAIL_CALL")) && call_inj_parse_env(v))
		warn("FAKECUDA_FAIL_CALL", v);
}

static void
read_config(void)
{
	const char *v;

	fc_config.ndevices = 1;
	fc_config.mem = (size_t)80 << 30;
	fc_config.no_device = fc_config.no_device || env_flag("FAKECUDA_NO_DEVICE");
	fc_config.no_concurrent_managed = fc_config.no_concurrent_managed ||
	    env_flag("FAKECUDA_NO_CONCURRENT_MANAGED");
	if ((v = env("FAKECUDA_DEVICES"))) {
		int n = atoi(v);

		if (n >= 1 && n <= FC_MAX_DEVICES)
			fc_config.ndevices = n;
		else
			warn("FAKECUDA_DEVICES", v);
	}
	if ((v = env("FAKECUDA_MEM"))) {
		size_t n = parse_size(v);

		if (n >= 64 * FC_MIB)
			fc_config.mem = n;
		else
			warn("FAKECUDA_MEM", v);
	}
	if ((v = env("FAKECUDA_FAIL_ALLOC")) && inj_parse(&inj_alloc, v, 0))
		warn("FAKECUDA_FAIL_ALLOC", v);
	if ((v = env("FAKECUDA_FAIL_FREE")) && inj_parse(&inj_free, v, 0))
		warn("FAKECUDA_FAIL_FREE", v);
}

/* ====================================================== init, version */

CUresult
fc_check_init(void)
{
	if (forked_child || !fc_initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuInit(unsigned int Flags)
{
	static bool config_read;
	CUresult r = CUDA_SUCCESS;

	FC_COUNT(cuInit);
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	fc_enter();
	if (forked_child) {
		r = CUDA_ERROR_NOT_INITIALIZED;
		goto out;
	}
	if (!config_read) {
		read_config();
		config_read = true;
	}
	if (fc_config.no_device) {
		r = CUDA_ERROR_NO_DEVICE;
		goto out;
	}
	if (fc_initialized)
		goto out;
	for (int d = 0; d < fc_config.ndevices; d++) {
		if (fc_mem_init_device(d, fc_config.mem)) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		fc_devices[d].primary.magic = CTX_MAGIC;
		fc_devices[d].primary.device = d;
		fc_devices[d].primary.primary = true;
		fc_devices[d].primary.id = next_ctx_id++;
		fc_devices[d].primary.next_all = fc_all_ctx;
		fc_all_ctx = &fc_devices[d].primary;
	}
	fc_initialized = true;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDriverGetVersion(int *driverVersion)
{
	FC_COUNT(cuDriverGetVersion);
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = FC_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuGetErrorName(CUresult error, const char **pStr)
{
	const struct fc_error_s *e;

	FC_COUNT(cuGetErrorName);
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = fc_error_lookup((int)error);
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI
cuGetErrorString(CUresult error, const char **pStr)
{
	const struct fc_error_s *e;

	FC_COUNT(cuGetErrorString);
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	e = fc_error_lookup((int)error);
	*pStr = e ? e->string : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI
cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	FC_COUNT(cuGetExportTable);
	(void)pExportTableId;
	if (ppExportTable)
		*ppExportTable = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ============================================================ devices */

static CUresult
check_dev(CUdevice dev)
{
	CUresult r = fc_check_init();

	if (r)
		return r;
	if (dev < 0 || dev >= fc_config.ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r;

	FC_COUNT(cuDeviceGet);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!device)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (ordinal < 0 || ordinal >= fc_config.ndevices)
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*device = ordinal;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetCount(int *count)
{
	CUresult r;

	FC_COUNT(cuDeviceGetCount);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!count)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*count = fc_config.ndevices;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceGetName);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!name || len <= 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		snprintf(name, (size_t)len, "fakecuda simulated GPU %d", (int)dev);
out:
	fc_leave();
	return r;
}

static CUresult
device_uuid(CUuuid *uuid, CUdevice dev)
{
	CUresult r;

	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!uuid) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memcpy(uuid->bytes, "fakecuda-uuid-\0", 16);
	uuid->bytes[15] = (char)dev;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	FC_COUNT(cuDeviceGetUuid);
	return device_uuid(uuid, dev);
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	FC_COUNT(cuDeviceGetUuid_v2);
	return device_uuid(uuid, dev);
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceGetPCIBusId);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!pciBusId || len <= 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 0x18 + (int)dev);
out:
	fc_leave();
	return r;
}

/* H200 values where the product or the probe looks; 0 for everything else. */
static int
attribute_value(CUdevice_attribute a, int dev)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
	case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x18 + dev;
	case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 6144;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
	case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
		return fc_config.no_concurrent_managed ? 0 : 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
	case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: return 0;
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: return 0;
	case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 0;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 32505856;
	case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
		return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
	default: return 0;
	}
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceGetAttribute);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!pi || (int)attrib <= 0 || (int)attrib >= (int)CU_DEVICE_ATTRIBUTE_MAX)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pi = attribute_value(attrib, (int)dev);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceTotalMem_v2);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!bytes)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*bytes = fc_devices[dev].total;
out:
	fc_leave();
	return r;
}

/* =========================================================== contexts */

bool
fc_ctx_valid(const fc_ctx_t *ctx)
{
	for (fc_ctx_t *c = fc_all_ctx; c; c = c->next_all)
		if (c == ctx)
			return c->alive;
	return false;
}

static bool
ctx_known(const fc_ctx_t *ctx)
{
	for (fc_ctx_t *c = fc_all_ctx; c; c = c->next_all)
		if (c == ctx)
			return true;
	return false;
}

fc_ctx_t *
fc_current(void)
{
	return tl_depth ? tl_stack[tl_depth - 1] : NULL;
}

CUresult
fc_need_ctx(fc_ctx_t **ctx)
{
	CUresult r = fc_check_init();
	fc_ctx_t *c;

	if (r)
		return r;
	c = fc_current();
	if (!c || !ctx_known(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!c->alive)       /* destroyed, reset or released to zero (driver 580) */
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*ctx = c;
	return CUDA_SUCCESS;
}

/* Destroys what a context owns: waits for its work, frees its memory,
 * destroys its streams and events. Lock held (dropped while waiting). */
static void
ctx_teardown(fc_ctx_t *ctx)
{
	uint64_t t = fc_devices[ctx->device].done;

	fc_leave();
	fc_wait_until(t);
	fc_enter();
	fc_mem_ctx_teardown(ctx);
	fc_stream_ctx_teardown(ctx);
}

static void
stack_remove(fc_ctx_t *ctx)
{
	int j = 0;

	for (int i = 0; i < tl_depth; i++)
		if (tl_stack[i] != ctx)
			tl_stack[j++] = tl_stack[i];
	tl_depth = j;
}

static CUresult
ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUresult r;
	fc_ctx_t *c;

	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!pctx) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (tl_depth == CTX_STACK) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	c->magic = CTX_MAGIC;
	c->device = (int)dev;
	c->flags = flags;
	c->alive = true;
	c->id = next_ctx_id++;
	c->next_all = fc_all_ctx;
	fc_all_ctx = c;
	tl_stack[tl_depth++] = c;
	*pctx = (CUcontext)c;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	FC_COUNT(cuCtxCreate);
	return ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI
cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	FC_COUNT(cuCtxCreate_v2);
	return ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI
cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
    unsigned int flags, CUdevice dev)
{
	FC_COUNT(cuCtxCreate_v3);
	(void)paramsArray;
	if (numParams < 0)
		return CUDA_ERROR_INVALID_VALUE;
	return ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
    unsigned int flags, CUdevice dev)
{
	FC_COUNT(cuCtxCreate_v4);
	/* NULL is a plain context; given, exactly one of the two must be set. */
	if (ctxCreateParams && (ctxCreateParams->execAffinityParams == NULL) ==
	    (ctxCreateParams->cigParams == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	return ctx_create(pctx, flags, dev);
}

static CUresult
ctx_destroy(CUcontext h)
{
	fc_ctx_t *ctx = (fc_ctx_t *)h;
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!ctx || !ctx_known(ctx) || ctx->primary) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if (!ctx->alive) {
		r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
		goto out;
	}
	ctx->alive = false;
	stack_remove(ctx);
	ctx_teardown(ctx);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxDestroy(CUcontext ctx)
{
	FC_COUNT(cuCtxDestroy);
	return ctx_destroy(ctx);
}

FC_EXPORT CUresult CUDAAPI
cuCtxDestroy_v2(CUcontext ctx)
{
	FC_COUNT(cuCtxDestroy_v2);
	return ctx_destroy(ctx);
}

static CUresult
ctx_push(CUcontext h)
{
	fc_ctx_t *ctx = (fc_ctx_t *)h;
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!ctx || !ctx_known(ctx) || !ctx->alive)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (tl_depth == CTX_STACK)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		tl_stack[tl_depth++] = ctx;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxPushCurrent(CUcontext ctx)
{
	FC_COUNT(cuCtxPushCurrent);
	return ctx_push(ctx);
}

FC_EXPORT CUresult CUDAAPI
cuCtxPushCurrent_v2(CUcontext ctx)
{
	FC_COUNT(cuCtxPushCurrent_v2);
	return ctx_push(ctx);
}

static CUresult
ctx_pop(CUcontext *pctx)
{
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!tl_depth) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	tl_depth--;
	if (pctx)
		*pctx = (CUcontext)tl_stack[tl_depth];
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxPopCurrent(CUcontext *pctx)
{
	FC_COUNT(cuCtxPopCurrent);
	return ctx_pop(pctx);
}

FC_EXPORT CUresult CUDAAPI
cuCtxPopCurrent_v2(CUcontext *pctx)
{
	FC_COUNT(cuCtxPopCurrent_v2);
	return ctx_pop(pctx);
}

FC_EXPORT CUresult CUDAAPI
cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r;

	FC_COUNT(cuCtxGetCurrent);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pctx = (CUcontext)fc_current();
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxSetCurrent(CUcontext h)
{
	fc_ctx_t *ctx = (fc_ctx_t *)h;
	CUresult r;

	FC_COUNT(cuCtxSetCurrent);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!ctx) {
		if (tl_depth)
			tl_depth--;
	} else if (!ctx_known(ctx) || ctx->magic != CTX_MAGIC) {
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else if (tl_depth) {
		tl_stack[tl_depth - 1] = ctx;
	} else {
		tl_stack[tl_depth++] = ctx;
	}
out:
	fc_leave();
	return r;
}

static CUresult
ctx_or_current(CUcontext h, fc_ctx_t **out)
{
	fc_ctx_t *ctx = (fc_ctx_t *)h;
	CUresult r;

	if (!ctx)
		return fc_need_ctx(out);
	if ((r = fc_check_init()))
		return r;
	if (!ctx_known(ctx) || !ctx->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = ctx;
	return CUDA_SUCCESS;
}

static CUresult
ctx_get_device(CUdevice *device, CUcontext h)
{
	fc_ctx_t *ctx;
	CUresult r;

	fc_enter();
	if ((r = ctx_or_current(h, &ctx)))
		goto out;
	if (!device)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*device = ctx->device;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxGetDevice(CUdevice *device)
{
	FC_COUNT(cuCtxGetDevice);
	return ctx_get_device(device, NULL);
}

FC_EXPORT CUresult CUDAAPI
cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	FC_COUNT(cuCtxGetDevice_v2);
	return ctx_get_device(device, ctx);
}

FC_EXPORT CUresult CUDAAPI
cuCtxGetFlags(unsigned int *flags)
{
	fc_ctx_t *ctx;
	CUresult r;

	FC_COUNT(cuCtxGetFlags);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!flags)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*flags = ctx->flags;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuCtxGetApiVersion(CUcontext h, unsigned int *version)
{
	fc_ctx_t *ctx;
	CUresult r;

	FC_COUNT(cuCtxGetApiVersion);
	fc_enter();
	if ((r = ctx_or_current(h, &ctx)))
		goto out;
	if (!version)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*version = 12050;
out:
	fc_leave();
	return r;
}

/* Waits for every stream of the context's device; the fixture does not keep
 * work per context, and waiting longer is never wrong for a synchronise. */
static CUresult
ctx_sync(CUcontext h)
{
	fc_ctx_t *ctx;
	CUresult r;
	uint64_t t;

	fc_enter();
	if ((r = ctx_or_current(h, &ctx)) || (r = fc_capture_ctx_sync(ctx->device))) {
		fc_leave();
		return r;
	}
	t = fc_devices[ctx->device].done;
	fc_leave();
	fc_wait_until(t);
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuCtxSynchronize(void)
{
	FC_COUNT(cuCtxSynchronize);
	return ctx_sync(NULL);
}

FC_EXPORT CUresult CUDAAPI
cuCtxSynchronize_v2(CUcontext ctx)
{
	FC_COUNT(cuCtxSynchronize_v2);
	return ctx_sync(ctx);
}

/* =================================================== primary contexts */

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r;
	fc_ctx_t *c;

	FC_COUNT(cuDevicePrimaryCtxRetain);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!pctx) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	c = &fc_devices[dev].primary;
	c->refcount++;
	c->alive = true;
	*pctx = (CUcontext)c;
out:
	fc_leave();
	return r;
}

static CUresult
primary_release(CUdevice dev)
{
	CUresult r;
	fc_ctx_t *c;

	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	c = &fc_devices[dev].primary;
	if (c->refcount <= 0) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if (--c->refcount == 0 && c->alive) {
		c->alive = false;
		ctx_teardown(c);
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxRelease(CUdevice dev)
{
	FC_COUNT(cuDevicePrimaryCtxRelease);
	return primary_release(dev);
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	FC_COUNT(cuDevicePrimaryCtxRelease_v2);
	return primary_release(dev);
}

/* Destroys the primary context: every allocation, stream and event of it.
 * As driver 580 does, the retain count is kept but the context is inactive
 * (calls on it: CUDA_ERROR_CONTEXT_IS_DESTROYED) until the next retain
 * re-creates it under the same handle. */
static CUresult
primary_reset(CUdevice dev)
{
	CUresult r;
	fc_ctx_t *c;

	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	c = &fc_devices[dev].primary;
	if (c->alive) {
		c->alive = false;
		ctx_teardown(c);
	}
	c->flags = 0;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxReset(CUdevice dev)
{
	FC_COUNT(cuDevicePrimaryCtxReset);
	return primary_reset(dev);
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	FC_COUNT(cuDevicePrimaryCtxReset_v2);
	return primary_reset(dev);
}

static CUresult
primary_set_flags(CUdevice dev, unsigned int flags)
{
	CUresult r;

	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (flags & ~(unsigned)(CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX |
	    CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		fc_devices[dev].primary.flags = flags;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	FC_COUNT(cuDevicePrimaryCtxSetFlags);
	return primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	FC_COUNT(cuDevicePrimaryCtxSetFlags_v2);
	return primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	CUresult r;

	FC_COUNT(cuDevicePrimaryCtxGetState);
	fc_enter();
	if ((r = check_dev(dev)))
		goto out;
	if (!flags || !active) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	*flags = fc_devices[dev].primary.flags;
	*active = fc_devices[dev].primary.alive;
out:
	fc_leave();
	return r;
}

/* =================================================== cuGetProcAddress */

static const struct {
	const char *export;
	const char *base;
	int abi;
	int pt;
	void *fn;
} exports[] = {
#define FC_X(exp, base, abi, pt, fam) { #exp, #base, abi, pt, (void *)exp },
	FC_EXPORTS(FC_X)
#undef FC_X
};

static CUresult
get_proc_address(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *status, bool v1)
{
	bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	bool known = false;
	int best = -1;

	if (!symbol || !pfn || cudaVersion > FC_DRIVER_VERSION ||
	    (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	/* With the per-thread flag, a base name that has per-thread variants is
	 * answered from those only: asked below their first version it is
	 * VERSION_NOT_SUFFICIENT, not the legacy ABI (driver 580). */
	if (per_thread) {
		bool has_pt = false;

		for (size_t i = 0; i < sizeof(exports) / sizeof(exports[0]); i++)
			if (exports[i].pt && strcmp(exports[i].base, symbol) == 0)
				has_pt = true;
		per_thread = has_pt;
	}
	for (size_t i = 0; i < sizeof(exports) / sizeof(exports[0]); i++) {
		if (strcmp(exports[i].base, symbol) != 0)
			continue;
		known = true;
		if (exports[i].abi > cudaVersion || exports[i].pt != per_thread ||
		    exports[i].abi > FC_DRIVER_VERSION)
			continue;
		if (best < 0 || exports[i].abi > exports[best].abi)
			best = (int)i;
	}
	*pfn = best >= 0 ? exports[best].fn : NULL;
	if (v1 && best < 0)
		return CUDA_ERROR_NOT_FOUND;    /* no status to say it in (driver 580) */
	if (status)
		*status = best >= 0 ? CU_GET_PROC_ADDRESS_SUCCESS :
		    known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
		    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	FC_COUNT(cuGetProcAddress);
	return get_proc_address(symbol, pfn, cudaVersion, flags, NULL, true);
}

FC_EXPORT CUresult CUDAAPI
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	FC_COUNT(cuGetProcAddress_v2);
	return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus, false);
}

/* ====================================================== test-only API */

FC_EXPORT unsigned long
fakecuda_calls(const char *exported_name)
{
	if (!exported_name)
		return 0;
	for (size_t i = 0; i < sizeof(exports) / sizeof(exports[0]); i++)
		if (strcmp(exports[i].export, exported_name) == 0)
			return __atomic_load_n(&fc_calls[i], __ATOMIC_RELAXED);
	return 0;
}

FC_EXPORT void
fakecuda_counters(struct fakecuda_counters *out)
{
	static const size_t family[] = {
#define FC_X(exp, base, abi, pt, fam) offsetof(struct fakecuda_counters, fam),
		FC_EXPORTS(FC_X)
#undef FC_X
	};

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < FC_NEXPORTS; i++) {
		unsigned long n = __atomic_load_n(&fc_calls[i], __ATOMIC_RELAXED);

		out->total_calls += n;
		if (family[i] != offsetof(struct fakecuda_counters, total_calls))
			*(unsigned long *)(void *)((char *)out + family[i]) += n;
	}
	out->free_waits = __atomic_load_n(&fc_free_waits, __ATOMIC_RELAXED);
	out->injected_failures = __atomic_load_n(&fc_injected, __ATOMIC_RELAXED);
	fc_enter();
	fc_mem_live(out);
	fc_leave();
}

FC_EXPORT void
fakecuda_reset_counters(void)
{
	for (size_t i = 0; i < FC_NEXPORTS; i++)
		__atomic_store_n(&fc_calls[i], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc_free_waits, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc_injected, 0, __ATOMIC_RELAXED);
}

FC_EXPORT int
fakecuda_inject_spec(const char *what, const char *spec)
{
	int r = -1;

	if (!what || !spec)
		return -1;
	fc_enter();
	if (strcmp(what, "fail_alloc") == 0)
		r = inj_parse(&inj_alloc, spec, inj_alloc.count) ? -1 : 0;
	else if (strcmp(what, "fail_free") == 0)
		r = inj_parse(&inj_free, spec, inj_free.count) ? -1 : 0;
	fc_leave();
	return r;
}

FC_EXPORT int
fakecuda_inject(const char *what, long n)
{
	char spec[32];
	int r = 0;

	if (!what)
		return -1;
	if (strcmp(what, "fail_alloc") == 0 || strcmp(what, "fail_free") == 0) {
		if (n <= 0)
			return -1;
		snprintf(spec, sizeof(spec), "%ld", n);
		return fakecuda_inject_spec(what, spec);
	}
	if (strcmp(what, "fail_alloc_from") == 0 || strcmp(what, "fail_free_from") == 0) {
		if (n <= 0)
			return -1;
		snprintf(spec, sizeof(spec), "%ld+", n);
		return fakecuda_inject_spec(what[5] == 'a' ? "fail_alloc" : "fail_free", spec);
	}
	fc_enter();
	if (strcmp(what, "no_concurrent_managed") == 0) {
		fc_config.no_concurrent_managed = n != 0;
	} else if (strcmp(what, "no_device") == 0) {
		fc_config.no_device = n != 0;
	} else if (strcmp(what, "clear") == 0) {
		inj_alloc.nat = inj_free.nat = 0;
		inj_alloc.from = inj_free.from = 0;
		call_inj_clear_all();
	} else {
		r = -1;
	}
	fc_leave();
	return r;
}

FC_EXPORT int
fakecuda_inject_call(const char *exported_name, const char *spec, int code)
{
	int idx;
	inj_t probe = { 0 };

	if (!exported_name || (idx = export_index(exported_name, strlen(exported_name))) < 0)
		return -1;
	if (code == 0)
		code = CUDA_ERROR_UNKNOWN;
	if (!fc_error_lookup(code) || (spec && *spec && inj_parse(&probe, spec, 0)))
		return -1;
	return call_inj_set(idx, spec, (CUresult)code) ? -1 : 0;
}
