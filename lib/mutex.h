/*
 * mutex.h -- the locks of lib/, shim/ and preload/: a pthread mutex (or
 * rwlock) that carries its rank (lockrank.h) from its initialiser on.
 *
 * Debug builds (--enable-debug) check the order on every lock: a thread may
 * take a lock only when every lock it holds has a lower rank (a rank marked
 * nestable in lockrank.h may be held several times, in an order its module
 * documents).  A trylock cannot deadlock: it is not checked, but the lock
 * it takes counts as held.  Release builds compile the checks away: the
 * types are a pthread lock and an int.
 *
 * Fork: a module's prefork takes its locks with cw_mutex_prefork (checked
 * against the order of the whole prefork, not against the thread's held
 * set), its postfork_parent releases them with cw_mutex_postfork_parent,
 * and its postfork_child re-initialises them with cw_mutex_postfork_child
 * (the threads that held them do not exist in the child).
 */
#ifndef CUWARDEN_MUTEX_H
#define CUWARDEN_MUTEX_H

#include <pthread.h>
#include <stdbool.h>

#include "lockrank.h"

typedef struct cw_mutex_s {
	pthread_mutex_t m;
	lock_rank_t rank;
} cw_mutex_t;

typedef struct cw_rwlock_s {
	pthread_rwlock_t l;
	lock_rank_t rank;
} cw_rwlock_t;

#define CW_MUTEX_INITIALIZER(r) { PTHREAD_MUTEX_INITIALIZER, (r) }
#define CW_MUTEX_INITIALIZER_ADAPTIVE(r) \
	{ PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, (r) }

/* For a mutex that lives in memory made at run time; attr may be NULL. */
static inline void
cw_mutex_init_attr(cw_mutex_t *mu, const pthread_mutexattr_t *attr,
    lock_rank_t rank)
{
	pthread_mutex_init(&mu->m, attr);
	mu->rank = rank;
}

static inline void
cw_mutex_init(cw_mutex_t *mu, lock_rank_t rank)
{
	cw_mutex_init_attr(mu, NULL, rank);
}

static inline void
cw_mutex_destroy(cw_mutex_t *mu)
{
	pthread_mutex_destroy(&mu->m);
}

static inline void
cw_mutex_lock(cw_mutex_t *mu)
{
	if (config_debug)
		lockrank_check_take(mu->rank);
	pthread_mutex_lock(&mu->m);
}

/* True when the lock was taken. */
static inline bool
cw_mutex_trylock(cw_mutex_t *mu)
{
	if (pthread_mutex_trylock(&mu->m) != 0)
		return false;
	if (config_debug)
		lockrank_note_take(mu->rank);
	return true;
}

static inline void
cw_mutex_unlock(cw_mutex_t *mu)
{
	pthread_mutex_unlock(&mu->m);
	if (config_debug)
		lockrank_check_drop(mu->rank);
}

static inline void
cw_mutex_prefork(cw_mutex_t *mu)
{
	if (config_debug)
		lockrank_check_prefork(mu->rank);
	pthread_mutex_lock(&mu->m);
}

static inline void
cw_mutex_postfork_parent(cw_mutex_t *mu)
{
	pthread_mutex_unlock(&mu->m);
}

/* Made anew, unlocked, its rank kept (a reset, a fork child). */
static inline void
cw_mutex_reinit(cw_mutex_t *mu)
{
	pthread_mutex_init(&mu->m, NULL);
}

static inline void
cw_mutex_postfork_child(cw_mutex_t *mu)
{
	cw_mutex_reinit(mu);
}

static inline void
cw_rwlock_init(cw_rwlock_t *rw, lock_rank_t rank)
{
	pthread_rwlock_init(&rw->l, NULL);
	rw->rank = rank;
}

static inline void
cw_rwlock_destroy(cw_rwlock_t *rw)
{
	pthread_rwlock_destroy(&rw->l);
}

static inline void
cw_rwlock_rdlock(cw_rwlock_t *rw)
{
	if (config_debug)
		lockrank_check_take(rw->rank);
	pthread_rwlock_rdlock(&rw->l);
}

static inline void
cw_rwlock_wrlock(cw_rwlock_t *rw)
{
	if (config_debug)
		lockrank_check_take(rw->rank);
	pthread_rwlock_wrlock(&rw->l);
}

static inline void
cw_rwlock_unlock(cw_rwlock_t *rw)
{
	pthread_rwlock_unlock(&rw->l);
	if (config_debug)
		lockrank_check_drop(rw->rank);
}

#endif /* CUWARDEN_MUTEX_H */
