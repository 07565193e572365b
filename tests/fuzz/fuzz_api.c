/*
 * fuzz_api.c -- libFuzzer target for the public API (lib/cuwarden.h)
 * against the simulated driver (LD_LIBRARY_PATH=<build>/tests/fakecuda).
 *
 * The input bytes drive a sequence of up to 64 calls -- cw_alloc,
 * cw_alloc_async, cw_free, cw_free_async, cw_retain, cw_release, cw_view,
 * cw_transfer, cw_owner_register, cw_lookup, cw_upload, cw_download,
 * cw_copy, cw_memset, the queries and cw_stats -- on handles the sequence
 * made (live or freed), CW_BUF_NONE and a handle never issued.  A small
 * reference model written from doc/contracts.md (handles, reference
 * counts, views, owners, freed handles, and a shadow copy of the bytes
 * written) predicts every status; the library must agree, cw_download
 * must give back the bytes the model knows, cw_stats the live counts.  At
 * the end every live view and allocation is freed and cw_stats must show
 * nothing live (no leak).  The library's state persists between inputs
 * (registry, tombstones, owners, pools), as in a long-running program.
 * A disagreement prints the call and both answers, then aborts.
 */
#include "preamble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owner.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_api: check failed: %s " \
			    "(line %d)\n", #c, __LINE__); \
			abort(); \
		} \
	} while (0)

#define MAX_OPS 64
#define MAX_ENTS 48
#define MAX_XFER 4096
#define SIZE_LIMIT (1ULL << 47)
#define NEVER ((cw_buf_t)0x00000001ffffff00ULL) /* a slot never used */

typedef struct ent_s {
	cw_buf_t h;
	bool live, view;
	int root;          /* view: index of its allocation; else itself */
	size_t off, size;  /* view: offset in the allocation; own size */
	int kind;
	uintptr_t addr;
	int retains, views;
	uint8_t *shadow, *known; /* allocations only */
} ent_t;

static ent_t ents[MAX_ENTS];
static int nents;
static const uint8_t *ip, *iend;
static int step;

/* Owners, by name: the library keeps them for the life of the process. */
static const char *const owner_names[] = { "alpha", "beta", "libtorch.so",
	"a b c", "~owner~", "x" };
static cw_owner_t owner_ids[6];

static unsigned
u8(void)
{
	return ip < iend ? *ip++ : 0;
}

static uint64_t
u16(void)
{
	unsigned a = u8();

	return a | (u8() << 8);
}

static void
sink(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static void
expect(const char *call, int got, int want)
{
	if (got == want)
		return;
	fprintf(stderr, "fuzz_api: step %d: %s returned %d (%s), the model "
	    "says %d (%s); last error: %s\n", step, call, got,
	    cw_strerror(got), want, cw_strerror(want),
	    cw_last_error()->message);
	abort();
}

/* A handle to use: an entry (index returned), CW_BUF_NONE or NEVER (-1). */
static int
pick(cw_buf_t *h)
{
	unsigned b = u8();

	if (nents == 0 || b >= 250) {
		*h = (b & 1) ? NEVER : CW_BUF_NONE;
		return -1;
	}
	b %= (unsigned)nents;
	*h = ents[b].h;
	return (int)b;
}

/* The expected status of a handle that is not a live entry. */
static int
not_live(int e)
{
	return e < 0 ? CW_EINVAL : CW_EFREED;
}

static size_t
pick_size(void)
{
	unsigned b = u8();

	switch (b & 7) {
	case 0: return 0;
	case 1: return SIZE_LIMIT + (b >> 3);
	case 2: return (2u << 20) + u16(); /* beyond the large-block size */
	default: return 1 + u16() % 8192;
	}
}

/* An offset or length near the handle's size n. */
static size_t
pick_range(size_t n)
{
	unsigned b = u8();

	switch (b & 7) {
	case 0: return 0;
	case 1: return n;
	case 2: return SIZE_MAX - (b >> 3);
	case 3: return n + (b >> 3);
	default: return n ? u16() % (n + 1) : 0;
	}
}

static bool
bounds_ok(size_t size, size_t off, size_t n)
{
	return off <= size && n <= size - off;
}

static cw_owner_t
pick_owner(bool *valid)
{
	unsigned b = u8() % 8;

	if (b < 6 && owner_ids[b] != 0) {
		*valid = true;
		return owner_ids[b];
	}
	*valid = b == 6;
	return b == 6 ? CW_OWNER_NONE : 0x10000u + b; /* never registered */
}

static int
add_ent(cw_buf_t h)
{
	CHECK(nents < MAX_ENTS);
	memset(&ents[nents], 0, sizeof(ents[nents]));
	ents[nents].h = h;
	ents[nents].live = true;
	ents[nents].root = nents;
	return nents++;
}

/* ------------------------------------------------------------ the calls */

static void
op_alloc(bool async)
{
	size_t size = pick_size();
	unsigned kb = u8();
	int kind = kb % 4 == 3 ? 7 : (int)(kb % 4), device = (kb >> 2) % 5 ? 0 :
	    ((kb >> 4) & 1 ? 1 : CW_CPU);
	bool ovalid;
	cw_owner_t owner = pick_owner(&ovalid);
	cw_stream_t stream = (kb >> 5) & 1 ? (cw_stream_t)2 : NULL;
	cw_buf_t h = CW_BUF_NONE;
	int want, r;

	if (nents == MAX_ENTS)
		return;
	if (size == 0 || size > SIZE_LIMIT || kind > 2 || !ovalid)
		want = CW_EINVAL;
	else if (device != 0)
		want = CW_ENODEV;
	else if (size == SIZE_LIMIT) /* allowed, but beyond the 80 GiB */
		want = CW_ENOMEM;
	else
		want = CW_OK;
	r = async ? cw_alloc_async(&h, size, (cw_kind_t)kind, device, owner,
	    stream) : cw_alloc(&h, size, (cw_kind_t)kind, device, owner);
	expect(async ? "cw_alloc_async" : "cw_alloc", r, want);
	if (r != CW_OK) {
		CHECK(h == CW_BUF_NONE);
		return;
	}
	int e = add_ent(h);
	ents[e].size = size;
	ents[e].kind = kind;
	ents[e].addr = (uintptr_t)cw_ptr(h);
	ents[e].shadow = calloc(1, size);
	ents[e].known = calloc(1, size);
	CHECK(ents[e].addr != 0 && ents[e].shadow && ents[e].known);
	CHECK(cw_size(h) == size && cw_kind(h) == kind && cw_device(h) == 0);
	CHECK(cw_refcount(h) == 1);
	for (int i = 0; i < e; i++) /* live ranges never overlap */
		CHECK(!ents[i].live || ents[i].view ||
		    ents[i].addr + ents[i].size <= ents[e].addr ||
		    ents[e].addr + size <= ents[i].addr);
}

static void
op_free(bool async)
{
	cw_buf_t h;
	int e = pick(&h), want;

	if (e < 0 || !ents[e].live)
		want = not_live(e);
	else if (ents[e].view)
		want = CW_OK;
	else
		want = ents[e].retains + ents[e].views > 0 ? CW_ECONTRACT :
		    CW_OK;
	expect(async ? "cw_free_async" : "cw_free",
	    async ? cw_free_async(h, NULL) : cw_free(h), want);
	if (want != CW_OK)
		return;
	ents[e].live = false;
	if (ents[e].view) {
		ents[ents[e].root].views--;
	} else {
		free(ents[e].shadow);
		free(ents[e].known);
		ents[e].shadow = ents[e].known = NULL;
	}
}

static void
op_retain(bool release)
{
	cw_buf_t h;
	int e = pick(&h), want;
	ent_t *a;

	if (e < 0 || !ents[e].live) {
		want = not_live(e);
		a = NULL;
	} else {
		a = &ents[ents[e].root];
		want = release && a->retains == 0 ? CW_ECONTRACT : CW_OK;
	}
	expect(release ? "cw_release" : "cw_retain",
	    release ? cw_release(h) : cw_retain(h), want);
	if (want == CW_OK)
		a->retains += release ? -1 : 1;
	if (a != NULL)
		CHECK(cw_refcount(h) == 1 + a->retains + a->views);
}

static void
op_view(void)
{
	cw_buf_t h, v = CW_BUF_NONE;
	int e = pick(&h), want;
	size_t psize = e >= 0 ? ents[e].size : 0;
	size_t off = pick_range(psize), len = pick_range(psize);

	if (nents == MAX_ENTS)
		return;
	if (len == 0)
		want = CW_EINVAL;
	else if (e < 0 || !ents[e].live)
		want = not_live(e);
	else if (!bounds_ok(psize, off, len))
		want = CW_EBOUNDS;
	else
		want = CW_OK;
	expect("cw_view", cw_view(&v, h, off, len), want);
	if (want != CW_OK)
		return;
	int n = add_ent(v);
	ents[n].view = true;
	ents[n].root = ents[e].root;
	ents[n].off = ents[e].off + off;
	ents[n].size = len;
	ents[n].kind = ents[e].kind;
	ents[ents[n].root].views++;
	CHECK((uintptr_t)cw_ptr(v) == ents[ents[n].root].addr + ents[n].off);
	CHECK(cw_size(v) == len && cw_kind(v) == ents[n].kind);
}

static void
op_transfer(void)
{
	cw_buf_t h;
	int e = pick(&h), want;
	bool ovalid;
	cw_owner_t to = pick_owner(&ovalid);

	if (!ovalid || e < 0)
		want = CW_EINVAL;
	else if (!ents[e].live)
		want = CW_EFREED;
	else
		want = ents[ents[e].root].retains + ents[ents[e].root].views
		    > 0 ? CW_ECONTRACT : CW_OK;
	expect("cw_transfer", cw_transfer(h, to), want);
	if (want == CW_OK) {
		cw_owner_t o = 12345;

		CHECK(cw_owner_of(h, &o) == CW_OK && o == to);
	}
}

static void
op_owner(void)
{
	unsigned b = u8();
	char name[160];
	cw_owner_t id = 0;
	int want = CW_OK;

	if (b < 6 * 32) {
		snprintf(name, sizeof(name), "%s", owner_names[b % 6]);
	} else {
		/* A generated name: length and bytes from the input. */
		size_t n = u8() % 140;

		for (size_t i = 0; i < n; i++)
			name[i] = (char)u8();
		name[n] = '\0';
		n = strlen(name);
		if (n == 0 || n > 127)
			want = CW_EINVAL;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)name[i] < 0x20 ||
			    (unsigned char)name[i] > 0x7e)
				want = CW_EINVAL;
	}
	int r = cw_owner_register(name, &id);
	/* A new name once the table is full (OWNER_MAX - 1 names, the
	 * documented bound; a long run can get there): CW_ENOMEM. */
	if (want == CW_OK && r == CW_ENOMEM &&
	    owner_count() == OWNER_MAX - 1)
		return;
	expect("cw_owner_register", r, want);
	if (want != CW_OK)
		return;
	CHECK(id != CW_OWNER_NONE);
	CHECK(cw_owner_name(id) != NULL && strcmp(cw_owner_name(id), name) == 0);
	if (b < 6 * 32) {
		if (owner_ids[b % 6] != 0)
			CHECK(owner_ids[b % 6] == id);
		owner_ids[b % 6] = id;
	}
}

static void
op_lookup(void)
{
	cw_buf_t h, got = CW_BUF_NONE;
	int e = pick(&h), r;
	uintptr_t p;
	int want = -1;

	if (e < 0)
		return;
	p = ents[ents[e].root].addr + ents[e].off +
	    (ents[e].size ? u16() % ents[e].size : 0);
	for (int i = 0; i < nents; i++)
		if (ents[i].live && !ents[i].view && p >= ents[i].addr &&
		    p < ents[i].addr + ents[i].size)
			want = i;
	r = cw_lookup((const void *)p, &got);
	if (want >= 0) {
		expect("cw_lookup", r, CW_OK);
		CHECK(got == ents[want].h);
	} else if (r == CW_OK) {
		/* The padding of a live allocation's block, at most. */
		bool ok = false;

		for (int i = 0; i < nents; i++)
			ok |= ents[i].live && !ents[i].view &&
			    got == ents[i].h && p >= ents[i].addr;
		CHECK(ok);
	} else {
		expect("cw_lookup", r, CW_EINVAL);
	}
}

/* Expected status of a data call on one handle and its range. */
static int
data_status(int e, size_t off, size_t n)
{
	if (e < 0 || !ents[e].live)
		return not_live(e);
	return bounds_ok(ents[e].size, off, n) ? CW_OK : CW_EBOUNDS;
}

static void
op_upload(void)
{
	cw_buf_t h;
	int e = pick(&h);
	size_t size = e >= 0 ? ents[e].size : 0;
	size_t off = pick_range(size), n = pick_range(size);
	uint8_t buf[MAX_XFER];
	int want;

	if (n > MAX_XFER && bounds_ok(size, off, n))
		n = MAX_XFER;
	want = data_status(e, off, n);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (unsigned)step);
	if (want != CW_OK && n > MAX_XFER) {
		/* Refused before any byte is read: a short buffer will do. */
		expect("cw_upload", cw_upload(h, off, buf, n), want);
		return;
	}
	expect("cw_upload", cw_upload(h, off, buf, n), want);
	if (want == CW_OK && n > 0) {
		ent_t *a = &ents[ents[e].root];

		memcpy(a->shadow + ents[e].off + off, buf, n);
		memset(a->known + ents[e].off + off, 1, n);
	}
}

static void
op_download(void)
{
	cw_buf_t h;
	int e = pick(&h);
	size_t size = e >= 0 ? ents[e].size : 0;
	size_t off = pick_range(size), n = pick_range(size);
	uint8_t buf[MAX_XFER];
	int want;

	if (n > MAX_XFER && bounds_ok(size, off, n))
		n = MAX_XFER;
	want = data_status(e, off, n);
	expect("cw_download", cw_download(h, off, buf, n), want);
	if (want == CW_OK && n > 0) {
		ent_t *a = &ents[ents[e].root];
		size_t base = ents[e].off + off;

		for (size_t i = 0; i < n; i++)
			if (a->known[base + i] && buf[i] != a->shadow[base + i]) {
				fprintf(stderr, "fuzz_api: step %d: byte %zu "
				    "of handle %#llx is %#x, written %#x\n",
				    step, off + i, (unsigned long long)h,
				    buf[i], a->shadow[base + i]);
				abort();
			}
	}
}

static void
op_memset(void)
{
	cw_buf_t h;
	int e = pick(&h);
	size_t size = e >= 0 ? ents[e].size : 0;
	size_t off = pick_range(size), n = pick_range(size);
	int value = (int)u16() - 32768, want;

	want = data_status(e, off, n);
	expect("cw_memset", cw_memset(h, off, value, n), want);
	if (want == CW_OK && n > 0) {
		ent_t *a = &ents[ents[e].root];

		memset(a->shadow + ents[e].off + off, (unsigned char)value, n);
		memset(a->known + ents[e].off + off, 1, n);
	}
}

static void
op_copy(void)
{
	cw_buf_t hd, hs;
	int d = pick(&hd), s = pick(&hs), want;
	size_t dsize = d >= 0 ? ents[d].size : 0, ssize = s >= 0 ?
	    ents[s].size : 0;
	size_t doff = pick_range(dsize), soff = pick_range(ssize);
	size_t n = pick_range(dsize < ssize ? dsize : ssize);

	want = data_status(d, doff, n);
	if (want == CW_OK)
		want = data_status(s, soff, n);
	if (want == CW_OK && n > 0 && ents[d].root == ents[s].root &&
	    ents[d].kind != CW_PINNED) {
		size_t a = ents[d].off + doff, b = ents[s].off + soff;

		if (a < b + n && b < a + n)
			want = CW_EINVAL;
	}
	expect("cw_copy", cw_copy(hd, doff, hs, soff, n), want);
	if (want == CW_OK && n > 0) {
		ent_t *ad = &ents[ents[d].root], *as = &ents[ents[s].root];

		memmove(ad->shadow + ents[d].off + doff,
		    as->shadow + ents[s].off + soff, n);
		memmove(ad->known + ents[d].off + doff,
		    as->known + ents[s].off + soff, n);
	}
}

static void
op_query(void)
{
	cw_buf_t h;
	int e = pick(&h);
	cw_owner_t o;

	if (e < 0 || !ents[e].live) {
		expect("cw_refcount", cw_refcount(h), not_live(e));
		expect("cw_owner_of", cw_owner_of(h, &o), not_live(e));
		CHECK(cw_ptr(h) == NULL && cw_size(h) == 0 && cw_kind(h) < 0);
		return;
	}
	ent_t *a = &ents[ents[e].root];

	expect("cw_refcount", cw_refcount(h), 1 + a->retains + a->views);
	CHECK(cw_size(h) == ents[e].size);
	CHECK((uintptr_t)cw_ptr(h) == a->addr + ents[e].off);
}

static void
check_stats(void)
{
	cw_stats_t st;
	uint64_t allocs[3] = { 0 }, bytes[3] = { 0 }, views = 0;

	for (int i = 0; i < nents; i++) {
		if (!ents[i].live)
			continue;
		if (ents[i].view) {
			views++;
			continue;
		}
		allocs[ents[i].kind]++;
		bytes[ents[i].kind] += ents[i].size;
	}
	CHECK(cw_stats(&st) == CW_OK);
	for (int k = 0; k < 3; k++) {
		if (st.allocations[k].current != allocs[k] ||
		    st.bytes[k].current != bytes[k]) {
			fprintf(stderr, "fuzz_api: step %d: kind %d: stats say "
			    "%llu allocations, %llu bytes live; the model %llu, "
			    "%llu\n", step, k,
			    (unsigned long long)st.allocations[k].current,
			    (unsigned long long)st.bytes[k].current,
			    (unsigned long long)allocs[k],
			    (unsigned long long)bytes[k]);
			abort();
		}
	}
	CHECK(st.views_live == views);
}

/* Frees everything still live: views first, then retains, allocations. */
static void
teardown(void)
{
	for (int i = nents - 1; i >= 0; i--)
		if (ents[i].live && ents[i].view) {
			expect("cw_free (teardown view)", cw_free(ents[i].h),
			    CW_OK);
			ents[i].live = false;
			ents[ents[i].root].views--;
		}
	for (int i = 0; i < nents; i++) {
		if (!ents[i].live)
			continue;
		for (; ents[i].retains > 0; ents[i].retains--)
			expect("cw_release (teardown)", cw_release(ents[i].h),
			    CW_OK);
		CHECK(ents[i].views == 0);
		expect("cw_free (teardown)", cw_free(ents[i].h), CW_OK);
		ents[i].live = false;
	}
	check_stats();
	for (int i = 0; i < nents; i++) {
		expect("cw_refcount (freed)", cw_refcount(ents[i].h),
		    CW_EFREED);
		free(ents[i].shadow);
		free(ents[i].known);
	}
	nents = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;

	if (!once) {
		once = true;
		cw_set_output(sink, NULL);
		check_stats(); /* nothing live before the first input */
	}
	ip = data;
	iend = data + size;
	for (step = 0; step < MAX_OPS && ip < iend; step++) {
		switch (u8() % 17) {
		case 0: op_alloc(false); break;
		case 1: op_alloc(true); break;
		case 2: op_free(false); break;
		case 3: op_free(true); break;
		case 4: op_retain(false); break;
		case 5: op_retain(true); break;
		case 6: op_view(); break;
		case 7: op_transfer(); break;
		case 8: op_owner(); break;
		case 9: op_lookup(); break;
		case 10: op_upload(); break;
		case 11: op_download(); break;
		case 12: op_copy(); break;
		case 13: op_memset(); break;
		case 14: op_query(); break;
		case 15: check_stats(); break;
		default: op_alloc(false); break;
		}
	}
	teardown();
	return 0;
}
