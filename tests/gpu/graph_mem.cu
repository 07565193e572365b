// graph_mem.cu -- graph memory (CUDA graph allocation nodes and stream-
// ordered allocations captured into a graph), for the GPU tests
// (tests/gpu/run-gpu-tests.sh, case graph-mem).  Runtime API.
//
// Graph memory lives from the launch that reaches its allocation node to
// its free; destroying the graph does not free it.  Planted (each with a
// size no other part uses; the script's expectations must match):
//   A  cudaGraphAddMemAllocNode, 3 MiB + 4096, a kernel node writes it, a
//      memcpy node copies its tail to pinned host memory; launched once,
//      graph destroyed, never freed                     -> leak, 3149824 B
//   B  stream capture (global mode) of cudaMallocAsync 1 MiB + 8192, a
//      kernel, cudaMemcpyAsync of its tail; launched once, never freed
//                                                       -> leak, 1056768 B
//   C  an allocation node freed in the same graph by cudaGraphAddMemFreeNode,
//      launched twice                                   -> no leak
//   D  an allocation node launched, then cudaFree outside the graph (no
//      leak), then a second cudaFree, which must fail   -> one double free
//   E  an allocation node in a graph instantiated but never launched,
//      graph destroyed                                  -> no leak
//   F  a captured cudaMallocAsync freed by a captured cudaFreeAsync in the
//      same capture, launched twice                     -> no leak
// So: 2 graph allocations, 4206592 bytes, still allocated at exit; one
// double free; every other allocation freed.  The output is deterministic
// (checksums of the data read back).  Exit 0; 1 when data read back is
// wrong or the second cudaFree of D succeeds; 2 when a CUDA call that
// should succeed fails (the call and its error on stderr).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                          \
	do {                                                              \
		cudaError_t e_ = (x);                                     \
		if (e_ != cudaSuccess) {                                  \
			std::fprintf(stderr, "graph_mem: %s: %s\n", #x,   \
			    cudaGetErrorName(e_));                        \
			std::exit(2);                                     \
		}                                                         \
	} while (0)

static const size_t MiB = 1 << 20;
static const size_t TAIL = 64 * 1024; // bytes copied back: the last 64 KiB
static unsigned *host;                // pinned, TAIL bytes

__global__ void
fill(unsigned *p, size_t n, unsigned seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = seed * 2654435761u + (unsigned)i * 40503u;
}

// Checks the tail of an allocation of `bytes` filled with `seed`, as copied
// to `host`; returns its checksum, or exits 1 at the first wrong word.
static unsigned long long
check_tail(const char *what, size_t bytes, unsigned seed)
{
	size_t n = bytes / sizeof(unsigned), first = n - TAIL / sizeof(unsigned);
	unsigned long long sum = 0;
	for (size_t i = first; i < n; i++) {
		unsigned want = seed * 2654435761u + (unsigned)i * 40503u;
		if (host[i - first] != want) {
			std::printf("graph_mem: %s: word %zu is %u, expected %u\n",
			    what, i, host[i - first], want);
			std::exit(1);
		}
		sum += host[i - first];
	}
	return sum;
}

// ---------------------------------------------------------------- nodes

static void *
add_alloc(cudaGraph_t g, size_t bytes, cudaGraphNode_t *node)
{
	cudaMemAllocNodeParams ap = {};
	ap.poolProps.allocType = cudaMemAllocationTypePinned;
	ap.poolProps.location.type = cudaMemLocationTypeDevice;
	ap.poolProps.location.id = 0;
	ap.bytesize = bytes;
	CHECK(cudaGraphAddMemAllocNode(node, g, nullptr, 0, &ap));
	return ap.dptr;
}

static cudaGraphNode_t
add_fill(cudaGraph_t g, cudaGraphNode_t dep, void *p, size_t bytes,
    unsigned seed)
{
	size_t n = bytes / sizeof(unsigned);
	void *args[] = {&p, &n, &seed};
	cudaKernelNodeParams kp = {};
	kp.func = (void *)fill;
	kp.gridDim = dim3((unsigned)((n + 255) / 256));
	kp.blockDim = dim3(256);
	kp.kernelParams = args;
	cudaGraphNode_t node;
	CHECK(cudaGraphAddKernelNode(&node, g, &dep, 1, &kp));
	return node;
}

// A memcpy node copying the tail of p (bytes long) to host.
static cudaGraphNode_t
add_copy_tail(cudaGraph_t g, cudaGraphNode_t dep, void *p, size_t bytes)
{
	cudaGraphNode_t node;
	CHECK(cudaGraphAddMemcpyNode1D(&node, g, &dep, 1, host,
	    (char *)p + bytes - TAIL, TAIL, cudaMemcpyDeviceToHost));
	return node;
}

// Instantiates g, destroys it, launches it `launches` times on s (the
// host buffer cleared before each) and checks the tail each time.
static unsigned long long
run_graph(const char *what, cudaGraph_t g, cudaStream_t s, int launches,
    size_t bytes, unsigned seed)
{
	cudaGraphExec_t x;
	unsigned long long sum = 0;
	CHECK(cudaGraphInstantiate(&x, g, 0));
	CHECK(cudaGraphDestroy(g));
	for (int i = 0; i < launches; i++) {
		for (size_t j = 0; j < TAIL / sizeof(unsigned); j++)
			host[j] = 0;
		CHECK(cudaGraphLaunch(x, s));
		CHECK(cudaStreamSynchronize(s));
		sum += check_tail(what, bytes, seed);
	}
	CHECK(cudaGraphExecDestroy(x));
	return sum;
}

// A graph: allocation node -> fill -> copy of the tail (-> free node).
// Returns the allocation's address.
static void *
alloc_graph(cudaGraph_t *g, size_t bytes, unsigned seed, bool free_in_graph)
{
	cudaGraphNode_t a, k, c, f;
	CHECK(cudaGraphCreate(g, 0));
	void *p = add_alloc(*g, bytes, &a);
	k = add_fill(*g, a, p, bytes, seed);
	c = add_copy_tail(*g, k, p, bytes);
	if (free_in_graph)
		CHECK(cudaGraphAddMemFreeNode(&f, *g, &c, 1, p));
	return p;
}

// A captured graph: cudaMallocAsync -> fill -> cudaMemcpyAsync of the tail
// (-> cudaFreeAsync), global capture mode.
static cudaGraph_t
capture(cudaStream_t s, size_t bytes, unsigned seed, bool free_in_graph)
{
	cudaGraph_t g;
	void *p = nullptr;
	size_t n = bytes / sizeof(unsigned);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK(cudaMallocAsync(&p, bytes, s));
	fill<<<(unsigned)((n + 255) / 256), 256, 0, s>>>((unsigned *)p, n, seed);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpyAsync(host, (char *)p + bytes - TAIL, TAIL,
	    cudaMemcpyDeviceToHost, s));
	if (free_in_graph)
		CHECK(cudaFreeAsync(p, s));
	CHECK(cudaStreamEndCapture(s, &g));
	return g;
}

int
main()
{
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	CHECK(cudaSetDevice(0));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocHost(&host, TAIL));
	cudaGraph_t g;

	// A: allocation node, launched once, never freed.
	const size_t a_bytes = 3 * MiB + 4096;
	alloc_graph(&g, a_bytes, 11, false);
	std::printf("graph_mem: A: alloc node, tail checksum %llu\n",
	    run_graph("A", g, s, 1, a_bytes, 11));

	// B: captured cudaMallocAsync, launched once, never freed.
	const size_t b_bytes = 1 * MiB + 8192;
	g = capture(s, b_bytes, 22, false);
	std::printf("graph_mem: B: captured cudaMallocAsync, tail checksum %llu\n",
	    run_graph("B", g, s, 1, b_bytes, 22));

	// C: allocation node freed by a free node of the same graph.
	const size_t c_bytes = 2 * MiB + 12288;
	alloc_graph(&g, c_bytes, 33, true);
	std::printf("graph_mem: C: alloc + free node, 2 launches, checksum %llu\n",
	    run_graph("C", g, s, 2, c_bytes, 33));

	// D: allocation node launched, freed with cudaFree, freed again.
	const size_t d_bytes = 512 * 1024 + 16384;
	void *d = alloc_graph(&g, d_bytes, 44, false);
	std::printf("graph_mem: D: alloc node, tail checksum %llu\n",
	    run_graph("D", g, s, 1, d_bytes, 44));
	CHECK(cudaFree(d));
	cudaError_t e = cudaFree(d);
	(void)cudaGetLastError();
	std::printf("graph_mem: D: second cudaFree fails: %s\n",
	    e != cudaSuccess ? "yes" : "no");
	if (e == cudaSuccess)
		return 1;

	// E: allocation node in a graph instantiated, never launched.
	const size_t e_bytes = 4 * MiB + 20480;
	cudaGraphNode_t a;
	cudaGraphExec_t x;
	CHECK(cudaGraphCreate(&g, 0));
	void *ep = add_alloc(g, e_bytes, &a);
	add_fill(g, a, ep, e_bytes, 55);
	CHECK(cudaGraphInstantiate(&x, g, 0));
	CHECK(cudaGraphExecDestroy(x));
	CHECK(cudaGraphDestroy(g));
	std::printf("graph_mem: E: alloc node instantiated, not launched\n");

	// F: captured cudaMallocAsync + cudaFreeAsync in one capture.
	const size_t f_bytes = 768 * 1024 + 24576;
	g = capture(s, f_bytes, 66, true);
	std::printf("graph_mem: F: captured malloc + free, 2 launches, checksum %llu\n",
	    run_graph("F", g, s, 2, f_bytes, 66));

	CHECK(cudaFreeHost(host));
	CHECK(cudaStreamDestroy(s));
	std::printf("graph_mem: leaks: graph 2 (4206592 bytes); 1 double free\n");
	// No cudaDeviceReset: A's and B's memory is still allocated at exit.
	return 0;
}
