/*
 * outfile_int.h -- what the files of outfile (outfile.h is the contract)
 * share: the checks of outfile.c that outfile_whole.c makes too.  Include
 * it after preamble.h.
 *
 *   outfile.c        the standard streams' names, the checks, the log's
 *                    open and identity, writes that wait for a full fd
 *   outfile_path.c   patterns made absolute once (outfile_path_t)
 *   outfile_whole.c  a file written whole: temporary file, atomic move,
 *                    the signals held meanwhile
 */
#ifndef CUWARDEN_OUTFILE_INT_H
#define CUWARDEN_OUTFILE_INT_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* ----------------------------------------------------------- "outfile.c" */

/* What lstat finds at path, before anything is opened: a regular file, a
 * symbolic link, nothing, or a terminal (*tty set) may be opened.  Returns
 * true if it must not be (errno and *what set). */
bool outfile_refuse_existing(const char *path, bool *tty, const char **what);

/* After open: fd is a regular file (owned by the effective user if
 * must_be_ours) or a terminal.  Returns true if not (errno and *what set). */
bool outfile_refuse_open(int fd, bool must_be_ours, const char **what);

#pragma GCC visibility pop

#endif /* CUWARDEN_OUTFILE_INT_H */
