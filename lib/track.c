#include "preamble.h"
/*
 * track.c -- the shim's engine (track.h): records what the driver handed
 * out, classifies what the program gives back, follows context teardown,
 * serves pool mode, checks copy and set ranges (CUWARDEN_CHECK_BOUNDS),
 * and writes the report at exit.
 *
 * Owns: the driver handle and the few real entry points the engine itself
 * calls (cuCtxGetDevice, cuCtxGetCurrent, cuCtxSetCurrent,
 * cuDevicePrimaryCtxGetState/Retain/Release for teardown), the owner
 * patterns, the address range of the object the engine is linked into
 * (its frames are dropped from captured stacks), the per-device primary
 * context table (handle and the retain count we saw), a per-module owner
 * cache, and the once-only report flag.
 *
 * Invariants:
 *   - the real call is made exactly once per engine call, with the
 *     caller's arguments, and its CUresult is returned unchanged (pool
 *     mode answers for pooled memory itself, as the driver would);
 *   - out-parameters are read only after the driver answered
 *     CUDA_SUCCESS, and may be NULL;
 *   - every registry insert is paired with one stats_on_alloc, every
 *     remove with one stats_on_free (stats.h contract);
 *   - a record's device and context are those current when it was made,
 *     never those current at free time (a thread may have no context:
 *     device -1, context 0).
 *
 * Locking: plock (a leaf) guards the primary context table, reals_lock the
 * one-time resolution, tdlock the teardown buffer (held over registry
 * calls, never over a driver call); everything else is the registry's, the
 * violation log's and the depot's own locking.  No lock of ours is held
 * across a driver call.  Nothing here runs inside a registry callback
 * except copying into a local buffer.
 */
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "capture.h"
#include "driver.h"
#include "fork.h"
#include "graphmem.h"
#include "lasterr.h"
#include "ledger.h"
#include "log.h"
#include "nowait.h"
#include "options.h"
#include "owner.h"
#include "pool.h"
#include "registry.h"
#include "report.h"
#include "stackdepot.h"
#include "stats.h"
#include "track.h"
#include "violation.h"

#define MAX_DEVICES 64
#define MAX_OWNER_PATTERNS 32
#define OWNER_CACHE 4096

/* ------------------------------------------------------------ state */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_done;          /* acquire/release */
static bool dead;               /* fork child */
static track_mode_t mode;
static bool report_done;        /* atomic exchange */
static pid_t shim_pid;          /* the process the engine belongs to */

static void *drv_handle;        /* acquire/release */

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*ctx_set_current_fn)(CUcontext);
typedef CUresult (*primary_get_state_fn)(CUdevice, unsigned int *, int *);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*primary_release_fn)(CUdevice);
typedef CUresult (*addr_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
typedef CUresult (*ptr_attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*array_desc_fn)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);

static ctx_get_device_fn real_ctx_get_device;
static ctx_get_current_fn real_ctx_get_current;
static ctx_set_current_fn real_ctx_set_current;
static primary_get_state_fn real_primary_get_state;
static primary_retain_fn real_primary_retain;
static primary_release_fn real_primary_release;
static addr_range_fn real_addr_range;
static ptr_attr_fn real_ptr_attr;
static array_desc_fn real_array_desc;
static bool reals_done;         /* acquire/release */
static pthread_mutex_t reals_lock = PTHREAD_MUTEX_INITIALIZER;

/* The primary context of each device as seen through retain, and how many
 * retains minus releases we saw (-1 = never seen a retain). */
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	CUcontext ctx;
	int refs;
	bool seen;
} primary[MAX_DEVICES];

/* Owner patterns: CUDA's own libraries, ours, and CUWARDEN_OWNER_SKIP. */
static const char *owner_pats[MAX_OWNER_PATTERNS];
static size_t nowner_pats;
static char owner_skip_buf[1024];
static owner_id_t module_owner[OWNER_CACHE];
static char exe_path[512];

/* The object the engine lives in: its frames are dropped from stacks. */
static uintptr_t self_lo, self_hi;

/* ------------------------------------------------------------ init */

static const char *const cuda_libs[] = {
	"libcuda.so*", "libcudart.so*", "libcublas.so*", "libcublasLt.so*",
	"libcudnn*.so*", "libnccl.so*", "libcuwarden*",
	/* Call trampolines, never owners: Python's ctypes calls the driver
	 * through libffi (the owner is then the interpreter). */
	"libffi.so*", "_ctypes*.so",
};

static void
init_owner_patterns(void)
{
	size_t n = 0;

	for (size_t i = 0; i < CW_ARRAY_SIZE(cuda_libs); i++)
		owner_pats[n++] = cuda_libs[i];
	const char *skip = options_get_str(OPT_OWNER_SKIP);
	if (skip != NULL) {
		size_t len = strlen(skip);
		if (len >= sizeof(owner_skip_buf)) {
			log_warn("CUWARDEN_OWNER_SKIP is longer than %zu bytes; "
			    "ignored", sizeof(owner_skip_buf) - 1);
			len = 0;
		}
		memcpy(owner_skip_buf, skip, len);
		owner_skip_buf[len] = '\0';
		char *p = owner_skip_buf;
		size_t dropped = 0;
		while (*p != '\0') {
			char *end = strchr(p, ':');
			if (end != NULL)
				*end = '\0';
			if (*p != '\0') {
				if (n < MAX_OWNER_PATTERNS)
					owner_pats[n++] = p;
				else
					dropped++;
			}
			if (end == NULL)
				break;
			p = end + 1;
		}
		if (dropped != 0)
			log_warn("CUWARDEN_OWNER_SKIP: %zu pattern%s past the "
			    "first %zu ignored", dropped, dropped == 1 ? "" :
			    "s", MAX_OWNER_PATTERNS - CW_ARRAY_SIZE(cuda_libs));
	}
	nowner_pats = n;
}

static int
find_self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t addr = (uintptr_t)arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		uintptr_t e = s + ph->p_memsz;
		if (s < lo)
			lo = s;
		if (e > hi)
			hi = e;
	}
	if (addr >= lo && addr < hi) {
		self_lo = lo;
		self_hi = hi;
		return 1;
	}
	return 0;
}

void
track_loaded(void)
{
	__atomic_store_n(&shim_pid, getpid(), __ATOMIC_RELAXED);
	/* setuid/setgid: the environment is the caller's, not the
	 * program's owner's; the shim must not act on it at all. */
	if (getauxval(AT_SECURE) != 0)
		__atomic_store_n(&dead, true, __ATOMIC_RELAXED);
}

static void
do_init(void)
{
	options_init();
	fork_init();
	/* After fork.c's handlers, so ours runs after the modules' own
	 * child handlers have re-initialised their locks. */
	pthread_atfork(NULL, NULL, track_postfork_child);
	mode = options_get(OPT_MODE) == OPT_MODE_POOL ? TRACK_POOL :
	    TRACK_AUDIT;
	init_owner_patterns();
	/* Loaded without the constructor (a unit test): this process. */
	if (__atomic_load_n(&shim_pid, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&shim_pid, getpid(), __ATOMIC_RELAXED);
	dl_iterate_phdr(find_self_cb, (void *)(uintptr_t)&do_init);
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = '\0';
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
	return !__atomic_load_n(&dead, __ATOMIC_RELAXED);
}

track_mode_t
track_mode(void)
{
	track_init();
	return mode;
}

void
track_hook_ran(void)
{
	if (unlikely(__atomic_load_n(&stats_coverage.hooks_active,
	    __ATOMIC_RELAXED) == 0))
		__atomic_store_n(&stats_coverage.hooks_active, 1,
		    __ATOMIC_RELAXED);
}

void
track_set_hooked_entry_points(uint64_t n)
{
	__atomic_store_n(&stats_coverage.hooked_entry_points, n,
	    __ATOMIC_RELAXED);
}

void *
track_driver_handle(void)
{
	void *h = __atomic_load_n(&drv_handle, __ATOMIC_ACQUIRE);

	if (likely(h != NULL))
		return h;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (h == NULL)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		log_error("cannot load libcuda.so.1: %s", dlerror());
		return NULL;
	}
	void *expected = NULL;
	if (!__atomic_compare_exchange_n(&drv_handle, &expected, h, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		dlclose(h); /* another thread won; drop our reference */
		h = expected;
	}
	return h;
}

void *
track_real(const char *name)
{
	void *h = track_driver_handle();

	if (h == NULL)
		return NULL;
	return driver_real_dlsym(h, name);
}

static void
resolve_reals(void)
{
	if (likely(__atomic_load_n(&reals_done, __ATOMIC_ACQUIRE)))
		return;
	pthread_mutex_lock(&reals_lock);
	if (!reals_done) {
		real_ctx_get_device =
		    (ctx_get_device_fn)track_real("cuCtxGetDevice");
		real_ctx_get_current =
		    (ctx_get_current_fn)track_real("cuCtxGetCurrent");
		real_ctx_set_current =
		    (ctx_set_current_fn)track_real("cuCtxSetCurrent");
		real_primary_get_state = (primary_get_state_fn)track_real(
		    "cuDevicePrimaryCtxGetState");
		real_primary_retain =
		    (primary_retain_fn)track_real("cuDevicePrimaryCtxRetain");
		real_primary_release = (primary_release_fn)track_real(
		    "cuDevicePrimaryCtxRelease_v2");
		real_addr_range = (addr_range_fn)track_real(
		    "cuMemGetAddressRange_v2");
		real_ptr_attr = (ptr_attr_fn)track_real(
		    "cuPointerGetAttribute");
		real_array_desc = (array_desc_fn)track_real(
		    "cuArray3DGetDescriptor_v2");
		__atomic_store_n(&reals_done, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&reals_lock);
}

/* ------------------------------------------------------------ helpers */

/* The device of the calling thread's current context, -1 if none. */
static int
current_device(void)
{
	CUdevice d;

	resolve_reals();
	if (real_ctx_get_device == NULL ||
	    real_ctx_get_device(&d) != CUDA_SUCCESS)
		return -1;
	return (int)d;
}

/* The size of the driver allocation at base (IPC and pool imports, whose
 * size the call does not say), 0 if unknown. */
static size_t
driver_size_of(CUdeviceptr base)
{
	size_t size = 0;

	resolve_reals();
	if (real_addr_range == NULL ||
	    real_addr_range(NULL, &size, base) != CUDA_SUCCESS)
		return 0;
	return size;
}

static CUcontext
current_ctx(void)
{
	CUcontext c = NULL;

	resolve_reals();
	if (real_ctx_get_current == NULL ||
	    real_ctx_get_current(&c) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* The calling thread's stack without the engine's and the shim's own
 * frames, stored in the depot. */
static stack_id_t
capture(void)
{
	void *ips[STACK_MAX_DEPTH + 16];
	long long depth = options_get(OPT_STACK_DEPTH);

	if (depth <= 0)
		return 0;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	/* Unwind only what is kept plus room for our own frames (a hook and
	 * a few engine calls): deep stacks (Python) cost ~13 ns a frame. */
	int n = unw_backtrace(ips, (int)depth + 16);
	int skip = 0;
	while (skip < n && (uintptr_t)ips[skip] >= self_lo &&
	    (uintptr_t)ips[skip] < self_hi)
		skip++;
	n -= skip;
	if (n <= 0)
		return 0;
	if (n > depth)
		n = (int)depth;
	return stack_intern((const uintptr_t *)(ips + skip), (size_t)n);
}

static owner_id_t
intern_path(const char *path)
{
	owner_id_t id = owner_intern(path);

	if (id == 0) {
		/* Too long for an owner name: keep the file name. */
		const char *slash = strrchr(path, '/');
		if (slash != NULL)
			id = owner_intern(slash + 1);
	}
	return id;
}

/* The owner of an allocation made with stack st: the module of its first
 * frame outside CUDA's own libraries (and ours). */
/* stack id -> owner, direct-mapped, one 64-bit word per entry (stack id
 * high, owner low) so a reader never sees half an entry. */
#define STACK_OWNER_CACHE 4096
static uint64_t stack_owner[STACK_OWNER_CACHE];

static owner_id_t
owner_of_uncached(stack_id_t st)
{
	uint32_t m = stack_first_module_outside(st, owner_pats, nowner_pats);
	if (m == UINT32_MAX)
		return 0;
	if (m < OWNER_CACHE) {
		owner_id_t id = __atomic_load_n(&module_owner[m],
		    __ATOMIC_RELAXED);
		if (id != 0)
			return id;
	}
	stack_module_t mod;
	if (stack_module_get(m, &mod))
		return 0;
	const char *path = mod.path;
	if (path == NULL || path[0] == '\0')
		path = exe_path;
	if (path[0] == '\0')
		return 0;
	owner_id_t id = intern_path(path);
	if (m < OWNER_CACHE && id != 0)
		__atomic_store_n(&module_owner[m], id, __ATOMIC_RELAXED);
	return id;
}

static owner_id_t
owner_of(stack_id_t st)
{
	if (st == 0)
		return 0;
	uint64_t *slot = &stack_owner[st % STACK_OWNER_CACHE];
	uint64_t e = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if ((stack_id_t)(e >> 32) == st)
		return (owner_id_t)e;
	owner_id_t id = owner_of_uncached(st);
	__atomic_store_n(slot, (uint64_t)st << 32 | id, __ATOMIC_RELAXED);
	return id;
}

static void record_st(ns_t ns, kind_t kind, uintptr_t base, size_t size,
    int device, CUcontext ctx, uintptr_t aux, const char *api,
    uint16_t flags, stack_id_t st);

/* Records a live allocation made by api, with this thread's stack. */
static void
record(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device,
    CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags)
{
	record_st(ns, kind, base, size, device, ctx, aux, api, flags,
	    capture());
}

/* The same, with the stack st. */
static void
record_st(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device,
    CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags,
    stack_id_t st)
{
	reg_rec_t rec, old;
	reg_handle_t h;
	bool had = false;

	memset(&rec, 0, sizeof(rec));
	rec.base = base;
	rec.size = size;
	rec.ctx = (uintptr_t)ctx;
	rec.aux = aux;
	rec.api = api;
	rec.alloc_stack = st;
	rec.owner = owner_of(rec.alloc_stack);
	rec.refcount = 1;
	rec.flags = flags;
	rec.kind = (uint8_t)kind;
	rec.ns = (uint8_t)ns;
	rec.device = (int16_t)device;
	STATS_INC(allocations);
	/* Counted before the insert: once inserted, another thread may free
	 * it (and count the free) at once. */
	stats_on_alloc(kind, size);
	if (registry_insert(&rec, &h, &old, &had)) {
		stats_on_free(kind, size);
		log_warn("out of metadata memory: %s at %#lx not tracked",
		    api, (unsigned long)base);
		return;
	}
	if (had) /* freed behind our back (a teardown we did not see) */
		stats_on_free((kind_t)old.kind, old.size);
}

static void
report_violation(vtype_t type, const char *api, uintptr_t addr,
    const reg_rec_t *rec, CUresult r, stack_id_t st)
{
	violation_t v;

	memset(&v, 0, sizeof(v));
	v.type = type;
	v.api = api;
	v.address = addr;
	v.kind = -1;
	v.device = -1;
	v.cuda_error = (int)r;
	v.stack = st;
	if (rec != NULL) {
		v.size = rec->size;
		v.kind = rec->kind;
		v.device = rec->device;
		v.owner = rec->owner;
		v.alloc_stack = rec->alloc_stack;
		v.free_stack = rec->free_stack;
	}
	violation_record(&v);
}

/* What a free call saw before the real call: the live record at addr. */
typedef struct pre_s {
	bool found;
	reg_handle_t h;
	reg_rec_t rec;
} pre_t;

static void
pre_lookup(ns_t ns, uintptr_t addr, pre_t *pre)
{
	pre->found = !registry_find(ns, addr, &pre->h, &pre->rec);
}

static void
remove_rec(reg_handle_t h, stack_id_t st)
{
	reg_rec_t out;

	if (registry_remove(h, NULL, NULL, st, &out) == 0)
		stats_on_free((kind_t)out.kind, out.size);
	/* else: replaced meanwhile by a new allocation at the same address
	 * (the driver had freed ours); record() accounted for it. */
}

#define KBIT(k) (1u << (k))
#define FREE_DEVICE_KINDS \
	(KBIT(KIND_DEVICE) | KBIT(KIND_MANAGED) | KBIT(KIND_ASYNC) | \
	KBIT(KIND_GRAPH))

/* The driver's answers for a pointer or handle it does not hold. */
static bool
unknown_to_driver(CUresult r)
{
	return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE ||
	    r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* The driver refused to free what rec describes and still holds it: a
 * failed_free, the address in the ledger, the record left live (a leak
 * if it is never freed). */
static void
failed_keep(const char *api, uintptr_t addr, const reg_rec_t *rec,
    CUresult r, stack_id_t st)
{
	report_violation(V_FAILED_FREE, api, addr, rec, r, st);
	ledger_add(addr, rec->size, rec->kind, (int)r);
}

/* Whether the driver still holds the allocation rec describes, after it
 * refused to free it: asked of the driver (the pointer's range start, the
 * array's descriptor).  False where the driver cannot be asked (an
 * address reservation, a mapping, a mipmapped array, a VMM handle: driver
 * 580 still describes a released handle, probe.c): the refusal is then
 * taken as the driver not knowing it; the callers of the reservation and
 * the mapping have refused sizes handled before. */
static bool
still_held(ns_t ns, const reg_rec_t *rec)
{
	resolve_reals();
	switch (ns) {
	case NS_ADDR: {
		CUdeviceptr start = 0;
		return real_ptr_attr != NULL &&
		    real_ptr_attr(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		    (CUdeviceptr)rec->base) == CUDA_SUCCESS &&
		    start == (CUdeviceptr)rec->base;
	}
	case NS_ARRAY: {
		CUDA_ARRAY3D_DESCRIPTOR d;
		return rec->aux == 0 && real_array_desc != NULL &&
		    real_array_desc(&d, (CUarray)rec->base) == CUDA_SUCCESS;
	}
	default:
		return false;
	}
}

/* Classifies a free of addr in ns by a function accepting the kinds in
 * accept, after the driver answered r. */
static void
classify_free(ns_t ns, unsigned accept, uintptr_t addr, CUresult r,
    const char *api, const pre_t *pre)
{
	reg_rec_t rec;
	reg_handle_t h;

	STATS_INC(frees);
	if (pre->found && unknown_to_driver(r) &&
	    (accept & KBIT(pre->rec.kind)) && !still_held(ns, &pre->rec)) {
		/* We hold it live and the driver does not know it either:
		 * another thread freed it just now (both saw it live), or it
		 * went behind our back.  A double free, not a failed one.
		 * (A refusal for another argument -- a destroyed stream, a
		 * wrong size -- leaves it held: a failed_free below.) */
		reg_rec_t out;
		stack_id_t st = capture();
		if (registry_remove(pre->h, NULL, NULL, st, &out) == 0) {
			stats_on_free((kind_t)out.kind, out.size);
			report_violation(V_DOUBLE_FREE, api, addr, &pre->rec, r,
			    st);
			return;
		}
		/* The other thread removed it first: its tombstone says
		 * where. */
	}
	bool live = pre->found && (r == CUDA_SUCCESS ||
	    registry_state(pre->h) == REG_LIVE);
	if (live) {
		stack_id_t st = capture();
		if (!(accept & KBIT(pre->rec.kind))) {
			report_violation(V_MISMATCHED_FREE, api, addr,
			    &pre->rec, r, st);
			if (r == CUDA_SUCCESS)
				remove_rec(pre->h, st);
			return;
		}
		if (r != CUDA_SUCCESS) {
			failed_keep(api, addr, &pre->rec, r, st);
			return;
		}
		if ((pre->rec.flags & REC_F_ANNOTATED) &&
		    pre->rec.refcount > 1)
			report_violation(V_FREE_WHILE_REFERENCED, api, addr,
			    &pre->rec, r, st);
		remove_rec(pre->h, st);
		return;
	}
	if (r == CUDA_SUCCESS) {
		/* Memory we never saw allocated (before we loaded, IPC,
		 * graphs, an unhooked path): normal. */
		STATS_INC(untracked_frees);
		return;
	}
	stack_id_t st = capture();
	if (ns == NS_ADDR && graphmem_node_unlaunched(addr))
		/* Graph memory no launch made live (H200: the driver refuses
		 * it, CUDA_ERROR_INVALID_VALUE). */
		report_violation(V_INVALID_FREE, api, addr, NULL, r, st);
	else if (!registry_tomb_find(ns, addr, &rec))
		report_violation(V_DOUBLE_FREE, api, addr, &rec, r, st);
	else if (ns == NS_ADDR &&
	    !registry_find_containing(ns, addr, &h, &rec))
		/* Only addresses have an inside; array and VMM handles
		 * are opaque values. */
		report_violation(V_INTERIOR_FREE, api, addr, &rec, r, st);
	else
		report_violation(V_INVALID_FREE, api, addr, NULL, r, st);
}

/* ------------------------------------------------------------ teardown */

/* What a context's destruction frees: its cuMemAlloc-family, managed,
 * pinned, registered and IPC-opened memory, and its arrays (NS_ARRAY).
 * Stream-ordered, graph and VMM memory belongs to no context (graph
 * memory stays live and freeable across cuDevicePrimaryCtxReset: H200). */
#define TEARDOWN_KINDS (KBIT(KIND_DEVICE) | KBIT(KIND_MANAGED) | \
	KBIT(KIND_PINNED) | KBIT(KIND_REGISTERED) | KBIT(KIND_IPC))

typedef struct td_s {
	uintptr_t ctx;
	int device;         /* match by device when ctx is 0 */
	bool pooled;        /* pooled records too: the pools' context died */
	reg_handle_t hs[512];
	size_t n;
} td_t;

static int
td_cb(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	td_t *td = arg;

	if ((rec->flags & REC_F_POOLED) && !td->pooled)
		return 0;
	if (rec->ns == NS_ADDR ? !(TEARDOWN_KINDS & KBIT(rec->kind)) :
	    rec->ns != NS_ARRAY)
		return 0;
	if (td->ctx != 0 ? rec->ctx != td->ctx :
	    (rec->device != td->device || td->device < 0))
		return 0;
	td->hs[td->n++] = h;
	return td->n == CW_ARRAY_SIZE(td->hs);
}

/* Marks freed every record of ctx (or, ctx NULL, of device) that the
 * driver frees with it (TEARDOWN_KINDS, arrays); VMM and stream-ordered
 * memory survive.  pooled: ctx is a primary context whose pools died with
 * it, so the blocks the program had from them go too. */
static void
teardown(CUcontext ctx, int device, bool pooled)
{
	static td_t td; /* under tdlock: too big for a thread's stack */
	static pthread_mutex_t tdlock = PTHREAD_MUTEX_INITIALIZER;
	stack_id_t st = capture();
	size_t total = 0;

	pthread_mutex_lock(&tdlock);
	for (;;) {
		td.ctx = (uintptr_t)ctx;
		td.device = device;
		td.pooled = pooled;
		td.n = 0;
		registry_foreach(td_cb, &td);
		for (size_t i = 0; i < td.n; i++) {
			reg_rec_t out;
			if (registry_remove(td.hs[i], NULL, NULL, st, &out)
			    == 0) {
				stats_on_free((kind_t)out.kind, out.size);
				STATS_INC(teardown_frees);
				total++;
			}
		}
		if (td.n < CW_ARRAY_SIZE(td.hs))
			break;
	}
	pthread_mutex_unlock(&tdlock);
	log_debug(1, "context teardown (ctx %p, device %d): %zu allocations "
	    "freed", (void *)ctx, device, total);
}

/* ------------------------------------------------------------ pool mode */

static CUcontext primary_ctx_of(CUdevice dev);
static bool concurrent_managed(int dev);

static bool
pool_mode(void)
{
	return mode == TRACK_POOL && pool_enabled();
}

/* A pooled record's aux: the pool's device, and for pinned memory the
 * flags the program asked for (cuMemHostGetFlags answers them). */
#define POOL_AUX(dev, hflags) \
	((uintptr_t)(uint32_t)(dev) | (uintptr_t)(hflags) << 32)
#define POOL_AUX_DEV(aux) ((int)(uint32_t)(aux))
#define POOL_AUX_HFLAGS(aux) ((unsigned)((uint64_t)(aux) >> 32))

/* Serves an allocation of kind from the pool (hflags: the pinned flags
 * asked for).  Returns false when the driver must answer (no context,
 * odd arguments, pool unavailable). */
static bool
pool_try_alloc(kind_t kind, uintptr_t *out, size_t size, unsigned hflags,
    const char *api, CUresult *res)
{
	if (out == NULL || size == 0)
		return false; /* the driver says what is wrong */
	CUcontext ctx = current_ctx();
	int dev = current_device();
	if (ctx == NULL || dev < 0 || dev >= MAX_DEVICES)
		return false;
	/* The pools allocate in the device's primary context: memory for a
	 * context of the program's own comes from the driver, as asked. */
	if (primary_ctx_of(dev) != ctx)
		return false;
	/* During a stream capture that forbids this thread's cuMemAlloc,
	 * the driver refuses it and breaks the capture: it answers. */
	if (capture_forbids())
		return false;
	uintptr_t addr = 0;
	unsigned pflags = 0;
	/* The pools' own driver calls (a new segment) in relaxed mode, so
	 * that they break no capture of another thread. */
	int cm = capture_relax();
	int st = pool_alloc(kind, dev, size, &addr, &pflags);
	capture_unrelax(cm);
	/* pool_alloc binds the primary context: give the caller back its
	 * own. */
	CUcontext now = current_ctx();
	if (now != ctx && real_ctx_set_current != NULL)
		real_ctx_set_current(ctx);
	switch (st) {
	case CW_OK:
		*out = addr;
		record(NS_ADDR, kind, addr, size,
		    kind == KIND_PINNED ? -1 : dev, ctx, POOL_AUX(dev, hflags),
		    api, REC_F_POOLED);
		*res = CUDA_SUCCESS;
		return true;
	case CW_ENOMEM:
		STATS_INC(failed_calls);
		*res = CUDA_ERROR_OUT_OF_MEMORY;
		return true;
	case CW_ECUDA: {
		int e = lasterr_get()->cuda_error;
		STATS_INC(failed_calls);
		*res = e != 0 ? (CUresult)e : CUDA_ERROR_OUT_OF_MEMORY;
		return true;
	}
	default:
		return false;
	}
}

/* The driver's answer to a free it forbids during a stream capture
 * (capture.h), for a pooled block of kind: the same free call of no
 * memory, made for real so that the capture is broken as the driver
 * breaks it (H200: probe part capture). */
static CUresult
capture_refusal(int kind)
{
	const driver_fns_t *d = driver_get();
	CUresult r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;

	if (d == NULL)
		return r;
	if (kind == KIND_PINNED)
		r = d->cuMemFreeHost(NULL);
	else
		r = d->cuMemFree_v2(0);
	return r == CUDA_SUCCESS ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : r;
}

/* A free of a pooled pointer, or of any address in the pools' segments.
 * Returns false when addr is no pool's business (the driver answers).
 * An address in a segment that the program does not hold live is never
 * forwarded: the driver would free the whole segment (a block at its
 * base) or refuse; the answer is the driver's for an address it did not
 * hand out, CUDA_ERROR_INVALID_VALUE, and the free is recorded. */
static bool
pool_try_free(unsigned accept, uintptr_t addr, CUstream stream, bool async,
    const char *api, CUresult *res)
{
	reg_rec_t rec;
	reg_handle_t h;

	if (!registry_find(NS_ADDR, addr, &h, &rec)) {
		if (!(rec.flags & REC_F_POOLED))
			return false;
		/* A free the driver forbids during a capture: refused, the
		 * block kept, and the capture broken as the driver would. */
		if (capture_forbids()) {
			*res = capture_refusal(rec.kind);
			STATS_INC(failed_calls);
			return true;
		}
		stack_id_t st = capture();
		STATS_INC(frees);
		if (!(accept & KBIT(rec.kind))) {
			report_violation(V_MISMATCHED_FREE, api, addr, &rec,
			    CUDA_ERROR_INVALID_VALUE, st);
			*res = CUDA_ERROR_INVALID_VALUE;
			return true;
		}
		if ((rec.flags & REC_F_ANNOTATED) && rec.refcount > 1)
			report_violation(V_FREE_WHILE_REFERENCED, api, addr,
			    &rec, CUDA_SUCCESS, st);
		reg_rec_t out;
		if (registry_remove(h, NULL, NULL, st, &out) != 0) {
			/* Another thread freed it first. */
			report_violation(V_DOUBLE_FREE, api, addr, &rec,
			    CUDA_ERROR_INVALID_VALUE, st);
			*res = CUDA_ERROR_INVALID_VALUE;
			return true;
		}
		stats_on_free((kind_t)out.kind, out.size);
		int dev = POOL_AUX_DEV(out.aux);
		int cm = capture_relax(); /* as in pool_try_alloc */
		int r = async ? pool_free_async((kind_t)out.kind, dev, addr,
		    out.size, stream) :
		    pool_free((kind_t)out.kind, dev, addr, out.size);
		capture_unrelax(cm);
		*res = r == CW_OK ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
		return true;
	}
	if (pool_segment_of(addr, NULL))
		return false;
	stack_id_t st = capture();
	STATS_INC(frees);
	if (!registry_tomb_find(NS_ADDR, addr, &rec) &&
	    (rec.flags & REC_F_POOLED))
		report_violation(V_DOUBLE_FREE, api, addr, &rec,
		    CUDA_ERROR_INVALID_VALUE, st);
	else if (!registry_find_containing(NS_ADDR, addr, &h, &rec))
		report_violation(V_INTERIOR_FREE, api, addr, &rec,
		    CUDA_ERROR_INVALID_VALUE, st);
	else
		/* A block freed so long ago that its tombstone is gone, or
		 * an address the pools never handed out. */
		report_violation(V_INVALID_FREE, api, addr, NULL,
		    CUDA_ERROR_INVALID_VALUE, st);
	*res = CUDA_ERROR_INVALID_VALUE;
	return true;
}

/* Where an address stands in pool mode. */
typedef enum pq_e {
	PQ_NONE,  /* in no pool's segment: the driver's to answer */
	PQ_LIVE,  /* in a live pooled allocation, as the program asked for it */
	PQ_DEAD   /* in the pools' memory, outside what the program holds */
} pq_t;

/* pq_t of p; *rec gets the allocation (PQ_LIVE), *kind the pool's kind
 * (PQ_LIVE, PQ_DEAD; may be NULL).  Lock-free for an address in no
 * pool's 2 MiB page; a hash lookup for one in a live block. */
static pq_t
pooled_at(uintptr_t p, reg_rec_t *rec, kind_t *kind)
{
	uintptr_t base;
	size_t size;
	unsigned flags;
	reg_handle_t h;
	kind_t k;

	if (!pool_block_of(p, &base, &size, &flags)) {
		/* A block handed out but not (or no longer) recorded is
		 * in flight between the pools and the registry: not the
		 * program's. */
		if (!registry_find(NS_ADDR, base, &h, rec) &&
		    (rec->flags & REC_F_POOLED) && p - rec->base < rec->size) {
			if (kind != NULL)
				*kind = (kind_t)rec->kind;
			return PQ_LIVE;
		}
		if (pool_segment_of(p, &k))
			return PQ_NONE; /* forgotten meanwhile */
	} else if (pool_segment_of(p, &k)) {
		return PQ_NONE;
	}
	if (kind != NULL)
		*kind = k;
	return PQ_DEAD;
}

/* ------------------------------------------------------------ allocations */

CUresult
track_cu_init(void *real, const char *api, unsigned int flags)
{
	typedef CUresult (*fn_t)(unsigned int);

	(void)api;
	return ((fn_t)real)(flags);
}

/* The context an allocation belongs to, asked of the driver: for when
 * cuCtxGetCurrent failed (a record without its context would survive the
 * context's destruction as a false leak).  NULL if the driver cannot say. */
static CUcontext
ctx_of(uintptr_t base)
{
	CUcontext c = NULL;

	resolve_reals();
	if (real_ptr_attr == NULL ||
	    real_ptr_attr(&c, CU_POINTER_ATTRIBUTE_CONTEXT,
	    (CUdeviceptr)base) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* Records a successful NS_ADDR allocation of the current context. */
static void
record_addr(kind_t kind, uintptr_t base, size_t size, uintptr_t aux,
    const char *api)
{
	CUcontext ctx = current_ctx();

	if (ctx == NULL)
		ctx = ctx_of(base);
	int dev = kind == KIND_PINNED || kind == KIND_REGISTERED ? -1 :
	    current_device();
	record(NS_ADDR, kind, base, size, dev, ctx, aux, api, 0);
}

#define CALL(real, type, args) (((type)(real)) args)

CUresult
track_mem_alloc(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t);
	CUresult r;

	if (pool_mode() && pool_try_alloc(KIND_DEVICE, (uintptr_t *)dptr,
	    bytesize, 0, api, &r))
		return r;
	r = CALL(real, fn_t, (dptr, bytesize));
	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record_addr(KIND_DEVICE, (uintptr_t)*dptr, bytesize, 0, api);
	return r;
}

CUresult
track_mem_alloc_pitch(void *real, const char *api, CUdeviceptr *dptr,
    size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t *, size_t, size_t,
	    unsigned int);
	CUresult r = CALL(real, fn_t, (dptr, pitch, width, height, elem));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record_addr(KIND_DEVICE, (uintptr_t)*dptr, *pitch * height, *pitch,
	    api);
	return r;
}

CUresult
track_mem_alloc_managed(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, unsigned int);
	CUresult r;

	/* Pooled only where a stream attachment changes no result
	 * (cuStreamAttachMemAsync of a pooled block: no driver call). */
	if (pool_mode() && flags == CU_MEM_ATTACH_GLOBAL &&
	    concurrent_managed(current_device()) &&
	    pool_try_alloc(KIND_MANAGED, (uintptr_t *)dptr, bytesize, 0, api,
	    &r))
		return r;
	r = CALL(real, fn_t, (dptr, bytesize, flags));
	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record_addr(KIND_MANAGED, (uintptr_t)*dptr, bytesize, flags, api);
	return r;
}

static bool stream_capturing(CUstream s, CUgraph *g);
static CUstream stream_of(const char *api, CUstream s);

/* A stream-ordered allocation captured into a graph is an allocation
 * node: its address is reserved now, its memory live from a launch. */
static bool
captured_alloc(const char *api, CUstream stream, CUdeviceptr d, size_t size)
{
	CUgraph g;

	if (!stream_capturing(stream_of(api, stream), &g))
		return false;
	graphmem_node((uintptr_t)d, size, current_device(), g, capture());
	return true;
}

CUresult
track_mem_alloc_async(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, CUstream);
	CUresult r = CALL(real, fn_t, (dptr, bytesize, stream));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	if (captured_alloc(api, stream, *dptr, bytesize))
		return r;
	/* Stream-ordered memory belongs to no context (survives teardown). */
	record(NS_ADDR, KIND_ASYNC, (uintptr_t)*dptr, bytesize,
	    current_device(), NULL, 0, api, 0);
	return r;
}

CUresult
track_mem_alloc_from_pool(void *real, const char *api, CUdeviceptr *dptr,
    size_t bytesize, CUmemoryPool pool, CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, CUmemoryPool,
	    CUstream);
	CUresult r = CALL(real, fn_t, (dptr, bytesize, pool, stream));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	if (captured_alloc(api, stream, *dptr, bytesize))
		return r;
	record(NS_ADDR, KIND_ASYNC, (uintptr_t)*dptr, bytesize,
	    current_device(), NULL, (uintptr_t)pool, api, 0);
	return r;
}

/* Pinned memory the pool can serve: the flags the pool's segments have
 * (cuMemHostAlloc(PORTABLE | DEVICEMAP), direct.h), or fewer. */
#define POOL_PINNED_FLAGS (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)

CUresult
track_mem_host_alloc(void *real, const char *api, void **pp, size_t bytesize,
    unsigned int flags)
{
	typedef CUresult (*fn_t)(void **, size_t, unsigned int);
	CUresult r;

	if (pool_mode() && (flags & ~POOL_PINNED_FLAGS) == 0 &&
	    pool_try_alloc(KIND_PINNED, (uintptr_t *)pp, bytesize, flags, api,
	    &r))
		return r;
	r = CALL(real, fn_t, (pp, bytesize, flags));
	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record_addr(KIND_PINNED, (uintptr_t)*pp, bytesize, flags, api);
	return r;
}

CUresult
track_mem_alloc_host(void *real, const char *api, void **pp, size_t bytesize)
{
	typedef CUresult (*fn_t)(void **, size_t);
	CUresult r;

	if (pool_mode() && pool_try_alloc(KIND_PINNED, (uintptr_t *)pp,
	    bytesize, 0, api, &r))
		return r;
	r = CALL(real, fn_t, (pp, bytesize));
	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record_addr(KIND_PINNED, (uintptr_t)*pp, bytesize, 0, api);
	return r;
}

CUresult
track_mem_host_register(void *real, const char *api, void *p,
    size_t bytesize, unsigned int flags)
{
	typedef CUresult (*fn_t)(void *, size_t, unsigned int);
	CUresult r = CALL(real, fn_t, (p, bytesize, flags));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	/* The registration belongs to the context (teardown drops it). */
	record(NS_ADDR, KIND_REGISTERED, (uintptr_t)p, bytesize, -1,
	    current_ctx(), flags, api, 0);
	return r;
}

CUresult
track_mem_pool_import(void *real, const char *api, CUdeviceptr *ptr_out,
    CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, CUmemoryPool,
	    CUmemPoolPtrExportData *);
	CUresult r = CALL(real, fn_t, (ptr_out, pool, data));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_ADDR, KIND_ASYNC, (uintptr_t)*ptr_out,
	    driver_size_of(*ptr_out), current_device(),
	    NULL, (uintptr_t)pool, api, 0);
	return r;
}

CUresult
track_ipc_open(void *real, const char *api, CUdeviceptr *pdptr,
    CUipcMemHandle handle, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, CUipcMemHandle, unsigned int);
	CUresult r = CALL(real, fn_t, (pdptr, handle, flags));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_ADDR, KIND_IPC, (uintptr_t)*pdptr, driver_size_of(*pdptr),
	    current_device(),
	    current_ctx(), 0, api, 0);
	return r;
}

/* ------------------------------------------------------------ frees */

/* A free forwarded to the driver and classified after its answer: look
 * the key up first (the record may be gone once the driver has freed it
 * and another thread reused the address), call, classify, return the
 * driver's answer. */
#define FORWARD_FREE(ns, kinds, key, fn_t, args) \
	do { \
		pre_t pre_; \
		pre_lookup((ns), (uintptr_t)(key), &pre_); \
		CUresult r_ = CALL(real, fn_t, args); \
		classify_free((ns), (kinds), (uintptr_t)(key), r_, api, \
		    &pre_); \
		return r_; \
	} while (0)

CUresult
track_mem_free(void *real, const char *api, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr);
	pre_t pre;
	CUresult r;

	if (pool_mode() && dptr != 0 &&
	    pool_try_free(FREE_DEVICE_KINDS, (uintptr_t)dptr, NULL, false, api,
	    &r))
		return r;
	pre_lookup(NS_ADDR, (uintptr_t)dptr, &pre);
	r = CALL(real, fn_t, (dptr));
	if (dptr != 0) /* freeing NULL is no free, whatever the driver says */
		classify_free(NS_ADDR, FREE_DEVICE_KINDS, (uintptr_t)dptr, r,
		    api, &pre);
	return r;
}

CUresult
track_mem_free_async(void *real, const char *api, CUdeviceptr dptr,
    CUstream stream)
{
	typedef CUresult (*fn_t)(CUdeviceptr, CUstream);
	CUresult r;
	CUgraph g;

	/* Captured, it is a free node: nothing is freed until a launch.  The
	 * driver makes free nodes of graph memory only (a cuMemAlloc pointer:
	 * CUDA_ERROR_INVALID_VALUE): so for a pooled block, never forwarded
	 * (the driver must not see the pools' pointers). */
	if (stream_capturing(stream_of(api, stream), &g)) {
		reg_rec_t rec;
		if (pool_mode() && dptr != 0 &&
		    pooled_at((uintptr_t)dptr, &rec, NULL) != PQ_NONE)
			return CUDA_ERROR_INVALID_VALUE;
		r = CALL(real, fn_t, (dptr, stream));
		if (r == CUDA_SUCCESS)
			GRAPHMEM_COUNT(free_nodes, 1);
		return r;
	}
	if (pool_mode() && dptr != 0 &&
	    pool_try_free(FREE_DEVICE_KINDS, (uintptr_t)dptr, stream, true,
	    api, &r))
		return r;
	FORWARD_FREE(NS_ADDR, FREE_DEVICE_KINDS, dptr, fn_t, (dptr, stream));
}

CUresult
track_mem_free_host(void *real, const char *api, void *p)
{
	typedef CUresult (*fn_t)(void *);
	pre_t pre;
	CUresult r;

	if (pool_mode() && p != NULL &&
	    pool_try_free(KBIT(KIND_PINNED), (uintptr_t)p, NULL, false, api,
	    &r))
		return r;
	pre_lookup(NS_ADDR, (uintptr_t)p, &pre);
	r = CALL(real, fn_t, (p));
	if (p != NULL)
		classify_free(NS_ADDR, KBIT(KIND_PINNED), (uintptr_t)p, r, api,
		    &pre);
	return r;
}

CUresult
track_mem_host_unregister(void *real, const char *api, void *p)
{
	typedef CUresult (*fn_t)(void *);

	FORWARD_FREE(NS_ADDR, KBIT(KIND_REGISTERED), p, fn_t, (p));
}

CUresult
track_ipc_close(void *real, const char *api, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr);

	FORWARD_FREE(NS_ADDR, KBIT(KIND_IPC), dptr, fn_t, (dptr));
}

/* ------------------------------------------------------------ VMM */

CUresult
track_mem_create(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle *, size_t,
	    const CUmemAllocationProp *, unsigned long long);
	CUresult r = CALL(real, fn_t, (handle, size, prop, flags));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	int dev = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ?
	    prop->location.id : -1;
	record(NS_VMM, KIND_VMM, (uintptr_t)*handle, size, dev, NULL, 0, api,
	    0);
	return r;
}

CUresult
track_mem_import(void *real, const char *api,
    CUmemGenericAllocationHandle *handle, void *os_handle,
    CUmemAllocationHandleType type)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle *, void *,
	    CUmemAllocationHandleType);
	CUresult r = CALL(real, fn_t, (handle, os_handle, type));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_VMM, KIND_VMM, (uintptr_t)*handle, 0, -1, NULL, 0, api, 0);
	return r;
}

/* A VMM handle's record counts its live mappings in aux (track_mem_map
 * adds one, an unmap takes one away): whether a handle is still mapped is
 * known without a walk.  PyTorch's expandable segments release every handle
 * right after mapping it. */
static int
maps_inc(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->aux++;
	return 0;
}

typedef struct maps_dec_s {
	bool drop;            /* out: released, and this was its last mapping */
} maps_dec_t;

static int
maps_dec(reg_rec_t *rec, void *arg)
{
	maps_dec_t *d = arg;

	if (rec->aux > 0)
		rec->aux--;
	d->drop = rec->aux == 0 && (rec->flags & REC_F_VMM_RELEASED);
	return 0;
}

static int
set_released(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->flags |= REC_F_VMM_RELEASED;
	return 0;
}

/* An unmap took away a mapping of handle: one mapping fewer; a handle
 * released while mapped goes with its last mapping. */
static void
unmapped(uintptr_t handle)
{
	reg_handle_t h;
	reg_rec_t rec;
	maps_dec_t d = { false };

	if (registry_find(NS_VMM, handle, &h, &rec))
		return;
	if (registry_update(h, maps_dec, &d) == 0 && d.drop)
		remove_rec(h, capture());
}

/* Whether a live mapping starts in [lo, lo + size): a walk, made only when
 * the driver refused to free a reservation. */
typedef struct map_q_s {
	uintptr_t lo, hi;
} map_q_t;

static int
map_in_range(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	const map_q_t *q = arg;

	(void)h;
	return rec->ns == NS_MAP && rec->base >= q->lo && rec->base < q->hi;
}

static bool
range_mapped(uintptr_t lo, size_t size)
{
	map_q_t q = { lo, lo + size };

	return registry_foreach(map_in_range, &q) != 0;
}

CUresult
track_mem_release(void *real, const char *api,
    CUmemGenericAllocationHandle handle)
{
	typedef CUresult (*fn_t)(CUmemGenericAllocationHandle);
	pre_t pre;

	pre_lookup(NS_VMM, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	/* Releasing a handle still mapped is legal: the physical memory
	 * lives until the last unmap.  The record stays, marked, and is a
	 * leak until then (doc/report-schema.md); the last unmap removes
	 * it. */
	if (r == CUDA_SUCCESS && pre.found &&
	    !(pre.rec.flags & REC_F_VMM_RELEASED) && pre.rec.aux > 0) {
		STATS_INC(frees);
		registry_update(pre.h, set_released, NULL);
		return r;
	}
	classify_free(NS_VMM, KBIT(KIND_VMM), (uintptr_t)handle, r, api,
	    &pre);
	return r;
}

CUresult
track_mem_address_reserve(void *real, const char *api, CUdeviceptr *ptr,
    size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
	    unsigned long long);
	CUresult r = CALL(real, fn_t, (ptr, size, alignment, addr, flags));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_VA, KIND_VA, (uintptr_t)*ptr, size, -1, NULL, 0, api, 0);
	return r;
}

CUresult
track_mem_address_free(void *real, const char *api, CUdeviceptr ptr,
    size_t size)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t);
	pre_t pre;

	pre_lookup(NS_VA, (uintptr_t)ptr, &pre);
	CUresult r = CALL(real, fn_t, (ptr, size));
	if (r != CUDA_SUCCESS && pre.found && size != pre.rec.size) {
		/* Refused for the size (the driver frees only a whole
		 * reservation): it still holds it. */
		STATS_INC(frees);
		failed_keep(api, (uintptr_t)ptr, &pre.rec, r, capture());
		return r;
	}
	if (unknown_to_driver(r) && pre.found &&
	    range_mapped((uintptr_t)ptr, pre.rec.size)) {
		/* Refused because memory is still mapped in it (the H200's
		 * driver 580 answers CUDA_ERROR_INVALID_VALUE: probe.c):
		 * neither a double free nor a lost reservation.  Nothing
		 * changes.  Any other refusal is the driver failing to free
		 * live memory: classify_free makes it a failed_free. */
		STATS_INC(frees);
		return r;
	}
	classify_free(NS_VA, KBIT(KIND_VA), (uintptr_t)ptr, r, api, &pre);
	return r;
}

CUresult
track_mem_map(void *real, const char *api, CUdeviceptr ptr, size_t size,
    size_t offset, CUmemGenericAllocationHandle handle,
    unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t, size_t,
	    CUmemGenericAllocationHandle, unsigned long long);
	CUresult r = CALL(real, fn_t, (ptr, size, offset, handle, flags));
	reg_rec_t hrec;
	reg_handle_t h;

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	bool known = !registry_find(NS_VMM, (uintptr_t)handle, &h, &hrec);
	record(NS_MAP, KIND_MAPPING, (uintptr_t)ptr, size,
	    known ? hrec.device : -1, NULL, (uintptr_t)handle, api, 0);
	if (known)
		registry_update(h, maps_inc, NULL);
	return r;
}

CUresult
track_mem_unmap(void *real, const char *api, CUdeviceptr ptr, size_t size)
{
	typedef CUresult (*fn_t)(CUdeviceptr, size_t);
	pre_t pre;

	pre_lookup(NS_MAP, (uintptr_t)ptr, &pre);
	CUresult r = CALL(real, fn_t, (ptr, size));
	if (r != CUDA_SUCCESS && pre.found && size != pre.rec.size) {
		/* Refused for the size (a part of a mapping, or past the
		 * mappings that start here): nothing was unmapped. */
		STATS_INC(frees);
		failed_keep(api, (uintptr_t)ptr, &pre.rec, r, capture());
		return r;
	}
	classify_free(NS_MAP, KBIT(KIND_MAPPING), (uintptr_t)ptr, r, api,
	    &pre);
	if (r != CUDA_SUCCESS || !pre.found)
		return r;
	unmapped(pre.rec.aux);
	/* One unmap may cover several adjacent mappings. */
	stack_id_t st = 0;
	uintptr_t p = (uintptr_t)ptr + pre.rec.size;
	uintptr_t end = (uintptr_t)ptr + size;
	while (p < end) {
		reg_handle_t h;
		reg_rec_t rec;
		if (registry_find(NS_MAP, p, &h, &rec) || rec.size == 0)
			break;
		if (st == 0)
			st = capture();
		STATS_INC(frees);
		remove_rec(h, st);
		unmapped(rec.aux);
		p += rec.size;
	}
	return r;
}

/* ------------------------------------------------------------ arrays */

static size_t
format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 1;
	}
}

static size_t
array_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
	return w * (h ? h : 1) * (d ? d : 1) * format_bytes(f) * (ch ? ch : 1);
}

CUresult
track_array_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY_DESCRIPTOR *desc)
{
	typedef CUresult (*fn_t)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
	CUresult r = CALL(real, fn_t, (handle, desc));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, 1, desc->Format,
	    desc->NumChannels), current_device(), current_ctx(), 0, api, 0);
	return r;
}

CUresult
track_array3d_create(void *real, const char *api, CUarray *handle,
    const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	typedef CUresult (*fn_t)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
	CUresult r = CALL(real, fn_t, (handle, desc));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format,
	    desc->NumChannels), current_device(), current_ctx(), 0, api, 0);
	return r;
}

CUresult
track_mipmapped_create(void *real, const char *api, CUmipmappedArray *handle,
    const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
	typedef CUresult (*fn_t)(CUmipmappedArray *,
	    const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int);
	CUresult r = CALL(real, fn_t, (handle, desc, levels));

	if (r != CUDA_SUCCESS) {
		STATS_INC(failed_calls);
		return r;
	}
	/* Level 0's size (the whole chain is at most 4/3 of it). */
	record(NS_ARRAY, KIND_ARRAY, (uintptr_t)*handle,
	    array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format,
	    desc->NumChannels), current_device(), current_ctx(), 1, api, 0);
	return r;
}

/* Arrays and mipmapped arrays share NS_ARRAY; the record's aux tells
 * them apart (1: mipmapped).  A live handle of the other sort given to a
 * destroy is a mismatched free: the driver refuses it and frees nothing,
 * so the record stays live (classify_free would take the refusal of a
 * live handle for a double free and drop it). */
static void
classify_array_free(uintptr_t handle, uintptr_t aux, CUresult r,
    const char *api, const pre_t *pre)
{
	if (pre->found && pre->rec.aux != aux) {
		stack_id_t st = capture();
		STATS_INC(frees);
		report_violation(V_MISMATCHED_FREE, api, handle, &pre->rec, r,
		    st);
		if (r == CUDA_SUCCESS)
			remove_rec(pre->h, st);
		return;
	}
	classify_free(NS_ARRAY, KBIT(KIND_ARRAY), handle, r, api, pre);
}

CUresult
track_array_destroy(void *real, const char *api, CUarray handle)
{
	typedef CUresult (*fn_t)(CUarray);
	pre_t pre;

	pre_lookup(NS_ARRAY, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	classify_array_free((uintptr_t)handle, 0, r, api, &pre);
	return r;
}

CUresult
track_mipmapped_destroy(void *real, const char *api, CUmipmappedArray handle)
{
	typedef CUresult (*fn_t)(CUmipmappedArray);
	pre_t pre;

	pre_lookup(NS_ARRAY, (uintptr_t)handle, &pre);
	CUresult r = CALL(real, fn_t, (handle));
	classify_array_free((uintptr_t)handle, 1, r, api, &pre);
	return r;
}

/* ------------------------------------------------------------ lifetime */

/* The device whose primary context is ctx (as we saw it retained, or as
 * the library's own driver_bind retained it), or -1. */
static int
primary_dev_of(CUcontext ctx)
{
	int dev = -1;

	if (ctx == NULL)
		return -1;
	pthread_mutex_lock(&plock);
	for (int d = 0; d < MAX_DEVICES && dev < 0; d++)
		if (primary[d].ctx == ctx)
			dev = d;
	pthread_mutex_unlock(&plock);
	for (int d = 0; d < MAX_DEVICES && dev < 0; d++)
		if (driver_primary_ctx(d) == ctx)
			dev = d;
	return dev;
}

/* The driver destroyed (or reset) dev's primary context and with it every
 * segment of the pools on dev: they must never hand those out again.
 * Harmless when the pools never served dev. */
static void
pools_forget(int dev)
{
	if (dev < 0 || dev >= MAX_DEVICES)
		return;
	pool_forget_device(dev);
	log_debug(1, "device %d: primary context torn down; pools forgotten",
	    dev);
}

CUresult
track_ctx_destroy(void *real, const char *api, CUcontext ctx)
{
	typedef CUresult (*fn_t)(CUcontext);
	int pdev = primary_dev_of(ctx);
	CUresult r = CALL(real, fn_t, (ctx));

	(void)api;
	if (r == CUDA_SUCCESS && ctx != NULL) {
		teardown(ctx, -1, pdev >= 0);
		pools_forget(pdev);
	}
	return r;
}

CUresult
track_primary_retain(void *real, const char *api, CUcontext *pctx,
    CUdevice dev)
{
	typedef CUresult (*fn_t)(CUcontext *, CUdevice);
	CUresult r = CALL(real, fn_t, (pctx, dev));

	(void)api;
	if (r != CUDA_SUCCESS || dev < 0 || dev >= MAX_DEVICES)
		return r;
	pthread_mutex_lock(&plock);
	if (!primary[dev].seen) {
		primary[dev].seen = true;
		primary[dev].refs = 0;
	}
	primary[dev].refs++;
	primary[dev].ctx = *pctx;
	pthread_mutex_unlock(&plock);
	return r;
}

/* The primary context of dev as we know it; when we never saw it
 * retained, asked of the driver if it is active (a retain and a release,
 * net zero), else NULL. */
static CUcontext
primary_ctx_of(CUdevice dev)
{
	CUcontext c = NULL;
	unsigned int flags;
	int active = 0;

	pthread_mutex_lock(&plock);
	c = primary[dev].ctx;
	pthread_mutex_unlock(&plock);
	if (c != NULL)
		return c;
	resolve_reals();
	if (real_primary_get_state == NULL || real_primary_retain == NULL ||
	    real_primary_release == NULL)
		return NULL;
	if (real_primary_get_state(dev, &flags, &active) != CUDA_SUCCESS ||
	    !active)
		return NULL;
	if (real_primary_retain(&c, dev) != CUDA_SUCCESS)
		return NULL;
	real_primary_release(dev);
	pthread_mutex_lock(&plock);
	if (primary[dev].ctx == NULL)
		primary[dev].ctx = c; /* the handle is stable (driver 580) */
	pthread_mutex_unlock(&plock);
	return c;
}

CUresult
track_primary_release(void *real, const char *api, CUdevice dev)
{
	typedef CUresult (*fn_t)(CUdevice);
	CUcontext c = NULL;
	bool last = false;

	(void)api;
	if (dev >= 0 && dev < MAX_DEVICES)
		c = primary_ctx_of(dev);
	CUresult r = CALL(real, fn_t, (dev));
	if (r != CUDA_SUCCESS || dev < 0 || dev >= MAX_DEVICES)
		return r;
	pthread_mutex_lock(&plock);
	if (primary[dev].seen && primary[dev].refs > 0 &&
	    --primary[dev].refs == 0) {
		last = true;
		primary[dev].ctx = NULL;
	}
	pthread_mutex_unlock(&plock);
	/* The driver destroys the primary context with the last release;
	 * we only know it is the last when we saw every retain.  The pools
	 * (driver_bind) hold a retain of their own that the program does
	 * not know of: they give it back now, so that the context dies as
	 * it would without them (its memory, the pools' segments and the
	 * program's blocks, with it). */
	if (last) {
		if (c != NULL)
			teardown(c, -1, true);
		pools_forget(dev);
		driver_release_primary(dev);
	}
	return r;
}

CUresult
track_primary_reset(void *real, const char *api, CUdevice dev)
{
	typedef CUresult (*fn_t)(CUdevice);
	CUcontext c = NULL;

	(void)api;
	if (dev >= 0 && dev < MAX_DEVICES)
		c = primary_ctx_of(dev);
	CUresult r = CALL(real, fn_t, (dev));
	if (r != CUDA_SUCCESS)
		return r;
	if (c != NULL)
		teardown(c, -1, true);
	pools_forget(dev);
	return r;
}

CUresult
track_mem_pool_destroy(void *real, const char *api, CUmemoryPool pool)
{
	typedef CUresult (*fn_t)(CUmemoryPool);

	/* Allocations still outstanding keep the pool alive until they are
	 * freed (cuda.h): they stay recorded. */
	(void)api;
	return CALL(real, fn_t, (pool));
}

/* ------------------------------------------------------------ queries */

CUresult
track_mem_get_info(void *real, const char *api, size_t *free_bytes,
    size_t *total_bytes)
{
	typedef CUresult (*fn_t)(size_t *, size_t *);
	CUresult r = CALL(real, fn_t, (free_bytes, total_bytes));

	(void)api;
	if (r != CUDA_SUCCESS || free_bytes == NULL || !pool_mode())
		return r;
	int dev = current_device();
	if (dev < 0)
		return r;
	size_t cached = pool_cached_bytes(dev);
	*free_bytes += cached;
	if (total_bytes != NULL && *free_bytes > *total_bytes)
		*free_bytes = *total_bytes;
	return r;
}

/* A host address the driver never handed out (nor was given to
 * register): asked about it, the driver answers what it answers for any
 * pointer it does not know. */
static const char unknown_probe[64] __attribute__((aligned(64)));
#define UNKNOWN_PTR ((CUdeviceptr)(uintptr_t)unknown_probe)

/* After the driver answered attribute a for UNKNOWN_PTR into data: the
 * answer it gives for ptr (the only attribute that echoes the pointer
 * is HOST_POINTER; cuPointerGetAttributes answers it for unknown
 * memory). */
static void
unknown_fix(CUpointer_attribute a, void *data, CUdeviceptr ptr)
{
	if (a == CU_POINTER_ATTRIBUTE_HOST_POINTER && data != NULL &&
	    *(void **)data == (void *)unknown_probe)
		*(void **)data = (void *)(uintptr_t)ptr;
}

CUresult
track_mem_get_address_range(void *real, const char *api, CUdeviceptr *pbase,
    size_t *psize, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUdeviceptr *, size_t *, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!pool_mode() ||
	    (q = pooled_at((uintptr_t)dptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (pbase, psize, dptr));
	/* The driver is asked all the same, into our own variables (its
	 * range is the segment's): what it says about the call itself
	 * stands, a thread without a context gets its
	 * CUDA_ERROR_INVALID_CONTEXT. */
	CUdeviceptr b;
	size_t sz;
	CUresult r = CALL(real, fn_t, (&b, &sz, dptr));
	if (r != CUDA_SUCCESS)
		return r;
	if (q == PQ_DEAD)
		return CUDA_ERROR_NOT_FOUND; /* as for memory it freed */
	if (pbase != NULL)
		*pbase = (CUdeviceptr)rec.base;
	if (psize != NULL)
		*psize = rec.size;
	return CUDA_SUCCESS;
}

/* The buffer id we give a pooled block: never one the driver hands out
 * (those count up from 1). */
static unsigned long long
pooled_buffer_id(uintptr_t base)
{
	reg_handle_t h;
	reg_rec_t rec;

	if (registry_find(NS_ADDR, base, &h, &rec))
		return (1ULL << 63) | (unsigned long long)(base >> 8);
	return (1ULL << 63) | (unsigned long long)h;
}

/* Patches one attribute answer for a pooled allocation: the driver
 * described the segment. */
static void
patch_attr(CUpointer_attribute a, void *data, const reg_rec_t *rec)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = (CUdeviceptr)rec->base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = rec->size;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = pooled_buffer_id(rec->base);
		break;
	default:
		break;
	}
}

CUresult
track_pointer_get_attribute(void *real, const char *api, void *data,
    CUpointer_attribute attribute, CUdeviceptr ptr)
{
	typedef CUresult (*fn_t)(void *, CUpointer_attribute, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;
	CUresult r;

	(void)api;
	if (!pool_mode() ||
	    (q = pooled_at((uintptr_t)ptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (data, attribute, ptr));
	if (q == PQ_DEAD) {
		r = CALL(real, fn_t, (data, attribute, UNKNOWN_PTR));
		if (r == CUDA_SUCCESS)
			unknown_fix(attribute, data, ptr);
		return r;
	}
	r = CALL(real, fn_t, (data, attribute, ptr));
	if (r == CUDA_SUCCESS && data != NULL)
		patch_attr(attribute, data, &rec);
	return r;
}

CUresult
track_pointer_get_attributes(void *real, const char *api, unsigned int count,
    CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
	typedef CUresult (*fn_t)(unsigned int, CUpointer_attribute *,
	    void **, CUdeviceptr);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!pool_mode() ||
	    (q = pooled_at((uintptr_t)ptr, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (count, attributes, data, ptr));
	CUresult r = CALL(real, fn_t, (count, attributes, data,
	    q == PQ_DEAD ? UNKNOWN_PTR : ptr));
	if (r != CUDA_SUCCESS || data == NULL || attributes == NULL)
		return r;
	for (unsigned i = 0; i < count; i++) {
		if (data[i] == NULL)
			continue;
		if (q == PQ_DEAD)
			unknown_fix(attributes[i], data[i], ptr);
		else
			patch_attr(attributes[i], data[i], &rec);
	}
	return r;
}

CUresult
track_mem_host_get_flags(void *real, const char *api, unsigned int *pflags,
    void *p)
{
	typedef CUresult (*fn_t)(unsigned int *, void *);
	reg_rec_t rec;
	pq_t q;

	(void)api;
	if (!pool_mode() ||
	    (q = pooled_at((uintptr_t)p, &rec, NULL)) == PQ_NONE)
		return CALL(real, fn_t, (pflags, p));
	if (q == PQ_DEAD)
		return CALL(real, fn_t, (pflags, (void *)unknown_probe));
	CUresult r = CALL(real, fn_t, (pflags, p));
	/* The segment's flags are the pool's; the program asked for its
	 * own, and with unified addressing the driver adds DEVICEMAP to
	 * every pinned allocation's (driver 580: probe.c, part exact). */
	if (r == CUDA_SUCCESS && pflags != NULL)
		*pflags = POOL_AUX_HFLAGS(rec.aux) | CU_MEMHOSTALLOC_DEVICEMAP;
	return r;
}

CUresult
track_ipc_get_mem_handle(void *real, const char *api, CUipcMemHandle *handle,
    CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUipcMemHandle *, CUdeviceptr);
	uintptr_t base;
	size_t size;
	unsigned flags;

	if (pool_mode() && !pool_block_of((uintptr_t)dptr, &base, &size,
	    &flags) && !((flags & POOL_F_OWN_SEGMENT) && base == dptr)) {
		/* A block carved from a shared segment has no IPC handle of
		 * its own; the segment's would map other blocks too. */
		static bool warned;
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			log_warn("%s(%#lx): a pooled block smaller than "
			    "CUWARDEN_LARGE_BLOCK has no IPC handle of its "
			    "own; answering CUDA_ERROR_INVALID_VALUE (use "
			    "CUWARDEN_MODE=audit, or a smaller "
			    "CUWARDEN_LARGE_BLOCK)", api,
			    (unsigned long)dptr);
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CALL(real, fn_t, (handle, dptr));
}

/* ------------------------------------------------------------ bounds */

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

/* [p, p + n) against the tracked allocation containing p, if any. */
static void
check_range(const char *api, uintptr_t p, size_t n)
{
	reg_handle_t h;
	reg_rec_t rec;

	if (n == 0 || p == 0)
		return;
	if (registry_find_containing(NS_ADDR, p, &h, &rec))
		return; /* not ours to judge (untracked, VMM, host) */
	if (n <= rec.size && p - rec.base <= rec.size - n)
		return;
	report_violation(V_OUT_OF_BOUNDS, api, p, &rec, CUDA_SUCCESS,
	    capture());
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
	pq_t q = pooled_at(p, &rec, &kind);
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
	if (unlikely(bounds())) {
		check_range(api, dst, n);
		check_range(api, src, n);
	}
	return pool_mode() && ((dst_dev && pool_range_refused(dst, n)) ||
	    (src_dev && pool_range_refused(src, n)));
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

/* ------------------------------------------------- capture and graphs */

/*
 * Stream capture (capture.h) and graph memory (graphmem.h).  The capture
 * hooks keep the table of captures in progress; the graph hooks keep the
 * node and exec tables and turn a launch into records: each allocation
 * node of the exec that no free node of it frees becomes a live record of
 * kind graph (the stack that made the node; aux: the launch's stack),
 * and each free node frees the record at its address.
 */

typedef CUresult (*is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (*capture_info2_fn)(CUstream, CUstreamCaptureStatus *,
    cuuint64_t *, CUgraph *, const CUgraphNode **, size_t *);
typedef CUresult (*capture_info3_fn)(CUstream, CUstreamCaptureStatus *,
    cuuint64_t *, CUgraph *, const CUgraphNode **, const CUgraphEdgeData **,
    size_t *);
typedef CUresult (*graph_get_nodes_fn)(CUgraph, CUgraphNode *, size_t *);
typedef CUresult (*node_get_type_fn)(CUgraphNode, CUgraphNodeType *);
typedef CUresult (*alloc_params_fn)(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS *);
typedef CUresult (*free_params_fn)(CUgraphNode, CUdeviceptr *);
typedef CUresult (*child_graph_fn)(CUgraphNode, CUgraph *);
typedef CUresult (*dev_attr_fn)(int *, CUdevice_attribute, CUdevice);

static struct {
	is_capturing_fn is_capturing, is_capturing_ptsz;
	capture_info2_fn info2, info2_ptsz;
	capture_info3_fn info3, info3_ptsz;
	graph_get_nodes_fn get_nodes;
	node_get_type_fn node_type;
	alloc_params_fn alloc_params;
	free_params_fn free_params;
	child_graph_fn child_graph;
	dev_attr_fn dev_attr;
} gr;
static pthread_once_t gr_once = PTHREAD_ONCE_INIT;

static void
gr_resolve_once(void)
{
	gr.is_capturing = (is_capturing_fn)track_real("cuStreamIsCapturing");
	gr.is_capturing_ptsz =
	    (is_capturing_fn)track_real("cuStreamIsCapturing_ptsz");
	gr.info2 = (capture_info2_fn)track_real("cuStreamGetCaptureInfo_v2");
	gr.info2_ptsz = (capture_info2_fn)track_real(
	    "cuStreamGetCaptureInfo_v2_ptsz");
	gr.info3 = (capture_info3_fn)track_real("cuStreamGetCaptureInfo_v3");
	gr.info3_ptsz = (capture_info3_fn)track_real(
	    "cuStreamGetCaptureInfo_v3_ptsz");
	gr.get_nodes = (graph_get_nodes_fn)track_real("cuGraphGetNodes");
	gr.node_type = (node_get_type_fn)track_real("cuGraphNodeGetType");
	gr.alloc_params = (alloc_params_fn)track_real(
	    "cuGraphMemAllocNodeGetParams");
	gr.free_params = (free_params_fn)track_real(
	    "cuGraphMemFreeNodeGetParams");
	gr.child_graph = (child_graph_fn)track_real(
	    "cuGraphChildGraphNodeGetGraph");
	gr.dev_attr = (dev_attr_fn)track_real("cuDeviceGetAttribute");
}

static void
gr_resolve(void)
{
	pthread_once(&gr_once, gr_resolve_once);
}

/* The per-thread variants name the calling thread's default stream by
 * the handle 0: the same stream as CU_STREAM_PER_THREAD. */
static CUstream
stream_of(const char *api, CUstream s)
{
	size_t n = strlen(api);
	if (s == NULL && n > 5 && strcmp(api + n - 5, "_ptsz") == 0)
		return CU_STREAM_PER_THREAD;
	return s;
}

/* Whether stream s (normalised) is capturing; *g gets the graph being
 * captured when the driver says (else NULL).  Asked of the driver only
 * while a capture is in progress somewhere. */
static bool
stream_capturing(CUstream s, CUgraph *g)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph graph = NULL;

	*g = NULL;
	if (!capture_active())
		return false;
	gr_resolve();
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	if (gr.info3 != NULL)
		r = gr.info3(s, &st, NULL, &graph, NULL, NULL, NULL);
	else if (gr.info2 != NULL)
		r = gr.info2(s, &st, NULL, &graph, NULL, NULL);
	else if (gr.is_capturing != NULL)
		r = gr.is_capturing(s, &st);
	if (r != CUDA_SUCCESS)
		return false;
	if (st == CU_STREAM_CAPTURE_STATUS_NONE)
		return false;
	*g = graph;
	return true;
}

/* After the driver's answer to a begin: the capture is in progress (a
 * success), or never was. */
static CUresult
begun(CUresult r, CUstream s)
{
	if (r == CUDA_SUCCESS) {
		STATS_INC(captures);
		log_debug(2, "stream capture begun on %p (%u in progress)",
		    (void *)s, capture_count());
	} else {
		capture_abort(s);
	}
	return r;
}

CUresult
track_begin_capture_v1(void *real, const char *api, CUstream s)
{
	CUstream k = stream_of(api, s);

	/* The mode-less ABI of CUDA 10.0 captures in relaxed mode (H200,
	 * driver 580: probe part capture). */
	capture_begin(k, CU_STREAM_CAPTURE_MODE_RELAXED);
	return begun(CALL(real, CUresult (*)(CUstream), (s)), k);
}

CUresult
track_begin_capture(void *real, const char *api, CUstream s,
    CUstreamCaptureMode m)
{
	CUstream k = stream_of(api, s);

	capture_begin(k, (int)m);
	return begun(CALL(real, CUresult (*)(CUstream, CUstreamCaptureMode),
	    (s, m)), k);
}

CUresult
track_begin_capture_to_graph(void *real, const char *api, CUstream s,
    CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
    size_t ndeps, CUstreamCaptureMode m)
{
	typedef CUresult (*fn_t)(CUstream, CUgraph, const CUgraphNode *,
	    const CUgraphEdgeData *, size_t, CUstreamCaptureMode);
	CUstream k = stream_of(api, s);

	capture_begin(k, (int)m);
	return begun(CALL(real, fn_t, (s, g, deps, edges, ndeps, m)), k);
}

CUresult
track_end_capture(void *real, const char *api, CUstream s, CUgraph *pg)
{
	CUstream k = stream_of(api, s);
	CUresult r = CALL(real, CUresult (*)(CUstream, CUgraph *), (s, pg));
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;

	/* The capture is over unless the driver says the stream still
	 * captures (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: a strict
	 * capture ended on another thread goes on). */
	gr_resolve();
	is_capturing_fn f = k == CU_STREAM_PER_THREAD &&
	    gr.is_capturing_ptsz != NULL ? gr.is_capturing_ptsz :
	    gr.is_capturing;
	if (r != CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD &&
	    (f == NULL || f(s, &st) != CUDA_SUCCESS ||
	    st == CU_STREAM_CAPTURE_STATUS_NONE))
		capture_end(k);
	return r;
}

CUresult
track_exchange_capture_mode(void *real, const char *api,
    CUstreamCaptureMode *m)
{
	CUstreamCaptureMode want = m != NULL ? *m : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUresult r = CALL(real, CUresult (*)(CUstreamCaptureMode *), (m));

	(void)api;
	if (r == CUDA_SUCCESS)
		capture_set_thread_mode((int)want);
	return r;
}

CUresult
track_graph_add_mem_alloc(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps,
    CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUDA_MEM_ALLOC_NODE_PARAMS *);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS && p != NULL)
		graphmem_node((uintptr_t)p->dptr, p->bytesize,
		    p->poolProps.location.id, g, capture());
	return r;
}

CUresult
track_graph_add_mem_free(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUdeviceptr);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, dptr));

	(void)api;
	if (r == CUDA_SUCCESS)
		GRAPHMEM_COUNT(free_nodes, 1);
	return r;
}

/* cuGraphAddNode's parameters, after the driver filled them in. */
static void
node_added(CUgraph g, const CUgraphNodeParams *p)
{
	if (p == NULL)
		return;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		graphmem_node((uintptr_t)p->alloc.dptr, p->alloc.bytesize,
		    p->alloc.poolProps.location.id, g, capture());
	else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
		GRAPHMEM_COUNT(free_nodes, 1);
}

CUresult
track_graph_add_node_v1(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUgraphNodeParams *);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS)
		node_added(g, p);
	return r;
}

CUresult
track_graph_add_node(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
    size_t ndeps, CUgraphNodeParams *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    const CUgraphEdgeData *, size_t, CUgraphNodeParams *);
	CUresult r = CALL(real, fn_t, (node, g, deps, edges, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS)
		node_added(g, p);
	return r;
}

/* The memory nodes of g (and of its child graphs), gathered for an exec. */
typedef struct scan_s {
	gm_alloc_t *allocs;
	uintptr_t *frees;
	size_t na, nf, cap;
	bool failed;
} scan_t;

static void *
scan_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
scan_graph(CUgraph g, scan_t *sc, int depth)
{
	size_t n = 0;

	if (depth > 8 || gr.get_nodes == NULL || gr.node_type == NULL ||
	    gr.get_nodes(g, NULL, &n) != CUDA_SUCCESS || n == 0)
		return;
	size_t bytes = n * sizeof(CUgraphNode);
	CUgraphNode *nodes = scan_map(bytes);
	if (nodes == NULL) {
		sc->failed = true;
		return;
	}
	size_t got = n;
	if (gr.get_nodes(g, nodes, &got) != CUDA_SUCCESS)
		got = 0;
	for (size_t i = 0; i < got && i < n && !sc->failed; i++) {
		CUgraphNodeType t;
		if (gr.node_type(nodes[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_GRAPH && gr.child_graph != NULL) {
			CUgraph child;
			if (gr.child_graph(nodes[i], &child) == CUDA_SUCCESS)
				scan_graph(child, sc, depth + 1);
			continue;
		}
		if (t != CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
		    t != CU_GRAPH_NODE_TYPE_MEM_FREE)
			continue;
		if (sc->na == sc->cap || sc->nf == sc->cap) {
			sc->failed = true; /* more than the graph had nodes */
			break;
		}
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			CUDA_MEM_ALLOC_NODE_PARAMS p;
			memset(&p, 0, sizeof(p));
			if (gr.alloc_params == NULL ||
			    gr.alloc_params(nodes[i], &p) != CUDA_SUCCESS)
				continue;
			gm_alloc_t *a = &sc->allocs[sc->na++];
			memset(a, 0, sizeof(*a));
			a->dptr = (uintptr_t)p.dptr;
			a->size = p.bytesize;
			a->device = p.poolProps.location.id;
			graphmem_node_find(a->dptr, NULL, NULL, &a->stack);
		} else {
			CUdeviceptr d = 0;
			if (gr.free_params == NULL ||
			    gr.free_params(nodes[i], &d) != CUDA_SUCCESS)
				continue;
			sc->frees[sc->nf++] = (uintptr_t)d;
		}
	}
	munmap(nodes, bytes);
}

/* Reads the memory nodes of g for the new exec e. */
static void
model_exec(CUgraphExec e, CUgraph g)
{
	size_t n = 0;

	gr_resolve();
	if (gr.get_nodes == NULL || gr.get_nodes(g, NULL, &n) != CUDA_SUCCESS)
		return;
	/* Child graphs may hold more: room for 4x the top level's nodes,
	 * and at least 1024. */
	scan_t sc = { .cap = n * 4 < 1024 ? 1024 : n * 4 };
	size_t bytes = sc.cap * (sizeof(gm_alloc_t) + sizeof(uintptr_t));
	void *buf = scan_map(bytes);
	if (buf == NULL)
		return;
	sc.allocs = buf;
	sc.frees = (uintptr_t *)(sc.allocs + sc.cap);
	scan_graph(g, &sc, 0);
	if (sc.failed)
		log_warn("graph %p: its memory nodes could not all be read; "
		    "its launches are not modelled", (void *)g);
	else if (sc.na + sc.nf > 0) {
		for (size_t i = 0; i < sc.na; i++)
			for (size_t j = 0; j < sc.nf; j++)
				if (sc.frees[j] == sc.allocs[i].dptr)
					sc.allocs[i].freed_inside = true;
		if (graphmem_exec_add(e, sc.allocs, sc.na, sc.frees, sc.nf))
			log_warn("out of memory: graph exec %p not modelled",
			    (void *)e);
	}
	munmap(buf, bytes);
}

#define INSTANTIATED(r, pe, g) \
	do { \
		if ((r) == CUDA_SUCCESS && (pe) != NULL) \
			model_exec(*(pe), (g)); \
	} while (0)

CUresult
track_graph_instantiate_v1(void *real, const char *api, CUgraphExec *pe,
    CUgraph g, CUgraphNode *err_node, char *log, size_t log_size)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph, CUgraphNode *,
	    char *, size_t);
	CUresult r = CALL(real, fn_t, (pe, g, err_node, log, log_size));

	(void)api;
	INSTANTIATED(r, pe, g);
	return r;
}

CUresult
track_graph_instantiate(void *real, const char *api, CUgraphExec *pe,
    CUgraph g, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult r = CALL(real, fn_t, (pe, g, flags));

	(void)api;
	INSTANTIATED(r, pe, g);
	return r;
}

CUresult
track_graph_instantiate_params(void *real, const char *api,
    CUgraphExec *pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph,
	    CUDA_GRAPH_INSTANTIATE_PARAMS *);
	CUresult r = CALL(real, fn_t, (pe, g, p));

	(void)api;
	INSTANTIATED(r, pe, g);
	return r;
}

/* A free node ran: the live record at d is freed (graph memory, or
 * stream-ordered memory made before). */
static void
graph_frees(uintptr_t d, stack_id_t st)
{
	reg_handle_t h;
	reg_rec_t rec;

	/* Nothing live there (the driver's business), or a pooled block,
	 * whose address the driver never saw (no free node can name it). */
	if (registry_find(NS_ADDR, d, &h, &rec) || (rec.flags & REC_F_POOLED))
		return;
	GRAPHMEM_COUNT(freed_by_graph, 1);
	STATS_INC(frees);
	remove_rec(h, st);
}

CUresult
track_graph_launch(void *real, const char *api, CUgraphExec e, CUstream s)
{
	CUresult r = CALL(real, CUresult (*)(CUgraphExec, CUstream), (e, s));
	CUgraph cg;

	if (r != CUDA_SUCCESS)
		return r;
	GRAPHMEM_COUNT(launches, 1);
	/* Launched into a capture, it is a node of that graph: nothing
	 * runs now. */
	if (stream_capturing(stream_of(api, s), &cg))
		return r;
	const gm_exec_t *x = graphmem_exec_acquire(e);
	if (x == NULL)
		return r;
	const gm_alloc_t *a;
	const uintptr_t *f;
	size_t na = graphmem_exec_allocs(x, &a);
	size_t nf = graphmem_exec_frees(x, &f);
	stack_id_t st = capture();
	for (size_t j = 0; j < nf; j++) {
		bool own = false;
		for (size_t i = 0; i < na && !own; i++)
			own = a[i].dptr == f[j];
		if (!own)
			graph_frees(f[j], st);
	}
	for (size_t i = 0; i < na; i++) {
		if (a[i].freed_inside)
			continue;
		reg_handle_t h;
		reg_rec_t rec;
		/* Still live from an earlier launch: the driver accepted the
		 * launch, so it freed it (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_
		 * FREE_ON_LAUNCH). */
		if (!registry_find(NS_ADDR, a[i].dptr, &h, &rec)) {
			STATS_INC(frees);
			remove_rec(h, st);
		}
		record_st(NS_ADDR, KIND_GRAPH, a[i].dptr, a[i].size,
		    a[i].device, NULL, (uintptr_t)st, api, 0,
		    a[i].stack != 0 ? a[i].stack : st);
		graphmem_node_launched(a[i].dptr);
		GRAPHMEM_COUNT(made_live, 1);
	}
	graphmem_exec_release(x);
	return r;
}

CUresult
track_graph_exec_destroy(void *real, const char *api, CUgraphExec e)
{
	CUresult r = CALL(real, CUresult (*)(CUgraphExec), (e));

	(void)api;
	if (r == CUDA_SUCCESS)
		graphmem_exec_destroyed(e);
	return r;
}

CUresult
track_graph_destroy(void *real, const char *api, CUgraph g)
{
	CUresult r = CALL(real, CUresult (*)(CUgraph), (g));

	(void)api;
	if (r == CUDA_SUCCESS)
		graphmem_graph_destroyed(g);
	return r;
}

/* Whether device dev lets the CPU and the GPU use managed memory at once
 * (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS): there a stream
 * attachment changes no result, so a pooled managed block needs none of
 * the driver's. */
static bool
concurrent_managed(int dev)
{
	static int cache[MAX_DEVICES]; /* 0 unknown, 1 yes, 2 no */
	if (dev < 0 || dev >= MAX_DEVICES)
		return false;
	int c = __atomic_load_n(&cache[dev], __ATOMIC_RELAXED);
	if (c == 0) {
		int v = 0;
		gr_resolve();
		if (gr.dev_attr == NULL || gr.dev_attr(&v,
		    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
		    (CUdevice)dev) != CUDA_SUCCESS)
			v = 0;
		c = v ? 1 : 2;
		__atomic_store_n(&cache[dev], c, __ATOMIC_RELAXED);
	}
	return c == 1;
}

CUresult
track_stream_attach_mem(void *real, const char *api, CUstream s,
    CUdeviceptr dptr, size_t length, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUstream, CUdeviceptr, size_t, unsigned int);
	reg_rec_t rec;
	kind_t k;

	if (pool_mode()) {
		switch (pooled_at((uintptr_t)dptr, &rec, &k)) {
		case PQ_LIVE:
			if (rec.kind != KIND_MANAGED)
				return CUDA_ERROR_INVALID_VALUE;
			/* As on a driver allocation of that size: its start,
			 * all of it (H200, probe part capture). */
			if ((uintptr_t)dptr != rec.base ||
			    (length != 0 && length != rec.size) ||
			    (flags != CU_MEM_ATTACH_GLOBAL &&
			    flags != CU_MEM_ATTACH_HOST &&
			    flags != CU_MEM_ATTACH_SINGLE))
				return CUDA_ERROR_INVALID_VALUE;
			return CUDA_SUCCESS;
		case PQ_DEAD:
			return CUDA_ERROR_INVALID_VALUE;
		case PQ_NONE:
			break;
		}
	}
	(void)api;
	return CALL(real, fn_t, (s, dptr, length, flags));
}

/* ------------------------------------------------------------ report */

bool
track_report_due(void)
{
	if (!track_alive())
		return false;
	/* A vfork child (or posix_spawn's) shares our memory and may call
	 * _exit before the parent ever used CUDA: it must touch nothing,
	 * not even the engine's initialisation, nor mark the report written.
	 * The pid is the one seen at load. */
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);
	if (owner != 0 && getpid() != owner)
		return false;
	if (__atomic_load_n(&report_done, __ATOMIC_ACQUIRE))
		return false;
	/* CUDA never used: inert, unless a report is asked for anyway
	 * (cuwarden-audit does: the report proves the shim was loaded). */
	return __atomic_load_n(&stats_coverage.hooks_active, __ATOMIC_RELAXED)
	    != 0 || options_get_bool(OPT_REPORT_ALWAYS);
}

void
track_write_report(const char *how, int status, bool inside)
{
	report_meta_t meta;

	if (!track_report_due())
		return;
	track_init();
	if (__atomic_exchange_n(&report_done, true, __ATOMIC_ACQ_REL))
		return;
	meta.mode = mode == TRACK_POOL ? "pool" : "audit";
	meta.exit_how = how;
	meta.exit_status = status;
	if (inside)
		nowait_begin();
	report_write_env(&meta);
	uint64_t hidden = violation_not_shown();
	if (hidden != 0)
		log_printf("%llu violation%s not printed (%d of each type "
		    "are): the report lists them", (unsigned long long)hidden,
		    hidden == 1 ? " was" : "s were", VIOLATION_SHOW);
	if (inside) {
		uint64_t n = nowait_skipped();
		nowait_end();
		if (n != 0)
			log_warn("the program exited from a signal handler that "
			    "interrupted a CUDA call; %llu part%s of the report "
			    "locked by that call %s left out",
			    (unsigned long long)n, n == 1 ? "" : "s",
			    n == 1 ? "was" : "were");
	}
	if (options_get_bool(OPT_SHOW_STATS)) {
		log_printf("coverage: %llu allocations, %llu frees (%llu "
		    "untracked), %llu violations, %llu hooked entry points",
		    (unsigned long long)stats_coverage.allocations,
		    (unsigned long long)stats_coverage.frees,
		    (unsigned long long)stats_coverage.untracked_frees,
		    (unsigned long long)violation_count(),
		    (unsigned long long)stats_coverage.hooked_entry_points);
		cw_stats_print(NULL, NULL);
	}
}

/* ------------------------------------------------------------ fork */

void
track_postfork_child(void)
{
	/* CUDA is unusable here until exec: pass every call through, write
	 * no report, and drop what the parent recorded (fork.c's handlers
	 * ran before this one: the locks are usable). */
	__atomic_store_n(&dead, true, __ATOMIC_RELAXED);
	__atomic_store_n(&stats_coverage.hooks_active, 0, __ATOMIC_RELAXED);
	registry_reset();
	capture_reset();
	graphmem_reset();
}

void
track_reset(void)
{
	__atomic_store_n(&dead, false, __ATOMIC_RELAXED);
	__atomic_store_n(&report_done, false, __ATOMIC_RELAXED);
	pthread_mutex_lock(&plock);
	memset(primary, 0, sizeof(primary));
	pthread_mutex_unlock(&plock);
	memset(module_owner, 0, sizeof(module_owner));
	memset(stack_owner, 0, sizeof(stack_owner));
	mode = options_get(OPT_MODE) == OPT_MODE_POOL ? TRACK_POOL :
	    TRACK_AUDIT;
	__atomic_store_n(&bounds_on, -1, __ATOMIC_RELAXED);
	capture_reset();
	graphmem_reset();
}
