#include "preamble.h"

/*
 * jobinfo.c -- the process's place in a distributed job, from its
 * launcher's environment, and the %r %h %j of file names (jobinfo.h).
 *
 * Owns: the job as read at load (job); the GPUs are jobinfo_gpu.c's.
 * A leaf: the log expands file names with jobinfo_expand, so nothing here
 * logs or calls up.  The environment is read by a constructor from
 * `environ` (no getenv, no malloc): the report written at exit names the
 * rank the launcher gave, whatever the program did to its environment
 * since.
 */

#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fmt.h"
#include "jobenv.h"
#include "jobinfo.h"

extern char **environ;

static jobinfo_t job = {
	.launcher = NULL, .rank = -1, .local_rank = -1, .world_size = -1,
};

/* At load, before any CUDA call can note a device or name a file. */
__attribute__((constructor(102))) static void
jobinfo_read(void)
{
	jobenv_parse(environ, &job);
}

const jobinfo_t *
jobinfo_get(void)
{
	return &job;
}

/* ------------------------------------------------------------ file names */

bool
jobinfo_expand(char c, char *buf, size_t size)
{
	struct utsname u;

	switch (c) {
	case 'r':
		if (job.rank >= 0)
			fmt_snprintf(buf, size, "%ld", job.rank);
		else
			fmt_snprintf(buf, size, JOBENV_NO_RANK_PREFIX "%d",
			    (int)getpid());
		return true;
	case 'j':
		jobenv_safe_name(buf, size, job.id[0] != '\0' ? job.id :
		    JOBENV_NO_JOB);
		return true;
	case 'h':
		jobenv_safe_name(buf, size, uname(&u) == 0 &&
		    u.nodename[0] != '\0' ? u.nodename : JOBENV_NO_HOST);
		return true;
	default:
		return false;
	}
}
