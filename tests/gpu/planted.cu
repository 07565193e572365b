// planted.cu -- a CUDA runtime program with planted memory bugs, for the
// GPU tests (tests/gpu/run-gpu-tests.sh).  Built three ways there:
// -cudart static (nvcc's default), -cudart shared, and
// --default-stream per-thread (cudart then asks for the _ptsz entry points).
//
// Planted (the script's expectations must match; printed at the end):
//   device:  2 x 2 MiB from one call site (alloc_scratch), 1 x 768 KiB
//            from another (main)                    = 3 allocations, 4980736 B
//   pinned:  1 x 192 KiB (cudaHostAlloc)            = 1 allocation,   196608 B
//   managed: 1 x 256 KiB (cudaMallocManaged)        = 1 allocation,   262144 B
//   double free: one cudaFree of a 128 KiB buffer already freed.
// Everything else is freed.  Output is deterministic.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                          \
	do {                                                              \
		cudaError_t e_ = (x);                                     \
		if (e_ != cudaSuccess) {                                  \
			std::fprintf(stderr, "planted: %s: %s\n", #x,     \
			    cudaGetErrorName(e_));                        \
			std::exit(2);                                     \
		}                                                         \
	} while (0)

static const size_t MiB = 1 << 20;

__global__ void
fill(int *p, size_t n, int v)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v + (int)(i % 7);
}

__global__ void
sum(const int *p, size_t n, unsigned long long *out)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(out, (unsigned long long)p[i]);
}

// The one call site of the two 2 MiB device leaks.
static __attribute__((noinline)) int *
alloc_scratch(size_t bytes)
{
	int *p = nullptr;
	CHECK(cudaMalloc(&p, bytes));
	return p;
}

static unsigned long long
checksum(const int *p, size_t n, cudaStream_t s)
{
	unsigned long long *acc, host = 0;
	CHECK(cudaMallocAsync(&acc, sizeof(*acc), s));
	CHECK(cudaMemsetAsync(acc, 0, sizeof(*acc), s));
	sum<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(p, n, acc);
	CHECK(cudaMemcpyAsync(&host, acc, sizeof(host), cudaMemcpyDeviceToHost, s));
	CHECK(cudaFreeAsync(acc, s));
	CHECK(cudaStreamSynchronize(s));
	return host;
}

int
main()
{
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	CHECK(cudaSetDevice(0));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	// Device: four scratch buffers from one site, two freed.
	int *scratch[4];
	size_t n = 2 * MiB / sizeof(int);
	for (int i = 0; i < 4; i++) {
		scratch[i] = alloc_scratch(2 * MiB);
		fill<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(scratch[i], n, i);
	}
	std::printf("planted: scratch checksum %llu\n", checksum(scratch[3], n, s));
	CHECK(cudaFree(scratch[2]));
	CHECK(cudaFree(scratch[3]));

	// Device: one 768 KiB leak from another site.
	int *table = nullptr;
	CHECK(cudaMalloc(&table, 768 * 1024));
	CHECK(cudaMemset(table, 0, 768 * 1024));

	// Pinned: one freed, one leaked.
	int *staging = nullptr, *pinned_leak = nullptr;
	CHECK(cudaMallocHost(&staging, 512 * 1024));
	CHECK(cudaHostAlloc(&pinned_leak, 192 * 1024, cudaHostAllocPortable));
	CHECK(cudaMemcpy(staging, scratch[0], 512 * 1024, cudaMemcpyDeviceToHost));
	std::printf("planted: staging[5] = %d\n", staging[5]);
	pinned_leak[0] = staging[5];
	CHECK(cudaFreeHost(staging));

	// Managed: one freed, one leaked (small).
	int *m1 = nullptr, *m2 = nullptr;
	CHECK(cudaMallocManaged(&m1, 1 * MiB));
	CHECK(cudaMallocManaged(&m2, 256 * 1024));
	size_t mn = MiB / sizeof(int);
	fill<<<(unsigned)((mn + 255) / 256), 256, 0, s>>>(m1, mn, 3);
	CHECK(cudaStreamSynchronize(s));
	std::printf("planted: managed[10] = %d\n", m1[10]);
	m2[0] = m1[10];
	CHECK(cudaFree(m1));

	// Stream-ordered: allocated and freed (no leak).
	int *a = nullptr;
	CHECK(cudaMallocAsync(&a, 3 * MiB, s));
	fill<<<(unsigned)((3 * MiB / 4 + 255) / 256), 256, 0, s>>>(a, 3 * MiB / 4, 1);
	std::printf("planted: async checksum %llu\n", checksum(a, 3 * MiB / 4, s));
	CHECK(cudaFreeAsync(a, s));
	CHECK(cudaStreamSynchronize(s));

	// Double free of a 128 KiB buffer.
	void *twice = nullptr;
	CHECK(cudaMalloc(&twice, 128 * 1024));
	CHECK(cudaFree(twice));
	cudaError_t e = cudaFree(twice);
	std::printf("planted: second cudaFree returned %s\n", cudaGetErrorName(e));
	(void)cudaGetLastError();

	CHECK(cudaStreamDestroy(s));
	std::printf("planted: leaks: device 3 (4980736 bytes), pinned 1 (196608), "
	    "managed 1 (262144); 1 double free\n");
	// No cudaDeviceReset: the memory is still allocated at exit, as in
	// most programs.
	return 0;
}
