#include "preamble.h"
/*
 * engine.c -- the engine's state and its services to the rest of shim/:
 * lazy initialisation, the calling thread's device and context (asked of
 * the driver through lib/driver.h's table, as every call the engine makes
 * itself), and the
 * one place records and violations are made (shim_record, shim_record_st,
 * shim_report_violation).
 *
 * Invariants: every registry insert is paired with one stats_on_alloc
 * (counted before the insert: once inserted, another thread may free it);
 * a record's device and context are those current when it was made.
 * Locking: no lock of ours here.
 */
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api.h"
#include "engine.h"
#include "jobinfo.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_done;          /* acquire/release */
bool shim_dead;               /* fork child */
track_mode_t shim_mode;
bool shim_report_done;        /* atomic exchange */
pid_t shim_pid;          /* the process the engine belongs to */

const char *
shim_mode_name(void)
{
	track_init();
	return shim_mode == TRACK_POOL ? "pool" : "audit";
}

void
track_loaded(void)
{
	__atomic_store_n(&shim_pid, getpid(), __ATOMIC_RELAXED);
	api_set_mode_source(shim_mode_name);
	/* setuid/setgid: the environment is the caller's, not the
	 * program's owner's; the shim must not act on it at all. */
	if (getauxval(AT_SECURE) != 0)
		__atomic_store_n(&shim_dead, true, __ATOMIC_RELAXED);
}

static void
do_init(void)
{
	static const fork_hooks_t engine_fork = { LOCK_RANK_SHIM_TEARDOWN,
		NULL, NULL, track_postfork_child };

	options_init();
	/* Into fork.c's one registration, each at its lock's rank. */
	if (!fork_add(&engine_fork) || !fork_add(&shim_teardown_fork) ||
	    !fork_add(&shim_primary_fork) || !fork_add(&graphmem_fork))
		log_warn("fork: the shim's hooks do not fit (fork.h)");
	fork_init();
	/* CUWARDEN_SEE_THROUGH asks for pool mode unless CUWARDEN_MODE
	 * says otherwise (shim/seethrough.c sets it for the children). */
	shim_mode = options_get(OPT_MODE) == OPT_MODE_POOL ||
	    (!options_is_set(OPT_MODE) && options_get_bool(OPT_SEE_THROUGH)) ?
	    TRACK_POOL : TRACK_AUDIT;
	shim_init_owner_patterns();
	shim_timeline_init();
	/* Loaded without the constructor (a unit test): this process. */
	if (__atomic_load_n(&shim_pid, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&shim_pid, getpid(), __ATOMIC_RELAXED);
	ssize_t n = readlink("/proc/self/exe", shim_exe_path, sizeof(shim_exe_path) - 1);
	shim_exe_path[n > 0 ? n : 0] = '\0';
	__atomic_store_n(&init_done, true, __ATOMIC_RELEASE);
}

void
track_init(void)
{
	if (likely(__atomic_load_n(&init_done, __ATOMIC_ACQUIRE)))
		return;
	pthread_once(&init_once, do_init);
}

bool
track_alive(void)
{
	return !__atomic_load_n(&shim_dead, __ATOMIC_RELAXED);
}

void
track_hook_ran(void)
{
	if (unlikely(__atomic_load_n(&stats_coverage.hooks_active,
	    __ATOMIC_RELAXED) == 0)) {
		__atomic_store_n(&stats_coverage.hooks_active, 1,
		    __ATOMIC_RELAXED);
		shim_write_marker();
	}
}

void
track_set_hooked_entry_points(uint64_t n)
{
	__atomic_store_n(&stats_coverage.hooked_entry_points, n,
	    __ATOMIC_RELAXED);
}

/* The device of the calling thread's current context, -1 if none. */
int
shim_current_device(void)
{
	const driver_fns_t *drv = driver_get();
	CUdevice d;

	if (drv == NULL || drv->cuCtxGetDevice == NULL ||
	    drv->cuCtxGetDevice(&d) != CUDA_SUCCESS)
		return -1;
	return (int)d;
}

/* The size of the driver allocation at base (IPC and pool imports, whose
 * size the call does not say), 0 if unknown. */
size_t
shim_driver_size_of(CUdeviceptr base)
{
	const driver_fns_t *drv = driver_get();
	size_t size = 0;

	if (drv == NULL || drv->cuMemGetAddressRange_v2 == NULL ||
	    drv->cuMemGetAddressRange_v2(NULL, &size, base) != CUDA_SUCCESS)
		return 0;
	return size;
}

CUcontext
shim_current_ctx(void)
{
	const driver_fns_t *drv = driver_get();
	CUcontext c = NULL;

	if (drv == NULL || drv->cuCtxGetCurrent(&c) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* Records a live allocation made by api, with this thread's stack. */
void
shim_record(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device,
    CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags)
{
	shim_record_st(ns, kind, base, size, device, ctx, aux, api, flags,
	    stack_capture_outside());
}

/* The same, with the stack st. */
void
shim_record_st(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device,
    CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags,
    stack_id_t st)
{
	reg_rec_t rec, old;
	reg_handle_t h;
	bool had = false;
	bool tl = unlikely(__atomic_load_n(&shim_tl_on, __ATOMIC_RELAXED));
	uint64_t t = 0;

	memset(&rec, 0, sizeof(rec));
	rec.base = base;
	rec.size = size;
	rec.ctx = (uintptr_t)ctx;
	rec.aux = aux;
	rec.api = api;
	rec.alloc_stack = st;
	rec.owner = shim_owner_of(rec.alloc_stack);
	rec.refcount = 1;
	rec.flags = flags;
	rec.kind = (uint8_t)kind;
	rec.ns = (uint8_t)ns;
	rec.device = (int16_t)device;
	jobinfo_note_device(device); /* the report's "gpus" */
	STATS_INC(allocations);
	/* Counted before the insert: once inserted, another thread may free
	 * it (and count the free) at once. */
	stats_on_alloc(kind, size);
	/* The timeline's time before the insert: a free, on any thread,
	 * comes after (timeline.c). */
	if (tl)
		t = shim_tl_clock_before();
	if (registry_insert(&rec, &h, &old, &had)) {
		stats_on_free(kind, size);
		log_warn("out of metadata memory: %s at %#lx not tracked",
		    api, (unsigned long)base);
		return;
	}
	if (had) /* freed behind our back (a teardown we did not see) */
		stats_on_free((kind_t)old.kind, old.size);
	if (tl) {
		if (had)
			shim_tl_put(TLF_GONE, &old, t);
		shim_tl_put(TLF_ALLOC, &rec, t);
	}
	shim_recent_alloc(&rec);
}

/* v for a violation of type by api on addr (rec: its record, or NULL),
 * the driver's answer r, the stack st. */
static void
violation_init(violation_t *v, vtype_t type, const char *api, uintptr_t addr,
    const reg_rec_t *rec, CUresult r, stack_id_t st)
{
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->api = api;
	v->address = addr;
	v->kind = -1;
	v->device = -1;
	v->cuda_error = (int)r;
	v->stack = st;
	if (rec != NULL) {
		v->size = rec->size;
		v->kind = rec->kind;
		v->device = rec->device;
		v->owner = rec->owner;
		v->alloc_stack = rec->alloc_stack;
		v->free_stack = rec->free_stack;
	}
	/* The shim frees what the driver freed, references or not. */
	if (type == V_FREE_WHILE_REFERENCED)
		v->outcome = V_OUTCOME_DONE;
}

void
shim_report_violation(vtype_t type, const char *api, uintptr_t addr,
    const reg_rec_t *rec, CUresult r, stack_id_t st)
{
	violation_t v;

	violation_init(&v, type, api, addr, rec, r, st);
	violation_record(&v);
}

void
shim_report_invalid_free(const char *api, uintptr_t addr, unsigned accept,
    CUresult r, stack_id_t st)
{
	violation_t v;

	violation_init(&v, V_INVALID_FREE, api, addr, NULL, r, st);
	v.family = accept;
	violation_record(&v);
}

void
shim_report_out_of_bounds(const char *api, uintptr_t p, size_t n,
    const reg_rec_t *rec, bool refused, stack_id_t st)
{
	violation_t v;

	violation_init(&v, V_OUT_OF_BOUNDS, api, p, rec,
	    refused ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS, st);
	v.off = p - rec->base;
	v.len = n;
	v.outcome = refused ? V_OUTCOME_REFUSED : V_OUTCOME_FORWARDED;
	violation_record(&v);
}
