/*
 * report_int.h -- what the files of the report share (report.h is the
 * contract) and nobody else.  Include it after preamble.h.
 *
 *   report.c        report_write: gathers, formats, flushes; the
 *                   coverage counters both formats print
 *   report_group.c  the leaks copied and grouped, the violations copied
 *   report_proc.c   the process's executable, command line, host and
 *                   boot
 *   report_out.c    the buffered writer to the fd
 *   report_json.c   the JSON document (doc/report-schema.md)
 *   report_text.c   the text report
 *   report_file.c   CUWARDEN_REPORT: which file, written how
 *                   (report_write_env, report_write_stderr), and the
 *                   whole-file writer the marker shares
 *   report_marker.c CUWARDEN_MARKER
 *   report_oom.c    the OOM report (report_write_oom): the live set by
 *                   owner and stack, the request, the last events
 *
 * Everything here works without malloc or stdio (scratch.h memory,
 * write(2)), so a report can be written at exit and from a signal
 * handler.
 */
#ifndef CUWARDEN_REPORT_INT_H
#define CUWARDEN_REPORT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "owner.h"
#include "report.h"
#include "scratch.h"
#include "stats.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------ "report_group.c" */

/* What a leak is (doc/report-schema.md, "category"): a live record, a
 * record a context's teardown freed (teardown.h), or an address range
 * (kind va: address space, not memory, never in the leaked sums). */
typedef enum report_cat_e {
	REPORT_CAT_LEAK,
	REPORT_CAT_TEARDOWN,
	REPORT_CAT_RANGE,
	REPORT_CAT_COUNT
} report_cat_t;

/* A live record that is a leak, as copied from the registry, or a
 * record teardown freed. */
typedef struct leak_s {
	uintptr_t base;
	size_t size;
	const char *api;
	stack_id_t stack;
	owner_id_t owner;
	int16_t device;
	uint8_t kind;
	uint8_t cat;     /* report_cat_t */
} leak_t;

typedef struct group_s {
	const leak_t *lead; /* its first leak_t (for ordering ties) */
	size_t first;    /* index of its first leak_t (sorted) */
	size_t count;
	uint64_t bytes;  /* saturated at UINT64_MAX */
	bool saturated;  /* bytes is a floor: the sum overflowed */
} group_t;

typedef struct leaks_s {
	scratch_t ls;     /* leak_t[] */
	scratch_t gs;     /* group_t[] */
	size_t nleaks;    /* leak_t entries, every category */
	size_t ngroups;
	/* Per category: records, and their bytes saturated at UINT64_MAX
	 * (saturated: bytes is a floor, the sum overflowed). */
	uint64_t count[REPORT_CAT_COUNT];
	uint64_t bytes[REPORT_CAT_COUNT];
	bool saturated[REPORT_CAT_COUNT];
} leaks_t;

typedef struct vcollect_s {
	scratch_t s;      /* violation_t[] */
	size_t n;
} vcollect_t;

/* Collects the leaks (live records and the records teardown freed) into
 * *L (sorted by group key, then address) and groups them (largest
 * first).  Returns true on error (errno set); *L
 * is to be freed with report_leaks_free either way. */
bool report_leaks_collect(leaks_t *L);
void report_leaks_free(leaks_t *L);
/* Collects the live records that hold memory (registry only: no
 * teardown records, no address ranges) into *L, grouped by (owner,
 * alloc_stack, kind, device), largest group first; all under
 * REPORT_CAT_LEAK.  Returns true on error (errno set); *L is to be freed
 * with report_leaks_free either way. */
bool report_live_collect(leaks_t *L);

/* Appends a copy of every kept violation to *V (zeroed by the caller;
 * scratch_free(&V->s) frees it); out of memory, the first V->n only. */
void report_violations_collect(vcollect_t *V);

/* ------------------------------------------------------- "report_proc.c" */

typedef struct proc_s {
	char exe[PATH_MAX];
	char host[65];      /* uname's nodename (its size in glibc) */
	char boot_id[40];   /* /proc/sys/kernel/random/boot_id: a UUID */
	scratch_t cmd;      /* /proc/self/cmdline: NUL-separated */
} proc_t;

/* Reads the executable's path, the host's name, the boot id and the
 * command line into *p (empty where unreadable); scratch_free(&p->cmd)
 * frees it. */
void report_proc_read(proc_t *p);
/* Calls fn for each argument of the command line: its bytes a (n of
 * them, not NUL-terminated) and its index i. */
void report_proc_args(const proc_t *p, void (*fn)(const char *a, size_t n,
    size_t i, void *arg), void *arg);

/* -------------------------------------------------------- "report_out.c" */

typedef struct wr_s {
	int fd;
	bool err;
	int saved_errno;
	size_t len;
	char buf[8192];
} wr_t;

/* Writes out what the buffer holds (outfile_write_all).  After a failed
 * write, w->err and w->saved_errno say so and nothing more is written. */
void report_flush(wr_t *w);
/* Appends the n bytes at s, flushing as the buffer fills. */
void report_putn(wr_t *w, const char *s, size_t n);
void report_puts(wr_t *w, const char *s);
/* Appends fmt.h's formatting of fmt, at most 511 bytes of it. */
void report_printf(wr_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Length of a valid UTF-8 sequence at s (of at most n bytes), 0 if the
 * bytes there are not one. */
size_t report_utf8_len(const unsigned char *s, size_t n);

/* ------------------------------------------- "report_json.c", "..._text.c" */

/* A JSON string of the n bytes at s (invalid UTF-8 becomes U+FFFD). */
void report_json_strn(wr_t *w, const char *s, size_t n);
/* report_proc_args's fn for a JSON array of strings: argument i, with a
 * ", " before it unless it is the first; arg is the wr_t. */
void report_json_arg(const char *a, size_t n, size_t i, void *arg);

/* A stack as the reports' JSON array of {module, offset}. */
void report_json_stack(wr_t *w, stack_id_t id);
/* A JSON string, null for NULL. */
void report_json_str(wr_t *w, const char *s);
/* The "modules" member's array (the stack depot's modules). */
void report_json_modules(wr_t *w);
/* The current UTC time, as the reports' "time". */
void report_utc_now(char *buf, size_t size);
/* secs (since the epoch) as "YYYY-MM-DDTHH:MM:SSZ", by arithmetic: no
 * gmtime_r, which may take locks and malloc (report_json.c). */
void report_utc_format(int64_t secs, char *buf, size_t size);
/* A document's opening members, every format of the shim's alike:
 * format, version 1, tool, pid, ppid, command, exe, host, boot_id, mode
 * and time (now), up to the comma after time's value. */
void report_json_head(wr_t *w, const char *format, const proc_t *p,
    const char *mode);

/* Modules named by the text report's frames (for the module list). */
#define REPORT_TEXT_MODULES 4096
typedef struct modset_s {
	uint64_t bits[REPORT_TEXT_MODULES / 64];
} modset_t;
/* A stack as text, one frame a line after indent; its modules are added
 * to *seen. */
void report_text_stack(wr_t *w, stack_id_t id, const char *indent,
    modset_t *seen);
/* A name, escaped ("?" for NULL). */
void report_text_str(wr_t *w, const char *s);
/* The "modules:" lines of the modules in *seen, if any. */
void report_text_modules(wr_t *w, const modset_t *seen);

/* Write the whole document to w. */
void report_write_json(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V);
void report_write_text(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V);

/* ------------------------------------------------------- "report_file.c" */

/* Writes a file whole by outfile.h's rules: path (own: this process's
 * earlier file, which it replaces), its bytes written to the fd by body
 * (true on error, errno set); noun ("report", "marker") and name (size
 * bytes) name it in messages, and name gets the name written ("standard
 * error" for fd 2).  *stream: it went to a stream, in place.  Returns
 * true on error (logged; errno set). */
bool report_file_write(const char *path, bool own, const char *noun,
    char *name, size_t size, bool (*body)(int fd, void *arg), void *arg,
    bool *stream);

/* Writes body's text where the shim's messages go when no CUWARDEN_REPORT
 * says where: appended to CUWARDEN_LOG_FILE's file when that is set
 * (log_file_fd), else standard error as it is.  noun names it in errors.
 * Returns true on error (logged; errno set). */
bool report_write_default(const char *noun, bool (*body)(int fd, void *arg),
    void *arg);

/* The expanded CUWARDEN_REPORT into name (size bytes).  Returns true
 * when there is none: *set says whether CUWARDEN_REPORT is set (set and
 * unusable: logged, errno set). */
bool report_env_path(char *name, size_t size, bool *set);
/* A file beside the report: the expanded CUWARDEN_REPORT followed by
 * suffix (".oom", ".snap.3", ".timeline").  When CUWARDEN_REPORT names a
 * stream of the process, name is that stream and *stream true (no
 * suffix).  Returns true when there is no name: *set false (unset), or
 * set but unusable or too long for size (logged, naming noun; errno
 * set). */
bool report_sibling_path(char *name, size_t size, const char *suffix,
    const char *noun, bool *set, bool *stream);

/* ------------------------------------------------------------ "report.c" */

/* A snapshot (report.h: exit_how "snapshot", exit_status its number)? */
static inline bool
report_is_snapshot(const report_meta_t *meta)
{
	return meta->exit_how != NULL &&
	    __builtin_strcmp(meta->exit_how, "snapshot") == 0;
}

/* The shim's coverage counters (stats.h), each read atomically. */
void report_coverage_read(stats_coverage_t *c);

static inline const char *
report_kname(int kind)
{
	return kind_name((kind_t)kind);
}

/* A category's name in the JSON report: "leak", "teardown",
 * "address_range". */
const char *report_cat_name(int cat);

/* An owner's name, "" for none. */
static inline const char *
report_owner_str(owner_id_t id)
{
	const char *n = id != 0 ? owner_name(id) : NULL;

	return n != NULL ? n : "";
}

#pragma GCC visibility pop

#endif /* CUWARDEN_REPORT_INT_H */
