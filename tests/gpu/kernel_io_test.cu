// kernel_io_test.cu -- kernels read pooled device, managed and pinned
// memory written by cw_upload, and cw_download reads back what a kernel
// wrote; sizes cover slab classes, best-fit blocks and own segments (run
// by run-pool-gpu-tests.sh).  Exit 0 when all pass, 1 otherwise.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "cuwarden.h"

static int passed, failed;

__global__ void
plus_one(const unsigned *in, unsigned *out, size_t n)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i] + 1;
}

static const char *
kname(cw_kind_t k)
{
	return k == CW_DEVICE ? "device" : k == CW_MANAGED ? "managed" :
	    "pinned";
}

static void
one(cw_kind_t kin, cw_kind_t kout, size_t bytes)
{
	size_t n = bytes / sizeof(unsigned);
	cw_buf_t in, out;
	if (cw_alloc(&in, bytes, kin, 0, 0) != CW_OK ||
	    cw_alloc(&out, bytes, kout, 0, 0) != CW_OK) {
		printf("FAIL: cw_alloc %zu: %s\n", bytes,
		    cw_last_error()->message);
		failed++;
		return;
	}
	std::vector<unsigned> h(n), back(n);
	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned)(i * 2654435761u);
	int r1 = cw_upload(in, 0, h.data(), bytes);
	plus_one<<<128, 256>>>((const unsigned *)cw_ptr(in),
	    (unsigned *)cw_ptr(out), n);
	cudaError_t ke = cudaDeviceSynchronize();
	int r2 = cw_download(out, 0, back.data(), bytes);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += back[i] != h[i] + 1;
	// Host-addressable output: the host sees the kernel's writes too.
	if (kout != CW_DEVICE) {
		const unsigned *p = (const unsigned *)cw_ptr(out);
		for (size_t i = 0; i < n; i += 97)
			bad += p[i] != h[i] + 1;
	}
	bool ok = r1 == CW_OK && r2 == CW_OK && ke == cudaSuccess && bad == 0;
	if (ok)
		passed++;
	else
		failed++;
	printf("%s: %s -> %s, %zu bytes (upload %d, kernel %s, download %d, "
	    "%zu wrong)\n", ok ? "PASS" : "FAIL", kname(kin), kname(kout),
	    bytes, r1, cudaGetErrorString(ke), r2, bad);
	cw_free(in);
	cw_free(out);
}

int
main()
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("SKIP: no GPU\n");
		return 77;
	}
	static const size_t sizes[] = { 512, 4096, 40 << 10, 300 << 10,
		(1 << 20) + 512, 3 << 20, 20 << 20 };
	static const cw_kind_t kinds[] = { CW_DEVICE, CW_MANAGED, CW_PINNED };
	for (size_t s : sizes)
		for (cw_kind_t a : kinds)
			for (cw_kind_t b : kinds)
				one(a, b, s);
	// Many live small blocks at once: neighbours must not overlap.
	std::vector<cw_buf_t> bufs;
	for (int i = 0; i < 200; i++) {
		cw_buf_t b;
		if (cw_alloc(&b, 1000 + i * 37, CW_DEVICE, 0, 0) != CW_OK)
			break;
		std::vector<unsigned char> v(1000 + i * 37,
		    (unsigned char)i);
		cw_upload(b, 0, v.data(), v.size());
		bufs.push_back(b);
	}
	size_t bad = 0;
	for (size_t i = 0; i < bufs.size(); i++) {
		std::vector<unsigned char> v(1000 + i * 37);
		cw_download(bufs[i], 0, v.data(), v.size());
		for (unsigned char c : v)
			bad += c != (unsigned char)i;
		cw_free(bufs[i]);
	}
	if (bufs.size() == 200 && bad == 0)
		passed++;
	else
		failed++;
	printf("%s: 200 live small device blocks keep their own bytes (%zu "
	    "wrong)\n", bufs.size() == 200 && bad == 0 ? "PASS" : "FAIL",
	    bad);
	printf("kernel_io_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
