/*
 * fold.c -- a distributed job's processes (fold.h): the ranks of each
 * finding, said once for all of them ("on 8 of 8 ranks: 3,145,728 bytes
 * each") instead of once per process, and the ranks that left no report.
 *
 * A finding already holds every process that made it (model.c merges by
 * fingerprint); here its pids are mapped to their processes' ranks
 * through a table sorted by (host, pid), so a job of thousands of ranks
 * folds in O(pids log processes).  A pid of one host that two processes
 * share (two boots) takes the first one's rank.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "fold.h"
#include "jobenv.h"
#include "xalloc.h"

typedef struct pid_rank_s {
	const char *host;
	long pid, rank;
} pid_rank_t;

static int
cmp_pid_rank(const void *a, const void *b)
{
	const pid_rank_t *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

size_t
fold_rank_sort(long *ranks, size_t n)
{
	size_t i, k = 0;

	qsort(ranks, n, sizeof(*ranks), cmp_long);
	for (i = 0; i < n; i++)
		if (k == 0 || ranks[k - 1] != ranks[i])
			ranks[k++] = ranks[i];
	return k;
}

/* f's ranks, pid_ranks and shares. */
static void
fold_finding(au_finding_t *f, const pid_rank_t *tab, size_t n, long size)
{
	size_t i, k = 0;
	bool first = true;

	free(f->ranks);
	free(f->pid_ranks);
	f->ranks = xcalloc(f->npids + 1, sizeof(*f->ranks));
	f->pid_ranks = xcalloc(f->npids + 1, sizeof(*f->pid_ranks));
	f->nranks = f->unranked = 0;
	f->job_size = size;
	f->each_same = f->pid_count != NULL;
	for (i = 0; i < f->npids; i++) {
		pid_rank_t key = { f->hosts[i], f->pids[i], -1 };
		const pid_rank_t *hit = bsearch(&key, tab, n, sizeof(*tab),
		    cmp_pid_rank);

		f->pid_ranks[i] = hit != NULL ? hit->rank : -1;
		if (f->pid_ranks[i] < 0) {
			f->unranked++;
			continue;
		}
		f->ranks[k++] = f->pid_ranks[i];
		if (f->pid_count == NULL)
			continue;
		if (first) {
			f->each_count = f->pid_count[i];
			f->each_bytes = f->pid_bytes[i];
			first = false;
		} else if (f->pid_count[i] != f->each_count ||
		    f->pid_bytes[i] != f->each_bytes) {
			f->each_same = false;
		}
	}
	f->nranks = fold_rank_sort(f->ranks, k);
	/* Two processes of one rank (a restarted worker): no "each". */
	if (f->nranks != k || f->nranks == 0)
		f->each_same = false;
}

/* Reports of several jobs (two job ids) fold as one job: their ranks
 * meet.  Said once, naming two of the ids. */
static void
warn_jobs(const au_model_t *m)
{
	const char *first = NULL;

	for (size_t i = 0; i < m->nprocs; i++) {
		const char *id = m->procs[i].job_id;

		if (m->procs[i].rank < 0 || id[0] == '\0')
			continue;
		if (first == NULL) {
			first = id;
		} else if (strcmp(first, id) != 0) {
			au_warn("the reports are of several jobs (ids %s and "
			    "%s, at least): their ranks are counted as one "
			    "job's", first, id);
			return;
		}
	}
}

bool
fold_tool_is_rank(void)
{
	jobenv_t j;

	jobenv_parse(environ, &j);
	return j.rank >= 0;
}

void
fold_model(au_model_t *m, bool one_rank)
{
	pid_rank_t *tab = xcalloc(m->nprocs + 1, sizeof(*tab));
	unsigned char *have;
	long size = -1, top = -1;
	size_t i, n = 0;

	m->ranked = false;
	m->one_rank = one_rank;
	m->nranks_found = 0;
	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];

		if (p->rank < 0)
			continue;
		m->ranked = true;
		tab[n++] = (pid_rank_t){ p->host, p->pid, p->rank };
		if (p->world_size > size)
			size = p->world_size;
		if (p->rank > top)
			top = p->rank;
	}
	if (!m->ranked) {
		free(tab);
		return;
	}
	warn_jobs(m);
	if (top + 1 > size)
		size = top + 1; /* a rank beyond what a report said */
	m->world_size = size;
	qsort(tab, n, sizeof(*tab), cmp_pid_rank);
	/* One rank's audit: its findings name their rank, not "on 1 of
	 * N ranks" (job_size -1), since the others were not looked at. */
	for (i = 0; i < m->nleaks; i++)
		fold_finding(m->leaks[i], tab, n, one_rank ? -1 : size);
	for (i = 0; i < m->nviols; i++)
		fold_finding(m->viols[i], tab, n, one_rank ? -1 : size);

	have = xcalloc((size_t)size + 1, 1);
	for (i = 0; i < n; i++) {
		if (!have[tab[i].rank])
			m->nranks_found++;
		have[tab[i].rank] = 1;
	}
	free(m->missing_ranks);
	m->missing_ranks = xcalloc((size_t)size + 1,
	    sizeof(*m->missing_ranks));
	m->nmissing_ranks = 0;
	for (long r = 0; r < size && !one_rank; r++)
		if (!have[r])
			m->missing_ranks[m->nmissing_ranks++] = r;
	free(have);
	free(tab);
}

char *
fold_rank_list(const long *ranks, size_t n)
{
	size_t cap = 16 + n * 24, len = 0;
	char *s = xmalloc(cap);

	s[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
			j++;
		if (j == i)
			len += (size_t)snprintf(s + len, cap - len, "%s%ld",
			    len ? "," : "", ranks[i]);
		else
			len += (size_t)snprintf(s + len, cap - len,
			    "%s%ld%s%ld", len ? "," : "", ranks[i],
			    j == i + 1 ? "," : "-", ranks[j]);
		i = j + 1;
	}
	return s;
}

char *
fold_missing_line(const au_model_t *m)
{
	char *list, *line;

	if (m->nmissing_ranks == 0)
		return NULL;
	list = fold_rank_list(m->missing_ranks, m->nmissing_ranks);
	line = xasprintf("%zu of %ld left no report: %s", m->nmissing_ranks,
	    m->world_size, list);
	free(list);
	return line;
}
