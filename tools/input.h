/*
 * input.h -- the only way the tool opens a file it reads (reports,
 * suppressions, baselines, modules to symbolize; input.c says why).
 */
#ifndef CUWARDEN_TOOLS_INPUT_H
#define CUWARDEN_TOOLS_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Opens a regular file of at most max bytes for reading (O_NONBLOCK
 * cleared after the open).  Returns the descriptor, or -1 with the
 * message in err ("PATH: is a FIFO, not a regular file", "PATH: cannot
 * read WHAT: ..."; what may be NULL; errno EINVAL for a file that is
 * not regular, EFBIG for one too large, else open's).  *st (may be NULL)
 * gets its fstat. */
int input_open(const char *path, uint64_t max, const char *what,
    struct stat *st, char *err, size_t errsize);
/* The whole file, NUL-terminated (*len bytes), via input_open.  Returns
 * NULL on error (message in err). */
char *input_read(const char *path, uint64_t max, const char *what,
    struct stat *st, size_t *len, char *err, size_t errsize);

#endif /* CUWARDEN_TOOLS_INPUT_H */
