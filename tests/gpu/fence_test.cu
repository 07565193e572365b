// fence_test.cu -- the pools' reuse fence on a real GPU (run by
// run-pool-gpu-tests.sh, linked with libcuwarden from the build tree).
//
// A kernel keeps writing into block A for about 100 ms; A is cw_free'd at
// once, without synchronising.  Allocations of the same size made while
// the kernel runs must never receive A's address, and data written into
// the new blocks must survive the kernel.  Three variants: a sub-allocated
// block (1 MiB class, thread cache), an own-segment block (4 MiB), and a
// run that frees 64 MiB more so the pool's barrier fires while the kernel
// runs (the barrier must wait for it).  Managed memory too (small).
// Then cw_alloc_async on the stream of a cw_free_async: the block comes
// back at once while the kernel runs, and stream order keeps the data.
// Prints PASS/FAIL lines; exit 0 when all pass, 1 otherwise, 99 harness.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#include "cuwarden.h"

static int passed, failed;

#define CHECK(cond, ...) do { \
	if (cond) { passed++; } else { failed++; \
		printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

__global__ void
writer(unsigned char *p, size_t n, unsigned long long ns)
{
	unsigned long long t0;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (;;) {
		for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
		    i += (size_t)gridDim.x * blockDim.x)
			p[i] = 0xaa;
		unsigned long long t;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 > ns)
			break;
	}
}

__global__ void
fill(unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

static bool
kernel_running(cudaEvent_t ev)
{
	return cudaEventQuery(ev) == cudaErrorNotReady;
}

static double
now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
run(const char *name, cw_kind_t kind, size_t size, int nalloc,
    size_t extra_free)
{
	cudaStream_t s;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaEvent_t done;
	cudaEventCreateWithFlags(&done, cudaEventDisableTiming);

	// Blocks to free beside A, so the pool's barrier fires meanwhile.
	std::vector<cw_buf_t> extra;
	for (size_t b = 0; b < extra_free; b += size) {
		cw_buf_t x;
		if (cw_alloc(&x, size, kind, 0, 0) != CW_OK) {
			printf("ERROR: %s: cw_alloc: %s\n", name,
			    cw_last_error()->message);
			failed++;
			return;
		}
		extra.push_back(x);
	}
	cw_buf_t a;
	if (cw_alloc(&a, size, kind, 0, 0) != CW_OK) {
		printf("ERROR: %s: cw_alloc: %s\n", name,
		    cw_last_error()->message);
		failed++;
		return;
	}
	unsigned char *pa = (unsigned char *)cw_ptr(a);
	writer<<<64, 256, 0, s>>>(pa, size, 100ull * 1000 * 1000);
	cudaEventRecord(done, s);
	double t0 = now_ms();
	cw_free(a); // no synchronise: the kernel still writes into A
	for (cw_buf_t x : extra)
		cw_free(x);
	double t_first = -1;

	std::vector<cw_buf_t> got;
	std::vector<unsigned char> ones(size, 0x11);
	int during = 0, reused_early = 0, reused_after = 0;
	for (int i = 0; i < nalloc; i++) {
		cw_buf_t b;
		if (cw_alloc(&b, size, kind, 0, 0) != CW_OK) {
			printf("ERROR: %s: cw_alloc %d: %s\n", name, i,
			    cw_last_error()->message);
			failed++;
			break;
		}
		bool running = kernel_running(done);
		if (t_first < 0)
			t_first = now_ms() - t0;
		if (cw_ptr(b) == pa) {
			if (running)
				reused_early++;
			else
				reused_after++;
		}
		during += running;
		cw_upload(b, 0, ones.data(), size);
		got.push_back(b);
	}
	cudaStreamSynchronize(s);
	// Nothing of what the new blocks hold was overwritten.
	std::vector<unsigned char> back(size);
	int overwritten = 0;
	for (cw_buf_t b : got) {
		cw_download(b, 0, back.data(), size);
		if (memcmp(back.data(), ones.data(), size) != 0)
			overwritten++;
		cw_free(b);
	}
	printf("  %s: %d allocations (%d while the kernel ran; the first "
	    "returned after %.1f ms), A handed out again %d times while "
	    "running, %d after\n", name, nalloc, during, t_first,
	    reused_early, reused_after);
	// With 64 MiB freed beside A, the first allocation issues the
	// barrier, which must wait for the kernel: then nothing runs "during".
	if (extra_free == 0)
		CHECK(during > 0, "%s: the kernel ended before any allocation "
		    "(the test proves nothing)", name);
	else
		CHECK(during == 0 || reused_early == 0, "%s", name);
	CHECK(reused_early == 0, "%s: A was handed out while the kernel "
	    "still wrote into it", name);
	CHECK(overwritten == 0, "%s: %d new blocks were overwritten by the "
	    "kernel", name, overwritten);
	cudaEventDestroy(done);
	cudaStreamDestroy(s);
}

// cw_alloc_async on the stream that cw_free_async freed A on: A comes back
// at once, while the kernel still writes into it, and work queued on that
// stream afterwards runs after the kernel (the data is the later write's).
static void
run_same_stream(cw_kind_t kind, size_t size, const char *name)
{
	cudaStream_t s;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaEvent_t done;
	cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
	cw_buf_t a, b;
	if (cw_alloc_async(&a, size, kind, 0, 0, s) != CW_OK) {
		printf("ERROR: %s: cw_alloc_async: %s\n", name,
		    cw_last_error()->message);
		failed++;
		return;
	}
	unsigned char *pa = (unsigned char *)cw_ptr(a);
	writer<<<64, 256, 0, s>>>(pa, size, 100ull * 1000 * 1000);
	cudaEventRecord(done, s);
	double t0 = now_ms();
	CHECK(cw_free_async(a, s) == CW_OK, "%s: cw_free_async", name);
	int r = cw_alloc_async(&b, size, kind, 0, 0, s);
	double dt = now_ms() - t0;
	bool running = kernel_running(done);
	CHECK(r == CW_OK, "%s: cw_alloc_async: %s", name,
	    cw_last_error()->message);
	if (r != CW_OK)
		return;
	printf("  %s: A back after %.3f ms, kernel %s\n", name, dt,
	    running ? "still running" : "ended");
	CHECK(cw_ptr(b) == pa && running, "%s: A was not handed out again "
	    "at once on its stream (same %d, kernel running %d)", name,
	    cw_ptr(b) == pa, running);
	fill<<<64, 256, 0, s>>>((unsigned char *)cw_ptr(b), size, 0x55);
	cudaStreamSynchronize(s);
	std::vector<unsigned char> h(size);
	CHECK(cw_download(b, 0, h.data(), size) == CW_OK, "%s: download",
	    name);
	size_t wrong = 0;
	for (size_t i = 0; i < size; i++)
		wrong += h[i] != 0x55;
	CHECK(wrong == 0, "%s: %zu bytes are not the later write's", name,
	    wrong);
	cw_free(b);
	cudaEventDestroy(done);
	cudaStreamDestroy(s);
}

int
main()
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("SKIP: no GPU\n");
		return 77;
	}
	cudaSetDevice(0);
	cudaFree(0);
	run("device 1 MiB (sub-allocated)", CW_DEVICE, 1 << 20, 48, 0);
	run("device 4 MiB (own segment)", CW_DEVICE, 4 << 20, 12, 0);
	run("device 1 MiB, 64 MiB freed beside (barrier)", CW_DEVICE, 1 << 20,
	    96, 64 << 20);
	run("managed 64 KiB", CW_MANAGED, 64 << 10, 64, 0);
	run("pinned 256 KiB", CW_PINNED, 256 << 10, 32, 0);
	run_same_stream(CW_DEVICE, 1 << 20, "device 1 MiB, same stream");
	run_same_stream(CW_DEVICE, 4 << 20, "device 4 MiB, same stream");
	run_same_stream(CW_PINNED, 256 << 10, "pinned 256 KiB, same stream");
	printf("fence_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
