/*
 * engine.h -- what the files of shim/ share (the engine's internals;
 * track.h is its interface to preload/).  Functions and variables here are
 * hidden (-fvisibility=hidden): the engine is linked into the shim and its
 * unit tests only.  shim_* names cross a file of shim/; everything else in
 * a file is static.  Owner: shim.
 */
#ifndef CUWARDEN_ENGINE_H
#define CUWARDEN_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cuda.h>

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
#include "tlformat.h"
#include "track.h"
#include "violation.h"

#define MAX_OWNER_PATTERNS 32
#define OWNER_CACHE 4096

/* What a free call saw before the real call: the live record at addr. */
typedef struct pre_s {
	bool found;
	reg_handle_t h;
	reg_rec_t rec;
	uint64_t t; /* the timeline's time of the free (shim_tl_clock, read
		     * before the real call: an address the driver hands out
		     * again comes after it); 0: none */
} pre_t;

#define KBIT(k) (1u << (k))
#define FREE_DEVICE_KINDS \
	(KBIT(KIND_DEVICE) | KBIT(KIND_MANAGED) | KBIT(KIND_ASYNC) | \
	KBIT(KIND_GRAPH))

/* A pooled record's aux: the pool's device, and for pinned memory the
 * flags the program asked for (cuMemHostGetFlags answers them). */
#define POOL_AUX(dev, hflags) \
	((uintptr_t)(uint32_t)(dev) | (uintptr_t)(hflags) << 32)
#define POOL_AUX_DEV(aux) ((int)(uint32_t)(aux))
#define POOL_AUX_HFLAGS(aux) ((unsigned)((uint64_t)(aux) >> 32))

/* Where an address stands in pool mode. */
typedef enum pq_e {
	PQ_NONE,  /* in no pool's segment: the driver's to answer */
	PQ_LIVE,  /* in a live pooled allocation, as the program asked for it */
	PQ_DEAD   /* in the pools' memory, outside what the program holds */
} pq_t;

#define CALL(real, type, args) (((type)(real)) args)

/* True if the driver refused an allocating call, which is then counted
 * (the report's failed_calls): the caller returns the driver's answer. */
static inline bool
shim_refused(CUresult r)
{
	if (r == CUDA_SUCCESS)
		return false;
	STATS_INC(failed_calls);
	return true;
}

/* shim/oom.c: an allocation refused for want of memory (r is
 * CUDA_ERROR_OUT_OF_MEMORY): the OOM report, once per process; later ones
 * counted (shim_oom_later). */
void shim_oom(const char *api, kind_t kind, size_t size, CUresult r);
uint64_t shim_oom_later(void);
/* The ring of the last allocations and frees the OOM report shows. */
void shim_recent_alloc(const reg_rec_t *rec);
void shim_recent_free(const char *api, const reg_rec_t *rec, stack_id_t st);

/* shim_refused for an allocating call of kind and size by api: an OOM
 * answer also writes the OOM report (shim/oom.c). */
static inline bool
shim_refused_alloc(CUresult r, const char *api, kind_t kind, size_t size)
{
	if (r == CUDA_SUCCESS)
		return false;
	STATS_INC(failed_calls);
	if (unlikely(r == CUDA_ERROR_OUT_OF_MEMORY))
		shim_oom(api, kind, size, r);
	return true;
}

struct dl_phdr_info;

void shim_classify_free(ns_t ns, unsigned accept, uintptr_t addr, CUresult r, const char *api, const pre_t *pre);
bool shim_concurrent_managed(int dev);
CUcontext shim_current_ctx(void);
int shim_current_device(void);
size_t shim_driver_size_of(CUdeviceptr base);
void shim_failed_keep(const char *api, uintptr_t addr, const reg_rec_t *rec, CUresult r, stack_id_t st);
void shim_init_owner_patterns(void);
owner_id_t shim_owner_of(stack_id_t st);
/* "audit" or "pool", as a report names the mode (initialises the engine). */
const char *shim_mode_name(void);
bool shim_pool_mode(void);
bool shim_pool_try_alloc(kind_t kind, uintptr_t *out, size_t size, unsigned hflags, const char *api, CUresult *res);
bool shim_pool_try_free(unsigned accept, uintptr_t addr, CUstream stream, bool async, const char *api, CUresult *res);
pq_t shim_pooled_at(uintptr_t p, reg_rec_t *rec, kind_t *kind);
void shim_pre_lookup(ns_t ns, uintptr_t addr, pre_t *pre);
CUcontext shim_primary_ctx_of(CUdevice dev);
void shim_record(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device, CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags);
void shim_record_st(ns_t ns, kind_t kind, uintptr_t base, size_t size, int device, CUcontext ctx, uintptr_t aux, const char *api, uint16_t flags, stack_id_t st);
/* Removes h's record, freed at the timeline's time t (0: now) by api: in
 * the OOM report's recent events too. */
void shim_remove_rec(reg_handle_t h, stack_id_t st, uint64_t t,
    const char *api);
void shim_report_violation(vtype_t type, const char *api, uintptr_t addr, const reg_rec_t *rec, CUresult r, stack_id_t st);
/* An invalid free by a call that frees the kinds in accept (KBIT): the
 * report names the family of the call (violation_t.family). */
void shim_report_invalid_free(const char *api, uintptr_t addr, unsigned accept, CUresult r, stack_id_t st);
/* [p, p + n) reaches outside rec; refused: the shim answers
 * CUDA_ERROR_INVALID_VALUE itself (pool mode), else the call is
 * forwarded. */
void shim_report_out_of_bounds(const char *api, uintptr_t p, size_t n, const reg_rec_t *rec, bool refused, stack_id_t st);
bool shim_stream_capturing(const char *api, CUstream s, CUgraph *g);
CUstream shim_stream_of(const char *api, CUstream s);
bool shim_unknown_to_driver(CUresult r);
/* The fork hooks of shim/lifetime.c: its teardown buffer's lock and its
 * table of primary contexts. */
extern const fork_hooks_t shim_teardown_fork;
extern const fork_hooks_t shim_primary_fork;
/* The marker (report.h: report_write_marker) at the process's first CUDA
 * call, once, from the process a report is due from (shim/exit.c). */
void shim_write_marker(void);
/* shim/snapshot.c, from track_postfork_child: the child takes no
 * snapshot (its eventfd closed, the signal's default action back). */
void shim_snapshot_postfork_child(void);
/* shim/timeline.c (CUWARDEN_TIMELINE; doc/shim.md, "The timeline").
 * shim_tl_on: set once at initialisation, before any event. */
extern bool shim_tl_on;
/* Reads the options, from do_init: the timeline on, or a warning. */
void shim_timeline_init(void);
/* Nanoseconds since the timeline's start (CLOCK_MONOTONIC). */
uint64_t shim_tl_clock(void);
/* The same, for a time that must be no later than the calling thread's
 * next store as other threads see it (an allocation's, before its
 * insert): may be cheaper. */
uint64_t shim_tl_clock_before(void);
/* Appends event ev (tlformat.h's TLF_*) of r at time t to the calling
 * thread's buffer; never blocks (dropped and counted when the writer is
 * behind). */
void shim_tl_put(unsigned ev, const reg_rec_t *r, uint64_t t);
/* At exit, before the report: every buffer written, the file in place.
 * Returns the report's "timeline" member, NULL when the option is off. */
const report_timeline_t *shim_timeline_finish(void);
/* For snapshot n (shim/snapshot.c's thread): a copy of the timeline so
 * far, "<CUWARDEN_REPORT>.snap.N.timeline", made by the writer (waited
 * for, at most 10 s).  Returns the snapshot's "timeline" member (its
 * error says why there is no file), NULL when the option is off or the
 * snapshot is text. */
const report_timeline_t *shim_timeline_snapshot(int n);
void shim_timeline_postfork_child(void);
/* shim/tlsummary.c, the timeline's writer's alone: the totals past
 * CUWARDEN_TIMELINE_LIMIT.  shim_tls_begin takes the file's records, in
 * any order, a call per chunk, last: true with the last (the limit is
 * reached then); shim_tls_fold takes each later buffer's records; each
 * returns true once no memory is left (said; nothing kept from then).
 * shim_tls_export copies the totals for the report at exit (which 0) or a
 * snapshot (1); NULL before shim_tls_begin's last call. */
bool shim_tls_begin(const tlf_rec_t *r, size_t n, bool last);
bool shim_tls_fold(const tlf_rec_t *r, size_t n);
const report_tlsum_t *shim_tls_export(int which);

/* A free (or teardown, ...) of the record r, after its removal: one
 * predictable branch when the timeline is off. */
static inline void
shim_tl_free(unsigned ev, const reg_rec_t *r, uint64_t t)
{
	if (unlikely(__atomic_load_n(&shim_tl_on, __ATOMIC_RELAXED)))
		shim_tl_put(ev, r, t != 0 ? t : shim_tl_clock());
}

extern bool shim_dead;
extern char shim_exe_path[512];
extern track_mode_t shim_mode;
extern bool shim_report_done;
extern pid_t shim_pid;

#endif /* CUWARDEN_ENGINE_H */
