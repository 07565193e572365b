/*
 * num.h -- numbers: parsed from the command line, summed without
 * overflow, written with thousands separators.
 */
#ifndef CUWARDEN_TOOLS_NUM_H
#define CUWARDEN_TOOLS_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a size with an optional K/M/G/T suffix (powers of 1024).
 * Returns true on error. */
bool parse_size(const char *s, unsigned long long *out);
/* Parses a decimal integer in [min, max].  Returns true on error. */
bool parse_long(const char *s, long min, long max, long *out);

/* Saturating sums and products: UINT64_MAX means "at least that", an
 * overflow (no report holds it: JSON integers stop at 2^63 - 1). */
uint64_t sat_add(uint64_t a, uint64_t b);
uint64_t sat_mul(uint64_t a, uint64_t b);

/* "3,145,728" into buf (at least 32 bytes). */
const char *fmt_commas(uint64_t v, char *buf, size_t size);
/* "3,145,728 bytes", or "at least 18,446,744,073,709,551,615 bytes (the
 * sum overflowed)" for UINT64_MAX, into buf (96 bytes is enough). */
const char *fmt_sum(uint64_t v, const char *unit, bool commas, char *buf,
    size_t size);

#endif /* CUWARDEN_TOOLS_NUM_H */
