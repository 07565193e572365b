/*
 * audit.h -- cuwarden-audit's own nouns: the findings, processes and the
 * model every file shares, the tool's exit statuses and limits.  The tool
 * is a separate program: it never links libcuwarden, it reads the
 * per-process reports the shim writes (doc/report-schema.md) and writes
 * the merged document (doc/audit.md).  Each module's contract is its own
 * header, named after it:
 *
 *   main.c         the two commands (audit a program; `report`), the flow
 *   cli*.c         the command line: options, --help, the configuration
 *                  (cli.h; cli_int.h lists the files)
 *   run*.c         runs the program under the shim, collects its reports
 *                  and the processes that left none (run.h; run_int.h
 *                  lists the files)
 *   ingest*.c      reads per-process reports and merged documents
 *                  (ingest.h; ingest_int.h lists the files)
 *   timeline.c     a report's timeline read, its peaks computed
 *   tlseries.c     its memory over time, its growing stacks
 *   render_trace.c --trace: the memory over time as a Chrome trace
 *   model.c        findings merged into groups, sorted, summed
 *   fold.c         a distributed job: ranks of findings, missing ranks
 *   symbolize.c    (module, build-id, offset) -> function, file:line
 *   suppress.c     suppression rules (file and built-in), applied;
 *                  supp_chain.c the "{ ... }" call-chain rules;
 *                  supp_gen.c --gen-suppressions
 *   baseline.c     fingerprints and --baseline
 *   render_*.c     text, JSON, SARIF, HTML, JUnit (render.h); the text report
 *                  is render_text.c and render_finding.c
 *                  (render_text_int.h)
 *   xalloc.c       allocation that never fails
 *   diag.c         the tool's error and warning lines
 *   text.c         UTF-8 sequences, escaped text lines
 *   json.c         jansson members with defaults, counts, UTF-8 strings
 *   num.c          numbers parsed, summed without overflow, written
 *   path.c         base names, paths under the current directory, kinds
 *   input.c        the only way files are read (input_open)
 *   out.c          the only way files are written (out_open)
 *   (lib/hash.h's hash_fnv is the one string hash: fingerprints, processes)
 *
 * Words: a *finding* is a leak group or a violation group (the same
 * class, category, kind or type, API and whole stack: fingerprint_same);
 * a *process* is one report file.
 */
#ifndef CUWARDEN_TOOLS_AUDIT_H
#define CUWARDEN_TOOLS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define AU_PROG "cuwarden-audit"

/* Exit statuses of the tool itself (doc/audit.md, cuwarden-audit(1)). */
#define AU_EXIT_DEFAULT_ERROR 23 /* findings, unless --error-exitcode */
#define AU_EXIT_USAGE 125        /* bad options or arguments (as timeout(1)) */
#define AU_EXIT_AUDIT_FAILED 125 /* shim missing/not loaded, bad report */
#define AU_EXIT_CANNOT_EXEC 126
#define AU_EXIT_NOT_FOUND 127

#define AU_MAX_ADDRESSES 16

/* The largest files read (doc/audit.md, "Limits"). */
#define AU_MAX_REPORT_BYTES (1ULL << 30) /* a report, a --json, a baseline */
#define AU_MAX_SUPP_BYTES (16ULL << 20)  /* a suppressions file */
#define AU_MAX_MODULE_BYTES (16ULL << 30) /* an ELF file to symbolize */

/* ------------------------------------------------------------- findings */

typedef struct au_inline_s {
	char *function; /* NULL when unknown */
	char *file;
	int line;
} au_inline_t;

typedef struct au_frame_s {
	char *module;   /* path; NULL when unknown (offset is an address) */
	char *build_id; /* lowercase hex; "" when the module has none */
	uint64_t offset;
	/* Filled by symbolize_model(). */
	char *function; /* DWARF or ELF symbol name; NULL when unknown */
	char *file;     /* source file (as the debug info names it) */
	int line;       /* 0 when unknown */
	au_inline_t *inlined; /* inlined calls at this pc, innermost first */
	size_t ninlined;
	const char *note; /* static text: "build-id mismatch", ... or NULL */
	bool symbolized;
	bool python;    /* a Python frame: file, function, line; no module */
} au_frame_t;

typedef struct au_stack_s {
	au_frame_t *frames; /* innermost first */
	size_t n;
} au_stack_t;

typedef enum au_class_e { AU_LEAK, AU_VIOLATION } au_class_t;

/* A leak's category (doc/audit.md, "Leak categories"): memory never
 * freed; memory freed only by a context's teardown (a leak too, unless
 * --accept-teardown); an address range never freed (cuMemAddressReserve:
 * address space, never counted as leaked bytes or allocations). */
typedef enum au_cat_e {
	AU_CAT_LEAK,
	AU_CAT_TEARDOWN,
	AU_CAT_RANGE,
} au_cat_t;

typedef struct au_finding_s {
	au_class_t cls;
	au_cat_t cat;     /* leaks; AU_CAT_LEAK for violations */
	char *type;       /* violation type; for leaks the kind again */
	char *kind;       /* memory kind ("device", ...); may be "" */
	char *family;     /* violations of unknown kind: the kind the call
	                   * frees (report "family"); NULL when none */
	bool has_range;   /* out_of_bounds: [range_off, range_off +
	                   * range_len) from the allocation's base */
	uint64_t range_off, range_len;
	char *api;
	char *owner;      /* "" when none */
	char *cuda_error; /* violations; NULL when none */
	int device;       /* first device seen; -1 unknown */
	int *devices;     /* distinct devices, in order seen */
	size_t ndevices;
	uint64_t size;    /* bytes per allocation (first seen) */
	uint64_t min_size, max_size;
	uint64_t count;   /* allocations (leaks), occurrences (violations) */
	uint64_t bytes;   /* leaks: total bytes */
	char **addresses; /* at most AU_MAX_ADDRESSES */
	size_t naddresses;
	au_stack_t stack;       /* allocation (leak) or violating stack */
	au_stack_t alloc_stack; /* violations */
	au_stack_t free_stack;  /* violations: first free */
	long *pids;             /* distinct (with hosts), in order seen */
	char **hosts;           /* the host of each pid ("" unknown) */
	size_t npids;
	bool show_hosts;        /* the model's processes span several
	                         * hosts: label pids host:pid (model_sort) */
	/* Each pid's share, beside pids (count, bytes); NULL when unknown
	 * (a merged document without "per_process"). */
	uint64_t *pid_count, *pid_bytes;
	/* Set by fold_model (fold.c): the ranks of its pids, sorted, each
	 * once (none when no process has a rank); pid_ranks: each pid's
	 * (-1: none); unranked: pids of no rank; job_size: the job's world
	 * size (-1 in one rank's audit: fold_model's one_rank); each_same: every rank had the same share (each_count,
	 * each_bytes). */
	long *ranks, *pid_ranks;
	size_t nranks, unranked;
	long job_size;
	bool each_same;
	uint64_t each_count, each_bytes;
	size_t seq;             /* order of first occurrence */
	char fingerprint[17];
	uint64_t fp;            /* the fingerprint as a number */
	char sym_fingerprint[17]; /* symbolic: after symbolize_model() */
	/* Set by supp_apply()/baseline_apply(): NULL when reported. */
	const char *suppressed_by;
	bool in_baseline;
} au_finding_t;

/* Is f reported (neither suppressed nor in the baseline)? */
static inline bool
finding_reported(const au_finding_t *f)
{
	return f->suppressed_by == NULL && !f->in_baseline;
}

typedef struct au_process_s {
	char *path;   /* the report file */
	json_t *doc;  /* the whole document */
	long pid, ppid;
	bool hooks_active;
	bool library;     /* mode "library": libcuwarden, no shim counts */
	bool cuda_active; /* hooks active, a library report, or findings */
	char *exe;    /* "" when absent */
	char *host;   /* the report's host and boot_id; "" when absent */
	char *boot_id;
	/* Its place in the job (the report's "job"): -1, "" when unknown. */
	long rank, local_rank, world_size;
	char *job_id, *launcher;
	/* How it ended: the report's exit.how ("exit" when absent) and
	 * status, or what run_spawn saw reaping it; status -1 when
	 * unknown. */
	const char *exit_how; /* static text or in doc */
	long exit_status;
	/* Which process this is, to read each once (ingest_proc.c). */
	uint64_t key;   /* hash of pid, host, boot_id, ppid, command, ... */
	unsigned group; /* the input it came from (au_model_t.group) */
	dev_t dev;      /* the report file; 0, 0 inside a merged document */
	ino_t ino;
} au_process_t;

/* A process that used CUDA under the shim (its marker, written at its
 * first CUDA call) and left no report: killed by SIGKILL, or its report
 * lost (doc/audit.md, "Lost processes"). */
typedef struct au_lost_s {
	long pid, ppid;
	long rank;       /* its rank in a job (the marker's); -1 none */
	json_t *command; /* array of strings, owned */
	char *exe;       /* "" when absent */
	/* What the tool knows of its end: "signal" (status: the signal) or
	 * "exit" (the exit status) when it reaped it; "running" when it was
	 * still running as the audit ended (--no-wait-descendants: listed,
	 * not counted as lost); NULL when unknown. */
	const char *end_how;
	int end_status;
} au_lost_t;

/* An OOM report (doc/report-schema.md, "The OOM report"): the document
 * as the shim wrote it, kept whole (rendered first in text, carried as is
 * in --json's "oom"), and its stacks read for symbolize_model: the
 * request's and those of the first AU_OOM_GROUPS live groups. */
#define AU_OOM_GROUPS 10
typedef struct au_oom_s {
	json_t *doc;  /* owned */
	char *path;
	long pid;
	au_stack_t request;
	au_stack_t groups[AU_OOM_GROUPS];
	size_t ngroups;
} au_oom_t;

/* A process's peaks (doc/audit.md, "Peaks"): the document timeline.c
 * made of its timeline (or read back from a merged document's "peaks"),
 * kept whole, and the stacks of each device's first AU_PEAK_GROUPS
 * groups, device-major: its "devices", then its "after_limit"'s, for
 * symbolize_model. */
#define AU_PEAK_GROUPS 10
typedef struct au_peak_s {
	json_t *doc;        /* owned */
	char *path;         /* the report */
	long pid;
	au_stack_t *stacks; /* [device index * AU_PEAK_GROUPS + group] */
	size_t nstacks;
} au_peak_t;

/* A process's memory over time (doc/audit.md, "Memory over time"): the
 * document tlseries.c made of its timeline (or read back from a merged
 * document's "timelines"), kept whole, and the stacks it names
 * ([i]: its "stacks"[i]) for symbolize_model. */
typedef struct au_tline_s {
	json_t *doc;        /* owned */
	char *path;         /* the report */
	long pid;
	au_stack_t *stacks;
	size_t nstacks;
} au_tline_t;

typedef struct au_model_s {
	au_process_t *procs;
	size_t nprocs;
	au_oom_t *ooms;   /* in the order read */
	size_t nooms;
	au_peak_t *peaks; /* in the order read */
	size_t npeaks;
	au_tline_t *tlines; /* in the order read */
	size_t ntlines;
	au_finding_t **leaks; /* every leak group (reported or not) */
	size_t nleaks;
	au_finding_t **viols;
	size_t nviols;
	/* The run (absent for `report`). */
	json_t *command;  /* array of strings, owned */
	int exit_status;  /* the program's, shell style; -1 unknown */
	int term_signal;  /* the signal that killed the program, or 0 */
	bool ran;         /* true when this run spawned the program */
	au_lost_t *lost;  /* processes that left no report (run_lost.c) */
	size_t nlost;
	/* Set by the caller for each input (a run, a FILE or DIR given to
	 * `report`): reports of one input are distinct processes. */
	unsigned group;
	unsigned ngroups; /* groups handed out (merged documents take one) */
	size_t seq;       /* findings created so far */
	struct au_index_s *index; /* fingerprint -> finding (model.c) */
	bool show_hosts;  /* the processes span several hosts: pids are
	                   * labelled host:pid (model_sort) */
	/* The job (fold_model, fold.c): ranked when a process has a rank;
	 * its world size (the largest a report gave, else the highest
	 * rank + 1); the ranks of no report, sorted. */
	bool ranked;
	bool one_rank;    /* the tool audits one rank of a job */
	long world_size;
	long *missing_ranks;
	size_t nmissing_ranks, nranks_found;
} au_model_t;

#endif /* CUWARDEN_TOOLS_AUDIT_H */
