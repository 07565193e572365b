/*
 * path.h -- what the tool says of a path: its last name, its name under
 * the current directory, the kind of file it is.
 */
#ifndef CUWARDEN_TOOLS_PATH_H
#define CUWARDEN_TOOLS_PATH_H

#include <sys/types.h>

/* The part of path after its last '/'; NULL gives "". */
const char *base_name(const char *path);
/* When path names a file under the current directory, the path relative
 * to it (newly allocated); else NULL. */
char *path_under_cwd(const char *path);
/* "is a directory", "is a FIFO", ... for a file that is not regular. */
const char *file_kind(mode_t mode);

#endif /* CUWARDEN_TOOLS_PATH_H */
