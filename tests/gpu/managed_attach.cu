// managed_attach.cu -- managed memory attached to streams from many host
// threads, the pattern of the CUDA samples' UnifiedMemoryStreams, for the
// GPU tests (tests/gpu/run-gpu-tests.sh, case managed-attach).  Built with
// nvcc -Xcompiler -fopenmp.
//
// 64 tasks on 8 OpenMP threads; each creates a stream, cudaMallocManaged a
// buffer (4 KiB .. 1 MiB), attaches it to its stream alone
// (cudaStreamAttachMemAsync, length 0, cudaMemAttachSingle), synchronises,
// fills it on the host, runs a kernel on the stream, synchronises, checks
// and sums it on the host, frees it and destroys the stream.  Nothing is
// leaked and nothing is wrong: the report must be empty.  The output is
// per size and in total, never in thread order, so it is deterministic.
// Exit 0; 1 when a result is wrong; 2 when a CUDA call fails (the call and
// its error on stderr).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <omp.h>

static const int TASKS = 64, THREADS = 8, SIZES = 9; // 4 KiB << 0..8

#define CHECK(x)                                                          \
	do {                                                              \
		cudaError_t e_ = (x);                                     \
		if (e_ != cudaSuccess) {                                  \
			std::fprintf(stderr, "managed_attach: task %d: %s: %s\n", \
			    t, #x, cudaGetErrorName(e_));                 \
			return 2;                                         \
		}                                                         \
	} while (0)

__global__ void
step(unsigned *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 3u + 1u;
}

static size_t
task_bytes(int t)
{
	return (size_t)4096 << (t % SIZES);
}

// One task; its checksum in *sum.  Returns 0, 1 (wrong data) or 2 (a CUDA
// call failed).
static int
task(int t, unsigned long long *sum)
{
	cudaStream_t s;
	unsigned *p = nullptr;
	size_t n = task_bytes(t) / sizeof(unsigned);

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocManaged(&p, task_bytes(t)));
	CHECK(cudaStreamAttachMemAsync(s, p, 0, cudaMemAttachSingle));
	CHECK(cudaStreamSynchronize(s));
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned)(t * 131 + i);
	step<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(p, n);
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(s));
	*sum = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned want = (unsigned)(t * 131 + i) * 3u + 1u;
		if (p[i] != want) {
			std::fprintf(stderr, "managed_attach: task %d: word %zu "
			    "is %u, expected %u\n", t, i, p[i], want);
			return 1;
		}
		*sum += p[i];
	}
	CHECK(cudaFree(p));
	CHECK(cudaStreamDestroy(s));
	return 0;
}

int
main()
{
	static unsigned long long sums[TASKS];
	static int status[TASKS];
	int worst = 0;
	cudaError_t e;

	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	if ((e = cudaSetDevice(0)) != cudaSuccess) {
		std::fprintf(stderr, "managed_attach: cudaSetDevice(0): %s\n",
		    cudaGetErrorName(e));
		return 2;
	}
	omp_set_num_threads(THREADS);
#pragma omp parallel for schedule(dynamic, 1)
	for (int t = 0; t < TASKS; t++)
		status[t] = task(t, &sums[t]);

	// Per size, then in total: the same whatever thread ran what.
	unsigned long long total = 0, bytes = 0;
	for (int k = 0; k < SIZES; k++) {
		unsigned long long sz = 0;
		int count = 0;
		for (int t = k; t < TASKS; t += SIZES) {
			sz += sums[t];
			count++;
		}
		std::printf("managed_attach: %zu bytes: %d tasks, checksum %llu\n",
		    task_bytes(k), count, sz);
	}
	for (int t = 0; t < TASKS; t++) {
		if (status[t] > worst)
			worst = status[t];
		total += sums[t];
		bytes += task_bytes(t);
	}
	std::printf("managed_attach: %d tasks, %llu bytes, checksum %llu\n",
	    TASKS, bytes, total);
	return worst;
}
