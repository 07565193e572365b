/*
 * signame.h -- signal names and numbers, and which signals
 * CUWARDEN_SNAPSHOT_SIGNAL may name: the shim's check of the option
 * (shim/snapshot.c) and cuwarden-audit's reading of it (tools/snapshot.c)
 * are the same code.  Only inline functions and tables, no includes of
 * lib/, so tools/ (which never links libcuwarden) uses it too.
 */
#ifndef CUWARDEN_SIGNAME_H
#define CUWARDEN_SIGNAME_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <strings.h>

/* The fatal signals the shim handles (preload/end.c): the report, then
 * the default action. */
#define SIGNAME_FATAL SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, \
	SIGINT, SIGHUP, SIGQUIT

/* Linux's names, without "SIG". */
static const struct {
	const char *name;
	int sig;
} signame_table[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT },
	{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
	{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	{ "SYS", SIGSYS },
};

/* s as a signal: a name ("USR2", "SIGUSR2", any case) or a decimal
 * number from 1 to 64.  Returns the number, or 0 when s is neither. */
static inline int
signame_parse(const char *s)
{
	int v = 0;

	if (s == NULL || *s == '\0')
		return 0;
	if (*s >= '0' && *s <= '9') {
		for (; *s >= '0' && *s <= '9'; s++) {
			v = v * 10 + (*s - '0');
			if (v > 64)
				return 0;
		}
		return *s == '\0' ? v : 0;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(signame_table) /
	    sizeof(signame_table[0]); i++)
		if (strcasecmp(s, signame_table[i].name) == 0)
			return signame_table[i].sig;
	return 0;
}

/* sig's name without "SIG", NULL for a number with none (real-time
 * signals). */
static inline const char *
signame_name(int sig)
{
	for (size_t i = 0; i < sizeof(signame_table) /
	    sizeof(signame_table[0]); i++)
		if (signame_table[i].sig == sig)
			return signame_table[i].name;
	return NULL;
}

/* Why sig cannot be the snapshot signal, NULL when it can (cuwarden(7),
 * CUWARDEN_SNAPSHOT_SIGNAL): one that cannot be caught, a fatal signal
 * the shim handles, a fault or limit signal, SIGALRM (the shim's exit
 * watchdog), SIGPIPE (the kernel's), job control, and glibc's own
 * real-time signals (below SIGRTMIN). */
static inline const char *
signame_refused(int sig)
{
	static const int fatal[] = { SIGNAME_FATAL };

	if (sig <= 0 || sig > 64)
		return "not a signal";
	if (sig == SIGKILL || sig == SIGSTOP)
		return "it cannot be caught";
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			return "a fatal signal the shim writes the report on";
	if (sig == SIGTRAP || sig == SIGSYS || sig == SIGXCPU ||
	    sig == SIGXFSZ || sig == SIGSTKFLT)
		return "a fault or limit signal";
	if (sig == SIGALRM)
		return "the shim's exit watchdog uses it";
	if (sig == SIGPIPE)
		return "the kernel sends it on a write to a closed pipe";
	if (sig == SIGCHLD || sig == SIGCONT || sig == SIGTSTP ||
	    sig == SIGTTIN || sig == SIGTTOU)
		return "job control";
	if (sig > SIGSYS && sig < SIGRTMIN)
		return "glibc's own";
	return NULL;
}

#endif /* CUWARDEN_SIGNAME_H */
