#include "preamble.h"

/*
 * outfile_path.c -- the patterns of the files cuwarden writes, made
 * absolute once (outfile.h: outfile_absolute, outfile_path_t).
 *
 * A relative CUWARDEN_REPORT or CUWARDEN_LOG_FILE names a file of the
 * directory the process started in: the pattern gets that directory in
 * front at the first call, and every later call returns that answer,
 * wherever the process has gone since.  No malloc, no stdio.
 *
 * Locking: none.  outfile_path_t is a three-state atomic (the resolver
 * writes the pattern, then publishes RESOLVED with release order); a
 * thread that finds another resolving spins (yielding) a bounded time.
 */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

enum { OUTFILE_UNRESOLVED = 0, OUTFILE_RESOLVING = 1, OUTFILE_RESOLVED = 2 };

/* Waits for another thread's resolution at most this many yields: a
 * resolver that never finishes (it was in another thread of the parent
 * at fork) must not stall us for ever. */
#define RESOLVE_SPINS (1 << 20)

static CW_TLS int resolving_here; /* this thread is resolving a path */

bool
outfile_absolute(const char *pat, char *out, size_t size)
{
	char cwd[PATH_MAX];
	size_t o = 0, n = strlen(pat);
	int e;

	if (size == 0) {
		errno = ENAMETOOLONG;
		return true;
	}
	if (pat[0] == '/' || outfile_std_fd(pat) >= 0) {
		if (n >= size) {
			errno = ENAMETOOLONG;
			return true;
		}
		memcpy(out, pat, n + 1);
		return false;
	}
	/* No directory to resolve against (removed, unreachable: an
	 * answer that is no absolute path counts as none). */
	e = getcwd(cwd, sizeof(cwd)) == NULL ? errno : cwd[0] != '/' ? ENOENT :
	    0;
	if (e != 0) {
		if (n < size)
			memcpy(out, pat, n + 1);
		errno = e;
		return true;
	}
	for (const char *c = cwd; *c != '\0'; c++) {
		if (o + 3 > size)
			goto too_long;
		if (*c == '%')
			out[o++] = '%';
		out[o++] = *c;
	}
	if (o > 1 || out[0] != '/')
		out[o++] = '/';
	else
		o = 1; /* the root: "/" + pat */
	if (o + n >= size)
		goto too_long;
	memcpy(out + o, pat, n + 1);
	return false;
too_long:
	if (n < size)
		memcpy(out, pat, n + 1);
	errno = ENAMETOOLONG;
	return true;
}

const char *
outfile_path_get(outfile_path_t *p, const char *raw, bool *first)
{
	int s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);

	if (first != NULL)
		*first = false;
	if (likely(s == OUTFILE_RESOLVED))
		return p->value;
	s = OUTFILE_UNRESOLVED;
	if (__atomic_compare_exchange_n(&p->state, &s, OUTFILE_RESOLVING,
	    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		resolving_here++;
		p->err = 0;
		p->value = NULL;
		p->pat[0] = '\0';
		if (raw != NULL) {
			if (outfile_absolute(raw, p->pat, sizeof(p->pat)))
				p->err = errno;
			/* Kept as it is when it could not be resolved (a
			 * pattern that does not even fit as it is cannot
			 * come from options.c, whose strings are shorter). */
			if (p->err == 0 || strcmp(p->pat, raw) == 0)
				p->value = p->pat;
		}
		__atomic_store_n(&p->state, OUTFILE_RESOLVED,
		    __ATOMIC_RELEASE);
		resolving_here--;
		if (first != NULL)
			*first = true;
		return p->value;
	}
	/* Another resolver: this thread (from a signal handler that
	 * interrupted it) cannot wait for itself; another thread is done
	 * in microseconds. */
	if (resolving_here > 0)
		return raw;
	for (long i = 0; i < RESOLVE_SPINS; i++) {
		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) ==
		    OUTFILE_RESOLVED)
			return p->value;
		sched_yield();
	}
	return raw;
}

void
outfile_path_reset(outfile_path_t *p)
{
	__atomic_store_n(&p->state, OUTFILE_UNRESOLVED, __ATOMIC_RELEASE);
}

void
outfile_path_postfork_child(outfile_path_t *p)
{
	int s = OUTFILE_RESOLVING;

	/* The thread that was resolving is not in the child. */
	(void)__atomic_compare_exchange_n(&p->state, &s, OUTFILE_UNRESOLVED,
	    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	resolving_here = 0;
}
