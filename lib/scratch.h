/*
 * scratch.h -- growable memory for code that may call neither malloc nor
 * stdio (at exit, from an _exit hook, from a signal handler): mmap'd,
 * grown by mremap (it may move: keep offsets, not pointers, across a
 * reserve), unmapped whole.  No locks: one owner at a time.  Owner: infra.
 */
#ifndef CUWARDEN_SCRATCH_H
#define CUWARDEN_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct scratch_s {
	char *p;
	size_t cap;  /* bytes mapped */
	size_t used; /* bytes used (the owner advances it) */
} scratch_t;
#define SCRATCH_INIT { NULL, 0, 0 }

/* Makes room for n more bytes past used (64 KiB at first, then doubling).
 * Returns true on error (errno set by mmap or mremap; *s unchanged). */
bool scratch_reserve(scratch_t *s, size_t n);

/* Unmaps the memory and empties *s (an empty one is left as it is). */
void scratch_free(scratch_t *s);

#endif /* CUWARDEN_SCRATCH_H */
