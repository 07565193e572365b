/*
 * audit.h -- cuwarden-audit's own nouns and the contracts between its
 * files.  The tool is a separate program: it never links libcuwarden, it
 * reads the per-process reports the shim writes (doc/report-schema.md)
 * and writes the merged document (doc/audit.md).
 *
 *   main.c         options, the two commands (audit a program; `report`)
 *   run*.c         runs the program under the shim, collects its reports
 *                  (run_int.h)
 *   report_*.c     reads per-process reports and merged documents
 *                  (report_int.h)
 *   model.c        findings merged by fingerprint, sorted, summed
 *   symbolize.c    (module, build-id, offset) -> function, file:line
 *   suppress.c     suppression rules (file and built-in), --gen-suppressions
 *   baseline.c     fingerprints and --baseline
 *   render_*.c     text, JSON, SARIF, HTML
 *   xalloc.c       allocation that never fails
 *   diag.c         the tool's error and warning lines
 *   text.c         UTF-8 sequences, escaped text lines
 *   json.c         jansson members with defaults, counts, UTF-8 strings
 *   num.c          numbers parsed, summed without overflow, written
 *   path.c         base names, paths under the current directory, kinds
 *   input.c        the only way files are read (input_open)
 *   out.c          the only way files are written (out_open)
 *
 * Words: a *finding* is a leak group or a violation group (identical
 * fingerprint); a *process* is one report file.
 */
#ifndef CUWARDEN_TOOLS_AUDIT_H
#define CUWARDEN_TOOLS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#define AU_PROG "cuwarden-audit"

/* Exit statuses of the tool itself (doc/audit.md, cuwarden-audit(1)). */
#define AU_EXIT_DEFAULT_ERROR 23 /* findings, unless --error-exitcode */
#define AU_EXIT_USAGE 125        /* bad options or arguments (as timeout(1)) */
#define AU_EXIT_AUDIT_FAILED 125 /* shim missing/not loaded, bad report */
#define AU_EXIT_CANNOT_EXEC 126
#define AU_EXIT_NOT_FOUND 127

#define AU_FINGERPRINT_FRAMES 8
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
} au_frame_t;

typedef struct au_stack_s {
	au_frame_t *frames; /* innermost first */
	size_t n;
} au_stack_t;

typedef enum au_class_e { AU_LEAK, AU_VIOLATION } au_class_t;

typedef struct au_finding_s {
	au_class_t cls;
	char *type;       /* violation type; for leaks the kind again */
	char *kind;       /* memory kind ("device", ...); may be "" */
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
	long *pids;             /* distinct, in order seen */
	size_t npids;
	size_t seq;             /* order of first occurrence */
	char fingerprint[17];
	uint64_t fp;            /* the fingerprint as a number */
	char sym_fingerprint[17]; /* symbolic: after symbolize_model() */
	/* Set by suppress_apply()/baseline_apply(): NULL when reported. */
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
	/* How it ended: the report's exit.how ("exit" when absent) and
	 * status, or what run_spawn saw reaping it; status -1 when
	 * unknown. */
	const char *exit_how; /* static text or in doc */
	long exit_status;
	/* Which process this is, to read each once (report_proc.c). */
	uint64_t key;   /* hash of pid, ppid, command, exe, mode, time, ... */
	unsigned group; /* the input it came from (au_model_t.group) */
	dev_t dev;      /* the report file; 0, 0 inside a merged document */
	ino_t ino;
} au_process_t;

typedef struct au_model_s {
	au_process_t *procs;
	size_t nprocs;
	au_finding_t **leaks; /* every leak group (reported or not) */
	size_t nleaks;
	au_finding_t **viols;
	size_t nviols;
	/* The run (absent for `report`). */
	json_t *command;  /* array of strings, owned */
	int exit_status;  /* the program's, shell style; -1 unknown */
	int term_signal;  /* the signal that killed the program, or 0 */
	bool ran;         /* true when this run spawned the program */
	/* Set by the caller for each input (a run, a FILE or DIR given to
	 * `report`): reports of one input are distinct processes. */
	unsigned group;
	unsigned ngroups; /* groups handed out (merged documents take one) */
	size_t seq;       /* findings created so far */
	struct au_index_s *index; /* fingerprint -> finding (model.c) */
} au_model_t;

/* ----------------------------------------------------------- symbolize.c */

/* Fills every frame of every finding.  Never fails: a frame that cannot
 * be symbolized keeps module + offset and a note. */
void symbolize_model(au_model_t *m);
void symbolize_frame(au_frame_t *f);
void symbolize_done(void);

/* ------------------------------------------------------------ suppress.c */

typedef struct au_supp_s au_supp_t; /* the rule set */

au_supp_t *supp_new(void);
void supp_add_builtin(au_supp_t *s);
/* Reads FILE.  Returns true on error (message in err: "file:line: ..."). */
bool supp_load(au_supp_t *s, const char *path, char *err, size_t errsize);
/* Marks matching findings suppressed (f->suppressed_by = the rule). */
void supp_apply(au_supp_t *s, au_model_t *m);
/* Used-rule table: calls fn for each rule that matched something. */
void supp_foreach_used(const au_supp_t *s,
    void (*fn)(const char *rule, const char *origin, uint64_t count,
	uint64_t bytes, void *arg), void *arg);
void supp_free(au_supp_t *s);
/* Writes ready-to-paste suppression lines for every reported finding. */
void supp_generate(const au_model_t *m, FILE *out);
/* The built-in rules, one "rule  # why" per line (for --help and docs). */
void supp_print_builtin(FILE *out);
/* Does frame pattern `pat` match frame f (function, module base name or
 * path, source file base name or path)? */
bool supp_frame_matches(const char *pat, const au_frame_t *f);

/* ------------------------------------------------------------ baseline.c */

/* The fingerprint of a finding, from kind/type, api and the first
 * AU_FINGERPRINT_FRAMES frames (module base name, build-id, offset). */
void fingerprint_compute(au_finding_t *f);
/* The symbolic fingerprint of every finding (after symbolization): kind or
 * type, api and the first AU_FINGERPRINT_FRAMES frames as (module base
 * name, function) -- (module, offset) for a frame without a function --
 * so it survives a rebuild that moves code. */
void fingerprint_symbolic(au_model_t *m);
typedef struct au_baseline_s au_baseline_t;
/* Reads a saved --json document.  Returns NULL on error (message in err). */
au_baseline_t *baseline_load(const char *path, char *err, size_t errsize);
void baseline_apply(const au_baseline_t *b, au_model_t *m);
void baseline_free(au_baseline_t *b);

/* --------------------------------------------------------------- render */

typedef struct au_render_opts_s {
	const au_supp_t *supp;    /* for the used-rule table; may be NULL */
	const char *baseline;     /* --baseline path or NULL */
	int stack_limit;          /* frames printed per stack in text, 0 all */
} au_render_opts_t;

void render_text(const au_model_t *m, const au_render_opts_t *o, FILE *out);
/* The merged document.  Caller owns the result. */
json_t *render_json_doc(const au_model_t *m, const au_render_opts_t *o);
/* Each returns true on error (message printed). */
bool render_json(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
bool render_sarif(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
bool render_html(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
/* Writes doc to path through out_open.  Returns true on error (message
 * printed). */
bool render_json_write(const json_t *doc, size_t flags, const char *path);
/* JSON array of a symbolized stack (shared by the JSON and HTML pages). */
json_t *render_stack_json(const au_stack_t *s);

#endif /* CUWARDEN_TOOLS_AUDIT_H */
