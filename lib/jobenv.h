/*
 * jobenv.h -- a process's place in a distributed job, read from the
 * environment its launcher set: the one reading of the launchers'
 * variables, for the shim (lib/jobinfo.c: the reports' "job", %r %h %j in
 * CUWARDEN_REPORT and CUWARDEN_LOG_FILE) and for cuwarden-audit (%r %h %j
 * in its output paths).  Only inline functions and no includes of lib/,
 * so tools/ (which never links libcuwarden) uses it too; no malloc, no
 * getenv: the caller hands the environment in.
 *
 * Which launcher: the innermost one whose variables are set, as a job
 * nests them (srun starting torchrun, mpirun inside a Slurm allocation):
 * torchrun (RANK and WORLD_SIZE), then Open MPI (OMPI_COMM_WORLD_RANK),
 * then PMI (PMI_RANK or PMIX_RANK: MPICH, Intel MPI, hydra), then Slurm
 * (SLURM_PROCID).  Its rank, local rank and size are its own; a job id it
 * lacks is Slurm's (SLURM_JOB_ID) when set.  doc/report-schema.md, "The
 * job", lists the variables.
 */
#ifndef CUWARDEN_JOBENV_H
#define CUWARDEN_JOBENV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct jobenv_s {
	const char *launcher; /* "torchrun", "openmpi", "pmi", "slurm"; NULL */
	long rank, local_rank, world_size; /* -1 unknown */
	char id[128];         /* the job's id; "" unknown */
	char step[32];        /* Slurm's step id; "" unknown */
	bool has_visible;     /* CUDA_VISIBLE_DEVICES is set */
	char visible[256];    /* ... its value (cut at 255 bytes) */
} jobenv_t;

/* What %r and %j expand to when the launcher gave no rank or job id:
 * "pid" and the pid for the rank (one file per process still), "nojob"
 * for the job; %h is uname's nodename, "unknown" when unreadable. */
#define JOBENV_NO_RANK_PREFIX "pid"
#define JOBENV_NO_JOB "nojob"
#define JOBENV_NO_HOST "unknown"

/* The value of name in env, NULL when unset or empty. */
static inline const char *
jobenv_get(char *const *env, const char *name)
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
static inline long
jobenv_num(char *const *env, const char *name)
{
	const char *s = jobenv_get(env, name);
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

static inline void
jobenv_copy(char *dst, size_t size, const char *src)
{
	size_t n = src != NULL ? strnlen(src, size - 1) : 0;

	memcpy(dst, src != NULL ? src : "", n);
	dst[n] = '\0';
}

static inline void
jobenv_parse(char *const *env, jobenv_t *j)
{
	const char *id = NULL;

	memset(j, 0, sizeof(*j));
	j->rank = j->local_rank = j->world_size = -1;
	if (jobenv_num(env, "RANK") >= 0 && jobenv_num(env, "WORLD_SIZE") >= 0) {
		j->launcher = "torchrun";
		j->rank = jobenv_num(env, "RANK");
		j->local_rank = jobenv_num(env, "LOCAL_RANK");
		j->world_size = jobenv_num(env, "WORLD_SIZE");
		/* torchrun's default rendezvous id is "none". */
		id = jobenv_get(env, "TORCHELASTIC_RUN_ID");
		if (id != NULL && strcmp(id, "none") == 0)
			id = NULL;
	} else if (jobenv_num(env, "OMPI_COMM_WORLD_RANK") >= 0) {
		j->launcher = "openmpi";
		j->rank = jobenv_num(env, "OMPI_COMM_WORLD_RANK");
		j->local_rank = jobenv_num(env, "OMPI_COMM_WORLD_LOCAL_RANK");
		j->world_size = jobenv_num(env, "OMPI_COMM_WORLD_SIZE");
		id = jobenv_get(env, "OMPI_MCA_ess_base_jobid");
		if (id == NULL)
			id = jobenv_get(env, "PMIX_NAMESPACE");
	} else if (jobenv_num(env, "PMI_RANK") >= 0 ||
	    jobenv_num(env, "PMIX_RANK") >= 0) {
		j->launcher = "pmi";
		j->rank = jobenv_num(env, "PMI_RANK");
		if (j->rank < 0)
			j->rank = jobenv_num(env, "PMIX_RANK");
		j->local_rank = jobenv_num(env, "MPI_LOCALRANKID");
		j->world_size = jobenv_num(env, "PMI_SIZE");
		id = jobenv_get(env, "PMIX_NAMESPACE");
	} else if (jobenv_num(env, "SLURM_PROCID") >= 0) {
		j->launcher = "slurm";
		j->rank = jobenv_num(env, "SLURM_PROCID");
		j->local_rank = jobenv_num(env, "SLURM_LOCALID");
		j->world_size = jobenv_num(env, "SLURM_NTASKS");
	}
	if (id == NULL)
		id = jobenv_get(env, "SLURM_JOB_ID");
	jobenv_copy(j->id, sizeof(j->id), id);
	jobenv_copy(j->step, sizeof(j->step), jobenv_get(env, "SLURM_STEP_ID"));
	{
		/* Set but empty is "no GPU": kept apart from unset. */
		size_t n = strlen("CUDA_VISIBLE_DEVICES");

		for (char *const *ep = env; ep != NULL && *ep != NULL; ep++) {
			if (strncmp(*ep, "CUDA_VISIBLE_DEVICES", n) == 0 &&
			    (*ep)[n] == '=') {
				j->has_visible = true;
				jobenv_copy(j->visible, sizeof(j->visible),
				    *ep + n + 1);
				break;
			}
		}
	}
}

/* s made one safe file name component: bytes other than letters, digits
 * and "._-+@" become '_', and so does a leading '.' (no "..", no hidden
 * file). */
static inline void
jobenv_safe_name(char *buf, size_t size, const char *s)
{
	size_t i;

	if (size == 0)
		return;
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

#endif /* CUWARDEN_JOBENV_H */
