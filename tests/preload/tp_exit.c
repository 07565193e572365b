/*
 * tp_exit.c -- how a process ends, and what the shim must do then
 * (check_exit.sh):
 *   return N    main returns N: the report's exit status is N;
 *   clean       allocates and frees, returns 0: nothing to report;
 *   vforkfirst  a vfork child _exits before the parent's first CUDA call
 *               (it shares the parent's memory: it must not write, or
 *               mark written, the parent's report); the parent then leaks
 *               1 MiB;
 *   sigexit N   the program's own SIGTERM handler calls exit(3); a timer
 *               sends SIGTERM after N microseconds while the main thread
 *               allocates and frees in a loop, so it often lands inside a
 *               wrapper that holds one of the shim's locks; 1 MiB leaked.
 *               The loop is warmed up first (the shim initialised, the
 *               pools' segment made): exit() in a handler is safe only
 *               while no glibc malloc is interrupted, and the shim's first
 *               call (dlopen) and the simulated driver's allocations call
 *               glibc's malloc (an abort, 134, seen under load when the
 *               signal landed there).  The pools call it only when their
 *               pending list grows; the report takes no malloc lock then
 *               (its clock is arithmetic: doc/reliability.md);
 *   misuse      a double free, then exit 0 (a setgid run: the shim must
 *               do nothing at all, CUWARDEN_ON_VIOLATION=abort included);
 *   wait        leaks 4096 bytes, prints "ready" and waits for a signal
 *               (the shim's handler for SIGTERM is in place by then).
 */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static void
start(void)
{
	CUdevice d;
	CUcontext c;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&c, d) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(c) != CUDA_SUCCESS) {
		fprintf(stderr, "tp_exit: no CUDA\n");
		exit(99);
	}
}

static void
on_term(int sig)
{
	(void)sig;
	exit(3);
}

int
main(int argc, char **argv)
{
	CUdeviceptr keep = 0, p;
	const char *m = argc > 1 ? argv[1] : "";

	if (strcmp(m, "return") == 0) {
		start();
		cuMemAlloc(&keep, 4096);
		return argc > 2 ? atoi(argv[2]) : 0;
	}
	if (strcmp(m, "clean") == 0) {
		start();
		if (cuMemAlloc(&p, 4096) != CUDA_SUCCESS ||
		    cuMemFree(p) != CUDA_SUCCESS)
			return 99;
		return 0;
	}
	if (strcmp(m, "vforkfirst") == 0) {
		pid_t pid = vfork();
		if (pid == 0)
			_exit(0);
		int st;
		waitpid(pid, &st, 0);
		start();
		cuMemAlloc(&keep, 1 << 20);
		printf("pid=%d\n", (int)getpid());
		return 0;
	}
	if (strcmp(m, "sigexit") == 0) {
		start();
		signal(SIGTERM, on_term);
		cuMemAlloc(&keep, 1 << 20);
		for (int i = 0; i < 1000; i++)
			if (cuMemAlloc(&p, 512) == CUDA_SUCCESS)
				cuMemFree(p);
		/* A POSIX timer that sends SIGTERM (alarm's SIGALRM is the
		 * shim's exit watchdog). */
		timer_t t;
		struct sigevent ev;
		memset(&ev, 0, sizeof(ev));
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGTERM;
		if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0)
			return 99;
		struct itimerspec ts;
		memset(&ts, 0, sizeof(ts));
		long us = argc > 2 ? atol(argv[2]) : 1000;
		ts.it_value.tv_sec = us / 1000000;
		ts.it_value.tv_nsec = (us % 1000000) * 1000;
		timer_settime(t, 0, &ts, NULL);
		for (;;)
			if (cuMemAlloc(&p, 512) == CUDA_SUCCESS)
				cuMemFree(p);
	}
	if (strcmp(m, "misuse") == 0) {
		start();
		cuMemAlloc(&p, 4096);
		cuMemFree(p);
		cuMemFree(p);
		cuMemAlloc(&keep, 4096);
		return 0;
	}
	if (strcmp(m, "wait") == 0) {
		start();
		cuMemAlloc(&keep, 4096);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: tp_exit return N | clean | vforkfirst | sigexit US | "
	    "misuse | wait\n");
	return 99;
}
