/*
 * lockrank.h -- the order of every lock in lib/, shim/ and preload/.
 *
 * Every lock is a cw_mutex_t or cw_rwlock_t (mutex.h) made with its rank.
 * A thread holding a lock of rank r may take only locks of a higher rank,
 * so the outermost locks come first.  A rank marked nestable below may be
 * held several times at once, in the order its module documents (index
 * order).  fork.c calls every module's prefork in this order (each takes
 * its locks in rank order, checked), and the postfork hooks in the reverse
 * order, so that no lock is held by a thread that does not exist in the
 * child.
 *
 * Most are leaves in practice: registry callbacks call nothing
 * (registry.h), violation_record is called with no registry lock held, and
 * no lock of ours is held across a driver call (doc/design.md), the driver
 * layer's first load excepted.  The order still matters for fork, where
 * all are taken at once.
 *
 *   shim_teardown  the shim's teardown buffer, held across registry_foreach
 *   registry_h     the registry's stripes (registry.c; nestable: index
 *                  order)
 *   registry_t     its treaps' locks (registry_tree.c; nestable: index
 *                  order), under one H
 *   violation      the kept records (violation.c)
 *   stackdepot     the depot's append lock (stackdepot.c)
 *   pool_init      the pools' one-time set-up (pool.c)
 *   pool           a pool's lock, one (kind, device, arena) each
 *   pool_tcache    a pool's list of thread caches
 *   hostpool_arena a host pool's jemalloc arena (rwlock)
 *   hostpool_seg   a host pool's segment table
 *   fence_helper   the fence's helper thread (fence_helper.c)
 *   fence          a device's event list (fence.c)
 *   poolmap        the pooled blocks' address map (poolmap.c)
 *   capture        the captures in progress (capture.c)
 *   driver         the driver layer's first-time paths (driver.c, driver_ctx.c)
 *   owner          the owner name table (owner.c)
 *   ledger         the failed-free ledger (ledger.c)
 *   graphmem       the shim's graph memory tables (shim/graphmem.c)
 *   shim_primary   the shim's primary contexts (shim/lifetime.c)
 *   exit_watch     the exit path's watchdog (preload/end.c)
 *   log            the output callback (log.c), innermost: anyone may log
 */
#ifndef CUWARDEN_LOCKRANK_H
#define CUWARDEN_LOCKRANK_H

#include <stdint.h>

/* X(name, nestable) in rank order, outermost first. */
#define LOCK_RANKS(X) \
	X(SHIM_TEARDOWN, 0) \
	X(REGISTRY_H, 1) \
	X(REGISTRY_T, 1) \
	X(VIOLATION, 0) \
	X(STACKDEPOT, 0) \
	X(POOL_INIT, 0) \
	X(POOL, 0) \
	X(POOL_TCACHE, 0) \
	X(HOSTPOOL_ARENA, 0) \
	X(HOSTPOOL_SEG, 0) \
	X(FENCE_HELPER, 0) \
	X(FENCE, 0) \
	X(POOLMAP, 0) \
	X(CAPTURE, 0) \
	X(DRIVER, 0) \
	X(OWNER, 0) \
	X(LEDGER, 0) \
	X(GRAPHMEM, 0) \
	X(SHIM_PRIMARY, 0) \
	X(EXIT_WATCH, 0) \
	X(LOG, 0)

typedef enum lock_rank_e {
	LOCK_RANK_NONE = 0, /* a lock made without a rank: a bug */
#define LOCK_RANK_ENUM(name, nestable) LOCK_RANK_##name,
	LOCK_RANKS(LOCK_RANK_ENUM)
#undef LOCK_RANK_ENUM
	LOCK_RANK_COUNT
} lock_rank_t;

_Static_assert(LOCK_RANK_COUNT <= 32, "the held ranks fit a 32-bit set");

/* The checks mutex.h makes in debug builds; each stops the process
 * (cw_assert_fail) on a lock-order bug.  check_take: taking rank with a
 * rank at or above it held (at: unless nestable), or with no rank.
 * note_take: the same lock taken without a check (a trylock).
 * check_drop: one lock of rank let go.  check_prefork: a prefork hook
 * taking rank after a higher one in the same prefork (the order of the
 * whole fork, independent of what the thread holds); lockrank_fork_done
 * ends that prefork (fork.c, in both postfork handlers). */
void lockrank_check_take(lock_rank_t rank);
void lockrank_note_take(lock_rank_t rank);
void lockrank_check_drop(lock_rank_t rank);
void lockrank_check_prefork(lock_rank_t rank);
void lockrank_fork_done(void);
/* The calling thread's checks off / on again: the exit report written
 * on a thread whose interrupted frames hold our locks (nowait.h), where
 * a lock of a lower rank is taken by design (tried, never waited for). */
void lockrank_pause(void);
void lockrank_resume(void);
/* The rank's name ("registry_h"), for messages and tests. */
const char *lockrank_name(lock_rank_t rank);

#endif /* CUWARDEN_LOCKRANK_H */
