/*
 * timeline.h -- the timeline a per-process report names: read, its
 * events merged across threads in time order (the reader, for any code
 * of the tool), and its peaks computed (timeline.c; doc/audit.md,
 * "Peaks"; the file's layout in doc/report-schema.md, "The timeline
 * file").
 */
#ifndef CUWARDEN_TOOLS_TIMELINE_H
#define CUWARDEN_TOOLS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tlformat.h"

/* The highest device ordinal a record may name: a file naming more is
 * refused as corrupt, since the peaks and series cost a pass of the file
 * per device (a few bytes flipped would otherwise name 65,536 devices). */
#define TL_MAX_DEVICE 255

/* An open timeline: the file read whole and checked.  Memory: the file
 * (32 bytes an event, 16 a chunk), 24 bytes a chunk, 56 a thread;
 * nothing more per event. */
typedef struct tl_s tl_t;

/* Reads and checks path (header, sizes, every chunk and record).
 * Returns NULL with a message in err (its byte offset) when it is
 * missing, truncated or corrupt. */
tl_t *tl_open(const char *path, char *err, size_t errsize);
void tl_close(tl_t *t);
/* The next event in time order, threads merged (equal times: file order,
 * so a thread's events keep their order); NULL after the last.  The
 * record is valid until the next call. */
const tlf_rec_t *tl_next(tl_t *t);
/* Back to the first event. */
void tl_rewind(tl_t *t);
size_t tl_events(const tl_t *t);
/* The latest event's t_ns (0 when none). */
uint64_t tl_end_ns(const tl_t *t);
const tlf_header_t *tl_header(const tl_t *t);

/* Is kind k memory of the process's own (summed in peaks and series)?
 * Not address ranges, mappings, views nor IPC imports. */
bool tl_counted(unsigned k);
/* The line an event's memory is drawn on: its device, or -1 for host
 * memory (pinned, registered), whatever device it names. */
int tl_device(const tlf_rec_t *r);
/* Signed bytes an event adds to its line. */
int64_t tl_delta(const tlf_rec_t *r);
/* Sets doc's "host" and "rank" (null when the report has none): where in
 * a job the process whose report is report ran (peaks, timelines). */
void tl_doc_place(json_t *doc, const json_t *report);

/* Opens the timeline report (read from report_path) names: beside the
 * report first (a --keep-reports copy), then where the shim wrote it; its
 * event count checked against the report's.  NULL with err[0] == '\0'
 * when the report names none, NULL with a message in err when it is
 * missing, truncated or corrupt.  *path (when not NULL): the file opened,
 * newly allocated. */
tl_t *tl_open_report(const json_t *report, const char *report_path,
    char **path, char *err, size_t errsize);

/* The peaks document of the report: each device's peak and the live set
 * then (the AU_PEAK_GROUPS largest groups by stack, in the report's stack
 * form, with its "modules").  t is rewound and read; path is the file's. */
json_t *timeline_peaks(tl_t *t, const json_t *report, const char *report_path,
    const char *path);

#endif /* CUWARDEN_TOOLS_TIMELINE_H */
