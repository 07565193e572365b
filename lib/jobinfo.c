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
 *
 * Which launcher: the innermost one whose variables are set, as a job
 * nests them (srun starting torchrun, mpirun inside a Slurm allocation):
 * torchrun (RANK and WORLD_SIZE), then Open MPI (OMPI_COMM_WORLD_RANK),
 * then PMI (PMI_RANK or PMIX_RANK: MPICH, Intel MPI, hydra), then Slurm
 * (SLURM_PROCID).  Its rank, local rank and size are its own; a job id it
 * lacks is Slurm's (SLURM_JOB_ID) when set.
 */

#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fmt.h"
#include "jobinfo.h"

extern char **environ;

static jobinfo_t job = {
	.launcher = NULL, .rank = -1, .local_rank = -1, .world_size = -1,
};

/* ---------------------------------------------------------- environment */

/* The value of name in env, NULL when unset or empty. */
static const char *
env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	if (env == NULL)
		return NULL;
	for (char *const *ep = env; *ep != NULL; ep++) {
		if (strncmp(*ep, name, n) == 0 && (*ep)[n] == '=')
			return (*ep)[n + 1] != '\0' ? *ep + n + 1 : NULL;
	}
	return NULL;
}

/* A non-negative decimal number, -1 when s is not one. */
static long
env_num(char *const *env, const char *name)
{
	const char *s = env_get(env, name);
	long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (LONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

static void
copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src != NULL ? strnlen(src, size - 1) : 0;

	memcpy(dst, src != NULL ? src : "", n);
	dst[n] = '\0';
}

void
jobinfo_parse(char *const *env, jobinfo_t *j)
{
	const char *id = NULL;

	memset(j, 0, sizeof(*j));
	j->rank = j->local_rank = j->world_size = -1;
	if (env_num(env, "RANK") >= 0 && env_num(env, "WORLD_SIZE") >= 0) {
		j->launcher = "torchrun";
		j->rank = env_num(env, "RANK");
		j->local_rank = env_num(env, "LOCAL_RANK");
		j->world_size = env_num(env, "WORLD_SIZE");
		/* torchrun's default rendezvous id is "none". */
		id = env_get(env, "TORCHELASTIC_RUN_ID");
		if (id != NULL && strcmp(id, "none") == 0)
			id = NULL;
	} else if (env_num(env, "OMPI_COMM_WORLD_RANK") >= 0) {
		j->launcher = "openmpi";
		j->rank = env_num(env, "OMPI_COMM_WORLD_RANK");
		j->local_rank = env_num(env, "OMPI_COMM_WORLD_LOCAL_RANK");
		j->world_size = env_num(env, "OMPI_COMM_WORLD_SIZE");
		id = env_get(env, "OMPI_MCA_ess_base_jobid");
		if (id == NULL)
			id = env_get(env, "PMIX_NAMESPACE");
	} else if (env_num(env, "PMI_RANK") >= 0 ||
	    env_num(env, "PMIX_RANK") >= 0) {
		j->launcher = "pmi";
		j->rank = env_num(env, "PMI_RANK");
		if (j->rank < 0)
			j->rank = env_num(env, "PMIX_RANK");
		j->local_rank = env_num(env, "MPI_LOCALRANKID");
		j->world_size = env_num(env, "PMI_SIZE");
		id = env_get(env, "PMIX_NAMESPACE");
	} else if (env_num(env, "SLURM_PROCID") >= 0) {
		j->launcher = "slurm";
		j->rank = env_num(env, "SLURM_PROCID");
		j->local_rank = env_num(env, "SLURM_LOCALID");
		j->world_size = env_num(env, "SLURM_NTASKS");
	}
	if (id == NULL)
		id = env_get(env, "SLURM_JOB_ID");
	copy_str(j->id, sizeof(j->id), id);
	copy_str(j->step, sizeof(j->step), env_get(env, "SLURM_STEP_ID"));
	{
		/* Set but empty is "no GPU": kept apart from unset. */
		size_t n = strlen("CUDA_VISIBLE_DEVICES");

		for (char *const *ep = env; ep != NULL && *ep != NULL; ep++) {
			if (strncmp(*ep, "CUDA_VISIBLE_DEVICES", n) == 0 &&
			    (*ep)[n] == '=') {
				j->has_visible = true;
				copy_str(j->visible, sizeof(j->visible),
				    *ep + n + 1);
				break;
			}
		}
	}
}

/* At load, before any CUDA call can note a device or name a file. */
__attribute__((constructor(102))) static void
jobinfo_read(void)
{
	jobinfo_parse(environ, &job);
}

const jobinfo_t *
jobinfo_get(void)
{
	return &job;
}

/* ------------------------------------------------------------ file names */

/* s made one safe file name component: bytes other than letters, digits
 * and "._-+@" become '_', and so does a leading '.' (no "..", no hidden
 * file). */
static void
safe_copy(char *buf, size_t size, const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < size; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		    c == '+' || c == '@' || (c == '.' && i > 0)))
			c = '_';
		buf[i] = c;
	}
	buf[i] = '\0';
}

bool
jobinfo_expand(char c, char *buf, size_t size)
{
	struct utsname u;

	switch (c) {
	case 'r':
		if (job.rank >= 0)
			fmt_snprintf(buf, size, "%ld", job.rank);
		else
			fmt_snprintf(buf, size, "pid%d", (int)getpid());
		return true;
	case 'j':
		safe_copy(buf, size, job.id[0] != '\0' ? job.id : "nojob");
		return true;
	case 'h':
		safe_copy(buf, size, uname(&u) == 0 && u.nodename[0] != '\0' ?
		    u.nodename : "unknown");
		return true;
	default:
		return false;
	}
}
