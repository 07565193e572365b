/*
 * out.h -- the only way the tool writes a file (--json, --sarif, --html,
 * --log-file, the --keep-reports copies; out.c says how it is made safe).
 */
#ifndef CUWARDEN_TOOLS_OUT_H
#define CUWARDEN_TOOLS_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An output file being written. */
typedef struct au_out_s {
	FILE *fp;    /* write here */
	char *path;  /* for messages */
	int dirfd;   /* its directory; -1 when written in place */
	char *name;  /* its name there */
	char *tmp;   /* the new file there, renamed over name by commit */
} au_out_t;

/* Opens path for writing ("-": standard output, written in place).
 * Returns true on error (message in err). */
bool out_open(au_out_t *o, const char *path, char *err, size_t errsize);
/* The same for name in the directory dirfd (not taken); path is for
 * messages. */
bool out_open_at(au_out_t *o, int dirfd, const char *name, const char *path,
    char *err, size_t errsize);
/* Flushes and closes, checking every error, then renames the new file
 * over the name.  Returns true on error (message in err; the new file is
 * removed and an earlier output left as it was). */
bool out_commit(au_out_t *o, char *err, size_t errsize);
/* Closes and removes what out_open made. */
void out_abort(au_out_t *o);
/* Could path be written (checked before a long run)?  Returns true when
 * not (message in err). */
bool out_check(const char *path, char *err, size_t errsize);
/* Is path "-", standard output? */
bool out_is_stdout(const char *path);
/* Do two output paths name one file (one directory, one name; "-" and a
 * link to standard output, as /dev/stdout)? */
bool out_same(const char *a, const char *b);

#endif /* CUWARDEN_TOOLS_OUT_H */
