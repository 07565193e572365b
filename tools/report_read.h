/*
 * report_read.h -- reading reports into the model: the per-process
 * reports the shim writes ("cuwarden-report" version 1,
 * doc/report-schema.md) and the merged documents of --json
 * ("cuwarden-audit" version 1, doc/audit.md).  The files are report_*.c
 * (report_int.h).
 */
#ifndef CUWARDEN_TOOLS_REPORT_READ_H
#define CUWARDEN_TOOLS_REPORT_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"

/* Reads one report (or merged document) and adds it to m.  On error
 * writes the message (file, line:column, what is wrong) into err and
 * returns true. */
bool report_read_file(au_model_t *m, const char *path, char *err,
    size_t errsize);

#endif /* CUWARDEN_TOOLS_REPORT_READ_H */
