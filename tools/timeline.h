/*
 * timeline.h -- the timeline a per-process report names, read and its
 * peaks computed (timeline.c; doc/audit.md, "Peaks"; the file's layout in
 * doc/report-schema.md, "The timeline file").
 */
#ifndef CUWARDEN_TOOLS_TIMELINE_H
#define CUWARDEN_TOOLS_TIMELINE_H

#include <stddef.h>

#include <jansson.h>

/* The peaks document of the report (read from report_path): its
 * timeline.file read (beside the report first, then where the shim wrote
 * it) and checked, each device's peak and the live set then (the
 * AU_PEAK_GROUPS largest groups by stack, in the report's stack form,
 * with its "modules").  Returns a new document; NULL with err[0] == '\0'
 * when the report names no timeline file, NULL with a message in err
 * when the file is missing, truncated or corrupt. */
json_t *timeline_peaks(const json_t *report, const char *report_path,
    char *err, size_t errsize);

#endif /* CUWARDEN_TOOLS_TIMELINE_H */
