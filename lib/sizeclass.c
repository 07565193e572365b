#include "preamble.h"
/*
 * sizeclass.c -- the size classes (sizeclass.h).
 *
 * Class c < 2^lgd is (c + 1) granules (the linear part, up to
 * granule << lgd); above, each doubling (2^lg, 2^(lg+1)] is cut into 2^lgd
 * steps of 2^(lg - lgd).  Owns no state; no locking.
 */
#include "sizeclass.h"

static unsigned
lg_floor(size_t x)
{
	return 63u - (unsigned)__builtin_clzll((unsigned long long)x);
}

unsigned
sizeclass_of(size_t size, unsigned lgd)
{
	size_t lin = SIZECLASS_GRANULE << lgd; /* end of the linear part */
	if (size <= SIZECLASS_GRANULE)
		return 0;
	if (size <= lin)
		return (unsigned)((size + SIZECLASS_GRANULE - 1) /
		    SIZECLASS_GRANULE) - 1;
	unsigned lg = lg_floor(size - 1); /* size in (2^lg, 2^(lg+1)] */
	size_t step = (size_t)1 << (lg - lgd);
	size_t idx = (size - ((size_t)1 << lg) + step - 1) / step; /* 1.. */
	unsigned ndbl = 1u << lgd;
	return ndbl + (lg - lg_floor(lin)) * ndbl + (unsigned)idx - 1;
}

size_t
sizeclass_size(unsigned cls, unsigned lgd)
{
	unsigned ndbl = 1u << lgd;
	if (cls < ndbl)
		return (cls + 1) * SIZECLASS_GRANULE;
	unsigned g = (cls - ndbl) / ndbl, i = (cls - ndbl) % ndbl + 1;
	unsigned lg = lg_floor(SIZECLASS_GRANULE << lgd) + g;
	return ((size_t)1 << lg) + i * ((size_t)1 << (lg - lgd));
}

size_t
sizeclass_round(size_t size, unsigned lgd)
{
	return sizeclass_size(sizeclass_of(size, lgd), lgd);
}
