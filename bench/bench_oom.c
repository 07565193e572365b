/*
 * bench_oom.c -- what the OOM report costs (issue 18's target: written
 * within 50 ms of the failing call with 10^5 live allocations): the time
 * report_write_oom_fd takes to write it, JSON and text, to a file, with
 * 10^3, 10^4 and 10^5 live records from 64 distinct stacks and 16 recent
 * events; side by side with one cuMemAlloc_v2 + cuMemFree_v2 of the
 * simulated driver (tests/fakecuda: a figure that says nothing about a
 * GPU, only how the report compares with a plain call here).
 *
 * One line per figure:
 *   oom report <format> live=<n>: <ms> ms (best of REPS)
 *   plain cuMemAlloc_v2+cuMemFree_v2: <us> us
 * Exit: 0, or 99 on a harness error.
 */
#include "preamble.h"

#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "report.h"
#include "stackdepot.h"

#define REPS 5
#define NSTACKS 64

static stack_id_t stacks[NSTACKS];

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A stack of depth+1 frames more than the caller's, a distinct one per
 * depth. */
static __attribute__((noinline)) stack_id_t
deep(int depth)
{
	stack_id_t s;

	if (depth > 0)
		s = deep(depth - 1);
	else
		s = stack_capture(0);
	__asm__ volatile("" ::: "memory");
	return s;
}

static bool
fill(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		reg_rec_t rec, old;
		reg_handle_t h;
		bool had;

		memset(&rec, 0, sizeof(rec));
		rec.base = (uintptr_t)0x7f0000000000 + i * 4096;
		rec.size = 512 + (i % 7) * 512;
		rec.api = "cuMemAlloc_v2";
		rec.alloc_stack = stacks[i % NSTACKS];
		rec.refcount = 1;
		rec.kind = KIND_DEVICE;
		rec.ns = NS_ADDR;
		if (registry_insert(&rec, &h, &old, &had))
			return true;
	}
	return false;
}

static double
plain_call_us(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	double best = 1e9;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		return -1;
	for (int r = 0; r < REPS; r++) {
		double t0 = now_s();

		for (int i = 0; i < 1000; i++)
			if (cuMemAlloc(&p, 4096) || cuMemFree(p))
				return -1;
		double t = (now_s() - t0) / 1000 * 1e6;
		if (t < best)
			best = t;
	}
	return best;
}

int
main(void)
{
	static const size_t sizes[] = { 1000, 10000, 100000 };
	report_event_t ev[16];
	report_oom_t o;
	char path[] = "/tmp/bench_oom.XXXXXX";
	size_t have = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		return 99;
	unlink(path);
	for (int i = 0; i < NSTACKS; i++)
		stacks[i] = deep(i);
	memset(&o, 0, sizeof(o));
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < 16; i++) {
		ev[i].seq = (uint64_t)i + 1;
		ev[i].api = "cuMemAlloc_v2";
		ev[i].size = 4096;
		ev[i].stack = stacks[i];
	}
	o.mode = "audit";
	o.api = "cuMemAlloc_v2";
	o.kind = KIND_DEVICE;
	o.size = (size_t)1 << 30;
	o.cuda_error = CUDA_ERROR_OUT_OF_MEMORY;
	o.stack = stacks[0];
	o.mem_known = true;
	o.mem_free = (size_t)1 << 29;
	o.mem_total = (size_t)1 << 30;
	o.recent = ev;
	o.nrecent = 16;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		if (fill(have, sizes[s]))
			return 99;
		have = sizes[s];
		for (int f = 0; f < 2; f++) {
			cw_format_t fmt = f == 0 ? CW_FORMAT_JSON :
			    CW_FORMAT_TEXT;
			double best = 1e9;

			for (int r = 0; r < REPS; r++) {
				if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
					return 99;
				double t0 = now_s();
				if (report_write_oom_fd(fd, fmt, &o))
					return 99;
				double t = now_s() - t0;
				if (t < best)
					best = t;
			}
			printf("oom report %s live=%zu: %.2f ms (best of %d)\n",
			    f == 0 ? "json" : "text", have, best * 1e3, REPS);
		}
	}
	double us = plain_call_us();
	if (us < 0)
		return 99;
	printf("plain cuMemAlloc_v2+cuMemFree_v2 (simulated driver): "
	    "%.2f us\n", us);
	close(fd);
	return 0;
}
