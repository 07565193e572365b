/*
 * editdist.h -- the edit distance behind "did you mean": the shim's
 * check of CUWARDEN_* names (options.c) and cuwarden-audit's of its long
 * options (tools/cli.c).  Only an inline function, no includes of lib/,
 * so tools/ (which never links libcuwarden) uses it too.
 */
#ifndef CUWARDEN_EDITDIST_H
#define CUWARDEN_EDITDIST_H

#include <stddef.h>
#include <string.h>

/* Levenshtein distance of [a, a+na) and b, capped at 3: a name one or
 * two edits from another is a typo of it, three or more is another name.
 * No malloc (two rows on the stack): names of 63 bytes or more are 3. */
static inline int
edit_distance(const char *a, size_t na, const char *b)
{
	int row[2][64];
	size_t nb = strlen(b);

	if (na >= 63 || nb >= 63)
		return 3;
	for (size_t j = 0; j <= nb; j++)
		row[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		int *prev = row[(i - 1) & 1], *cur = row[i & 1];

		cur[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) :
			    (del < ins ? del : ins);
		}
	}
	return row[na & 1][nb] < 3 ? row[na & 1][nb] : 3;
}

#endif /* CUWARDEN_EDITDIST_H */
