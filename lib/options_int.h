/*
 * options_int.h -- shared by the files of options (lib/options*.c) and
 * nobody else; the contract is options.h.  Include it after preamble.h.
 *
 *   options.c        the table (options.def), reading the environment
 *                    once, its warnings, the getters, the log's source
 *   options_parse.c  the parsers of values: booleans, integers, sizes,
 *                    the words of an enum
 */
#ifndef CUWARDEN_OPTIONS_INT_H
#define CUWARDEN_OPTIONS_INT_H

#include <stdbool.h>

/* The size suffixes K, M, G and T; options.def writes sizes with them. */
#define KIB 1024LL
#define MIB (1024LL * KIB)
#define GIB (1024LL * MIB)
#define TIB (1024LL * GIB)

/* One of words (NULL-terminated), in any case, between the blanks the
 * other parsers ignore; *out is its index.  Returns true on error. */
bool options_parse_word(const char *s, const char *const *words, int *out);

#endif /* CUWARDEN_OPTIONS_INT_H */
