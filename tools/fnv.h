/*
 * fnv.h -- FNV-1a (64 bits), the tool's one string hash: the
 * fingerprints of findings (baseline.c) and the identities of processes
 * (ingest_proc.c).  Fingerprints are stored (a --json document, read back
 * by --baseline): the hash never changes.
 */
#ifndef CUWARDEN_TOOLS_FNV_H
#define CUWARDEN_TOOLS_FNV_H

#include <stdint.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* h with the bytes of s (up to its NUL) hashed in. */
static inline uint64_t
fnv_str(uint64_t h, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		h ^= *p;
		h *= FNV_PRIME;
	}
	return h;
}

#endif /* CUWARDEN_TOOLS_FNV_H */
