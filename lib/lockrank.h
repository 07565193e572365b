/*
 * lockrank.h -- the order of every lock in lib/ and preload/.
 *
 * A thread holding a lock of rank r may take only locks of a higher rank.
 * So the outermost locks come first.  fork.c takes every module's locks in
 * this order before fork (prefork) and releases them in the reverse order
 * afterwards, in the parent and in the child (postfork_*), so that no lock
 * is held by a thread that does not exist in the child.
 *
 * Most of these are leaves in practice: registry callbacks call nothing
 * (registry.h), violation_record is called with no registry lock held,
 * and no lock of ours is held across a driver call (DESIGN.md).  The
 * order still matters for fork, where all are taken at once.
 *
 *   registry    stripe locks (registry.c), then tree locks
 *               (registry_tree.c)
 *   violation   the kept records (violation.c)
 *   stackdepot  the depot's append lock (stackdepot.c)
 *   pool        pool engines and arenas (pool.c and friends)
 *   owner       the owner name table (owner.c)
 *   ledger      the failed-free ledger (ledger.c)
 *   log         the output callback (log.c), innermost: anyone may log
 */
#ifndef CUWARDEN_LOCKRANK_H
#define CUWARDEN_LOCKRANK_H

typedef enum lock_rank_e {
	LOCK_RANK_REGISTRY = 1,
	LOCK_RANK_VIOLATION,
	LOCK_RANK_STACKDEPOT,
	LOCK_RANK_POOL,
	LOCK_RANK_OWNER,
	LOCK_RANK_LEDGER,
	LOCK_RANK_LOG,
	LOCK_RANK_COUNT
} lock_rank_t;

/* Debug builds (--enable-debug): each thread keeps the ranks it holds;
 * taking a lock whose rank is not above every rank held is a lock-order
 * bug and stops the process (cw_assert_fail).  Locks of one rank taken
 * together (the registry's stripes in lock_all) are taken once, as one
 * rank.  Release builds compile these to nothing. */
void lockrank_check_take(lock_rank_t rank);
void lockrank_check_drop(lock_rank_t rank);
#define lockrank_take(rank) \
	do { \
		if (config_debug) \
			lockrank_check_take(rank); \
	} while (0)
#define lockrank_drop(rank) \
	do { \
		if (config_debug) \
			lockrank_check_drop(rank); \
	} while (0)

#endif /* CUWARDEN_LOCKRANK_H */
