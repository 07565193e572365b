/*
 * stress_proc.c -- a driver-API program (linked with -lcuda) that the
 * stress scripts run many times under the shim, against the simulated
 * driver.  What each scenario allocates is known, so its report can be
 * checked exactly where the scenario is deterministic.
 *
 *   stress_proc fork N          allocates 65536 B (leaked) and, N times,
 *                               4096 B (freed) around a fork whose child
 *                               execs "stress_proc forkchild I"; a thread
 *                               allocates and frees all along (forks
 *                               happen while it is inside the shim) and
 *                               frees all it holds before the exit.
 *                               Prints "fork: N children ok".
 *   stress_proc forkchild I     leaks 1000+I bytes (one cuMemAlloc), frees
 *                               one 777-byte block; exits 0.
 *   stress_proc exitrace T      T threads allocate and free (device and
 *                               pinned) while another thread calls
 *                               exit(5) after 0-3 ms.
 *   stress_proc signals T MS    T threads allocate and free while a thread
 *                               sends SIGUSR1 (its handler only counts)
 *                               every ~100 us, to each worker in turn and
 *                               every 8th time to the process; after MS
 *                               ms it prints the counts and sends the
 *                               process SIGTERM (default disposition: the
 *                               shim's handler writes the report).  The
 *                               main thread waits in pthread_join.
 *                               "signals-worker": SIGTERM goes to a worker
 *                               thread (pthread_kill) instead.
 *
 * Exit status: as named above; 1 when the driver answered wrongly, 99 on
 * a usage or harness error.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#define HOLD 8 /* blocks a worker holds at most */

static CUcontext pctx;
static atomic_int errors;
static atomic_bool stop;

#define OK(call) \
	do { \
		CUresult r_ = (call); \
		if (r_ != CUDA_SUCCESS) { \
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, \
			    __LINE__, #call, (int)r_); \
			atomic_fetch_add(&errors, 1); \
		} \
	} while (0)

static void
init(void)
{
	CUdevice dev;

	OK(cuInit(0));
	OK(cuDeviceGet(&dev, 0));
	OK(cuDevicePrimaryCtxRetain(&pctx, dev));
	OK(cuCtxSetCurrent(pctx));
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void
sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------ workers */

typedef struct worker_s {
	pthread_t tid;
	uint64_t rng;
	bool pinned;        /* also cuMemAllocHost / cuMemFreeHost */
	bool free_at_end;   /* free what it holds when stop is set */
	atomic_long ops;
} worker_t;

/* Allocates and frees until stop is set.  Interrupted calls (EINTR) are
 * not the driver's business: every call must succeed. */
static void *
worker(void *arg)
{
	worker_t *w = arg;
	CUdeviceptr dev[HOLD] = { 0 };
	void *host[HOLD] = { NULL };

	OK(cuCtxSetCurrent(pctx));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned i = (unsigned)(rnd(&w->rng) % HOLD);
		size_t size = 256 + (size_t)(rnd(&w->rng) % 65536);
		if (w->pinned && (rnd(&w->rng) & 3) == 0) {
			if (host[i] != NULL) {
				OK(cuMemFreeHost(host[i]));
				host[i] = NULL;
			} else {
				OK(cuMemAllocHost(&host[i], size));
			}
		} else if (dev[i] != 0) {
			OK(cuMemFree(dev[i]));
			dev[i] = 0;
		} else {
			OK(cuMemAlloc(&dev[i], size));
		}
		atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
	}
	if (w->free_at_end) {
		for (int i = 0; i < HOLD; i++) {
			if (dev[i] != 0)
				OK(cuMemFree(dev[i]));
			if (host[i] != NULL)
				OK(cuMemFreeHost(host[i]));
		}
	}
	return NULL;
}

static worker_t *
start_workers(int n, bool pinned, bool free_at_end)
{
	worker_t *ws = calloc((size_t)n, sizeof(*ws));
	if (ws == NULL)
		exit(99);
	for (int i = 0; i < n; i++) {
		ws[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1) ^
		    (uint64_t)getpid();
		ws[i].pinned = pinned;
		ws[i].free_at_end = free_at_end;
		if (pthread_create(&ws[i].tid, NULL, worker, &ws[i]) != 0)
			exit(99);
	}
	return ws;
}

/* --------------------------------------------------------------- fork */

static int
scenario_fork(const char *self, long n)
{
	CUdeviceptr leak, q;

	init();
	OK(cuMemAlloc(&leak, 65536));
	worker_t *ws = start_workers(1, true, true);
	for (long i = 0; i < n; i++) {
		char arg[32];
		snprintf(arg, sizeof(arg), "%ld", i);
		OK(cuMemAlloc(&q, 4096));
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 99;
		}
		if (pid == 0) {
			execl(self, self, "forkchild", arg, (char *)NULL);
			_exit(127);
		}
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child %ld: status %#x\n", i, st);
			atomic_fetch_add(&errors, 1);
		}
		OK(cuMemFree(q));
	}
	atomic_store(&stop, true);
	pthread_join(ws[0].tid, NULL);
	printf("fork: %ld children ok, worker %ld ops\n", n,
	    atomic_load(&ws[0].ops));
	free(ws);
	return atomic_load(&errors) ? 1 : 0;
}

static int
scenario_forkchild(long i)
{
	CUdeviceptr p, q;

	init();
	OK(cuMemAlloc(&p, (size_t)(1000 + i)));
	OK(cuMemAlloc(&q, 777));
	OK(cuMemFree(q));
	return atomic_load(&errors) ? 1 : 0;
}

/* ----------------------------------------------------------- exit race */

static void *
exiter(void *arg)
{
	long us = (long)(intptr_t)arg;
	sleep_us(us);
	exit(5);
}

static int
scenario_exitrace(int n)
{
	pthread_t t;
	struct timespec ts;

	init();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long us = (long)((ts.tv_nsec / 1000 + getpid()) % 3000);
	start_workers(n, true, false);
	if (pthread_create(&t, NULL, exiter, (void *)(intptr_t)us) != 0)
		return 99;
	pthread_join(t, NULL); /* never returns */
	return 98;
}

/* ------------------------------------------------------------ signals */

static atomic_long usr1_seen;

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&usr1_seen, 1, memory_order_relaxed);
}

typedef struct signaller_s {
	worker_t *ws;
	int n;
	long ms;
	bool term_to_worker;
} signaller_t;

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void *
signaller(void *arg)
{
	signaller_t *s = arg;
	double end = now_ms() + (double)s->ms;
	long sent = 0;

	while (now_ms() < end) {
		if ((sent & 7) == 7)
			kill(getpid(), SIGUSR1);
		else
			pthread_kill(s->ws[sent % s->n].tid, SIGUSR1);
		sent++;
		sleep_us(100);
	}
	long ops = 0;
	for (int i = 0; i < s->n; i++)
		ops += atomic_load(&s->ws[i].ops);
	printf("signals: sent %ld SIGUSR1, handled %ld, %ld driver calls, "
	    "errors %d\n", sent, atomic_load(&usr1_seen), ops,
	    atomic_load(&errors));
	fflush(stdout);
	if (s->term_to_worker)
		pthread_kill(s->ws[0].tid, SIGTERM);
	else
		kill(getpid(), SIGTERM);
	/* Keep signalling while the process dies. */
	for (;;) {
		pthread_kill(s->ws[sent++ % s->n].tid, SIGUSR1);
		sleep_us(100);
	}
	return NULL;
}

static int
scenario_signals(int n, long ms, bool term_to_worker)
{
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = 0; /* no SA_RESTART: interrupted calls fail with EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 99;
	init(); /* the first hooked call: the shim takes SIGTERM here */
	signaller_t s = { start_workers(n, true, false), n, ms,
	    term_to_worker };
	if (pthread_create(&t, NULL, signaller, &s) != 0)
		return 99;
	pthread_join(t, NULL); /* never returns: SIGTERM ends the process */
	return 98;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "fork") == 0)
		return scenario_fork(argv[0], atol(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "forkchild") == 0)
		return scenario_forkchild(atol(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "exitrace") == 0)
		return scenario_exitrace(atoi(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "signals") == 0)
		return scenario_signals(atoi(argv[2]), atol(argv[3]), false);
	if (argc >= 4 && strcmp(argv[1], "signals-worker") == 0)
		return scenario_signals(atoi(argv[2]), atol(argv[3]), true);
	fprintf(stderr, "usage: stress_proc fork N | forkchild I | "
	    "exitrace T | signals[-worker] T MS\n");
	return 99;
}
