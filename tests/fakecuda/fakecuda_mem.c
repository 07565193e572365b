/* fakecuda_mem.c: simulated memory — device ranges, the allocation table,
 * every allocation and free family, copies and sets, pointer queries,
 * stream-ordered pools, VMM, IPC and arrays.
 *
 * Device memory: each device reserves its memory size of PROT_NONE addresses
 * (a host dereference faults, as on a GPU) and a read-write shadow of the same
 * size (MAP_NORESERVE: nothing is committed until touched). Copies and sets go
 * through the shadow. Freed device memory is never unmapped (a simulated
 * writer still running cannot fault); its pages are dropped with MADV_DONTNEED.
 * VMM uses one more arena; cuMemCreate is a memfd, cuMemMap maps it over the
 * shadow with MAP_FIXED, cuMemUnmap puts anonymous memory back.
 * Managed and pinned memory is plain host memory from mmap.
 *
 * Sharing: a VMM handle exports as a dup of its memfd, a pool as a memfd of
 * its own; both are named "fakecuda-<vmm|pool>-dev<N>", so an import (in
 * this process or another one that received the descriptor) knows the
 * device. An imported VMM handle maps the same pages; an imported pool
 * pointer is a fresh range of the exporter's size (as IPC: data not shared).
 * Imported memory is the exporter's: it does not count in device.used.
 *
 * Graph memory: an alloc node reserves device addresses (never reused while
 * the reservation lives); a launch makes them a stream-ordered record that
 * carries its gmem; freeing that record drops its pages and leaves the
 * addresses reserved (fakecuda_graph.c counts the bytes).
 *
 * Invariants: records are sorted by base and never overlap; a record's span
 * (device kinds) is exactly what its arena lent; device.used is the sum of
 * spans plus VMM physical sizes. All under fc_lock.
 */
#include "fakecuda_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SMALL_ALIGN 512UL
#define PHYS_MAGIC 0x9a1c0de5u
#define POOL_MAGIC 0xb001b001u
#define ARRAY_MAGIC 0xa77a7a77u
#define MIPMAP_MAGIC 0x313a3a77u
#define POOL_PTR_MAGIC "FAKECUDAMPP1"
#define IPC_MAGIC "FAKECUDAIPC1"

static fc_rec_t **recs;
static size_t nrecs, caprecs;
static unsigned long long next_buffer_id = 1;
static fc_rec_t *pending_frees;     /* cuMemFreeAsync not yet reached */
static fc_pool_t *all_pools;

typedef struct fc_phys_s {
	uint32_t magic;
	int fd;
	size_t size;
	int device;
	int user_refs;        /* cuMemCreate + cuMemRetainAllocationHandle */
	int maps;
	bool imported;        /* cuMemImportFromShareableHandle: not in device.used */
	CUmemAllocationProp prop;
	struct fc_phys_s *next;
} fc_phys_t;

typedef struct fc_map_s {
	uintptr_t va;
	size_t size;
	fc_phys_t *phys;
	unsigned long long buffer_id;
	unsigned long long access;
	struct fc_map_s *next;
} fc_map_t;

typedef struct fc_array_s {
	uint32_t magic;       /* ARRAY_MAGIC (CUarray) or MIPMAP_MAGIC (CUmipmappedArray) */
	unsigned levels;      /* mipmapped: numMipmapLevels */
	fc_rec_t *rec;        /* the backing store of every level */
	struct fc_array_s *next;
} fc_array_t;

static fc_arena_t vmm;               /* cuMemAddressReserve addresses */
static fc_phys_t *all_phys;
static fc_map_t *all_maps;
static fc_array_t *all_arrays;

static size_t
round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* ============================================================ sharing */

/* A close-on-exec memfd named for what it shares and its device. Returns -1
 * on error. */
static int
share_memfd(const char *what, int dev)
{
	char name[48];

	snprintf(name, sizeof(name), "fakecuda-%s-dev%d", what, dev);
	return memfd_create(name, MFD_CLOEXEC);
}

/* The device of a descriptor made by share_memfd(what, dev) here or in
 * another process; -1 when fd is not one (closed, another file). */
static int
share_device(int fd, const char *what)
{
	char path[64], link[128], prefix[48];
	ssize_t n;
	size_t lp;
	char *end;
	long dev;

	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	lp = (size_t)snprintf(prefix, sizeof(prefix), "/memfd:fakecuda-%s-dev", what);
	if (strncmp(link, prefix, lp) != 0)
		return -1;
	dev = strtol(link + lp, &end, 10);
	if (end == link + lp || dev < 0 || dev >= fc_config.ndevices)
		return -1;
	return (int)dev;
}

/* ============================================================= arenas */

/* Returns true on error. */
static bool
arena_init(fc_arena_t *a, size_t range)
{
	a->range = range;
	a->base = mmap(NULL, range, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->base == MAP_FAILED)
		return true;
	/* The shadow starts inaccessible too and becomes read-write as memory is
	 * handed out (arena_commit), so even strict overcommit accounting only
	 * charges what was allocated. It never goes back. */
	a->shadow = mmap(NULL, range, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->shadow == MAP_FAILED) {
		munmap(a->base, range);
		return true;
	}
	a->capfree = 64;
	a->free = malloc(a->capfree * sizeof(*a->free));
	if (!a->free)
		return true;
	/* Keep address 0 of the arena unused: a device pointer is never its base. */
	a->free[0].start = (uintptr_t)a->base + FC_GRANULARITY;
	a->free[0].len = range - FC_GRANULARITY;
	a->nfree = 1;
	return false;
}

static bool
arena_has(const fc_arena_t *a, uintptr_t p)
{
	return a->base && p >= (uintptr_t)a->base && p < (uintptr_t)a->base + a->range;
}

static void *
arena_shadow(const fc_arena_t *a, uintptr_t p)
{
	return a->shadow + (p - (uintptr_t)a->base);
}

/* Makes the shadow of [p, p + len) read-write. Returns true on error. */
static bool
arena_commit(fc_arena_t *a, uintptr_t p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = p / pg * pg, e = round_up(p + len, pg);

	return mprotect(arena_shadow(a, s), e - s, PROT_READ | PROT_WRITE) != 0;
}

/* Returns true on error. */
static bool
extents_insert(fc_arena_t *a, size_t at, uintptr_t start, size_t len)
{
	if (a->nfree == a->capfree) {
		fc_extent_t *n = realloc(a->free, 2 * a->capfree * sizeof(*n));

		if (!n)
			return true;
		a->free = n;
		a->capfree *= 2;
	}
	memmove(&a->free[at + 1], &a->free[at], (a->nfree - at) * sizeof(*a->free));
	a->free[at].start = start;
	a->free[at].len = len;
	a->nfree++;
	return false;
}

static void
extents_remove(fc_arena_t *a, size_t at)
{
	memmove(&a->free[at], &a->free[at + 1], (a->nfree - at - 1) * sizeof(*a->free));
	a->nfree--;
}

/* First fit. Returns 0 when nothing fits. */
static uintptr_t
arena_alloc(fc_arena_t *a, size_t len, size_t align)
{
	for (size_t i = 0; i < a->nfree; i++) {
		uintptr_t s = a->free[i].start, e = s + a->free[i].len;
		uintptr_t p = round_up(s, align);

		if (p >= e || e - p < len)
			continue;
		if (p + len < e) {
			if (extents_insert(a, i + 1, p + len, e - (p + len)))
				return 0;
		}
		if (p > s)
			a->free[i].len = p - s;
		else
			extents_remove(a, i);
		return p;
	}
	return 0;
}

/* Drops the shadow pages of [p, p + len) (the data is gone). */
static void
arena_drop(fc_arena_t *a, uintptr_t p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = round_up(p, pg), e = (p + len) / pg * pg;

	if (e > s)
		madvise(arena_shadow(a, s), e - s, MADV_DONTNEED);
}

/* Release [p, p + len) for reuse, if it is at least hint bytes wide, drop its
 * shadow pages. */
static void
arena_free(fc_arena_t *a, uintptr_t p, size_t len)
{
	size_t lo = 0, hi = a->nfree;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = round_up(p, pg), e = (p + len) / pg * pg;

	if (e > s + 16 * pg)
		madvise(arena_shadow(a, s), e - s, MADV_DONTNEED);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a->free[mid].start < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: first extent after p */
	if (lo > 0 && a->free[lo - 1].start + a->free[lo - 1].len == p) {
		a->free[lo - 1].len += len;
		if (lo < a->nfree && p + len == a->free[lo].start) {
			a->free[lo - 1].len += a->free[lo].len;
			extents_remove(a, lo);
		}
		return;
	}
	if (lo < a->nfree && p + len == a->free[lo].start) {
		a->free[lo].start = p;
		a->free[lo].len += len;
		return;
	}
	extents_insert(a, lo, p, len);
}

bool
fc_mem_init_device(int dev, size_t bytes)
{
	fc_device_t *d = &fc_devices[dev];

	if (arena_init(&d->va, round_up(bytes, FC_GRANULARITY) + 64 * FC_GRANULARITY))
		return true;
	d->total = bytes;
	fc_mem_pool_init(&d->default_pool, dev, true);
	d->current_pool = &d->default_pool;
	if (dev == 0 && !vmm.base &&
	    arena_init(&vmm, 2 * round_up(bytes, FC_GRANULARITY) * (size_t)fc_config.ndevices))
		return true;
	return false;
}

/* ============================================================ records */

/* Index of the first record with base > p. */
static size_t
rec_upper(uintptr_t p)
{
	size_t lo = 0, hi = nrecs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (recs[mid]->base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

fc_rec_t *
fc_rec_find(uintptr_t p)
{
	size_t i = rec_upper(p);

	if (i == 0)
		return NULL;
	if (p - recs[i - 1]->base < recs[i - 1]->size)
		return recs[i - 1];
	return NULL;
}

static fc_rec_t *
rec_exact(uintptr_t p)
{
	fc_rec_t *r = fc_rec_find(p);

	return r && r->base == p ? r : NULL;
}

fc_rec_t *
fc_rec_exact(uintptr_t p)
{
	return rec_exact(p);
}

/* Returns true on error. */
static bool
rec_insert(fc_rec_t *r)
{
	size_t i;

	if (nrecs == caprecs) {
		size_t cap = caprecs ? 2 * caprecs : 256;
		fc_rec_t **n = realloc(recs, cap * sizeof(*n));

		if (!n)
			return true;
		recs = n;
		caprecs = cap;
	}
	i = rec_upper(r->base);
	memmove(&recs[i + 1], &recs[i], (nrecs - i) * sizeof(*recs));
	recs[i] = r;
	nrecs++;
	r->buffer_id = next_buffer_id++;
	return false;
}

static void
rec_remove(fc_rec_t *r)
{
	size_t i = rec_upper(r->base);

	if (i > 0 && recs[i - 1] == r) {
		memmove(&recs[i - 1], &recs[i], (nrecs - i) * sizeof(*recs));
		nrecs--;
	}
}

/* Creates a record in device memory. Returns the driver's code. */
static CUresult
device_alloc(fc_kind_t kind, size_t size, int dev, fc_ctx_t *ctx, bool count_used,
    fc_rec_t **out)
{
	fc_device_t *d = &fc_devices[dev];
	size_t span = size < FC_GRANULARITY ? round_up(size, SMALL_ALIGN) :
	    round_up(size, FC_GRANULARITY);
	size_t align = size < FC_GRANULARITY ? SMALL_ALIGN : FC_GRANULARITY;
	fc_rec_t *r;
	uintptr_t p;

	/* An absurd size (round_up wrapped to 0 or below size) is out of
	 * memory, as the real driver answers for SIZE_MAX. */
	if (span < size ||
	    (count_used && (span > d->total || d->used > d->total - span)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = arena_alloc(&d->va, span, align);
	if (!p) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (arena_commit(&d->va, p, span)) {
		arena_free(&d->va, p, span);
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->base = p;
	r->size = size;
	r->span = span;
	r->kind = kind;
	r->ctx = ctx;
	r->device = dev;
	if (rec_insert(r)) {
		arena_free(&d->va, p, span);
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (count_used)
		d->used += span;
	*out = r;
	return CUDA_SUCCESS;
}

static CUresult
host_alloc(fc_kind_t kind, size_t size, fc_ctx_t *ctx, unsigned flags, fc_rec_t **out)
{
	size_t len = round_up(size, (size_t)sysconf(_SC_PAGESIZE));
	fc_rec_t *r = calloc(1, sizeof(*r));
	void *p;

	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->base = (uintptr_t)p;
	r->size = size;
	r->kind = kind;
	r->ctx = ctx;
	r->device = ctx->device;
	r->flags = flags;
	if (rec_insert(r)) {
		munmap(p, len);
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = r;
	return CUDA_SUCCESS;
}

/* Frees a record of any kind, no questions asked. */
static void
rec_release(fc_rec_t *r)
{
	fc_device_t *d = &fc_devices[r->device];

	rec_remove(r);
	if (r->gmem)        /* graph memory: the addresses stay reserved */
		arena_drop(&d->va, r->base, r->span);
	else switch (r->kind) {
	case FC_KIND_ASYNC:
	case FC_KIND_DEVICE:
	case FC_KIND_ARRAY:
		if (!r->imported)
			d->used -= r->span;
		arena_free(&d->va, r->base, r->span);
		break;
	case FC_KIND_IPC:
		arena_free(&d->va, r->base, r->span);
		break;
	case FC_KIND_MANAGED:
	case FC_KIND_PINNED:
		munmap((void *)r->base, round_up(r->size, (size_t)sysconf(_SC_PAGESIZE)));
		break;
	case FC_KIND_VARANGE:
		arena_free(&vmm, r->base, r->span);
		break;
	case FC_KIND_REGISTERED:
		break;
	}
	if (r->pool && !r->imported)
		r->pool->used -= r->size;
	if (r->free_pending) {
		fc_rec_t **pp = &pending_frees;

		while (*pp && *pp != r)
			pp = &(*pp)->next_pending;
		if (*pp)
			*pp = r->next_pending;
	}
	if (r->gmem)
		fc_graph_mem_released(r->gmem, r->device, r->span);
	free(r);
}

void
fc_mem_reap(void)
{
	uint64_t now;
	fc_rec_t **pp = &pending_frees;

	if (!pending_frees)
		return;
	now = fc_now();
	while (*pp) {
		fc_rec_t *r = *pp;

		if (r->free_time <= now) {
			*pp = r->next_pending;
			r->free_pending = false;
			rec_release(r);
		} else {
			pp = &r->next_pending;
		}
	}
}

void
fc_mem_ctx_teardown(fc_ctx_t *ctx)
{
	size_t i = 0;

	while (i < nrecs) {
		fc_rec_t *r = recs[i];

		if (r->ctx == ctx && r->kind != FC_KIND_ASYNC && r->kind != FC_KIND_VARANGE) {
			for (fc_array_t **pa = &all_arrays; *pa; pa = &(*pa)->next) {
				if ((*pa)->rec == r) {
					fc_array_t *a = *pa;

					*pa = a->next;
					a->magic = 0;
					free(a);
					break;
				}
			}
			rec_release(r);
		} else {
			i++;
		}
	}
}

void
fc_mem_live(struct fakecuda_counters *out)
{
	for (size_t i = 0; i < nrecs; i++) {
		fc_rec_t *r = recs[i];

		switch (r->kind) {
		case FC_KIND_DEVICE: out->live_device++; break;
		case FC_KIND_MANAGED: out->live_managed++; break;
		case FC_KIND_PINNED: out->live_pinned++; break;
		case FC_KIND_REGISTERED: out->live_registered++; break;
		case FC_KIND_ASYNC:
			if (r->gmem)
				out->live_graph++;
			else
				out->live_async++;
			break;
		case FC_KIND_IPC: out->live_ipc++; break;
		case FC_KIND_ARRAY: break;
		case FC_KIND_VARANGE: continue;
		}
		out->live_allocations++;
		out->live_bytes += r->size;
	}
	for (fc_phys_t *p = all_phys; p; p = p->next) {
		out->live_vmm_handles++;
		out->live_allocations++;
		out->live_bytes += p->size;
	}
	for (fc_map_t *m = all_maps; m; m = m->next)
		out->live_vmm_mappings++;
}

static fc_map_t *
map_find(uintptr_t p)
{
	for (fc_map_t *m = all_maps; m; m = m->next)
		if (p >= m->va && p - m->va < m->size)
			return m;
	return NULL;
}

/* Is [p, p + n) entirely mapped (by one or more adjacent mappings)? */
static bool
vmm_mapped(uintptr_t p, size_t n)
{
	while (n) {
		fc_map_t *m = map_find(p);
		size_t k;

		if (!m)
			return false;
		k = m->va + m->size - p;
		if (k >= n)
			return true;
		p += k;
		n -= k;
	}
	return true;
}

static bool
in_device_space(uintptr_t p)
{
	if (arena_has(&vmm, p))
		return true;
	for (int d = 0; d < fc_config.ndevices; d++)
		if (arena_has(&fc_devices[d].va, p))
			return true;
	return false;
}

void *
fc_mem_translate(uintptr_t p, size_t n)
{
	fc_rec_t *r;

	if (n == 0 || p + n < p)
		return NULL;
	if (arena_has(&vmm, p))
		return vmm_mapped(p, n) && arena_has(&vmm, p + n - 1) ?
		    arena_shadow(&vmm, p) : NULL;
	r = fc_rec_find(p);
	if (!r || r->kind == FC_KIND_VARANGE || (r->kind == FC_KIND_ASYNC && r->free_pending))
		return NULL;
	if (n > r->size - (p - r->base))
		return NULL;
	for (int d = 0; d < fc_config.ndevices; d++)
		if (arena_has(&fc_devices[d].va, p))
			return arena_shadow(&fc_devices[d].va, p);
	return (void *)p;
}

FC_EXPORT void *
fakecuda_host_alias(CUdeviceptr p, size_t n)
{
	void *a;

	fc_enter();
	a = fc_initialized ? fc_mem_translate((uintptr_t)p, n) : NULL;
	fc_leave();
	return a;
}

/* ======================================================== allocations */

/* Common prologue: initialised, a current context, a valid out-pointer. */
static CUresult
alloc_prologue(void *out, size_t size, fc_ctx_t **ctx)
{
	CUresult r = fc_need_ctx(ctx);

	if (r)
		return r;
	if (!out || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemAlloc_v2);
	fc_enter();
	if ((r = alloc_prologue(dptr, bytesize, &ctx)) || (r = fc_capture_unsafe()))
		goto out;
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = device_alloc(FC_KIND_DEVICE, bytesize, ctx->device, ctx, true, &rec)))
		goto out;
	*dptr = rec->base;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
    size_t Height, unsigned int ElementSizeBytes)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	size_t pitch;
	CUresult r;

	FC_COUNT(cuMemAllocPitch_v2);
	fc_enter();
	if ((r = alloc_prologue(dptr, WidthInBytes * Height, &ctx)) ||
	    (r = fc_capture_unsafe()))
		goto out;
	if (!pPitch || (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
	    ElementSizeBytes != 16)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	pitch = round_up(WidthInBytes, SMALL_ALIGN);
	if ((r = device_alloc(FC_KIND_DEVICE, pitch * Height, ctx->device, ctx, true, &rec)))
		goto out;
	rec->pitch = true;
	*dptr = rec->base;
	*pPitch = pitch;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemAllocManaged);
	fc_enter();
	if ((r = alloc_prologue(dptr, bytesize, &ctx)) || (r = fc_capture_unsafe()))
		goto out;
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = host_alloc(FC_KIND_MANAGED, bytesize, ctx, flags, &rec)))
		goto out;
	*dptr = rec->base;
out:
	fc_leave();
	return r;
}

static CUresult
pinned_alloc(void **pp, size_t bytesize, unsigned int flags)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	fc_enter();
	if ((r = alloc_prologue(pp, bytesize ? bytesize : 1, &ctx)) ||
	    (r = fc_capture_unsafe()))
		goto out;
	if (bytesize == 0) {        /* success and NULL (driver 580) */
		*pp = NULL;
		goto out;
	}
	if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
	    CU_MEMHOSTALLOC_WRITECOMBINED)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = host_alloc(FC_KIND_PINNED, bytesize, ctx, flags, &rec)))
		goto out;
	*pp = (void *)rec->base;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	FC_COUNT(cuMemHostAlloc);
	return pinned_alloc(pp, bytesize, Flags);
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	FC_COUNT(cuMemAllocHost_v2);
	return pinned_alloc(pp, bytesize, 0);
}

static CUresult
host_register(void *p, size_t bytesize, unsigned int flags)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	size_t i;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!p || bytesize == 0 || (uintptr_t)p + bytesize < (uintptr_t)p ||
	    (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
	    CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)) ||
	    in_device_space((uintptr_t)p)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	i = rec_upper((uintptr_t)p);
	if ((i > 0 && (uintptr_t)p - recs[i - 1]->base < recs[i - 1]->size) ||
	    (i < nrecs && recs[i]->base < (uintptr_t)p + bytesize)) {
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	rec->base = (uintptr_t)p;
	rec->size = bytesize;
	rec->kind = FC_KIND_REGISTERED;
	rec->ctx = ctx;
	rec->device = ctx->device;
	rec->flags = flags;
	if (rec_insert(rec)) {
		free(rec);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	FC_COUNT(cuMemHostRegister);
	return host_register(p, bytesize, Flags);
}

FC_EXPORT CUresult CUDAAPI
cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	FC_COUNT(cuMemHostRegister_v2);
	return host_register(p, bytesize, Flags);
}

/* ============================================================== frees */

/* The synchronous free: wait for all work on the record's device, then free.
 * Lock held on entry and exit; dropped while waiting. */
static CUresult
free_sync(uintptr_t p, bool (*ok)(const fc_rec_t *), CUresult bad)
{
	fc_rec_t *r = rec_exact(p);
	uint64_t t;
	int dev;

	if (!r || !ok(r))
		return bad;
	if (fc_inject_free())
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	dev = r->device;
	if (r->kind != FC_KIND_ASYNC) {
		t = fc_devices[dev].done;
		if (t > fc_now())
			__atomic_fetch_add(&fc_free_waits, 1, __ATOMIC_RELAXED);
		fc_leave();
		fc_wait_until(t);
		fc_enter();
		r = rec_exact(p);      /* another thread may have freed it meanwhile */
		if (!r || !ok(r))
			return bad;
	}
	rec_release(r);
	return CUDA_SUCCESS;
}

/* The synchronous frees need no current context (driver 580: cuMemFree_v2 of
 * an unknown pointer without one is INVALID_VALUE, of 0 or NULL success), but
 * a current context that was destroyed is an error. */
static CUresult
free_ctx(fc_ctx_t **ctx)
{
	CUresult r = fc_check_init();

	if (r)
		return r;
	*ctx = fc_current();
	if (*ctx && !fc_ctx_valid(*ctx))
		return fc_need_ctx(ctx);
	return CUDA_SUCCESS;
}

static bool
is_mem_free_kind(const fc_rec_t *r)
{
	return r->kind == FC_KIND_DEVICE || r->kind == FC_KIND_MANAGED ||
	    (r->kind == FC_KIND_ASYNC && !r->free_pending);
}

static bool
is_pinned(const fc_rec_t *r)
{
	return r->kind == FC_KIND_PINNED;
}

static bool
is_registered(const fc_rec_t *r)
{
	return r->kind == FC_KIND_REGISTERED;
}

FC_EXPORT CUresult CUDAAPI
cuMemFree_v2(CUdeviceptr dptr)
{
	fc_ctx_t *ctx;
	CUresult r;

	FC_COUNT(cuMemFree_v2);
	fc_enter();
	if ((r = free_ctx(&ctx)) || (r = fc_capture_unsafe()) || dptr == 0)
		goto out;
	r = free_sync((uintptr_t)dptr, is_mem_free_kind, CUDA_ERROR_INVALID_VALUE);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemFreeHost(void *p)
{
	fc_ctx_t *ctx;
	CUresult r;

	FC_COUNT(cuMemFreeHost);
	fc_enter();
	if ((r = free_ctx(&ctx)) || (r = fc_capture_unsafe()) || !p)
		goto out;
	r = free_sync((uintptr_t)p, is_pinned, CUDA_ERROR_INVALID_VALUE);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemHostUnregister(void *p)
{
	fc_ctx_t *ctx;
	CUresult r;

	FC_COUNT(cuMemHostUnregister);
	fc_enter();
	if ((r = free_ctx(&ctx)) || (r = fc_capture_unsafe()))
		goto out;
	if (!p) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	/* Inside a registered range but not its start: CUDA_ERROR_INVALID_VALUE;
	 * elsewhere: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED (driver 580). */
	{
		fc_rec_t *rec = fc_rec_find((uintptr_t)p);

		r = free_sync((uintptr_t)p, is_registered, rec && is_registered(rec) ?
		    CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	}
out:
	fc_leave();
	return r;
}

/* ================================================= host pointer queries */

FC_EXPORT CUresult CUDAAPI
cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemHostGetDevicePointer_v2);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	rec = fc_rec_find((uintptr_t)p);
	if (!pdptr || Flags != 0 || !rec ||
	    (rec->kind != FC_KIND_PINNED && rec->kind != FC_KIND_REGISTERED))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pdptr = (CUdeviceptr)(uintptr_t)p;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemHostGetFlags);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	rec = fc_rec_find((uintptr_t)p);
	if (!pFlags || !rec || rec->kind != FC_KIND_PINNED)
		r = CUDA_ERROR_INVALID_VALUE;
	else	/* unified addressing: every pinned allocation is mapped
		 * (driver 580 adds DEVICEMAP to the flags asked for) */
		*pFlags = rec->flags | CU_MEMHOSTALLOC_DEVICEMAP;
out:
	fc_leave();
	return r;
}

/* ===================================================== info and ranges */

FC_EXPORT CUresult CUDAAPI
cuMemGetInfo_v2(size_t *free_, size_t *total)
{
	fc_ctx_t *ctx;
	fc_device_t *d;
	CUresult r;

	FC_COUNT(cuMemGetInfo_v2);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	d = &fc_devices[ctx->device];
	if (free_)
		*free_ = d->total - d->used;
	if (total)
		*total = d->total;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	fc_map_t *m;
	CUresult r;

	FC_COUNT(cuMemGetAddressRange_v2);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if ((m = map_find((uintptr_t)dptr))) {
		if (pbase)
			*pbase = m->va;
		if (psize)
			*psize = m->size;
		goto out;
	}
	rec = fc_rec_find((uintptr_t)dptr);
	if (!rec || rec->kind == FC_KIND_VARANGE || rec->kind == FC_KIND_ARRAY ||
	    (rec->kind == FC_KIND_ASYNC && rec->free_pending)) {
		r = CUDA_ERROR_NOT_FOUND;
		goto out;
	}
	if (pbase)
		*pbase = rec->base;
	if (psize)
		*psize = rec->size;
out:
	fc_leave();
	return r;
}

/* ================================================== pointer attributes */

typedef struct {
	uintptr_t ptr;
	bool valid;           /* a CUDA pointer at all */
	CUcontext ctx;
	unsigned type;
	bool host_ok, managed, ipc_capable, mapped;
	uintptr_t start;
	size_t size;
	int device;
	unsigned long long buffer_id;
	CUmemoryPool pool;
	unsigned long long handle_types;
	bool sync_memops;
} ptr_info_t;

static void
ptr_info(uintptr_t p, ptr_info_t *pi)
{
	fc_rec_t *r;
	fc_map_t *m;

	memset(pi, 0, sizeof(*pi));
	pi->ptr = p;
	if (arena_has(&vmm, p)) {
		r = fc_rec_find(p);
		m = map_find(p);
		if (!r || r->kind != FC_KIND_VARANGE)
			return;
		pi->valid = true;
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->start = r->base;
		pi->size = r->size;
		pi->mapped = m != NULL;
		pi->device = m ? m->phys->device : 0;
		pi->buffer_id = m ? m->buffer_id : r->buffer_id;
		pi->handle_types = m ? (unsigned long long)m->phys->prop.requestedHandleTypes : 0;
		return;
	}
	r = fc_rec_find(p);
	if (!r || r->kind == FC_KIND_ARRAY || (r->kind == FC_KIND_ASYNC && r->free_pending))
		return;
	pi->valid = true;
	pi->ctx = (CUcontext)r->ctx;
	pi->start = r->base;
	pi->size = r->size;
	pi->device = r->device;
	pi->buffer_id = r->buffer_id;
	pi->mapped = true;
	switch (r->kind) {
	case FC_KIND_DEVICE:
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->ipc_capable = true;
		break;
	case FC_KIND_ASYNC:
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->pool = (CUmemoryPool)r->pool;
		break;
	case FC_KIND_IPC:
		pi->type = CU_MEMORYTYPE_DEVICE;
		break;
	case FC_KIND_MANAGED:
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->managed = true;
		pi->host_ok = true;
		break;
	case FC_KIND_PINNED:
	case FC_KIND_REGISTERED:
		pi->type = CU_MEMORYTYPE_HOST;
		pi->host_ok = true;
		break;
	case FC_KIND_ARRAY:
	case FC_KIND_VARANGE:
		break;
	}
}

/* Writes one attribute. Returns the driver's code. */
static CUresult
ptr_attr(void *data, CUpointer_attribute a, const ptr_info_t *pi, bool lenient)
{
	if (!pi->valid && !lenient && a != CU_POINTER_ATTRIBUTE_MAPPED)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		/* stream-ordered and VMM memory: success, NULL (driver 580) */
		*(CUcontext *)data = pi->ctx;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = pi->type;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = pi->valid ? pi->ptr : 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!pi->host_ok && !lenient)
			return CUDA_ERROR_INVALID_VALUE;
		/* cuPointerGetAttributes of plain host memory: the pointer itself */
		*(void **)data = pi->host_ok || !pi->valid ? (void *)pi->ptr : NULL;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(unsigned int *)data = pi->sync_memops;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = pi->buffer_id;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = pi->managed;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = pi->valid ? pi->device : -2;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(unsigned int *)data = pi->ipc_capable;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		if (pi->valid)      /* not a CUDA pointer: left alone (driver 580) */
			*(CUdeviceptr *)data = pi->start;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		if (pi->valid)
			*(size_t *)data = pi->size;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = pi->mapped;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = pi->handle_types;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		*(unsigned int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		*(unsigned int *)data = pi->valid ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE : 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(CUmemoryPool *)data = pi->pool;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

FC_EXPORT CUresult CUDAAPI
cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	ptr_info_t pi;
	CUresult r;

	FC_COUNT(cuPointerGetAttribute);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!data) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	ptr_info((uintptr_t)ptr, &pi);
	r = ptr_attr(data, attribute, &pi, false);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
    void **data, CUdeviceptr ptr)
{
	ptr_info_t pi;
	CUresult r;

	FC_COUNT(cuPointerGetAttributes);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!attributes || !data || numAttributes == 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	ptr_info((uintptr_t)ptr, &pi);
	for (unsigned i = 0; i < numAttributes && !r; i++)
		if (data[i])
			r = ptr_attr(data[i], attributes[i], &pi, true);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuPointerSetAttribute);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	rec = fc_rec_find((uintptr_t)ptr);
	if (!value || !rec || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		r = CUDA_ERROR_INVALID_VALUE;
out:
	fc_leave();
	return r;
}

/* ====================================================== copies and sets */

/* Resolves one side of a copy. A pointer in simulated device space must lie
 * in live memory; elsewhere it must be known (device side) or is taken as
 * pageable host memory (host side). A managed range as the device side
 * must lie in its allocation (driver 580 refuses a set past its end: probe
 * part exact). Lock held. */
static CUresult
side(uintptr_t p, size_t n, bool device_side, void **out)
{
	fc_rec_t *rec;

	if (in_device_space(p) || (device_side && !fc_rec_find(p))) {
		*out = fc_mem_translate(p, n);
		return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
	if (device_side && (rec = fc_rec_find(p)) != NULL &&
	    rec->kind == FC_KIND_MANAGED &&
	    (n > rec->size || p - rec->base > rec->size - n))
		return CUDA_ERROR_INVALID_VALUE;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (void *)p;
	return CUDA_SUCCESS;
}

/* One copy: resolve, order it on the stream (legacy NULL stream for the
 * synchronous calls), wait for the stream to reach it, copy. The fixture
 * blocks the host even for the Async calls; the data is right either way. */
static CUresult
do_copy(uintptr_t dst, bool dst_dev, uintptr_t src, bool src_dev, size_t n,
    CUstream h, bool pt)
{
	fc_capture_t *cap = NULL;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	void *d, *sp;
	uint64_t t;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if ((r = fc_capture_work(s, &cap)))
		goto out;
	if (n == 0)
		goto out;
	if (cap) {          /* a node: the ranges need only exist when it runs */
		fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_MEMCPY };

		if (!fc_mem_node_range_ok(dst, n) || !fc_mem_node_range_ok(src, n)) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
		np.u.memcpy.dst = dst;
		np.u.memcpy.src = src;
		np.u.memcpy.n = n;
		r = fc_capture_add(cap, &np);
		goto out;
	}
	if ((r = side(dst, n, dst_dev, &d)) || (r = side(src, n, src_dev, &sp)))
		goto out;
	t = fc_stream_enqueue(s, 0, NULL);
	fc_leave();
	fc_wait_until(t);
	memmove(d, sp, n);
	return CUDA_SUCCESS;
out:
	fc_leave();
	return r;
}

static CUresult
do_set(uintptr_t dst, unsigned v, unsigned width, size_t count, CUstream h, bool pt)
{
	fc_capture_t *cap = NULL;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	void *d;
	uint64_t t;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if ((r = fc_capture_work(s, &cap)))
		goto out;
	if (count == 0)
		goto out;
	if (dst % width || count > SIZE_MAX / width) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (cap) {
		fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_MEMSET };

		if (!fc_mem_node_range_ok(dst, count * width)) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
		np.u.memset.dst = dst;
		np.u.memset.width = count;
		np.u.memset.height = 1;
		np.u.memset.value = v;
		np.u.memset.elem = width;
		r = fc_capture_add(cap, &np);
		goto out;
	}
	if ((r = side(dst, count * width, true, &d)))
		goto out;
	t = fc_stream_enqueue(s, 0, NULL);
	fc_leave();
	fc_wait_until(t);
	if (width == 1) {
		memset(d, (int)v, count);
	} else if (width == 2) {
		uint16_t *q = d;

		for (size_t i = 0; i < count; i++)
			q[i] = (uint16_t)v;
	} else {
		uint32_t *q = d;

		for (size_t i = 0; i < count; i++)
			q[i] = v;
	}
	return CUDA_SUCCESS;
out:
	fc_leave();
	return r;
}

#define U(x) ((uintptr_t)(x))

FC_EXPORT CUresult CUDAAPI
cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	FC_COUNT(cuMemcpy);
	return do_copy(U(dst), false, U(src), false, ByteCount, NULL, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	FC_COUNT(cuMemcpy_ptds);
	return do_copy(U(dst), false, U(src), false, ByteCount, NULL, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	FC_COUNT(cuMemcpyAsync);
	return do_copy(U(dst), false, U(src), false, ByteCount, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	FC_COUNT(cuMemcpyAsync_ptsz);
	return do_copy(U(dst), false, U(src), false, ByteCount, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	FC_COUNT(cuMemcpyHtoD_v2);
	return do_copy(U(dstDevice), true, U(srcHost), false, ByteCount, NULL, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	FC_COUNT(cuMemcpyHtoD_v2_ptds);
	return do_copy(U(dstDevice), true, U(srcHost), false, ByteCount, NULL, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	FC_COUNT(cuMemcpyDtoH_v2);
	return do_copy(U(dstHost), false, U(srcDevice), true, ByteCount, NULL, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	FC_COUNT(cuMemcpyDtoH_v2_ptds);
	return do_copy(U(dstHost), false, U(srcDevice), true, ByteCount, NULL, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	FC_COUNT(cuMemcpyDtoD_v2);
	return do_copy(U(dstDevice), true, U(srcDevice), true, ByteCount, NULL, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	FC_COUNT(cuMemcpyDtoD_v2_ptds);
	return do_copy(U(dstDevice), true, U(srcDevice), true, ByteCount, NULL, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
    CUstream hStream)
{
	FC_COUNT(cuMemcpyHtoDAsync_v2);
	return do_copy(U(dstDevice), true, U(srcHost), false, ByteCount, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
    size_t ByteCount, CUstream hStream)
{
	FC_COUNT(cuMemcpyHtoDAsync_v2_ptsz);
	return do_copy(U(dstDevice), true, U(srcHost), false, ByteCount, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream)
{
	FC_COUNT(cuMemcpyDtoHAsync_v2);
	return do_copy(U(dstHost), false, U(srcDevice), true, ByteCount, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream)
{
	FC_COUNT(cuMemcpyDtoHAsync_v2_ptsz);
	return do_copy(U(dstHost), false, U(srcDevice), true, ByteCount, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream)
{
	FC_COUNT(cuMemcpyDtoDAsync_v2);
	return do_copy(U(dstDevice), true, U(srcDevice), true, ByteCount, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
    size_t ByteCount, CUstream hStream)
{
	FC_COUNT(cuMemcpyDtoDAsync_v2_ptsz);
	return do_copy(U(dstDevice), true, U(srcDevice), true, ByteCount, hStream, true);
}

#define FC_SETS(X) \
	X(cuMemsetD8_v2, unsigned char, 1, , NULL, false) \
	X(cuMemsetD8_v2_ptds, unsigned char, 1, , NULL, true) \
	X(cuMemsetD16_v2, unsigned short, 2, , NULL, false) \
	X(cuMemsetD16_v2_ptds, unsigned short, 2, , NULL, true) \
	X(cuMemsetD32_v2, unsigned int, 4, , NULL, false) \
	X(cuMemsetD32_v2_ptds, unsigned int, 4, , NULL, true) \
	X(cuMemsetD8Async, unsigned char, 1, FC_STREAM_ARG, hStream, false) \
	X(cuMemsetD8Async_ptsz, unsigned char, 1, FC_STREAM_ARG, hStream, true) \
	X(cuMemsetD16Async, unsigned short, 2, FC_STREAM_ARG, hStream, false) \
	X(cuMemsetD16Async_ptsz, unsigned short, 2, FC_STREAM_ARG, hStream, true) \
	X(cuMemsetD32Async, unsigned int, 4, FC_STREAM_ARG, hStream, false) \
	X(cuMemsetD32Async_ptsz, unsigned int, 4, FC_STREAM_ARG, hStream, true)
#define FC_STREAM_ARG , CUstream hStream
#define FC_X(name, type, width, extra, stream, pt) \
	FC_EXPORT CUresult CUDAAPI \
	name(CUdeviceptr dstDevice, type value, size_t N extra) \
	{ \
		FC_COUNT(name); \
		return do_set(U(dstDevice), value, width, N, stream, pt); \
	}
FC_SETS(FC_X)
#undef FC_X

/* ===================================================== managed memory */

static CUresult
managed_range(uintptr_t p, size_t count)
{
	fc_rec_t *r = fc_rec_find(p);

	if (!r || r->kind != FC_KIND_MANAGED || count == 0 || count > r->size - (p - r->base))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult
location_ok(CUmemLocation loc)
{
	switch (loc.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		return loc.id >= 0 && loc.id < fc_config.ndevices ?
		    CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUmemLocation
location_of(CUdevice dev)
{
	CUmemLocation l;

	l.type = dev == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
	l.id = dev == CU_DEVICE_CPU ? 0 : dev;
	return l;
}

static CUresult
advise(CUdeviceptr p, size_t count, CUmem_advise advice, CUmemLocation loc)
{
	fc_ctx_t *ctx;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = managed_range(U(p), count)))
		goto out;
	if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY)
		r = location_ok(loc);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
	FC_COUNT(cuMemAdvise);
	return advise(devPtr, count, advice, location_of(device));
}

FC_EXPORT CUresult CUDAAPI
cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{
	FC_COUNT(cuMemAdvise_v2);
	return advise(devPtr, count, advice, location);
}

static CUresult
prefetch(CUdeviceptr p, size_t count, CUmemLocation loc, unsigned flags, CUstream h, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)) ||
	    (r = managed_range(U(p), count)))
		goto out;
	if (flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = location_ok(loc)))
		goto out;
	if (fc_config.no_concurrent_managed) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	fc_stream_enqueue(s, 0, NULL);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
	FC_COUNT(cuMemPrefetchAsync);
	return prefetch(devPtr, count, location_of(dstDevice), 0, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
    CUstream hStream)
{
	FC_COUNT(cuMemPrefetchAsync_ptsz);
	return prefetch(devPtr, count, location_of(dstDevice), 0, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
    unsigned int flags, CUstream hStream)
{
	FC_COUNT(cuMemPrefetchAsync_v2);
	return prefetch(devPtr, count, location, flags, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
    unsigned int flags, CUstream hStream)
{
	FC_COUNT(cuMemPrefetchAsync_v2_ptsz);
	return prefetch(devPtr, count, location, flags, hStream, true);
}

/* cuStreamAttachMemAsync: a managed allocation's base with length 0 or its
 * whole size, one attach flag; the fixture moves nothing. */
static CUresult
attach_mem(CUstream h, CUdeviceptr dptr, size_t length, unsigned flags, bool pt)
{
	fc_capture_t *cap = NULL;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_rec_t *rec;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	rec = fc_rec_find(U(dptr));
	if ((flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
	    flags != CU_MEM_ATTACH_SINGLE) || !rec || rec->kind != FC_KIND_MANAGED ||
	    rec->base != U(dptr) || (length != 0 && length != rec->size)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = fc_capture_work(s, &cap)) || cap)
		goto out;
	fc_stream_enqueue(s, 0, NULL);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
    unsigned int flags)
{
	FC_COUNT(cuStreamAttachMemAsync);
	return attach_mem(hStream, dptr, length, flags, false);
}

FC_EXPORT CUresult CUDAAPI
cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length,
    unsigned int flags)
{
	FC_COUNT(cuStreamAttachMemAsync_ptsz);
	return attach_mem(hStream, dptr, length, flags, true);
}

/* ======================================================= graph memory */

uintptr_t
fc_mem_va_reserve(int dev, size_t span)
{
	return arena_alloc(&fc_devices[dev].va, span, FC_GRANULARITY);
}

void
fc_mem_va_release(int dev, uintptr_t p, size_t span)
{
	arena_free(&fc_devices[dev].va, p, span);
}

CUresult
fc_mem_graph_map(fc_gmem_t *g, int dev, uintptr_t p, size_t size, size_t span,
    fc_rec_t **out)
{
	fc_device_t *d = &fc_devices[dev];
	fc_rec_t *r = calloc(1, sizeof(*r));

	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (arena_commit(&d->va, p, span)) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->base = p;
	r->size = size;
	r->span = span;
	r->kind = FC_KIND_ASYNC;
	r->device = dev;
	r->gmem = g;
	if (rec_insert(r)) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = r;
	return CUDA_SUCCESS;
}

void
fc_mem_release(fc_rec_t *r)
{
	rec_release(r);
}

void
fc_mem_free_at(fc_rec_t *r, uint64_t t)
{
	r->free_time = t;
	r->free_pending = true;
	r->next_pending = pending_frees;
	pending_frees = r;
	fc_mem_reap();
}

bool
fc_mem_node_range_ok(uintptr_t p, size_t n)
{
	fc_rec_t *r;

	if (n == 0 || p + n < p)
		return false;
	if (fc_graph_va_has(p, n))
		return true;
	if (in_device_space(p))
		return fc_mem_translate(p, n) != NULL;
	r = fc_rec_find(p);
	return p != 0 && (!r || n <= r->size - (p - r->base));
}

/* The host address of one side of a node's copy or set: device space must
 * be live, anything else is host memory. */
static void *
node_side(uintptr_t p, size_t n)
{
	return in_device_space(p) ? fc_mem_translate(p, n) : (void *)p;
}

CUresult
fc_mem_set_now(uintptr_t dst, unsigned v, unsigned elem, size_t count)
{
	void *d = node_side(dst, count * elem);

	if (!d)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	if (elem == 1) {
		memset(d, (int)v, count);
	} else if (elem == 2) {
		uint16_t *q = d;

		for (size_t i = 0; i < count; i++)
			q[i] = (uint16_t)v;
	} else {
		uint32_t *q = d;

		for (size_t i = 0; i < count; i++)
			q[i] = v;
	}
	return CUDA_SUCCESS;
}

CUresult
fc_mem_copy_now(uintptr_t dst, uintptr_t src, size_t n)
{
	void *d = node_side(dst, n), *s = node_side(src, n);

	if (!d || !s)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	memmove(d, s, n);
	return CUDA_SUCCESS;
}

/* ============================================= stream-ordered and pools */

void
fc_mem_pool_init(fc_pool_t *pool, int dev, bool is_default)
{
	memset(pool, 0, sizeof(*pool));
	pool->magic = POOL_MAGIC;
	pool->device = dev;
	pool->is_default = is_default;
	pool->reuse_follow = pool->reuse_opportunistic = pool->reuse_internal = 1;
	pool->next_all = all_pools;
	all_pools = pool;
}

static bool
pool_valid(const fc_pool_t *p)
{
	for (fc_pool_t *q = all_pools; q; q = q->next_all)
		if (q == p)
			return !p->destroyed;
	return false;
}

static CUresult
alloc_async(CUdeviceptr *dptr, size_t size, fc_pool_t *pool, bool explicit_pool,
    CUstream h, bool pt)
{
	fc_capture_t *cap = NULL;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_rec_t *rec;
	CUresult r;

	fc_enter();
	if ((r = alloc_prologue(dptr, size ? size : 1, &ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if (explicit_pool && (!pool_valid(pool) || pool->imported)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = fc_capture_work(s, &cap)))
		goto out;
	/* on a stream that does not capture it is a potentially unsafe call
	 * (H200, driver 580: probe part capture) */
	if (!cap && (r = fc_capture_unsafe()))
		goto out;
	if (size == 0) {            /* success and 0 (driver 580) */
		*dptr = 0;
		goto out;
	}
	if (!explicit_pool)
		pool = fc_devices[s->ctx->device].current_pool;
	if (cap) {          /* an alloc node: its address, reserved, not yet backed */
		fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_MEM_ALLOC };

		np.u.alloc.size = size;
		np.u.alloc.device = pool->device;
		if (!(r = fc_capture_add(cap, &np)))
			*dptr = np.u.alloc.dptr;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = device_alloc(FC_KIND_ASYNC, size, pool->device, NULL, true, &rec)))
		goto out;
	rec->pool = pool;
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	*dptr = rec->base;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	FC_COUNT(cuMemAllocAsync);
	return alloc_async(dptr, bytesize, NULL, false, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	FC_COUNT(cuMemAllocAsync_ptsz);
	return alloc_async(dptr, bytesize, NULL, false, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
    CUstream hStream)
{
	FC_COUNT(cuMemAllocFromPoolAsync);
	return alloc_async(dptr, bytesize, (fc_pool_t *)pool, true, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
    CUstream hStream)
{
	FC_COUNT(cuMemAllocFromPoolAsync_ptsz);
	return alloc_async(dptr, bytesize, (fc_pool_t *)pool, true, hStream, true);
}

/* Frees when the stream reaches the free (lazily, at the next call after). */
static CUresult
free_async(CUdeviceptr dptr, CUstream h, bool pt)
{
	fc_capture_t *cap = NULL;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_rec_t *rec;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)) ||
	    (r = fc_capture_work(s, &cap)))
		goto out;
	if (cap) {          /* a free node (fc_graph_add checks the address) */
		fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_MEM_FREE };

		np.u.free.dptr = U(dptr);
		r = fc_capture_add(cap, &np);
		goto out;
	}
	rec = rec_exact(U(dptr));
	if (!rec || (rec->kind != FC_KIND_ASYNC && rec->kind != FC_KIND_DEVICE) ||
	    rec->free_pending) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_free()) {
		r = CUDA_ERROR_ILLEGAL_ADDRESS;
		goto out;
	}
	rec->free_time = fc_stream_enqueue(s, 0, NULL);
	rec->free_pending = true;
	rec->next_pending = pending_frees;
	pending_frees = rec;
	fc_mem_reap();
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	FC_COUNT(cuMemFreeAsync);
	return free_async(dptr, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	FC_COUNT(cuMemFreeAsync_ptsz);
	return free_async(dptr, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	fc_pool_t *p;
	CUresult r;

	FC_COUNT(cuMemPoolCreate);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (poolProps->location.id < 0 || poolProps->location.id >= fc_config.ndevices) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	fc_mem_pool_init(p, poolProps->location.id, false);
	p->handle_types = poolProps->handleTypes;
	*pool = (CUmemoryPool)p;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolDestroy(CUmemoryPool pool)
{
	fc_pool_t *p = (fc_pool_t *)pool;
	CUresult r;

	FC_COUNT(cuMemPoolDestroy);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pool_valid(p) || p->is_default) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	p->destroyed = true;
	if (fc_devices[p->device].current_pool == p)
		fc_devices[p->device].current_pool = &fc_devices[p->device].default_pool;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r;

	FC_COUNT(cuMemPoolTrimTo);
	(void)minBytesToKeep;
	fc_enter();
	if (!(r = fc_check_init()) && !pool_valid((fc_pool_t *)pool))
		r = CUDA_ERROR_INVALID_VALUE;
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	fc_pool_t *p = (fc_pool_t *)pool;
	CUresult r;

	FC_COUNT(cuMemPoolSetAttribute);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pool_valid(p) || !value) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		p->reuse_follow = *(int *)value;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		p->reuse_opportunistic = *(int *)value;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse_internal = *(int *)value;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->release_threshold = *(cuuint64_t *)value;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value != 0)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			p->used_high = p->used;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	fc_pool_t *p = (fc_pool_t *)pool;
	CUresult r;

	FC_COUNT(cuMemPoolGetAttribute);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pool_valid(p) || !value) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		*(int *)value = p->reuse_follow;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		*(int *)value = p->reuse_opportunistic;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->reuse_internal;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->release_threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
out:
	fc_leave();
	return r;
}

/* Pools made with a handle type other than CU_MEM_HANDLE_TYPE_NONE are IPC
 * capable (cuda.h). Only POSIX file descriptors are simulated: the other
 * types of a capable pool give CUDA_ERROR_NOT_SUPPORTED, a type the pool was
 * not made with CUDA_ERROR_INVALID_VALUE. */
static CUresult
share_type_ok(CUmemAllocationHandleType have, CUmemAllocationHandleType want)
{
	if (want == CU_MEM_HANDLE_TYPE_NONE || !(have & want))
		return CUDA_ERROR_INVALID_VALUE;
	if (want != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
    CUmemAllocationHandleType handleType, unsigned long long flags)
{
	fc_pool_t *p = (fc_pool_t *)pool;
	CUresult r;
	int fd;

	FC_COUNT(cuMemPoolExportToShareableHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!handle_out || flags != 0 || !pool_valid(p)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = share_type_ok(p->handle_types, handleType)))
		goto out;
	fd = share_memfd("pool", p->device);
	if (fd < 0) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	*(int *)handle_out = fd;
out:
	fc_leave();
	return r;
}

/* The imported pool is a new pool of the exporter's device that allocates
 * nothing (cuMemAllocFromPoolAsync and cuDeviceSetMemPool refuse it); its
 * only use is cuMemPoolImportPointer. Like cuMemPoolCreate's, it is freed
 * by no one (cuMemPoolDestroy marks it destroyed). */
FC_EXPORT CUresult CUDAAPI
cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
    CUmemAllocationHandleType handleType, unsigned long long flags)
{
	fc_pool_t *p;
	CUresult r;
	int dev;

	FC_COUNT(cuMemPoolImportFromShareableHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!pool_out || flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = share_type_ok(handleType, handleType)))
		goto out;
	dev = share_device((int)(intptr_t)handle, "pool");
	if (dev < 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	fc_mem_pool_init(p, dev, false);
	p->imported = true;
	p->handle_types = handleType;
	*pool_out = (CUmemoryPool)p;
out:
	fc_leave();
	return r;
}

struct pool_ptr_export_s {
	char magic[12];
	int32_t pid;
	uint64_t base;
	uint64_t size;
	uint64_t buffer_id;
	int32_t device;
};

/* Export data of a live allocation of an IPC-capable pool (not itself an
 * import, not freed yet); CUDA_ERROR_INVALID_VALUE otherwise. */
FC_EXPORT CUresult CUDAAPI
cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
	struct pool_ptr_export_s e;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemPoolExportPointer);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	fc_mem_reap();
	rec = rec_exact(U(ptr));
	if (!shareData_out || !rec || rec->kind != FC_KIND_ASYNC || rec->imported ||
	    rec->free_pending || !rec->pool || rec->pool->handle_types == 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memset(&e, 0, sizeof(e));
	memcpy(e.magic, POOL_PTR_MAGIC, sizeof(e.magic));
	e.pid = (int32_t)getpid();
	e.base = rec->base;
	e.size = rec->size;
	e.buffer_id = rec->buffer_id;
	e.device = rec->device;
	memset(shareData_out, 0, sizeof(*shareData_out));
	memcpy(shareData_out->reserved, &e, sizeof(e));
out:
	fc_leave();
	return r;
}

/* Imports into any IPC-capable pool of the exporter's device (an imported
 * pool, as cuda.h describes, or the exporting one). The result is a fresh
 * range of the exported size, even in the exporting process: cuda.h has the
 * importer free its pointer (cuMemFree or cuMemFreeAsync) before the exporter
 * frees its own, two frees of one allocation that only two addresses make
 * legal, and the fixture models IPC the same way. From the exporting process
 * the exported allocation must still be live. The data is not shared. */
FC_EXPORT CUresult CUDAAPI
cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
    CUmemPoolPtrExportData *shareData)
{
	struct pool_ptr_export_s e;
	fc_pool_t *p = (fc_pool_t *)pool;
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemPoolImportPointer);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!ptr_out || !shareData || !pool_valid(p) || p->handle_types == 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memcpy(&e, shareData->reserved, sizeof(e));
	if (memcmp(e.magic, POOL_PTR_MAGIC, sizeof(e.magic)) != 0 || e.size == 0 ||
	    e.device != p->device) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	fc_mem_reap();
	if (e.pid == (int32_t)getpid()) {
		rec = rec_exact((uintptr_t)e.base);
		if (!rec || rec->buffer_id != e.buffer_id || rec->free_pending) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = device_alloc(FC_KIND_ASYNC, (size_t)e.size, p->device, NULL, false,
	    &rec)))
		goto out;
	rec->pool = p;
	rec->imported = true;
	*ptr_out = rec->base;
out:
	fc_leave();
	return r;
}

static CUresult
dev_ok(CUdevice dev)
{
	CUresult r = fc_check_init();

	if (!r && (dev < 0 || dev >= fc_config.ndevices))
		r = CUDA_ERROR_INVALID_DEVICE;
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceGetDefaultMemPool);
	fc_enter();
	if (!(r = dev_ok(dev))) {
		if (!pool_out)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			*pool_out = (CUmemoryPool)&fc_devices[dev].default_pool;
	}
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r;

	FC_COUNT(cuDeviceGetMemPool);
	fc_enter();
	if (!(r = dev_ok(dev))) {
		if (!pool)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			*pool = (CUmemoryPool)fc_devices[dev].current_pool;
	}
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	fc_pool_t *p = (fc_pool_t *)pool;
	CUresult r;

	FC_COUNT(cuDeviceSetMemPool);
	fc_enter();
	if (!(r = dev_ok(dev))) {
		if (!pool_valid(p) || p->device != dev || p->imported)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			fc_devices[dev].current_pool = p;
	}
	fc_leave();
	return r;
}

/* ================================================================ VMM */

static fc_phys_t *
phys_get(CUmemGenericAllocationHandle h)
{
	for (fc_phys_t *p = all_phys; p; p = p->next)
		if ((CUmemGenericAllocationHandle)(uintptr_t)p == h)
			return p;
	return NULL;
}

static void
phys_put(fc_phys_t *p)
{
	if (p->user_refs > 0 || p->maps > 0)
		return;
	for (fc_phys_t **pp = &all_phys; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	if (!p->imported)
		fc_devices[p->device].used -= p->size;
	close(p->fd);
	p->magic = 0;
	free(p);
}

static CUresult
prop_ok(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (prop->location.id < 0 || prop->location.id >= fc_config.ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
    CUmemAllocationGranularity_flags option)
{
	CUresult r;

	FC_COUNT(cuMemGetAllocationGranularity);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	    option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (!(r = prop_ok(prop)))
		*granularity = FC_GRANULARITY;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	fc_device_t *d;
	fc_phys_t *p;
	CUresult r;
	int fd;

	FC_COUNT(cuMemCreate);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!handle || size == 0 || size % FC_GRANULARITY || flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = prop_ok(prop)))
		goto out;
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	d = &fc_devices[prop->location.id];
	if (size > d->total - d->used) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	fd = share_memfd("vmm", prop->location.id);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		if (fd >= 0)
			close(fd);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	p->magic = PHYS_MAGIC;
	p->fd = fd;
	p->size = size;
	p->device = prop->location.id;
	p->user_refs = 1;
	p->prop = *prop;
	p->next = all_phys;
	all_phys = p;
	d->used += size;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	fc_phys_t *p;
	CUresult r;

	FC_COUNT(cuMemRelease);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	p = phys_get(handle);
	if (!p || p->user_refs <= 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_free()) {
		r = CUDA_ERROR_ILLEGAL_ADDRESS;
		goto out;
	}
	p->user_refs--;
	phys_put(p);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
    CUmemGenericAllocationHandle handle)
{
	fc_phys_t *p;
	CUresult r;

	FC_COUNT(cuMemGetAllocationPropertiesFromHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	p = phys_get(handle);
	if (!p || !prop)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*prop = p->prop;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
    unsigned long long flags)
{
	fc_rec_t *rec;
	uintptr_t p;
	CUresult r;

	FC_COUNT(cuMemAddressReserve);
	(void)addr;           /* a hint; the fixture never honours it */
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!ptr || size == 0 || size % FC_GRANULARITY || (alignment & (alignment - 1)) ||
	    flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	rec = calloc(1, sizeof(*rec));
	p = rec ? arena_alloc(&vmm, size, alignment > FC_GRANULARITY ? alignment :
	    FC_GRANULARITY) : 0;
	if (!p) {
		free(rec);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	rec->base = p;
	rec->size = rec->span = size;
	rec->kind = FC_KIND_VARANGE;
	if (rec_insert(rec)) {
		arena_free(&vmm, p, size);
		free(rec);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	*ptr = p;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemAddressFree);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	rec = rec_exact(U(ptr));
	if (!rec || rec->kind != FC_KIND_VARANGE || rec->size != size) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (fc_map_t *m = all_maps; m; m = m->next) {
		if (m->va >= rec->base && m->va - rec->base < rec->size) {
			r = CUDA_ERROR_INVALID_VALUE;   /* still mapped */
			goto out;
		}
	}
	rec_release(rec);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
    unsigned long long flags)
{
	fc_rec_t *rec;
	fc_phys_t *p;
	fc_map_t *m;
	CUresult r;

	FC_COUNT(cuMemMap);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	p = phys_get(handle);
	rec = fc_rec_find(U(ptr));
	if (!p || p->user_refs <= 0 || flags != 0 || size == 0 || size % FC_GRANULARITY ||
	    offset % FC_GRANULARITY || offset > p->size || size > p->size - offset ||
	    !rec || rec->kind != FC_KIND_VARANGE || ptr % FC_GRANULARITY ||
	    size > rec->size - (U(ptr) - rec->base)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (m = all_maps; m; m = m->next) {
		if (m->va < U(ptr) + size && U(ptr) < m->va + m->size) {
			r = CUDA_ERROR_INVALID_VALUE;   /* overlaps a mapping */
			goto out;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m || mmap(arena_shadow(&vmm, U(ptr)), size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset) == MAP_FAILED) {
		free(m);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	m->va = U(ptr);
	m->size = size;
	m->phys = p;
	m->buffer_id = next_buffer_id++;
	m->next = all_maps;
	all_maps = m;
	p->maps++;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	uintptr_t lo = U(ptr), hi = U(ptr) + size;
	bool any = false;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuMemUnmap);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	rec = fc_rec_find(lo);
	if (size == 0 || !rec || rec->kind != FC_KIND_VARANGE ||
	    size > rec->size - (lo - rec->base)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	/* Every mapping touched must lie wholly inside the range. */
	for (fc_map_t *m = all_maps; m; m = m->next) {
		if (m->va < hi && lo < m->va + m->size) {
			if (m->va < lo || m->va + m->size > hi) {
				r = CUDA_ERROR_INVALID_VALUE;
				goto out;
			}
			any = true;
		}
	}
	/* Nothing mapped there: nothing to do, and the driver says success. */
	if (!any)
		goto out;
	if (fc_inject_free()) {
		r = CUDA_ERROR_ILLEGAL_ADDRESS;
		goto out;
	}
	for (fc_map_t **pm = &all_maps; *pm;) {
		fc_map_t *m = *pm;

		if (m->va >= lo && m->va + m->size <= hi) {
			*pm = m->next;
			mmap(arena_shadow(&vmm, m->va), m->size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
			m->phys->maps--;
			phys_put(m->phys);
			free(m);
		} else {
			pm = &m->next;
		}
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r;

	FC_COUNT(cuMemSetAccess);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!desc || count == 0 || size == 0 || !arena_has(&vmm, U(ptr)) ||
	    !vmm_mapped(U(ptr), size)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		if ((r = location_ok(desc[i].location)))
			goto out;
		if (desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	for (fc_map_t *m = all_maps; m; m = m->next)
		if (m->va < U(ptr) + size && U(ptr) < m->va + m->size)
			m->access = desc[count - 1].flags;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
	fc_map_t *m;
	CUresult r;

	FC_COUNT(cuMemGetAccess);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	m = map_find(U(ptr));
	if (!flags || !location || !m)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*flags = m->access;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	fc_map_t *m;
	CUresult r;

	FC_COUNT(cuMemRetainAllocationHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	m = map_find(U(addr));
	if (!handle || !m) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	m->phys->user_refs++;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
out:
	fc_leave();
	return r;
}

/* A POSIX file descriptor of the handle's memory (a dup of its memfd), for a
 * handle made with that type among prop.requestedHandleTypes; the caller
 * closes it. */
FC_EXPORT CUresult CUDAAPI
cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
    CUmemAllocationHandleType handleType, unsigned long long flags)
{
	fc_phys_t *p;
	CUresult r;
	int fd;

	FC_COUNT(cuMemExportToShareableHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	p = phys_get(handle);
	if (!shareableHandle || !p || p->user_refs <= 0 || flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = share_type_ok(p->prop.requestedHandleTypes, handleType)))
		goto out;
	fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	*(int *)shareableHandle = fd;
out:
	fc_leave();
	return r;
}

/* A new handle of the memory behind the descriptor (osHandle is the
 * descriptor itself, cast), to cuMemRelease like any other. Never the
 * exporter's handle, even in the exporting process: cuda.h promises no
 * such thing. The memory is the exporter's: it does not count against the
 * device again. The handle keeps its own duplicate of the descriptor, so the
 * caller may close osHandle at once. */
FC_EXPORT CUresult CUDAAPI
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
    CUmemAllocationHandleType shHandleType)
{
	int fd = (int)(intptr_t)osHandle;
	struct stat st, ost;
	fc_phys_t *p;
	CUresult r;
	int dev;

	FC_COUNT(cuMemImportFromShareableHandle);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!handle) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = share_type_ok(shHandleType, shHandleType)))
		goto out;
	dev = share_device(fd, "vmm");
	if (dev < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (size_t)st.st_size % FC_GRANULARITY) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p || (p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(p);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	p->magic = PHYS_MAGIC;
	p->size = (size_t)st.st_size;
	p->device = dev;
	p->user_refs = 1;
	p->imported = true;
	p->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->prop.location.id = dev;
	p->prop.requestedHandleTypes = shHandleType;
	/* From this process: the exporter's properties. */
	for (fc_phys_t *q = all_phys; q; q = q->next) {
		if (fstat(q->fd, &ost) == 0 && ost.st_ino == st.st_ino &&
		    ost.st_dev == st.st_dev) {
			p->prop = q->prop;
			break;
		}
	}
	p->next = all_phys;
	all_phys = p;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
out:
	fc_leave();
	return r;
}

/* ================================================================ IPC */

struct ipc_handle_s {
	char magic[12];
	int32_t pid;
	uint64_t base;
	uint64_t size;
	uint64_t buffer_id;
	int32_t device;
};

FC_EXPORT CUresult CUDAAPI
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	struct ipc_handle_s h;
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuIpcGetMemHandle);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	rec = fc_rec_find(U(dptr));
	if (!pHandle || !rec || rec->kind != FC_KIND_DEVICE) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, IPC_MAGIC, sizeof(h.magic));
	h.pid = (int32_t)getpid();
	h.base = rec->base;
	h.size = rec->size;
	h.buffer_id = rec->buffer_id;
	h.device = rec->device;
	memset(pHandle, 0, sizeof(*pHandle));
	memcpy(pHandle->reserved, &h, sizeof(h));
out:
	fc_leave();
	return r;
}

/* Opens a handle from another process as a fresh device range of the same
 * size; the fixture does not share the data between processes. */
static CUresult
ipc_open(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags)
{
	struct ipc_handle_s h;
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	memcpy(&h, handle.reserved, sizeof(h));
	if (!pdptr || memcmp(h.magic, IPC_MAGIC, sizeof(h.magic)) != 0 ||
	    (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) || h.size == 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (h.pid == (int32_t)getpid()) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if (fc_inject_alloc()) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if ((r = device_alloc(FC_KIND_IPC, (size_t)h.size, ctx->device, ctx, false, &rec)))
		goto out;
	*pdptr = rec->base;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	FC_COUNT(cuIpcOpenMemHandle);
	return ipc_open(pdptr, handle, Flags);
}

FC_EXPORT CUresult CUDAAPI
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	FC_COUNT(cuIpcOpenMemHandle_v2);
	return ipc_open(pdptr, handle, Flags);
}

FC_EXPORT CUresult CUDAAPI
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	fc_ctx_t *ctx;
	fc_rec_t *rec;
	CUresult r;

	FC_COUNT(cuIpcCloseMemHandle);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	rec = rec_exact(U(dptr));
	if (!rec || rec->kind != FC_KIND_IPC)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		rec_release(rec);
out:
	fc_leave();
	return r;
}

/* ============================================================= arrays */

static size_t
format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF: return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT: return 4;
	default: return 0;
	}
}

/* Dimension limits of an H200 (compute capability 9.0, the CUDA C++
 * Programming Guide's table of technical specifications), in elements. */
#define TEX1D_W 131072UL
#define TEX2D_W 131072UL
#define TEX2D_H 65536UL
#define TEX3D_DIM 16384UL
#define LAYERED_DIM 32768UL
#define LAYERED_LAYERS 2048UL
#define CUBEMAP_W 32768UL
#define CUBEMAP_LAYERED_LAYERS 2046UL

#define ARRAY3D_SIMULATED (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | \
	CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER | \
	CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT)
#define ARRAY3D_NOT_SIMULATED (CUDA_ARRAY3D_SPARSE | \
	CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_VIDEO_ENCODE_DECODE)

static unsigned
log2_floor(size_t n)
{
	unsigned l = 0;

	while (n >>= 1)
		l++;
	return l;
}

/* Checks a descriptor as cuArray3DCreate (levels 0) or cuMipmappedArrayCreate
 * (levels >= 1) document it: Width >= 1; Height 0 (1D) or >= 1; Depth 0
 * (1D, 2D), >= 1 with Height >= 1 (3D), the layer count with
 * CUDA_ARRAY3D_LAYERED (1D or 2D layered), 6 (or a multiple of 6, layered)
 * with CUDA_ARRAY3D_CUBEMAP and Width == Height; TEXTURE_GATHER only in 2D;
 * 1, 2 or 4 channels; the device's extents. A mipmapped array has 1 to
 * 1 + floor(log2(largest extent)) levels. Sets *bytes to the backing store of
 * every level (each halves Width, Height and a 3D Depth, down to 1).
 * Returns the driver's code. */
static CUresult
array3d_check(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, size_t *bytes)
{
	bool layered, cube, is3d;
	size_t w, h, dep, elem, total = 0;

	if (!d || d->Width == 0 || format_bytes(d->Format) == 0 ||
	    (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
		return CUDA_ERROR_INVALID_VALUE;
	if (d->Flags & ARRAY3D_NOT_SIMULATED)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (d->Flags & ~(unsigned)(ARRAY3D_SIMULATED | ARRAY3D_NOT_SIMULATED))
		return CUDA_ERROR_INVALID_VALUE;
	layered = d->Flags & CUDA_ARRAY3D_LAYERED;
	cube = d->Flags & CUDA_ARRAY3D_CUBEMAP;
	w = d->Width;
	h = d->Height;
	dep = d->Depth;
	is3d = !layered && !cube && dep != 0;
	if (cube) {
		if (w != h || w > CUBEMAP_W || dep == 0 || dep % 6 ||
		    (!layered && dep != 6) || (layered && dep > CUBEMAP_LAYERED_LAYERS))
			return CUDA_ERROR_INVALID_VALUE;
	} else if (layered) {
		if (dep == 0 || dep > LAYERED_LAYERS || w > LAYERED_DIM || h > LAYERED_DIM)
			return CUDA_ERROR_INVALID_VALUE;
	} else if (is3d) {
		if (h == 0 || w > TEX3D_DIM || h > TEX3D_DIM || dep > TEX3D_DIM)
			return CUDA_ERROR_INVALID_VALUE;
	} else if (h == 0 ? w > TEX1D_W : (w > TEX2D_W || h > TEX2D_H)) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	if ((d->Flags & CUDA_ARRAY3D_TEXTURE_GATHER) && (h == 0 || dep != 0 || layered))
		return CUDA_ERROR_INVALID_VALUE;
	if (levels > 0) {
		size_t big = w > h ? w : h;

		if (is3d && dep > big)
			big = dep;
		if (levels > 1 + log2_floor(big))
			return CUDA_ERROR_INVALID_VALUE;
	}
	elem = format_bytes(d->Format) * d->NumChannels;
	for (unsigned l = 0; l < (levels ? levels : 1); l++) {
		size_t lw = w >> l ? w >> l : 1, lh = h >> l ? h >> l : 1;
		size_t ld = is3d ? (dep >> l ? dep >> l : 1) : (dep ? dep : 1);

		total += lw * (h ? lh : 1) * ld * elem;
	}
	*bytes = total;
	return CUDA_SUCCESS;
}

/* Creates an array of the given magic backed by bytes of device memory. */
static CUresult
array_new(uint32_t magic, unsigned levels, size_t bytes, fc_ctx_t *ctx,
    fc_array_t **out)
{
	fc_array_t *a = calloc(1, sizeof(*a));
	fc_rec_t *rec;
	CUresult r;

	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = device_alloc(FC_KIND_ARRAY, bytes, ctx->device, ctx, true, &rec))) {
		free(a);
		return r;
	}
	a->magic = magic;
	a->levels = levels;
	a->rec = rec;
	a->next = all_arrays;
	all_arrays = a;
	*out = a;
	return CUDA_SUCCESS;
}

/* Destroys the array h if it is one of the given magic; returns
 * CUDA_ERROR_INVALID_HANDLE otherwise (a CUarray to cuMipmappedArrayDestroy,
 * and the other way round, included). */
static CUresult
array_destroy(void *h, uint32_t magic)
{
	for (fc_array_t **pa = &all_arrays; *pa; pa = &(*pa)->next) {
		if (*pa == (fc_array_t *)h) {
			fc_array_t *a = *pa;

			if (a->magic != magic)
				break;
			*pa = a->next;
			rec_release(a->rec);
			a->magic = 0;
			free(a);
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_HANDLE;
}

FC_EXPORT CUresult CUDAAPI
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc)
{
	fc_ctx_t *ctx;
	fc_array_t *a;
	size_t bytes;
	CUresult r;

	FC_COUNT(cuArrayCreate_v2);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!pHandle || !desc || desc->Width == 0 || format_bytes(desc->Format) == 0 ||
	    (desc->NumChannels != 1 && desc->NumChannels != 2 && desc->NumChannels != 4)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	bytes = desc->Width * (desc->Height ? desc->Height : 1) *
	    format_bytes(desc->Format) * desc->NumChannels;
	if (!(r = array_new(ARRAY_MAGIC, 0, bytes, ctx, &a)))
		*pHandle = (CUarray)a;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	fc_ctx_t *ctx;
	fc_array_t *a;
	size_t bytes;
	CUresult r;

	FC_COUNT(cuArray3DCreate_v2);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!pHandle) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = array3d_check(pAllocateArray, 0, &bytes)))
		goto out;
	if (!(r = array_new(ARRAY_MAGIC, 0, bytes, ctx, &a)))
		*pHandle = (CUarray)a;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels)
{
	fc_ctx_t *ctx;
	fc_array_t *a;
	size_t bytes;
	CUresult r;

	FC_COUNT(cuMipmappedArrayCreate);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!pHandle || numMipmapLevels == 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = array3d_check(pMipmappedArrayDesc, numMipmapLevels, &bytes)))
		goto out;
	if (!(r = array_new(MIPMAP_MAGIC, numMipmapLevels, bytes, ctx, &a)))
		*pHandle = (CUmipmappedArray)a;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuArrayDestroy(CUarray hArray)
{
	CUresult r;

	FC_COUNT(cuArrayDestroy);
	fc_enter();
	if (!(r = fc_check_init()))
		r = array_destroy(hArray, ARRAY_MAGIC);
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	CUresult r;

	FC_COUNT(cuMipmappedArrayDestroy);
	fc_enter();
	if (!(r = fc_check_init()))
		r = array_destroy(hMipmappedArray, MIPMAP_MAGIC);
	fc_leave();
	return r;
}
