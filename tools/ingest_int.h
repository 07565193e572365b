/*
 * ingest_int.h -- the report reader's internals, shared by its files and
 * nobody else; the contract is ingest.h.
 *
 *   ingest.c          ingest_file: the file, its JSON, a per-process
 *                     report's header and modules, its process
 *   ingest_merged.c   a merged document read back
 *   ingest_proc.c     processes: identity, read once, what they did
 *   ingest_finding.c  a leak or a violation, checked, into the model
 *   ingest_stack.c    stacks and frames
 *   ingest_get.c      members checked one by one, the error message
 *   ingest_tline.c    a report's timeline: its peaks, its memory over time
 *
 * Invariants: a report is checked member by member before anything is
 * taken from it, so a bad file is refused whole, with its name, the
 * member ("leaks[2].stack[0].module") and what is wrong; JSON syntax
 * errors carry line:column.  Unknown members are ignored (forward
 * compatibility).
 */
#ifndef CUWARDEN_TOOLS_INGEST_INT_H
#define CUWARDEN_TOOLS_INGEST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "audit.h"

/* The reader's state for one file. */
typedef struct ingest_rd_s {
	const char *path;
	char *err;
	size_t errsize;
	const au_process_t *proc; /* NULL for a merged document */
	json_t *modules;
	bool merged; /* a "cuwarden-audit" document: symbolized frames */
} ingest_rd_t;

/* ------------------------------------------------------- ingest_get.c */

/* Writes "PATH: " and the message into r->err.  Returns true. */
bool ingest_fail(ingest_rd_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Member key of o (where names o in messages) as a string; absent (or
 * null) is allowed when dflt != NULL and gives dflt.  Returns true on
 * error (ingest_fail). */
bool ingest_get_str(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, const char *dflt, const char **out);
/* The same for a non-negative integer; absent gives dflt unless
 * required. */
bool ingest_get_uint(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, bool required, uint64_t dflt, uint64_t *out);
/* The same for any integer; absent or null gives dflt. */
bool ingest_get_int(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, long long dflt, long long *out);

/* ----------------------------------------------------- ingest_stack.c */

/* o.key (where names o) as a stack into *out: module indexes resolved
 * against r->modules in a per-process report, the symbolized frames of a
 * merged document.  Absent or null is an empty stack.  Returns true on
 * error; *out is the caller's to free either way (stack_free). */
bool ingest_stack(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, au_stack_t *out);

/* --------------------------------------------------- ingest_finding.c */

/* The leak or violation o, entry idx of its array, checked and added to
 * m (model_add).  Returns true on error. */
bool ingest_leak(ingest_rd_t *r, au_model_t *m, const json_t *o,
    size_t idx);
bool ingest_violation(ingest_rd_t *r, au_model_t *m, const json_t *o,
    size_t idx);

/* ------------------------------------------------------ ingest_proc.c */

/* Checks what o (a report, or a merged document's process entry; where
 * prefixes the message: "" or "processes[2]: ") says of its host: host
 * and boot_id, when present, are strings.  Returns true on error. */
bool ingest_proc_check(ingest_rd_t *r, const json_t *o, const char *where);
/* The identity of the process that o (a report, or a merged document's
 * process entry) describes. */
uint64_t ingest_proc_key(const json_t *o, long pid);
/* The process already read that this one (key, from group g; its file
 * dev/ino, 0 for none) is, or NULL. */
const au_process_t *ingest_proc_seen(const au_model_t *m, uint64_t key,
    unsigned g, dev_t dev, ino_t ino);
/* Adds the process o describes to m: path (copied), pid, key, group and
 * what o says of it (ppid, exe, host, boot_id, hooks, exit, CUDA use);
 * doc, dev and ino are the caller's to set.  The pointer is valid until
 * the next add. */
au_process_t *ingest_proc_add(au_model_t *m, const json_t *o,
    const char *path, long pid, uint64_t key, unsigned group);

/* ---------------------------------------------------- ingest_merged.c */

/* Reads the merged document doc (format "cuwarden-audit") into m.  Takes
 * doc.  Returns true on error. */
/* An OOM report ("cuwarden-oom" version 1): its header and request
 * checked, doc kept whole in m (the model takes it; on error the caller
 * keeps it).  Returns true on error (message in r). */
bool ingest_oom(au_model_t *m, ingest_rd_t *r, json_t *doc);
bool ingest_merged(au_model_t *m, ingest_rd_t *r, json_t *doc);
/* A peaks document (timeline.h's, or a merged document's "peaks" entry):
 * checked, its stacks read, doc kept in m (the model takes it; on error
 * the caller keeps it).  Returns true on error (message in r). */
bool ingest_peaks(au_model_t *m, ingest_rd_t *r, json_t *doc);
/* A reader of doc's stacks (an OOM report, a peaks or timelines document
 * of a per-process report) as a per-process report's: module indexes
 * into its own "modules", a module without a path its "exe".  self
 * stands for the process; doc and self outlive sr. */
void doc_reader(ingest_rd_t *sr, const ingest_rd_t *r, au_process_t *self,
    const json_t *doc);
/* The timeline the per-process report names, when it names one: its
 * peaks and its memory over time into m (ingest_tline.c).  Returns true
 * on error (message in err). */
bool ingest_timeline(au_model_t *m, ingest_rd_t *r, const json_t *report,
    const char *path, char *err, size_t errsize);
/* A timelines document (tlseries.h's, read through a doc_reader, or a
 * merged document's "timelines" entry): taken when it is good. */
bool ingest_tline(au_model_t *m, ingest_rd_t *r, json_t *doc);

#endif /* CUWARDEN_TOOLS_INGEST_INT_H */
