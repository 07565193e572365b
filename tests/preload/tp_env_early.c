/*
 * tp_env_early.c -- libtpenv.so, a library of tp_env: its constructor
 * runs before the shim's (a program's libraries are initialized before a
 * preloaded object) and does what a library that starts a thread reading
 * the environment would leave behind: the environ array of the moment,
 * one glibc made (a setenv first), and its entries, kept to compare.
 * A block allocated after it keeps the array from growing in place.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>

#define TP_ENV_MAX 4096

extern char **environ;
char **tp_env_before;
char *tp_env_copy[TP_ENV_MAX];
size_t tp_env_n;
void *tp_env_guard;

__attribute__((constructor)) static void
tp_env_early(void)
{
	setenv("TP_ENV_EARLY", "1", 1);
	tp_env_before = environ;
	for (tp_env_n = 0; tp_env_n < TP_ENV_MAX &&
	    environ[tp_env_n] != NULL; tp_env_n++)
		tp_env_copy[tp_env_n] = environ[tp_env_n];
	tp_env_guard = malloc(64);
}
