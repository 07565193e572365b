#include "preamble.h"
/*
 * devpool_slab.c -- the device engine's slabs (devpool_int.h): classes up
 * to DEVPOOL_SLAB_MAX are slots of slabs, a slab being one best-fit block
 * of 16 to 128 slots of one class with a bitmap in host memory.
 *
 * Invariants: a slab is on its class's partial list exactly when it has a
 * free slot; bitmap bits past nregs are set (never found free); a slab
 * that empties goes back to the best-fit blocks unless it is its class's
 * last one on the list (kept until devpool_trim).  The slots handed out
 * count in st.allocated, the slab block itself does not.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include <stdlib.h>

#include "devpool_int.h"
#include "sizeclass.h"

static uint32_t
slab_nregs(size_t csize)
{
	size_t n = (64u << 10) / csize;
	if (n < 16)
		n = 16;
	if (n > SLAB_MAXREGS)
		n = SLAB_MAXREGS;
	return (uint32_t)n;
}

static void
partial_push(devpool_t *dp, slab_t *s)
{
	s->prev = NULL;
	s->next = dp->partial[s->cls];
	if (s->next != NULL)
		s->next->prev = s;
	dp->partial[s->cls] = s;
}

static void
partial_remove(devpool_t *dp, slab_t *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		dp->partial[s->cls] = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void
slab_init_tail(slab_t *s)
{
	/* Slots past nregs are marked used so the search never finds them. */
	for (unsigned k = s->nregs; k < SLAB_MAXREGS; k++)
		s->used[k / 64] |= 1ULL << (k % 64);
}

/* Empty slab s: off its partial list, its span back to the best-fit
 * blocks. */
static void
slab_unmake(devpool_t *dp, slab_t *s)
{
	block_t *b = s->blk;
	partial_remove(dp, s);
	b->slab = NULL;
	b->state = B_USED;
	dp->st.allocated += b->size;
	dp->st.slabs--;
	free(s);
	devpool_bf_free(dp, b);
}

int
devpool_slab_alloc(devpool_t *dp, unsigned cls, size_t csize, bool grow,
    uintptr_t *addr)
{
	slab_t *s = dp->partial[cls];
	if (s == NULL) {
		slab_t *ns = calloc(1, sizeof(*ns));
		if (ns == NULL)
			return DEVPOOL_ENOMEM;
		uint32_t n = slab_nregs(csize);
		block_t *b;
		int r = devpool_bf_alloc(dp, n * csize, grow, &b);
		if (r != DEVPOOL_OK) {
			free(ns);
			return r;
		}
		/* devpool_bf_alloc counted the slab as allocated; slots
		 * count. */
		dp->st.allocated -= b->size;
		b->state = B_SLAB;
		b->slab = ns;
		ns->blk = b;
		ns->cls = cls;
		ns->nregs = n;
		ns->nfree = n;
		slab_init_tail(ns);
		dp->st.slabs++;
		partial_push(dp, ns);
		s = ns;
	}
	unsigned i;
	for (i = 0; i < SLAB_MAXREGS / 64; i++)
		if (~s->used[i] != 0)
			break;
	unsigned bit = (unsigned)__builtin_ctzll(~s->used[i]);
	unsigned slot = i * 64 + bit;
	cw_assert(slot < s->nregs);
	s->used[i] |= 1ULL << bit;
	if (--s->nfree == 0)
		partial_remove(dp, s);
	dp->st.allocated += csize;
	*addr = s->blk->addr + slot * csize;
	return DEVPOOL_OK;
}

bool
devpool_slab_free(devpool_t *dp, block_t *b, uintptr_t addr)
{
	slab_t *s = b->slab;
	size_t csize = sizeclass_size(s->cls, SIZECLASS_LGD_DEVICE);
	size_t off = addr - b->addr;
	if (off % csize != 0 || off / csize >= s->nregs)
		return true;
	unsigned slot = (unsigned)(off / csize);
	uint64_t bit = 1ULL << (slot % 64);
	if (!(s->used[slot / 64] & bit))
		return true;
	s->used[slot / 64] &= ~bit;
	dp->st.allocated -= csize;
	if (s->nfree++ == 0)
		partial_push(dp, s);
	/* Empty and not the class's last slab: give the span back. */
	if (s->nfree == s->nregs &&
	    (dp->partial[s->cls] != s || s->next != NULL))
		slab_unmake(dp, s);
	return false;
}

bool
devpool_slab_block_of(const block_t *b, uintptr_t addr, uintptr_t *base,
    size_t *size)
{
	const slab_t *s = b->slab;
	size_t csize = sizeclass_size(s->cls, SIZECLASS_LGD_DEVICE);
	size_t slot = (addr - b->addr) / csize;
	if (slot >= s->nregs ||
	    !(s->used[slot / 64] & (1ULL << (slot % 64))))
		return true;
	*base = b->addr + slot * csize;
	*size = csize;
	return false;
}

void
devpool_slab_trim(devpool_t *dp)
{
	for (unsigned c = 0; c < DEVPOOL_NCLASSES; c++) {
		slab_t *s = dp->partial[c];
		while (s != NULL) {
			slab_t *next = s->next;
			if (s->nfree == s->nregs)
				slab_unmake(dp, s);
			s = next;
		}
	}
}
