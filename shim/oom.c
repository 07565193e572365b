#include "preamble.h"
/*
 * oom.c -- out of memory: the ring of the process's last allocations and
 * frees (shim_recent_alloc, shim_recent_free), and the OOM report written
 * at the first allocation the driver (or pool mode's pools) refuses with
 * CUDA_ERROR_OUT_OF_MEMORY (shim_oom; report.h: report_write_oom;
 * doc/shim.md, "The OOM report").
 *
 * Invariants: one OOM report per process, for the first OOM; later ones
 * are counted (shim_oom_later) and said at exit.  The program gets the
 * driver's answer whatever happens here: a report that cannot be written
 * is a logged error, nothing more.
 *
 * Locking: none.  The ring is lock-free: a writer takes a slot with one
 * atomic increment and publishes it seqlock-style (the slot's seq is 0
 * while written, the event's number once done); the reader at an OOM
 * keeps the slots whose seq is the same before and after it read them.
 * Two writers 16 events apart on one slot at once may leave it mixed:
 * the ring is a hint of what happened last, not a record.
 */
#include <string.h>
#include <unistd.h>

#include "engine.h"

#define RING 16 /* a power of two */

typedef struct slot_s {
	uint64_t seq;  /* 0: being written (or never); else the event's
			* number */
	uint64_t api;  /* const char * */
	uint64_t base;
	uint64_t size;
	uint64_t bits; /* stack << 32 | is_free << 24 | kind << 16 |
			* (uint16_t)device */
} slot_t;

static slot_t ring[RING];
static uint64_t ring_next;    /* events so far */
static bool oom_done;         /* atomic exchange */
static uint64_t oom_later;    /* OOMs after the reported one */

static void
ring_put(bool is_free, const char *api, uintptr_t base, size_t size,
    int kind, int device, stack_id_t st)
{
	uint64_t n = __atomic_add_fetch(&ring_next, 1, __ATOMIC_RELAXED);
	slot_t *s = &ring[(n - 1) & (RING - 1)];

	__atomic_store_n(&s->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->api, (uint64_t)(uintptr_t)api, __ATOMIC_RELAXED);
	__atomic_store_n(&s->base, (uint64_t)base, __ATOMIC_RELAXED);
	__atomic_store_n(&s->size, (uint64_t)size, __ATOMIC_RELAXED);
	__atomic_store_n(&s->bits, (uint64_t)st << 32 |
	    (uint64_t)is_free << 24 | (uint64_t)(uint8_t)kind << 16 |
	    (uint16_t)(int16_t)device, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, n, __ATOMIC_RELEASE);
}

void
shim_recent_alloc(const reg_rec_t *rec)
{
	ring_put(false, rec->api, rec->base, rec->size, rec->kind,
	    rec->device, rec->alloc_stack);
}

void
shim_recent_free(const char *api, const reg_rec_t *rec, stack_id_t st)
{
	ring_put(true, api, rec->base, rec->size, rec->kind, rec->device, st);
}

/* Copies the ring's events into out (oldest first).  Returns how many. */
static size_t
ring_read(report_event_t *out)
{
	uint64_t last = __atomic_load_n(&ring_next, __ATOMIC_ACQUIRE);
	uint64_t first = last > RING ? last - RING + 1 : 1;
	size_t k = 0;

	for (uint64_t n = first; n <= last && n != 0; n++) {
		slot_t *s = &ring[(n - 1) & (RING - 1)];
		uint64_t s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		uint64_t api = __atomic_load_n(&s->api, __ATOMIC_RELAXED);
		uint64_t base = __atomic_load_n(&s->base, __ATOMIC_RELAXED);
		uint64_t size = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
		uint64_t bits = __atomic_load_n(&s->bits, __ATOMIC_RELAXED);

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (s1 != n || __atomic_load_n(&s->seq, __ATOMIC_RELAXED) != n)
			continue; /* being rewritten */
		out[k].seq = n;
		out[k].api = (const char *)(uintptr_t)api;
		out[k].base = (uintptr_t)base;
		out[k].size = (size_t)size;
		out[k].stack = (stack_id_t)(bits >> 32);
		out[k].is_free = (bits >> 24 & 1) != 0;
		out[k].kind = (uint8_t)(bits >> 16);
		out[k].device = (int16_t)(uint16_t)bits;
		k++;
	}
	return k;
}

uint64_t
shim_oom_later(void)
{
	return __atomic_load_n(&oom_later, __ATOMIC_RELAXED);
}

void
shim_oom(const char *api, kind_t kind, size_t size, CUresult r)
{
	const driver_fns_t *drv;
	report_event_t recent[RING];
	report_oom_t o;
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);

	/* Not from a vfork child (the parent's memory) nor a dead engine. */
	if (!track_alive() || (owner != 0 && getpid() != owner))
		return;
	if (__atomic_exchange_n(&oom_done, true, __ATOMIC_ACQ_REL)) {
		__atomic_add_fetch(&oom_later, 1, __ATOMIC_RELAXED);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.mode = shim_mode_name();
	o.api = api;
	o.kind = (int)kind;
	o.size = size;
	o.cuda_error = (int)r;
	o.stack = stack_capture_outside();
	o.device = kind == KIND_PINNED || kind == KIND_REGISTERED ? -1 :
	    shim_current_device();
	/* The device's own view, in this thread's context (no lock of ours
	 * is held here), in relaxed capture mode: a call the program did not
	 * make must break no stream capture. */
	o.mem_error = -1;
	drv = driver_get();
	if (drv != NULL && drv->cuMemGetInfo_v2 != NULL &&
	    shim_current_ctx() != NULL) {
		int cm = capture_relax();
		CUresult m = drv->cuMemGetInfo_v2(&o.mem_free, &o.mem_total);

		capture_unrelax(cm);
		o.mem_known = m == CUDA_SUCCESS;
		o.mem_error = (int)m;
	}
	if (shim_pool_mode() && o.device >= 0) {
		o.pool = true;
		o.pool_cached = pool_cached_bytes(o.device);
	}
	o.nrecent = ring_read(recent);
	o.recent = recent;
	if (report_write_oom(&o))
		log_warn("%s ran out of memory; the OOM report could not be "
		    "written (above)", api);
}
