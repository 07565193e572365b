/*
 * check_jobinfo.c -- a process's place in a job (lib/jobenv.h,
 * lib/jobinfo.c): each launcher's variables, nesting (the innermost
 * wins), values that are not numbers, the job id's fallbacks, the empty
 * CUDA_VISIBLE_DEVICES, and %r %h %j in file name patterns
 * (log_expand_path), with their safe names.
 */
#include "preamble.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "jobenv.h"
#include "jobinfo.h"
#include "log.h"
#include "unit.h"

static jobenv_t
parse(char **env)
{
	jobenv_t j;

	jobenv_parse(env, &j);
	return j;
}

START_TEST(test_jobinfo_launchers)
{
	char *torch[] = { "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8",
		"TORCHELASTIC_RUN_ID=abc", NULL };
	char *ompi[] = { "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4",
		"OMPI_COMM_WORLD_LOCAL_RANK=0", "PMIX_NAMESPACE=ns",
		"PMIX_RANK=2", NULL };
	char *pmi[] = { "PMI_RANK=5", "PMI_SIZE=6", "MPI_LOCALRANKID=1", NULL };
	char *slurm[] = { "SLURM_PROCID=7", "SLURM_LOCALID=3",
		"SLURM_NTASKS=9", "SLURM_JOB_ID=77", "SLURM_STEP_ID=2", NULL };
	jobenv_t j;

	j = parse(torch);
	ck_assert_str_eq(j.launcher, "torchrun");
	ck_assert_int_eq(j.rank, 3);
	ck_assert_int_eq(j.local_rank, 1);
	ck_assert_int_eq(j.world_size, 8);
	ck_assert_str_eq(j.id, "abc");
	ck_assert(!j.has_visible);
	j = parse(ompi);
	ck_assert_str_eq(j.launcher, "openmpi");
	ck_assert_int_eq(j.rank, 2);
	ck_assert_int_eq(j.local_rank, 0);
	ck_assert_int_eq(j.world_size, 4);
	ck_assert_str_eq(j.id, "ns");
	j = parse(pmi);
	ck_assert_str_eq(j.launcher, "pmi");
	ck_assert_int_eq(j.rank, 5);
	ck_assert_int_eq(j.local_rank, 1);
	ck_assert_int_eq(j.world_size, 6);
	ck_assert_str_eq(j.id, "");
	j = parse(slurm);
	ck_assert_str_eq(j.launcher, "slurm");
	ck_assert_int_eq(j.rank, 7);
	ck_assert_int_eq(j.local_rank, 3);
	ck_assert_int_eq(j.world_size, 9);
	ck_assert_str_eq(j.id, "77");
	ck_assert_str_eq(j.step, "2");
}
END_TEST

START_TEST(test_jobinfo_nesting_and_junk)
{
	char *nested[] = { "SLURM_PROCID=0", "SLURM_JOB_ID=12",
		"OMPI_COMM_WORLD_RANK=1", "RANK=4", "WORLD_SIZE=5",
		"TORCHELASTIC_RUN_ID=none", "CUDA_VISIBLE_DEVICES=", NULL };
	char *junk[] = { "RANK=1x", "WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=-1",
		"PMI_RANK=", "SLURM_PROCID=99999999999999999999999", NULL };
	char *rank_only[] = { "RANK=2", NULL };
	jobenv_t j;

	/* torchrun under mpirun under Slurm: torchrun's rank, Slurm's id
	 * (torchrun's "none" is no id). */
	j = parse(nested);
	ck_assert_str_eq(j.launcher, "torchrun");
	ck_assert_int_eq(j.rank, 4);
	ck_assert_int_eq(j.local_rank, -1);
	ck_assert_str_eq(j.id, "12");
	ck_assert(j.has_visible);
	ck_assert_str_eq(j.visible, "");
	j = parse(junk);
	ck_assert_ptr_null(j.launcher);
	ck_assert_int_eq(j.rank, -1);
	ck_assert_int_eq(j.world_size, -1);
	j = parse(rank_only); /* RANK without WORLD_SIZE is no torchrun */
	ck_assert_ptr_null(j.launcher);
	j = parse(NULL);
	ck_assert_ptr_null(j.launcher);
}
END_TEST

START_TEST(test_jobinfo_safe_names)
{
	char b[16];

	jobenv_safe_name(b, sizeof(b), "a/b c@d.e");
	ck_assert_str_eq(b, "a_b_c@d.e");
	jobenv_safe_name(b, sizeof(b), "..");
	ck_assert_str_eq(b, "_.");
	jobenv_safe_name(b, sizeof(b), "0123456789abcdefghij");
	ck_assert_str_eq(b, "0123456789abcde");
}
END_TEST

/* %r is the rank or pidPID, %j the job id or nojob (as this process was
 * started: plain, or under CI's own launcher), %h the host; %x still
 * refused. */
START_TEST(test_jobinfo_expand)
{
	const jobinfo_t *j = jobinfo_get();
	char out[256], want[256], r[32], id[130];
	struct utsname u;

	if (j->rank >= 0)
		snprintf(r, sizeof(r), "%ld", j->rank);
	else
		snprintf(r, sizeof(r), "pid%d", (int)getpid());
	jobenv_safe_name(id, sizeof(id), j->id[0] != '\0' ? j->id : "nojob");
	ck_assert(!log_expand_path("r%r.j%j.%%r", out, sizeof(out)));
	snprintf(want, sizeof(want), "r%s.j%s.%%r", r, id);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(uname(&u), 0);
	ck_assert(!log_expand_path("%h", out, sizeof(out)));
	ck_assert_int_eq(strlen(out), strlen(u.nodename));
	ck_assert(log_expand_path("%x", out, sizeof(out)));
	ck_assert(log_expand_path("%r%r%r", out, 8)); /* too small */
}
END_TEST

static Suite *
make_jobinfo_suite(void)
{
	Suite *s = suite_create("jobinfo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_jobinfo_launchers);
	tcase_add_test(tc, test_jobinfo_nesting_and_junk);
	tcase_add_test(tc, test_jobinfo_safe_names);
	tcase_add_test(tc, test_jobinfo_expand);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_jobinfo_suite)
