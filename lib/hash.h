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
 *
 * hash_fnv (FNV-1a, 64 bits) is the one hash of strings: owner names,
 * module pattern lists, and the audit tool's fingerprints and process
 * identities.  Fingerprints are stored (a --json document, read back by
 * --baseline): it never changes.  Only macros and inline functions, no
 * includes of lib/, so tools/ (which never links libcuwarden) uses it too.
 */
#ifndef CUWARDEN_HASH_H
#define CUWARDEN_HASH_H

#include <stddef.h>
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

#define HASH_FNV_OFFSET 0xcbf29ce484222325ULL
#define HASH_FNV_PRIME 0x100000001b3ULL

/* h with the n bytes at p hashed in (start from HASH_FNV_OFFSET). */
static inline uint64_t
hash_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= HASH_FNV_PRIME;
	}
	return h;
}

/* The same with the bytes of s up to its NUL. */
static inline uint64_t
hash_fnv_str(uint64_t h, const char *s)
{
	for (const unsigned char *b = (const unsigned char *)s; *b; b++) {
		h ^= *b;
		h *= HASH_FNV_PRIME;
	}
	return h;
}

#endif /* CUWARDEN_HASH_H */
