/*
 * path.c -- base names, paths under the current directory, file kinds
 * (path.h).
 */
#include "config.h"

#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "xalloc.h"

const char *
base_name(const char *path)
{
	const char *s;

	if (path == NULL)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

char *
path_under_cwd(const char *path)
{
	char cwd[PATH_MAX];
	size_t n;

	if (path == NULL || path[0] != '/')
		return NULL;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	n = strlen(cwd);
	if (n == 1) /* "/" */
		return xstrdup(path + 1);
	if (strncmp(path, cwd, n) != 0 || path[n] != '/')
		return NULL;
	return xstrdup(path + n + 1);
}

const char *
file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO";
	if (S_ISCHR(mode))
		return "is a character device";
	if (S_ISBLK(mode))
		return "is a block device";
	if (S_ISSOCK(mode))
		return "is a socket";
	if (S_ISLNK(mode))
		return "is a symbolic link";
	return "is not a regular file";
}
