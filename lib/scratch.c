#include "preamble.h"

/*
 * scratch.c -- growable mmap'd memory without malloc (scratch.h).
 *
 * Owns nothing global: each scratch_t is its owner's.  Locking: none.
 */

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "scratch.h"

bool
scratch_reserve(scratch_t *s, size_t n)
{
	size_t want, cap;
	void *p;

	if (n <= s->cap - s->used)
		return false;
	if (n > SIZE_MAX / 2 - s->used) { /* no doubling could reach it */
		errno = ENOMEM;
		return true;
	}
	want = s->used + n;
	cap = s->cap != 0 ? s->cap : 65536;
	while (cap < want)
		cap *= 2;
	if (s->p == NULL)
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		p = mremap(s->p, s->cap, cap, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return true;
	s->p = p;
	s->cap = cap;
	return false;
}

void
scratch_free(scratch_t *s)
{
	if (s->p != NULL)
		munmap(s->p, s->cap);
	s->p = NULL;
	s->cap = s->used = 0;
}
