/*
 * jobinfo.h -- the process's place in a distributed job (its launcher,
 * job id, rank, local rank, world size, from the environment the
 * launcher set) and the GPUs it used (ordinal and UUID), for the
 * reports' "job" and "gpus" members and the %r %h %j of file names
 * (doc/report-schema.md, "The job"; doc/audit.md, "Auditing a
 * distributed job").
 *
 * The environment is read once, at load (a constructor, from `environ`):
 * a later setenv changes nothing, and nothing here calls getenv.  A GPU is
 * noted at its first allocation (jobinfo_note_device: one relaxed load on
 * the hot path) and its UUID asked of the driver then, once.
 */
#ifndef CUWARDEN_JOBINFO_H
#define CUWARDEN_JOBINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobenv.h"

#define JOBINFO_MAX_GPUS 64

typedef jobenv_t jobinfo_t;

/* The job as read at load (never NULL). */
const jobinfo_t *jobinfo_get(void);

/* GPUs: bit d of jobinfo_seen is set once device d's UUID was asked. */
extern uint64_t jobinfo_seen;
void jobinfo_device_first(int dev);
static inline void
jobinfo_note_device(int dev)
{
	if ((unsigned)dev < JOBINFO_MAX_GPUS &&
	    !(__atomic_load_n(&jobinfo_seen, __ATOMIC_RELAXED) &
	    (1ULL << dev)))
		jobinfo_device_first(dev);
}
/* Device dev's UUID as nvidia-smi writes it ("GPU-xxxxxxxx-xxxx-...")
 * into buf (at least 41 bytes); false when it was not seen or the driver
 * did not answer (buf is then ""). */
bool jobinfo_uuid(int dev, char *buf, size_t size);

/* Expands one escape of a file name pattern: c is 'r' (the rank), 'h' (the
 * host) or 'j' (the job id), into buf, made a safe file name component
 * (jobenv_safe_name; unknown: jobenv.h's JOBENV_NO_*).  Returns false
 * when c is none of them. */
bool jobinfo_expand(char c, char *buf, size_t size);

#endif /* CUWARDEN_JOBINFO_H */
