/*
 * track.h -- the shim's engine: what happens around every hooked driver
 * call (preload/wrappers.c holds only the wrappers, generated from
 * shim/hooks.def, and calls these).
 *
 * Audit mode (CUWARDEN_MODE=audit, the default): each allocation is
 * recorded in the registry (kind, size, device, api, owner, stack,
 * context) after the driver answered; each free is forwarded unchanged
 * and classified after the driver answered (normal, failed_free,
 * double_free, interior_free, mismatched_free, invalid_free, or an
 * untracked free).  Context teardown frees the records of that context.
 * Pool mode (CUWARDEN_MODE=pool): device, managed and pinned allocations
 * are served by pool.h, and every driver query about a pooled pointer is
 * answered consistently (doc/shim.md).
 *
 * Every track_<family>() below makes the real call itself, with the
 * caller's exact arguments, through `real` (the driver's own entry point
 * of the variant that was called; never NULL) and returns the driver's
 * answer unchanged (pool mode: what the driver would have answered).  No
 * lock of ours is held across a driver call.  `api` is the exported name
 * of the variant (a static string, kept in records and reports).
 *
 * The wrappers call track_init() first (cheap after the first call), and
 * call the real function directly, not the engine, when the thread is
 * already inside a hook or when track_alive() is false (fork child).
 * Owner: shim.
 */
#ifndef CUWARDEN_TRACK_H
#define CUWARDEN_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "types.h"

typedef enum track_mode_e {
	TRACK_AUDIT = 0,
	TRACK_POOL = 1
} track_mode_t;

/* ------------------------------------------------------------ lifecycle */

/* At load (the shim's constructor, before any thread or vfork): records
 * the process the engine belongs to, and in a setuid or setgid process
 * (AT_SECURE) turns the engine off for good. */
void track_loaded(void);
/* At load, after track_loaded, before anything reads the report's paths:
 * with CUWARDEN_SEE_THROUGH=1, the frameworks' cache variables and the
 * CuPy hook set in the environment where unset (shim/seethrough.c). */
void track_see_through(void);
/* Lazy initialisation at the first hook: options, fork handlers, the
 * driver handle, owner patterns.  Thread-safe, idempotent. */
void track_init(void);
/* False in a fork child (CUDA is unusable there until exec) and in a
 * setuid or setgid process: every call passes straight through, nothing
 * is recorded, printed or written. */
bool track_alive(void);
track_mode_t track_mode(void);
/* Marks the shim active (coverage.hooks_active); called by every hook and
 * by dlsym/cuGetProcAddress when they hand out one of our hooks. */
void track_hook_ran(void);

/* At the first hooked call, with CUWARDEN_SNAPSHOT_SIGNAL set: checks
 * the signal, starts the snapshot thread and installs the handler that
 * wakes it (shim/snapshot.c; doc/shim.md, "Snapshots"); a signal refused
 * is a warning.  Once per process; nothing when the option is unset. */
void track_snapshot_start(void);

/* Number of hooked entry points the driver really exports (coverage). */
void track_set_hooked_entry_points(uint64_t n);

/* Writes the report (report_write_env) once per process, if a hook ever
 * ran and the engine is alive; never from a vfork child (another pid
 * than the one track_loaded saw: the parent's memory).  how: "exit",
 * "_exit", "signal"; status: the exit status, or the signal.  inside: the
 * calling thread was interrupted inside a wrapper (a signal handler that
 * exits), so it may hold the engine's locks: the report is written
 * without waiting for any (nowait.h) and says what it left out. */
void track_write_report(const char *how, int status, bool inside);
/* Whether track_write_report would write a report now (the engine alive,
 * this the process it belongs to, CUDA used or a report asked for, none
 * written yet): the exit paths arm their watchdog only then. */
bool track_report_due(void);

/* ------------------------------------------------------------ families
 * One engine function per family of hooks.def (the table of hooked
 * symbols, in this directory): track_<family>(real, api, the call's own
 * parameters), where `real` is the driver's entry point of the variant
 * called (every variant of a family has the same ABI) and `api` its name.
 * The prototypes are generated from the table: adding a hook is its line
 * in hooks.def and, for a new family, its function (doc/shim.md). */
#define TRACK_UNPAREN(...) __VA_ARGS__
#define HOOK(sym, fam, params, args) \
	CUresult track_##fam(void *real, const char *api, TRACK_UNPAREN params);
#define GPA(sym)
#include "hooks.def"
#undef HOOK
#undef GPA

/* ------------------------------------------------------------ fork */
/* The child marks the engine dead and drops the parent's live set
 * (registered by track_init after fork_init, so it runs after the
 * modules' own child handlers). */
void track_postfork_child(void);

#endif /* CUWARDEN_TRACK_H */
