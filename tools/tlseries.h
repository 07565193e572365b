/*
 * tlseries.h -- a timeline's memory over time and its growing stacks
 * (tlseries.c; doc/audit.md, "Memory over time" and "Growing"; the
 * document in doc/report-schema.md, "Timelines").
 */
#ifndef CUWARDEN_TOOLS_TLSERIES_H
#define CUWARDEN_TOOLS_TLSERIES_H

#include <jansson.h>

#include "timeline.h"

#define TLS_POINTS 1000   /* points per device at most */
#define TLS_OWNERS 8      /* owners drawn apart per device, the rest "other" */
#define TLS_STACKS 8      /* stacks drawn apart per device */
#define TLS_SAMPLES 16    /* growth: live bytes sampled at 16 moments */
#define TLS_GROW_UPS 12   /* growing: up at >= 12 of the 15 steps */
#define TLS_GROW_FLOOR (1 << 20) /* and by >= 1 MiB, last minus first */
#define TLS_GROWING 20    /* growing stacks listed per process at most */

/* The timelines document of the report (one process): per device its
 * live bytes over time, by owner and by stack, and the growing stacks,
 * the stacks they name in the report's form with its "modules".  t is
 * rewound and read; path is the file's. */
json_t *timeline_series(tl_t *t, const json_t *report,
    const char *report_path, const char *path);

#endif /* CUWARDEN_TOOLS_TLSERIES_H */
