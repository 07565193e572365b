/*
 * bench_registry.c -- what the registry costs: ns per insert+remove pair,
 * per find by base and per find_containing (interior pointer), with 10^3
 * and 10^6 live records, from 1 and from 16 threads.  The records are 256
 * B - 4 KiB, 4 KiB apart; a last figure looks up interior pointers among
 * records of mixed sizes (256 B - 4 MiB, packed).  No GPU, no driver.
 *
 * One line per figure:
 *   registry <op> live=<n> threads=<t>: <ns> ns/op (<m> Mop/s total)
 * ns/op is each thread's wall time per operation, averaged over the
 * threads (so perfect scaling keeps the 1-thread figure); Mop/s is every
 * thread's operations over the slowest thread's wall time.  Each figure
 * is the best of REPS runs, to keep other load on the machine out of it.
 * With more threads than cores the per-thread figure counts time spent
 * descheduled.
 *
 * Usage: bench_registry [ops-per-figure]   (default 10^6, split among
 * the threads)
 * Exit: 0, or 99 if the registry refuses an operation.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define PREFILL_BASE ((uintptr_t)0x7f0000000000)
#define STRIDE 4096u
#define REPS 3

enum op_e { OP_PAIR, OP_FIND, OP_CONTAINING, OP_MIXED, OP_COUNT };
static const char *const op_names[OP_COUNT] = {
	"insert+remove", "find", "find_containing",
	"find_containing(mixed sizes)"
};

/* The mixed layout: sizes log-uniform in [256 B, 4 MiB], packed one after
 * the other (512-byte aligned), as a pool hands them out; kept in arrays
 * (so each lookup also reads the arrays: one more cache miss). */
#define MIXED_MAX 1000000
static uintptr_t mixed_base[MIXED_MAX];
static size_t mixed_size[MIXED_MAX];

typedef struct job_s {
	pthread_t th;
	unsigned id;
	enum op_e op;
	size_t live;
	size_t ops;
	double ns;     /* wall time of this thread */
	int failed;
} job_t;

static pthread_barrier_t barrier;

static double
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static size_t
size_of(size_t i)
{
	return 256 + (i * 2654435761u) % (STRIDE - 256);
}

static void *
run(void *arg)
{
	job_t *j = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (j->id + 1) + j->op;
	reg_rec_t r;
	memset(&r, 0, sizeof(r));
	r.ns = NS_ADDR;
	r.kind = KIND_DEVICE;
	r.refcount = 1;
	r.api = "bench";
	/* Fresh addresses of this thread, far from the prefilled ones. */
	uintptr_t own = ((uintptr_t)(j->id + 1) << 40);
	volatile uintptr_t sink = 0;
	pthread_barrier_wait(&barrier);
	double t0 = now_ns();
	switch (j->op) {
	case OP_PAIR:
		for (size_t i = 0; i < j->ops; i++) {
			reg_handle_t h;
			r.base = own + (i & 0xffff) * STRIDE;
			r.size = size_of(i);
			if (registry_insert(&r, &h, NULL, NULL) ||
			    registry_remove(h, NULL, NULL, 0, NULL) != 0) {
				j->failed = 1;
				break;
			}
		}
		break;
	case OP_FIND:
		for (size_t i = 0; i < j->ops; i++) {
			size_t k = xorshift(&rng) % j->live;
			reg_handle_t h;
			if (registry_find(NS_ADDR, PREFILL_BASE + k * STRIDE,
			    &h, NULL)) {
				j->failed = 1;
				break;
			}
			sink += h;
		}
		break;
	case OP_MIXED:
		for (size_t i = 0; i < j->ops; i++) {
			size_t k = xorshift(&rng) % j->live;
			uintptr_t p = mixed_base[k] +
			    xorshift(&rng) % mixed_size[k];
			reg_handle_t h;
			if (registry_find_containing(NS_ADDR, p, &h, NULL)) {
				j->failed = 1;
				break;
			}
			sink += h;
		}
		break;
	case OP_CONTAINING:
		for (size_t i = 0; i < j->ops; i++) {
			size_t k = xorshift(&rng) % j->live;
			uintptr_t p = PREFILL_BASE + k * STRIDE +
			    xorshift(&rng) % size_of(k);
			reg_handle_t h;
			if (registry_find_containing(NS_ADDR, p, &h, NULL)) {
				j->failed = 1;
				break;
			}
			sink += h;
		}
		break;
	default:
		break;
	}
	j->ns = now_ns() - t0;
	(void)sink;
	return NULL;
}

static int
prefill(size_t live, bool mixed)
{
	registry_reset();
	reg_rec_t r;
	memset(&r, 0, sizeof(r));
	r.ns = NS_ADDR;
	r.kind = KIND_DEVICE;
	r.refcount = 1;
	r.api = "bench";
	uint64_t rng = 88172645463325252ull;
	uintptr_t next = PREFILL_BASE;
	for (size_t i = 0; i < live; i++) {
		reg_handle_t h;
		if (mixed) {
			/* 2^8 .. 2^22 bytes, log-uniform. */
			double e = 8 + (double)(xorshift(&rng) % 14000) / 1000;
			mixed_size[i] = (size_t)__builtin_exp2(e);
			mixed_base[i] = next;
			next += (mixed_size[i] + 511) & ~(size_t)511;
			r.base = mixed_base[i];
			r.size = mixed_size[i];
		} else {
			r.base = PREFILL_BASE + i * STRIDE;
			r.size = size_of(i);
		}
		if (registry_insert(&r, &h, NULL, NULL))
			return 1;
	}
	return registry_live_count() == live ? 0 : 1;
}

/* One run: every thread does ops operations.  Returns true on error. */
static bool
measure_once(enum op_e op, size_t live, unsigned threads, size_t ops,
    double *per_op, double *mops)
{
	job_t jobs[16];
	pthread_barrier_init(&barrier, NULL, threads);
	for (unsigned t = 0; t < threads; t++) {
		jobs[t] = (job_t){ .id = t, .op = op, .live = live,
			.ops = ops };
		if (pthread_create(&jobs[t].th, NULL, run, &jobs[t]) != 0)
			return true;
	}
	double sum = 0, slowest = 0;
	int failed = 0;
	for (unsigned t = 0; t < threads; t++) {
		pthread_join(jobs[t].th, NULL);
		sum += jobs[t].ns / (double)ops;
		if (jobs[t].ns > slowest)
			slowest = jobs[t].ns;
		failed |= jobs[t].failed;
	}
	pthread_barrier_destroy(&barrier);
	*per_op = sum / threads;
	*mops = (double)ops * threads / slowest * 1e3;
	return failed != 0;
}

static int
measure(enum op_e op, size_t live, unsigned threads, size_t total_ops)
{
	size_t ops = total_ops / threads;
	if (ops == 0)
		ops = 1;
	double best = 0, best_mops = 0;
	for (int rep = 0; rep < REPS; rep++) {
		double per_op, mops;
		if (measure_once(op, live, threads, ops, &per_op, &mops)) {
			fprintf(stderr, "bench_registry: %s failed\n",
			    op_names[op]);
			return 99;
		}
		if (rep == 0 || per_op < best)
			best = per_op;
		if (mops > best_mops)
			best_mops = mops;
	}
	printf("registry %s live=%zu threads=%u: %.1f ns/op "
	    "(%.1f Mop/s total)\n", op_names[op], live, threads, best,
	    best_mops);
	fflush(stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t total = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	static const size_t lives[] = { 1000, 1000000 };
	static const unsigned threads[] = { 1, 16 };
	printf("# bench_registry: %ld cpus online, %zu ops per figure\n",
	    sysconf(_SC_NPROCESSORS_ONLN), total);
	for (size_t l = 0; l < CW_ARRAY_SIZE(lives); l++) {
		if (prefill(lives[l], false)) {
			fprintf(stderr, "bench_registry: prefill failed\n");
			return 99;
		}
		printf("# live=%zu: %zu bytes of metadata, %.1f per record\n",
		    lives[l], registry_bytes(),
		    (double)registry_bytes() / (double)lives[l]);
		for (size_t t = 0; t < CW_ARRAY_SIZE(threads); t++)
			for (int op = 0; op < OP_MIXED; op++)
				if (measure((enum op_e)op, lives[l], threads[t],
				    total))
					return 99;
	}
	for (size_t l = 0; l < CW_ARRAY_SIZE(lives); l++) {
		if (prefill(lives[l], true)) {
			fprintf(stderr, "bench_registry: prefill failed\n");
			return 99;
		}
		for (size_t t = 0; t < CW_ARRAY_SIZE(threads); t++)
			if (measure(OP_MIXED, lives[l], threads[t], total))
				return 99;
	}
	return 0;
}
