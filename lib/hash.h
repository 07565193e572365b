/*
 * hash.h -- the one 64-bit mixer of lib/: hash_mix64, the splitmix64
 * finalizer (Stafford's variant 13, as in java.util.SplittableRandom),
 * a bijection whose every output bit depends on every input bit.  Use it
 * wherever a key must be spread over buckets, stripes or priorities, or a
 * counter turned into random-looking bits, rather than a mixer of one's
 * own.  HASH_GOLDEN (2^64 / phi, odd) is splitmix64's increment, used to
 * offset keys before mixing.
 *
 * Its values are not stored anywhere (reports, files); the registry's
 * stripes, and so its handle values and walk order, follow from them.
 * One mixer remains outside it: ledger.c's (the report lists failed-free
 * addresses in its slot order).
 */
#ifndef CUWARDEN_HASH_H
#define CUWARDEN_HASH_H

#include <stdint.h>

#define HASH_GOLDEN 0x9e3779b97f4a7c15ULL

static inline uint64_t
hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif /* CUWARDEN_HASH_H */
