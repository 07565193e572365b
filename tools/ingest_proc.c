/*
 * ingest_proc.c -- the processes the reports describe (ingest_int.h).
 *
 * Each process is counted once (ingest_proc_seen): a process is known by
 * a hash of its pid, host, boot_id, ppid, command, exe, mode, time,
 * coverage and summary (what a merged document keeps of it; "exit" is
 * left out: the tool may complete it with the status it saw, so a merged
 * document would not match its reports), and a report file by its device
 * and inode.  Two hosts (or two boots of one) that gave one pid are two
 * processes.  Within one input (a run's directory, a DIR, a merged
 * document) every report is a process of its own -- the shim names each
 * report uniquely, so two with one identity there are two processes that
 * got the same pid -- while across inputs the same identity is the same
 * process read twice.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "ingest_int.h"
#include "json.h"
#include "xalloc.h"

uint64_t
ingest_proc_key(const json_t *o, long pid)
{
	static const char *const keys[] = { "command", "exe", "mode", "time",
		"coverage", "summary" };
	json_t *k = json_object();
	uint64_t h;
	size_t i;
	char *s;

	json_object_set_new(k, "pid", json_integer(pid));
	/* Absent (a report or document from before them) is "", as a
	 * merged document writes it. */
	json_object_set_new(k, "host", json_string(json_str(o, "host", "")));
	json_object_set_new(k, "boot_id",
	    json_string(json_str(o, "boot_id", "")));
	json_object_set_new(k, "ppid", json_integer(json_int(o, "ppid", 0)));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(o, keys[i]);

		if (v == NULL && strcmp(keys[i], "command") == 0)
			v = json_array(); /* merged documents write [] */
		else if (v != NULL)
			json_incref(v);
		if (v != NULL)
			json_object_set_new(k, keys[i], v);
	}
	s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(k);
	h = hash_fnv_str(HASH_FNV_OFFSET, s ? s : "");
	free(s);
	return h;
}

bool
ingest_proc_check(ingest_rd_t *r, const json_t *o, const char *where)
{
	static const char *const keys[] = { "host", "boot_id" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(o, keys[i]);

		if (v != NULL && !json_is_string(v))
			return ingest_fail(r, "%s\"%s\" is not a string",
			    where, keys[i]);
	}
	return false;
}

/* Seen: the same file read from another group; or the same identity
 * from another group that holds more such processes than g does yet.
 * Within g nothing is a duplicate: one input never names a report twice,
 * so two of one identity there are two processes (tests/fuzz/fuzz_report.c
 * reads one file twice into one group and wants both counted, as pid
 * reuse must be). */
const au_process_t *
ingest_proc_seen(const au_model_t *m, uint64_t key, unsigned g, dev_t dev,
    ino_t ino)
{
	size_t i, j, in_g = 0;

	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];

		if (ino != 0 && p->ino == ino && p->dev == dev &&
		    p->group != g)
			return p;
		if (p->key == key && p->group == g)
			in_g++;
	}
	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		size_t n = 0;

		if (p->key != key || p->group == g)
			continue;
		for (j = 0; j < m->nprocs; j++)
			if (m->procs[j].key == key &&
			    m->procs[j].group == p->group)
				n++;
		if (n > in_g)
			return p;
	}
	return NULL;
}

/* Did the process use CUDA?  Hooks that saw a call, or a report of a
 * program that uses libcuwarden (mode "library": the shim's coverage
 * counts are all zero there), or any finding at all. */
static void
proc_set_activity(au_process_t *p, const json_t *o)
{
	const json_t *sm = json_object_get(o, "summary");

	p->library = strcmp(json_str(o, "mode", ""), "library") == 0;
	p->cuda_active = p->hooks_active || p->library ||
	    json_array_size(json_object_get(o, "leaks")) > 0 ||
	    json_array_size(json_object_get(o, "violations")) > 0 ||
	    json_int(sm, "leaked_allocations", 0) > 0 ||
	    json_int(sm, "violations", 0) > 0;
}

/* How a process ended, as its "exit" says: a status below 0 (the shim
 * writes -1 when it does not know) or out of range is unknown. */
static void
proc_set_exit(au_process_t *p, const json_t *ex)
{
	long long st = json_int(ex, "status", -1);

	p->exit_how = json_str(ex, "how", "exit");
	p->exit_status = st >= 0 && st <= 255 ? (long)st : -1;
}

/* Its place in the job (doc/report-schema.md, "The job"): what is not a
 * number in range or a string is unknown. */
static void
proc_set_job(au_process_t *p, const json_t *job)
{
	p->rank = (long)json_int(job, "rank", -1);
	p->local_rank = (long)json_int(job, "local_rank", -1);
	p->world_size = (long)json_int(job, "world_size", -1);
	if (p->rank < 0 || p->rank >= (1L << 20))
		p->rank = -1;
	if (p->local_rank < 0 || p->local_rank >= (1L << 20))
		p->local_rank = -1;
	if (p->world_size <= 0 || p->world_size > (1L << 20))
		p->world_size = -1;
	p->job_id = xstrdup(json_str(job, "id", ""));
	p->launcher = xstrdup(json_str(job, "launcher", ""));
}

au_process_t *
ingest_proc_add(au_model_t *m, const json_t *o, const char *path, long pid,
    uint64_t key, unsigned group)
{
	au_process_t *p;

	m->procs = xrealloc(m->procs, (m->nprocs + 1) * sizeof(*m->procs));
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->path = xstrdup(path);
	p->pid = pid;
	p->key = key;
	p->group = group;
	p->ppid = (long)json_int(o, "ppid", 0);
	p->hooks_active = json_is_true(json_object_get(
	    json_object_get(o, "coverage"), "hooks_active"));
	p->exe = xstrdup(json_str(o, "exe", ""));
	p->host = xstrdup(json_str(o, "host", ""));
	p->boot_id = xstrdup(json_str(o, "boot_id", ""));
	proc_set_job(p, json_object_get(o, "job"));
	proc_set_exit(p, json_object_get(o, "exit"));
	proc_set_activity(p, o);
	return p;
}
