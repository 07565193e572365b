/*
 * run_exec.c -- why the program could not be started (run_int.h): not
 * found in $PATH, or a file that exists but whose interpreter (its #!
 * line's, or its ELF dynamic loader) does not, or exec's own error.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "input.h"
#include "run_int.h"
#include "xalloc.h"

/* The file execvp(prog) tried: prog itself when it has a '/', else the
 * first regular file named prog in $PATH (execvp's default path when
 * unset).  Newly allocated, or NULL. */
static char *
exec_file(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char defpath[256];
	struct stat st;

	if (strchr(prog, '/') != NULL)
		return stat(prog, &st) == 0 && S_ISREG(st.st_mode) ?
		    xstrdup(prog) : NULL;
	if (path == NULL) {
		if (confstr(_CS_PATH, defpath, sizeof(defpath)) == 0)
			return NULL;
		path = defpath;
	}
	for (p = path;; p = end + 1) {
		char *cand;

		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		/* An empty entry is the current directory. */
		cand = end == p ? xasprintf("./%s", prog) :
		    xasprintf("%.*s/%s", (int)(end - p), p, prog);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			return cand;
		free(cand);
		if (*end == '\0')
			return NULL;
	}
}

/* The interpreter file names: its #! line's first word (*script set),
 * or its ELF PT_INTERP, the dynamic loader.  Newly allocated, or NULL. */
static char *
interpreter_of(const char *file, bool *script)
{
	char buf[512], err[PATH_MAX + 128], *interp = NULL;
	unsigned char *e = (unsigned char *)buf;
	ssize_t n;
	int fd;

	fd = input_open(file, UINT64_MAX, NULL, NULL, err, sizeof(err));
	if (fd < 0)
		return NULL;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		size_t i = 2, j;

		buf[n] = '\0';
		while (buf[i] == ' ' || buf[i] == '\t')
			i++;
		j = i + strcspn(buf + i, " \t\r\n");
		if (j > i)
			interp = strndup(buf + i, j - i);
		*script = true;
	} else if (n >= (ssize_t)sizeof(Elf64_Ehdr) && e[EI_MAG0] == ELFMAG0 &&
	    e[EI_MAG1] == ELFMAG1 && e[EI_MAG2] == ELFMAG2 &&
	    e[EI_MAG3] == ELFMAG3 && e[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		unsigned i;

		memcpy(&eh, buf, sizeof(eh));
		for (i = 0; i < eh.e_phnum && i < 256; i++) {
			off_t at = (off_t)(eh.e_phoff +
			    (uint64_t)i * eh.e_phentsize);

			if (pread(fd, &ph, sizeof(ph), at) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_INTERP || ph.p_filesz < 2 ||
			    ph.p_filesz > PATH_MAX)
				continue;
			interp = xmalloc(ph.p_filesz + 1);
			if (pread(fd, interp, ph.p_filesz,
			    (off_t)ph.p_offset) != (ssize_t)ph.p_filesz) {
				free(interp);
				interp = NULL;
				break;
			}
			interp[ph.p_filesz] = '\0';
			break;
		}
	}
	close(fd);
	return interp;
}

int
run_exec_failed(const char *prog, int e)
{
	char *file = e == ENOENT ? exec_file(prog) : NULL;
	bool script = false;
	char *interp = file != NULL ? interpreter_of(file, &script) : NULL;
	struct stat st;
	int rc;

	if (e == ENOENT && file == NULL && strchr(prog, '/') == NULL) {
		au_error("%s: command not found", prog);
		return AU_EXIT_NOT_FOUND;
	}
	/* ENOENT for a file that exists: what it needs to run is missing. */
	if (interp != NULL && stat(interp, &st) != 0)
		au_error("cannot run %s: its %s %s%s is not found", file,
		    script ? "interpreter" : "ELF interpreter (dynamic loader)",
		    interp, script ? ", named on its #! line," : "");
	else if (file != NULL)
		au_error("cannot run %s: %s (the file exists: a file it needs "
		    "to start is missing)", file, strerror(e));
	else
		au_error("cannot run %s: %s", prog, strerror(e));
	rc = e == ENOENT ? AU_EXIT_NOT_FOUND : AU_EXIT_CANNOT_EXEC;
	free(interp);
	free(file);
	return rc;
}
