#include "preamble.h"
/*
 * violation.c -- broken contracts.
 *
 * Owns: the first VIOLATION_KEEP records (a static array, append-only
 * until violation_reset), a counter per type and a total (atomics).
 *
 * Invariants: kept[0 .. nkept) are complete records that never change
 * again; nkept is published with a release store after the record is
 * written, so violation_foreach reads without the lock (a reader sees only
 * complete records).  counts[t] sums to total.
 *
 * Locking: vlock (LOCK_RANK_VIOLATION) serialises writers of kept[] only;
 * counting is lock-free.  Nothing here calls the driver, the registry or
 * malloc: violation_record may be called from a hook, with any of the
 * registry's locks released (never from inside a registry callback).
 * Logging and CUWARDEN_ON_VIOLATION=abort happen after the lock is
 * dropped.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "mutex.h"
#include "options.h"
#include "violation.h"

static cw_mutex_t vlock = CW_MUTEX_INITIALIZER(LOCK_RANK_VIOLATION);
static violation_t kept[VIOLATION_KEEP];
static size_t nkept;   /* release-stored under vlock, acquire-loaded */
static uint64_t counts[V_COUNT];
static uint64_t total;

static const char *const names[V_COUNT] = {
#define VTYPE_NAME(e, name, rule, text, phrase) [V_##e] = name,
	VTYPE_LIST(VTYPE_NAME)
#undef VTYPE_NAME
};

/* What happened, after "<api>(0x...) of <kind> memory (N bytes)". */
static const char *const phrases[V_COUNT] = {
#define VTYPE_PHRASE(e, name, rule, text, phrase) [V_##e] = phrase,
	VTYPE_LIST(VTYPE_PHRASE)
#undef VTYPE_PHRASE
};

const char *
violation_name(vtype_t type)
{
	if ((unsigned)type >= V_COUNT)
		return "unknown";
	return names[type];
}

/* One line, as it happens: what was called on what, what is wrong
 * (the type's phrase), the range of an out_of_bounds, what the call did
 * when the phrase does not say it, and the driver's answer when there is
 * one. */
int
violation_family(const violation_t *v)
{
	unsigned f = v->family & ((1u << KIND_COUNT) - 1);

	return f != 0 ? __builtin_ctz(f) : -1;
}

static void
log_one(const violation_t *v)
{
	const char *api = v->api != NULL ? v->api : "?";
	const char *name = violation_name(v->type);
	const char *phrase =
	    (unsigned)v->type < V_COUNT ? phrases[v->type] : "";
	char what[96], range[96] = "", res[32] = "";
	static const char *const outcomes[] = {
		[V_OUTCOME_UNSAID] = "",
		[V_OUTCOME_REFUSED] = "; refused, nothing done",
		[V_OUTCOME_FORWARDED] = "; forwarded to the driver",
		[V_OUTCOME_DONE] = "; done all the same",
	};
	const char *outcome = (unsigned)v->outcome <= V_OUTCOME_DONE ?
	    outcomes[v->outcome] : "";

	if (v->kind == KIND_VIEW)
		fmt_snprintf(what, sizeof(what), " of a view (%zu bytes)",
		    v->size);
	else if (v->kind >= 0 && v->kind < KIND_COUNT)
		fmt_snprintf(what, sizeof(what), " of %s memory (%zu bytes)",
		    kind_name((kind_t)v->kind), v->size);
	else
		what[0] = '\0';
	if (v->type == V_OUT_OF_BOUNDS)
		fmt_snprintf(range, sizeof(range), ": [%zu, %zu + %zu)",
		    v->off, v->off, v->len);
	if (v->cuda_error != 0)
		fmt_snprintf(res, sizeof(res), " (CUresult %d)", v->cuda_error);
	log_printf("%s: %s(%#lx)%s%s %s%s%s", name, api,
	    (unsigned long)v->address, what, range, phrase, outcome, res);
}

void
violation_record(const violation_t *v)
{
	vtype_t t = v->type;

	if ((unsigned)t >= V_COUNT)
		t = V_INVALID_FREE;
	__atomic_fetch_add(&counts[t], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);

	cw_mutex_lock(&vlock);
	size_t n = __atomic_load_n(&nkept, __ATOMIC_RELAXED);
	if (n < VIOLATION_KEEP) {
		kept[n] = *v;
		kept[n].type = t;
		__atomic_store_n(&nkept, n + 1, __ATOMIC_RELEASE);
	}
	cw_mutex_unlock(&vlock);

	/* The first VIOLATION_SHOW of each type are printed as they happen
	 * (valgrind's error limit): 10^6 invalid frees must not print 10^6
	 * lines.  The report counts and keeps them all. */
	uint64_t c = __atomic_load_n(&counts[t], __ATOMIC_RELAXED);
	if (c <= VIOLATION_SHOW)
		log_one(v);
	if (c == VIOLATION_SHOW)
		log_printf("%s: %d shown; further ones are not printed (the "
		    "report counts them all)", violation_name(t),
		    VIOLATION_SHOW);
	options_init();
	if (options_get(OPT_ON_VIOLATION) == OPT_ON_VIOLATION_ABORT) {
		log_error("CUWARDEN_ON_VIOLATION=abort: stopping at the first "
		    "violation (%s)", violation_name(t));
		abort();
	}
}

uint64_t
violation_not_shown(void)
{
	uint64_t n = 0;

	for (size_t i = 0; i < V_COUNT; i++) {
		uint64_t c = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
		if (c > VIOLATION_SHOW)
			n += c - VIOLATION_SHOW;
	}
	return n;
}

uint64_t
violation_count(void)
{
	return __atomic_load_n(&total, __ATOMIC_RELAXED);
}

uint64_t
violation_count_type(vtype_t type)
{
	if ((unsigned)type >= V_COUNT)
		return 0;
	return __atomic_load_n(&counts[type], __ATOMIC_RELAXED);
}

int
violation_foreach(int (*fn)(const violation_t *v, void *arg), void *arg)
{
	size_t n = __atomic_load_n(&nkept, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n; i++) {
		int r = fn(&kept[i], arg);
		if (r != 0)
			return r;
	}
	return 0;
}

void
violation_reset(void)
{
	cw_mutex_lock(&vlock);
	__atomic_store_n(&nkept, 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < V_COUNT; i++)
		__atomic_store_n(&counts[i], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&total, 0, __ATOMIC_RELAXED);
	cw_mutex_unlock(&vlock);
}

void
violation_prefork(void)
{
	cw_mutex_prefork(&vlock);
}

void
violation_postfork_parent(void)
{
	cw_mutex_postfork_parent(&vlock);
}

void
violation_postfork_child(void)
{
	/* The child keeps what the parent recorded (its report may list
	 * them) but must not inherit a lock held by another thread. */
	cw_mutex_postfork_child(&vlock);
}
