/*
 * check_hostpool.c -- the jemalloc arenas of the pinned and managed pools,
 * over a fake provider (anonymous host memory, no driver).  Proves the
 * rules of doc/pools.md "Pinned and managed memory": metadata is not in hooked memory (creating
 * the arena asks the provider for nothing), no extent spans two segments
 * even when the provider hands out adjacent ones (merge refused), freed
 * memory is retained (no provider free until trim), trim with nothing live
 * returns every segment, the limit is obeyed, growth is capped by
 * retain_grow_limit, two pools never exchange blocks (no shared tcache),
 * and 8 threads allocate concurrently.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hostpool.h"
#include "unit.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* One big anonymous area carved upwards: consecutive segments are
 * adjacent, so jemalloc would merge across them if allowed. */
typedef struct fake_s {
	unsigned char *area, *next;
	size_t area_size;
	unsigned allocs, frees;
	size_t max_call, live;
	int id;
	pthread_mutex_t lock;
} fake_t;

static bool
fk_alloc(void *arg, size_t size, uintptr_t *addr)
{
	fake_t *f = arg;
	pthread_mutex_lock(&f->lock);
	f->allocs++;
	bool err = (size_t)(f->next - f->area) + size > f->area_size;
	if (!err) {
		*addr = (uintptr_t)f->next;
		f->next += size;
		f->live += size;
		if (size > f->max_call)
			f->max_call = size;
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

static bool
fk_free(void *arg, uintptr_t addr, size_t size)
{
	fake_t *f = arg;
	pthread_mutex_lock(&f->lock);
	f->frees++;
	f->live -= size;
	if (f->live == 0) /* like the driver: addresses are used again */
		f->next = f->area;
	pthread_mutex_unlock(&f->lock);
	ck_assert((unsigned char *)addr >= f->area);
	return false;
}

static void
fk_init(fake_t *f, size_t area)
{
	memset(f, 0, sizeof(*f));
	f->area_size = area;
	f->area = mmap(NULL, area, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert(f->area != MAP_FAILED);
	f->next = f->area;
	pthread_mutex_init(&f->lock, NULL);
}

static void
fk_fini(fake_t *f)
{
	munmap(f->area, f->area_size);
}

static hostpool_t *
mk(fake_t *f, size_t limit, size_t grow)
{
	hostpool_provider_t p = { fk_alloc, fk_free, f };
	hostpool_t *hp = hostpool_create(&p, limit, grow);
	ck_assert_ptr_nonnull(hp);
	return hp;
}

START_TEST(test_hostpool_version_and_metadata)
{
	const char *v = hostpool_jemalloc_version();
	ck_assert_ptr_nonnull(v);
	ck_assert(strncmp(v, "5.", 2) == 0);
	fake_t f;
	fk_init(&f, 1024 * MiB);
	hostpool_t *hp = mk(&f, 0, 0);
	uintptr_t a;
	size_t bs;
	ck_assert(!hostpool_alloc(hp, 4096, &a, &bs));
	/* One provider call, for data: the arena's metadata went to
	 * jemalloc's own mmap'd memory, not to hooked memory. */
	ck_assert_uint_eq(f.allocs, 1);
	ck_assert(a >= (uintptr_t)f.area && a < (uintptr_t)f.next);
	ck_assert_uint_eq(bs, 4096);
	ck_assert_uint_eq(a % 512, 0);
	memset((void *)a, 0x5a, bs);
	hostpool_free(hp, a, bs);
	hostpool_destroy(hp);
	ck_assert_uint_eq(f.live, 0);
	fk_fini(&f);
}
END_TEST

START_TEST(test_hostpool_no_extent_spans_segments)
{
	fake_t f;
	fk_init(&f, 4096 * MiB);
	hostpool_t *hp = mk(&f, 0, 4 * MiB);
	enum { N = 400 };
	static uintptr_t a[N];
	static size_t s[N];
	uint64_t r = 12345;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t sz = 512 + (size_t)(r >> 33) % (3 * MiB);
			ck_assert(!hostpool_alloc(hp, sz, &a[i], &s[i]));
			ck_assert_uint_ge(s[i], sz);
			uintptr_t b0, b1;
			size_t z0, z1;
			ck_assert(!hostpool_segment_of(hp, a[i], &b0, &z0));
			ck_assert(!hostpool_segment_of(hp, a[i] + s[i] - 1, &b1,
			    &z1));
			ck_assert_uint_eq(b0, b1); /* one segment */
			((unsigned char *)a[i])[0] = (unsigned char)i;
			((unsigned char *)a[i])[s[i] - 1] = (unsigned char)i;
		}
		for (int i = 0; i < N; i += 2)
			hostpool_free(hp, a[i], s[i]);
		for (int i = 1; i < N; i += 2) {
			ck_assert_uint_eq(((unsigned char *)a[i])[0],
			    (unsigned char)i);
			hostpool_free(hp, a[i], s[i]);
		}
	}
	/* Retained: nothing went back to the provider before the trim. */
	ck_assert_uint_eq(f.frees, 0);
	hostpool_stats_t st;
	hostpool_stats(hp, &st);
	ck_assert_uint_eq(st.allocated, 0);
	ck_assert_uint_eq(st.reserved, f.live);
	ck_assert_uint_eq(st.seg_allocs, f.allocs);
	ck_assert_uint_gt(hostpool_trim(hp), 0);
	ck_assert_uint_eq(f.live, 0);
	ck_assert_uint_eq(f.frees, f.allocs);
	/* The pool works again after a trim (a new arena). */
	uintptr_t x;
	size_t xs;
	ck_assert(!hostpool_alloc(hp, 100 * KiB, &x, &xs));
	hostpool_stats(hp, &st);
	ck_assert_uint_eq(st.arenas_created, 2);
	/* Nothing is trimmed while a block is live. */
	ck_assert_uint_eq(hostpool_trim(hp), 0);
	hostpool_free(hp, x, xs);
	hostpool_destroy(hp);
	ck_assert_uint_eq(f.live, 0);
	fk_fini(&f);
}
END_TEST

START_TEST(test_hostpool_limit_and_grow_cap)
{
	fake_t f;
	fk_init(&f, 1024 * MiB);
	hostpool_t *hp = mk(&f, 48 * MiB, 4 * MiB);
	uintptr_t a[100];
	size_t s[100];
	int n = 0;
	while (n < 100 && !hostpool_alloc(hp, 1 * MiB, &a[n], &s[n]))
		n++;
	ck_assert_int_gt(n, 20);
	ck_assert_int_lt(n, 48);
	hostpool_stats_t st;
	hostpool_stats(hp, &st);
	ck_assert_uint_le(st.reserved, 48 * MiB);
	/* Growth steps never pass retain_grow_limit (requests are small). */
	ck_assert_uint_le(f.max_call, 4 * MiB);
	for (int i = 0; i < n; i++)
		hostpool_free(hp, a[i], s[i]);
	hostpool_set_limit(hp, 0);
	ck_assert(!hostpool_alloc(hp, 16 * MiB, &a[0], &s[0]));
	hostpool_free(hp, a[0], s[0]);
	hostpool_destroy(hp);
	fk_fini(&f);
}
END_TEST

START_TEST(test_hostpool_pools_never_mix)
{
	fake_t f1, f2;
	fk_init(&f1, 256 * MiB);
	fk_init(&f2, 256 * MiB);
	hostpool_t *h1 = mk(&f1, 0, 0), *h2 = mk(&f2, 0, 0);
	for (int i = 0; i < 500; i++) {
		uintptr_t a, b;
		size_t as, bsz;
		ck_assert(!hostpool_alloc(h1, 64, &a, &as));
		hostpool_free(h1, a, as);
		/* A thread cache shared by arenas would hand a back here. */
		ck_assert(!hostpool_alloc(h2, 64, &b, &bsz));
		ck_assert(b >= (uintptr_t)f2.area &&
		    b < (uintptr_t)f2.area + f2.area_size);
		hostpool_free(h2, b, bsz);
	}
	hostpool_destroy(h1);
	hostpool_destroy(h2);
	fk_fini(&f1);
	fk_fini(&f2);
}
END_TEST

static hostpool_t *shared_hp;

static void *
worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uintptr_t a[32] = { 0 };
	size_t s[32];
	for (int step = 0; step < 4000; step++) {
		int i = (int)((step * 7 + id) % 32);
		if (a[i] != 0) {
			if (*(uintptr_t *)a[i] != id * 1000 + (uintptr_t)i)
				return (void *)1;
			hostpool_free(shared_hp, a[i], s[i]);
			a[i] = 0;
		} else {
			if (hostpool_alloc(shared_hp, 512 + (size_t)(step %
			    97) * 300, &a[i], &s[i]))
				return (void *)1;
			*(uintptr_t *)a[i] = id * 1000 + (uintptr_t)i;
		}
	}
	for (int i = 0; i < 32; i++)
		if (a[i] != 0)
			hostpool_free(shared_hp, a[i], s[i]);
	return NULL;
}

/* Lines of /proc/self/maps: one per mapping of the process. */
static size_t
maps_count(void)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(fp);
	size_t n = 0;
	int c;
	while ((c = getc(fp)) != EOF)
		n += c == '\n';
	fclose(fp);
	return n;
}

static size_t
vm_pages(int which)
{
	FILE *fp = fopen("/proc/self/statm", "r");
	ck_assert_ptr_nonnull(fp);
	size_t v[2] = { 0, 0 };
	ck_assert_int_eq(fscanf(fp, "%zu %zu", &v[0], &v[1]), 2);
	fclose(fp);
	return v[which];
}

/* Finding A1 (doc/reliability.md): each trim destroys the arena, and
 * jemalloc's retain kept every destroyed arena's metadata mapped (with
 * its pages, since our hooks refuse purge).  1000 trim cycles must not
 * add mappings; the metadata blocks jemalloc asks the hooks for never
 * reach the provider (pinned or managed memory) and are all unmapped. */
START_TEST(test_hostpool_trim_cycles_keep_nothing)
{
	fake_t f;
	fk_init(&f, 16384 * MiB);
	hostpool_t *hp = mk(&f, 0, 4 * MiB);
	uintptr_t a;
	size_t bs;
	/* Warm up: jemalloc's own first mappings, the test's buffers. */
	for (int i = 0; i < 3; i++) {
		ck_assert(!hostpool_alloc(hp, 4096, &a, &bs));
		hostpool_free(hp, a, bs);
		ck_assert_uint_gt(hostpool_trim(hp), 0);
	}
	size_t before = maps_count();
	size_t vm0 = vm_pages(0), rss0 = vm_pages(1);
	for (int i = 0; i < 1000; i++) {
		ck_assert(!hostpool_alloc(hp, 4096 + (size_t)i * 512, &a,
		    &bs));
		hostpool_free(hp, a, bs);
		ck_assert_uint_gt(hostpool_trim(hp), 0);
	}
	size_t after = maps_count();
	size_t vm1 = vm_pages(0), rss1 = vm_pages(1);
	/* Mappings, address space and resident pages flat; the slack is
	 * for sanitizer runtimes (1,000 leaked metadata blocks were 2 GB). */
	ck_assert_msg(after <= before + 16, "mappings %zu -> %zu after 1000 "
	    "trims", before, after);
	ck_assert_msg(vm1 <= vm0 + 16384 && rss1 <= rss0 + 4096, "pages mapped "
	    "%zu -> %zu, resident %zu -> %zu after 1000 trims", vm0, vm1,
	    rss0, rss1);
	/* Metadata beyond the first block: 20,000 large blocks need more
	 * than 2 MiB of extent records. */
	enum { N = 20000 };
	static uintptr_t b[N];
	static size_t s[N];
	for (int i = 0; i < N; i++)
		ck_assert(!hostpool_alloc(hp, 16 * KiB, &b[i], &s[i]));
	hostpool_stats_t st;
	hostpool_stats(hp, &st);
	/* This arena's metadata outgrew its first block: every block came
	 * through the hooks, none from the provider. */
	ck_assert_uint_gt(st.meta_maps, st.arenas_created);
	ck_assert_uint_eq(st.reserved, f.live);
	ck_assert_uint_eq(st.seg_allocs, f.allocs);
	for (int i = 0; i < N; i++)
		hostpool_free(hp, b[i], s[i]);
	ck_assert_uint_gt(hostpool_trim(hp), 0);
	hostpool_stats(hp, &st);
	/* Every metadata block unmapped, each arena's first too. */
	ck_assert_uint_eq(st.meta_unmaps, st.meta_maps);
	ck_assert_uint_eq(f.live, 0);
	hostpool_destroy(hp);
	ck_assert_uint_le(maps_count(), before + 16);
	fk_fini(&f);
}
END_TEST

START_TEST(test_hostpool_threads)
{
	fake_t f;
	fk_init(&f, 1024 * MiB);
	shared_hp = mk(&f, 0, 0);
	pthread_t th[8];
	for (uintptr_t i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker,
		    (void *)i), 0);
	for (int i = 0; i < 8; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		ck_assert_ptr_null(ret);
	}
	hostpool_stats_t st;
	hostpool_stats(shared_hp, &st);
	ck_assert_uint_eq(st.allocated, 0);
	hostpool_destroy(shared_hp);
	ck_assert_uint_eq(f.live, 0);
	fk_fini(&f);
}
END_TEST

static Suite *
make_hostpool_suite(void)
{
	Suite *s = suite_create("hostpool");
	TCase *tc = tcase_create("hostpool");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hostpool_version_and_metadata);
	tcase_add_test(tc, test_hostpool_no_extent_spans_segments);
	tcase_add_test(tc, test_hostpool_limit_and_grow_cap);
	tcase_add_test(tc, test_hostpool_pools_never_mix);
	tcase_add_test(tc, test_hostpool_threads);
	tcase_add_test(tc, test_hostpool_trim_cycles_keep_nothing);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_hostpool_suite)
