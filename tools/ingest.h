/*
 * ingest.h -- reports read into the model (ingested): the per-process
 * reports the shim writes ("cuwarden-report" version 1,
 * doc/report-schema.md) and the merged documents of --json
 * ("cuwarden-audit" version 1, doc/audit.md).  The files are ingest*.c
 * (ingest_int.h lists them).
 */
#ifndef CUWARDEN_TOOLS_INGEST_H
#define CUWARDEN_TOOLS_INGEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "audit.h"

/* Reads one report (or merged document) and adds it to m.  On error
 * writes the message (file, line:column, what is wrong) into err and
 * returns true. */
bool ingest_file(au_model_t *m, const char *path, char *err,
    size_t errsize);
/* The stack o.key of an entry of a merged document (where names o in
 * messages, path the file), its frames as --json wrote them; absent or
 * null is an empty stack.  Returns true on error (the message in err);
 * *out is the caller's to free either way (stack_free). */
bool ingest_doc_stack(const char *path, const json_t *o, const char *where,
    const char *key, au_stack_t *out, char *err, size_t errsize);

#endif /* CUWARDEN_TOOLS_INGEST_H */
