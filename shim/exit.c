#include "preamble.h"
/*
 * exit.c -- the report at exit (once per process, never from a vfork
 * child or a setuid process: to CUWARDEN_REPORT, or else as text to
 * standard error when it found something), the marker that promises it,
 * and the fork child's handler.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"

bool
track_report_due(void)
{
	if (!track_alive())
		return false;
	/* A vfork child (or posix_spawn's) shares our memory and may call
	 * _exit before the parent ever used CUDA: it must touch nothing,
	 * not even the engine's initialisation, nor mark the report written.
	 * The pid is the one seen at load. */
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);
	if (owner != 0 && getpid() != owner)
		return false;
	if (__atomic_load_n(&shim_report_done, __ATOMIC_ACQUIRE))
		return false;
	/* CUDA never used: inert, unless a report is asked for anyway
	 * (cuwarden-audit does: the report proves the shim was loaded). */
	return __atomic_load_n(&stats_coverage.hooks_active, __ATOMIC_RELAXED)
	    != 0 || options_get_bool(OPT_REPORT_ALWAYS);
}

/* At the first CUDA call, not at load: a process that never uses CUDA
 * owes no report (without CUWARDEN_REPORT_ALWAYS it writes none, and its
 * fatal signals are not caught), and a process that execs a program the
 * shim cannot load into (static, setuid) leaves no marker behind.  A fork
 * child (dead) and a vfork child (another pid than the engine's) write
 * none, as they write no report. */
void
shim_write_marker(void)
{
	static bool done; /* atomic exchange */
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);

	if (!track_alive() || (owner != 0 && getpid() != owner))
		return;
	if (__atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	(void)report_write_marker();
}

/* The report at exit: to CUWARDEN_REPORT; unset, the text report to
 * standard error as CUWARDEN_EXIT_REPORT says (auto: when it holds a
 * finding, as LeakSanitizer does).  Returns true when a report that
 * lists the violations went somewhere (or was asked for). */
static bool
write_exit_report(const report_meta_t *meta)
{
	if (report_env_set()) {
		(void)report_write_env(meta);
		return true;
	}
	switch (options_get(OPT_EXIT_REPORT)) {
	case OPT_EXIT_REPORT_AUTO:
		(void)report_write_stderr(meta, true);
		return true;
	case OPT_EXIT_REPORT_ALWAYS:
		(void)report_write_stderr(meta, false);
		return true;
	default:
		return false;
	}
}

void
track_write_report(const char *how, int status, bool inside)
{
	report_meta_t meta;

	if (!track_report_due())
		return;
	track_init();
	if (__atomic_exchange_n(&shim_report_done, true, __ATOMIC_ACQ_REL))
		return;
	meta.mode = shim_mode_name();
	meta.exit_how = how;
	meta.exit_status = status;
	/* Every event written before the report that names the file. */
	meta.timeline = shim_timeline_finish();
	if (inside)
		nowait_begin();
	bool listed = write_exit_report(&meta);
	uint64_t hidden = violation_not_shown();
	if (hidden != 0)
		log_printf("%llu violation%s not printed (%d of each type "
		    "are): %s", (unsigned long long)hidden,
		    hidden == 1 ? " was" : "s were", VIOLATION_SHOW, listed ?
		    "the report lists them" : "a report lists them "
		    "(CUWARDEN_REPORT)");
	if (shim_oom_later() != 0)
		log_printf("%llu more allocation%s ran out of memory after the "
		    "one the OOM report describes",
		    (unsigned long long)shim_oom_later(),
		    shim_oom_later() == 1 ? "" : "s");
	if (inside) {
		uint64_t n = nowait_skipped();
		nowait_end();
		if (n != 0)
			log_warn("the program exited from a signal handler that "
			    "interrupted a CUDA call; %llu part%s of the report "
			    "locked by that call %s left out",
			    (unsigned long long)n, n == 1 ? "" : "s",
			    n == 1 ? "was" : "were");
	}
	if (options_get_bool(OPT_SHOW_STATS)) {
		log_printf("coverage: %llu allocations, %llu frees (%llu "
		    "untracked), %llu violations, %llu hooked entry points",
		    (unsigned long long)stats_coverage.allocations,
		    (unsigned long long)stats_coverage.frees,
		    (unsigned long long)stats_coverage.untracked_frees,
		    (unsigned long long)violation_count(),
		    (unsigned long long)stats_coverage.hooked_entry_points);
		cw_stats_print(NULL, NULL);
	}
}

void
track_postfork_child(void)
{
	/* CUDA is unusable here until exec: pass every call through, write
	 * no report, and drop what the parent recorded (the outermost rank:
	 * every other module's child hook ran before this one, so their
	 * locks are usable; captures and graph tables forget themselves). */
	__atomic_store_n(&shim_dead, true, __ATOMIC_RELAXED);
	__atomic_store_n(&stats_coverage.hooks_active, 0, __ATOMIC_RELAXED);
	shim_snapshot_postfork_child();
	shim_timeline_postfork_child();
	registry_reset();
}
