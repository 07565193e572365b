#include "preamble.h"
/*
 * timeline.c -- the timeline (CUWARDEN_TIMELINE; doc/shim.md, "The
 * timeline"): every allocation and free the engine records, appended to
 * the calling thread's buffer and written by a thread of the shim's to
 * "<CUWARDEN_REPORT>.timeline" (lib/tlformat.h's layout), whole at exit
 * (outfile.h: a dot file until then, moved into place at the end).
 *
 * Invariants: an event costs its thread one clock read (the TSC where
 * the kernel trusts it, else CLOCK_MONOTONIC) and a 32-byte store into
 * a buffer of its own; a full buffer is handed to the writer
 * through a lock-free stack (one CAS, one eventfd write per
 * BUF_RECS events).  The writer gives a written buffer back as its
 * slot's spare (one per slot; more are unmapped), so a busy thread takes
 * its next buffer without a system call or a page fault.  Nothing ever
 * waits for the disk but the exit:
 * when BUF_QUEUED buffers wait already, or past CUWARDEN_TIMELINE_LIMIT,
 * a full buffer's events are counted as dropped and the buffer reused.
 * Only the writer touches the file, a buffer's "written" and the stack
 * bitmap.  An allocation's time is read before its record is inserted
 * (shim_tl_clock_before: with the TSC a plain rdtsc, which completes
 * before the insert retires) and a free's after the look-up that found
 * its record (shim_tl_clock: lfence; rdtsc, after every earlier load), so
 * in time order an allocation always comes before its free, whichever
 * threads made them.  At exit
 * (shim_timeline_finish) the writer writes the queued buffers, then what
 * each thread's buffer holds (a thread in a hand-off is waited for, at
 * most a second), moves the file into place and says so; events after
 * that are not written (the report is being written: they are in no
 * report either).
 *
 * Fork: the writer does not exist in a child and the engine is dead
 * there: shim_timeline_postfork_child turns the timeline off and closes
 * the child's copy of the file's descriptor; the parent's file is
 * untouched.  After exec the shim loads afresh.
 *
 * Locking: none (atomics; the buffers' memory is mmap'd, never malloc'd).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "engine.h"
#include "fmt.h"
#include "outfile.h"
#include "tlformat.h"

#define BUF_RECS 8191   /* records per buffer: 256 KiB with its header */
#define BUF_QUEUED 64   /* buffers waiting for the writer, at most */
#define SLOTS 1024      /* threads with a buffer at once */
#define STACK_BITS (1u << 22) /* stack ids (stackdepot.c's limit) */
#define FINISH_WAIT_MS 30000
#define SNAP_WAIT_MS 10000 /* a snapshot waits for its copy at most */
#define SNAP_COPY 65536    /* bytes a read of the file copies */

typedef struct tl_buf_s {
	struct tl_buf_s *next; /* in the queue */
	uint32_t tid;
	uint32_t n;            /* records filled (the owner's; release) */
	uint32_t written;      /* records written (the writer's) */
	uint32_t slot;         /* the slot it was made for (its spare after) */
	uint32_t drops;        /* times its owner emptied it in place (the
				* owner's; atomic): a snapshot's copy of
				* it is taken again when this moved */
	uint32_t pad;
	tlf_rec_t recs[BUF_RECS];
} tl_buf_t;

/* A thread's place: its buffer, handed from thread to thread (a slot is
 * free again when its thread ends). */
typedef struct tl_slot_s {
	tl_buf_t *cur; /* atomic; NULL: none yet */
	tl_buf_t *spare; /* atomic: an empty buffer the writer gave back */
	int busy;      /* atomic: its thread is in a hand-off */
	int used;      /* atomic: a thread holds it */
} tl_slot_t;

bool shim_tl_on;                 /* set once, before any event */
static uint64_t tl_start_mono, tl_start_real;
static tl_slot_t slots[SLOTS];
static CW_TLS tl_slot_t *tl_self;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static bool tl_started;          /* the writer runs (atomic) */
static bool tl_failed;           /* no writer, or the file failed */
static int tl_wake = -1, tl_done = -1; /* eventfds */
static tl_buf_t *tl_queue;       /* lock-free stack (atomic) */
static unsigned tl_queued;       /* buffers in it (atomic) */
static int tl_closing;           /* atomic: finish asked */
static int tl_stop;              /* atomic: nothing more goes in the file
				  * (past the limit, or a write failed) */
static int tl_drop_all;          /* atomic: the threads drop their full
				  * buffers (nothing can keep them) */
static uint64_t tl_dropped;      /* atomic */
/* The writer's. */
static outfile_t tl_of;
static uint64_t tl_events, tl_bytes, tl_limit;
static bool tl_limit_reached, tl_write_error;
static uint64_t *tl_stack_bits;
static char tl_name[PATH_MAX];
static report_timeline_t tl_result;
static tlf_header_t tl_header;   /* written first, again at the end */
static bool tl_tsc;              /* the records count TSC ticks */
static uint64_t tl_start_tsc;    /* the TSC at tl_start_mono */
/* A snapshot's copy of the timeline so far (shim_timeline_snapshot):
 * asked by the snapshot thread (tl_snap_n, then tl_snap_asked), made by
 * the writer (tl_snap_result, then tl_snap_made, then tl_snap_efd). */
static unsigned tl_snap_asked, tl_snap_made; /* atomic */
static int tl_snap_n;                 /* the snapshot's number */
static int tl_snap_efd = -1;          /* eventfd: a copy made */
static report_timeline_t tl_snap_result;
static char tl_snap_name[PATH_MAX];
static uint64_t *tl_snap_bits;        /* the copy's stacks */
static tl_buf_t *tl_scratch;          /* records read or copied (the
				       * writer's; mapped at first need) */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* lfence; rdtsc: after every earlier instruction is done (the kernel's
 * rdtsc_ordered without rdtscp, which not every CPU or VM offers), so a
 * free's time, read after the lookup that found its record, is not taken
 * before it. */
static inline uint64_t
tsc_now(void)
{
	_mm_lfence();
	return __rdtsc();
}

/* rdtsc: may be read before earlier instructions are done, never after
 * later stores are seen by other threads (it completes before they
 * retire): an allocation's time, read before its insert. */
static inline uint64_t
tsc_early(void)
{
	return __rdtsc();
}

/* Whether the TSC may be the timeline's clock: invariant (CPUID
 * 0x80000007 EDX bit 8: one rate, through sleep states) and, unless
 * CUWARDEN_TIMELINE_CLOCK=tsc, one of the kernel's clock sources (the
 * kernel checked that the cores' counters agree).  No allocation. */
static bool
tsc_usable(long how)
{
	unsigned a, b, c, d;
	char buf[256];
	ssize_t n;
	int fd;

	if (how == OPT_TIMELINE_CLOCK_MONOTONIC ||
	    !__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return false;
	if (how == OPT_TIMELINE_CLOCK_TSC)
		return true;
	fd = open("/sys/devices/system/clocksource/clocksource0/"
	    "available_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *p = buf; (p = strstr(p, "tsc")) != NULL; p += 3)
		if ((p == buf || p[-1] == ' ') &&
		    (p[3] == ' ' || p[3] == '\n' || p[3] == '\0'))
			return true;
	return false;
}
#else
static inline uint64_t
tsc_now(void)
{
	return 0;
}

static inline uint64_t
tsc_early(void)
{
	return 0;
}

static bool
tsc_usable(long how)
{
	(void)how;
	return false;
}
#endif

/* Never below the start: a core whose counter lags the one that read
 * tl_start_tsc by a few ticks (the kernel bounds the skew it accepts)
 * must not wrap to 2^64. */
static inline uint64_t
since_start(uint64_t now, uint64_t start)
{
	return now > start ? now - start : 0;
}

uint64_t
shim_tl_clock(void)
{
	if (tl_tsc)
		return since_start(tsc_now(), tl_start_tsc);
	return mono_ns() - tl_start_mono;
}

uint64_t
shim_tl_clock_before(void)
{
	if (tl_tsc)
		return since_start(tsc_early(), tl_start_tsc);
	return mono_ns() - tl_start_mono;
}

void
shim_timeline_init(void)
{
	struct timespec m, r;

	if (!options_get_bool(OPT_TIMELINE))
		return;
	tl_limit = options_get(OPT_TIMELINE_LIMIT);
	if (!report_env_set()) {
		log_warn("CUWARDEN_TIMELINE=1: CUWARDEN_REPORT is unset, so the "
		    "timeline has nowhere to go; no timeline");
		return;
	}
	tl_tsc = tsc_usable(options_get(OPT_TIMELINE_CLOCK));
	if (!tl_tsc && options_get(OPT_TIMELINE_CLOCK) == OPT_TIMELINE_CLOCK_TSC)
		log_warn("CUWARDEN_TIMELINE_CLOCK=tsc: this CPU has no invariant "
		    "TSC; the timeline counts CLOCK_MONOTONIC's ns");
	clock_gettime(CLOCK_REALTIME, &r);
	/* The TSC's start: the middle of two reads around the clock's. */
	uint64_t t0 = tsc_now();
	clock_gettime(CLOCK_MONOTONIC, &m);
	uint64_t t1 = tsc_now();
	tl_start_tsc = t0 + (t1 - t0) / 2;
	tl_start_mono = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
	tl_start_real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
	__atomic_store_n(&shim_tl_on, true, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ the writer */

static void
note_stacks(uint64_t *bits, const tlf_rec_t *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].stack < STACK_BITS)
			bits[r[i].stack / 64] |= (uint64_t)1 << (r[i].stack % 64);
}

/* The timeline's file for reading (it is open for writing only), through
 * /proc/self/fd, checked to be the same file.  Returns the fd, or -1
 * (errno set). */
static int
tl_reopen(void)
{
	char self[64];
	struct stat a, b;
	int in;

	fmt_snprintf(self, sizeof(self), "/proc/self/fd/%d", tl_of.fd);
	in = open(self, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	if (fstat(in, &a) != 0 || fstat(tl_of.fd, &b) != 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(in);
		errno = ESTALE;
		return -1;
	}
	return in;
}

/* Reads exactly len bytes at off.  Returns true on error (errno set). */
static bool
read_at(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len > 0) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return true;
		}
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return false;
}

static bool
scratch(void)
{
	if (tl_scratch != NULL)
		return false;
	tl_scratch = mmap(NULL, sizeof(tl_buf_t), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tl_scratch == MAP_FAILED)
		tl_scratch = NULL;
	return tl_scratch == NULL;
}

/* The limit reached: the totals past it start from the file as written
 * (shim/tlsummary.c), read back chunk by chunk.  Returns true when they
 * cannot (said). */
static bool
summary_begin(void)
{
	uint64_t off = sizeof(tlf_header_t);
	bool err = scratch();
	int in = err ? -1 : tl_reopen();

	if (in < 0)
		err = true;
	while (!err && off < tl_bytes) {
		tlf_chunk_t c;

		if (read_at(in, &c, sizeof(c), off) || c.count > BUF_RECS ||
		    read_at(in, tl_scratch->recs, c.count * sizeof(tlf_rec_t),
		    off + sizeof(c))) {
			err = true;
			break;
		}
		off += sizeof(c) + c.count * sizeof(tlf_rec_t);
		if (shim_tls_begin(tl_scratch->recs, c.count, false))
			break; /* said */
	}
	if (in >= 0)
		close(in);
	if (err)
		log_warn("CUWARDEN_TIMELINE_LIMIT: the timeline cannot be read "
		    "back (errno %d): no totals past the limit; later events "
		    "are dropped", errno);
	return err || shim_tls_begin(NULL, 0, true);
}

/* Writes what b holds and the file has not; past the limit, folds it into
 * the totals. */
static void
write_buf(tl_buf_t *b)
{
	uint32_t n = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
	uint64_t k, w, room;
	tlf_chunk_t c;

	if (n <= b->written)
		return;
	k = n - b->written;
	room = tl_bytes + sizeof(c) < tl_limit ?
	    (tl_limit - tl_bytes - sizeof(c)) / sizeof(tlf_rec_t) : 0;
	w = __atomic_load_n(&tl_stop, __ATOMIC_RELAXED) ? 0 :
	    k < room ? k : room;
	if (w > 0) {
		c.magic = TLF_CHUNK_MAGIC;
		c.count = (uint32_t)w;
		c.tid = b->tid;
		c.reserved = 0;
		if (outfile_write_all(tl_of.fd, &c, sizeof(c)) ||
		    outfile_write_all(tl_of.fd, &b->recs[b->written],
		    w * sizeof(tlf_rec_t))) {
			log_error("writing the timeline to %s failed (errno "
			    "%d): no timeline", tl_name, errno);
			tl_write_error = true;
			__atomic_store_n(&tl_stop, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&tl_drop_all, 1, __ATOMIC_RELAXED);
			k += tl_events; /* all dropped: no file */
			tl_events = 0;
			w = 0;
		} else {
			note_stacks(tl_stack_bits, &b->recs[b->written], w);
			tl_events += w;
			tl_bytes += sizeof(c) + w * sizeof(tlf_rec_t);
		}
	}
	if (w < k && !tl_write_error &&
	    !__atomic_exchange_n(&tl_stop, 1, __ATOMIC_RELAXED)) {
		tl_limit_reached = true;
		log_warn("CUWARDEN_TIMELINE_LIMIT (%llu bytes) reached: later "
		    "events are not written but summed (the report's "
		    "timeline.after_limit)", (unsigned long long)tl_limit);
		if (summary_begin())
			__atomic_store_n(&tl_drop_all, 1, __ATOMIC_RELAXED);
	}
	if (w < k && !__atomic_load_n(&tl_drop_all, __ATOMIC_RELAXED)) {
		const tlf_rec_t *r = &b->recs[b->written + w];

		if (shim_tls_fold(r, k - w))
			__atomic_store_n(&tl_drop_all, 1, __ATOMIC_RELAXED);
		else
			note_stacks(tl_stack_bits, r, k - w);
	}
	__atomic_add_fetch(&tl_dropped, k - w, __ATOMIC_RELAXED);
	b->written = n;
}

/* b written: an empty buffer again, its slot's spare when that has none
 * (its pages stay faulted in, so the program's thread takes it without a
 * system call or a page fault), else unmapped. */
static void
recycle(tl_buf_t *b)
{
	tl_buf_t *none = NULL;

	b->next = NULL;
	b->n = 0;
	b->written = 0;
	if (b->slot >= SLOTS || !__atomic_compare_exchange_n(
	    &slots[b->slot].spare, &none, b, false, __ATOMIC_RELEASE,
	    __ATOMIC_RELAXED))
		munmap(b, sizeof(*b));
}

/* Writes the queued buffers, oldest first; then, by how: unmaps them
 * (DRAIN_UNMAP), gives them back as spares (DRAIN_RECYCLE), or leaves them
 * (DRAIN_KEEP: a thread may still hold one at the very end). */
enum { DRAIN_UNMAP, DRAIN_RECYCLE, DRAIN_KEEP };

static void
drain(int how)
{
	tl_buf_t *b = __atomic_exchange_n(&tl_queue, NULL, __ATOMIC_ACQUIRE);
	tl_buf_t *rev = NULL, *next;

	for (; b != NULL; b = next) { /* oldest first */
		next = b->next;
		b->next = rev;
		rev = b;
	}
	for (b = rev; b != NULL; b = next) {
		next = b->next;
		write_buf(b);
		__atomic_sub_fetch(&tl_queued, 1, __ATOMIC_RELAXED);
		if (how == DRAIN_UNMAP)
			munmap(b, sizeof(*b));
		else if (how == DRAIN_RECYCLE)
			recycle(b);
	}
}

/* The TSC's ticks to ns from the start to now, into h: one ratio for
 * every record, so their order stays. */
static void
tick_ratio_now(tlf_header_t *h)
{
	uint64_t t0 = tsc_now(), m = mono_ns(), t1 = tsc_now();
	uint64_t ticks = t0 + (t1 - t0) / 2 - tl_start_tsc;
	uint64_t ns = m - tl_start_mono;

	if (ticks != 0 && ns != 0) {
		h->tick_ns_num = ns;
		h->tick_ns_den = ticks;
	}
}

/* The ratio over the whole run, into the header (rewritten in place: the
 * file is ours until it is moved into place).  Returns true on error
 * (logged). */
static bool
tick_ratio(void)
{
	tick_ratio_now(&tl_header);
	if (pwrite(tl_of.fd, &tl_header, sizeof(tl_header), 0) !=
	    (ssize_t)sizeof(tl_header)) {
		log_error("writing the timeline's header to %s failed (errno "
		    "%d): no timeline", tl_name, errno);
		return true;
	}
	return false;
}

/* At exit: the queue, then every thread's buffer as it stands. */
static void
finish(void)
{
	drain(DRAIN_UNMAP);
	for (size_t i = 0; i < SLOTS; i++) {
		tl_slot_t *s = &slots[i];
		tl_buf_t *b;
		int spins = 0;

		/* Its thread hands a buffer off: the queue gets it. */
		while (__atomic_load_n(&s->busy, __ATOMIC_SEQ_CST) &&
		    spins++ < 100000)
			sched_yield();
		b = __atomic_load_n(&s->cur, __ATOMIC_ACQUIRE);
		if (b != NULL)
			write_buf(b);
	}
	drain(DRAIN_KEEP);
	if (tl_tsc && !tl_write_error && tick_ratio())
		tl_write_error = true;
	if (tl_write_error) {
		outfile_abort(&tl_of);
		tl_result.error = "the timeline could not be written";
		return;
	}
	if (outfile_commit(&tl_of, tl_name, sizeof(tl_name))) {
		log_error("cannot put the timeline in place at %s (errno %d)",
		    tl_name, errno);
		tl_result.error = "the timeline could not be put in place";
		return;
	}
	tl_result.file = tl_name;
	log_debug(1, "timeline written to %s: %llu events", tl_name,
	    (unsigned long long)tl_events);
}


/* ------------------------------------------------------------ snapshots */

/* A snapshot's copy holds, for every thread, a prefix of its events: the
 * file as it stands, then the queued buffers, then what each thread's
 * buffer holds -- in that order, so that no thread's events have a hole
 * (a buffer handed off between two of these steps is found in the
 * next).  Made by the writer alone (snap_make): the file, the queue and
 * the spares are its own; a thread's current buffer is read while its
 * thread fills it, records [written, n) being complete (n is released
 * after them), and taken only when its thread did not empty it in place
 * meanwhile (drops unchanged: a seqlock). */
typedef struct snap_seen_s {
	tl_buf_t *b;   /* a slot's buffer when the slots were read; NULL:
			* none, or taken from the queue since */
	uint32_t n;    /* its records then */
	uint32_t drops;
} snap_seen_t;

static snap_seen_t snap_seen[SLOTS];

/* Appends records [from, to) of b to fd as a chunk of b's thread, their
 * stacks to the copy's.  Returns true on a write error. */
static bool
snap_put(int fd, const tl_buf_t *b, const tlf_rec_t *r, uint32_t k,
    uint64_t *events)
{
	tlf_chunk_t c = { TLF_CHUNK_MAGIC, k, b->tid, 0 };

	if (k == 0)
		return false;
	if (outfile_write_all(fd, &c, sizeof(c)) ||
	    outfile_write_all(fd, r, (size_t)k * sizeof(tlf_rec_t)))
		return true;
	note_stacks(tl_snap_bits, r, k);
	*events += k;
	return false;
}

/* The slots' buffers and their counts, into snap_seen.  A slot whose
 * thread is in a hand-off is waited for (briefly; past that, left out: its
 * events are then in the copy up to its last queued buffer).  Read
 * between two looks at busy that both say 0: a hand-off that happened in
 * between pushed its old buffer before its busy went back to 0, so the
 * queue, read after this, holds it. */
static void
snap_read_slots(void)
{
	for (size_t i = 0; i < SLOTS; i++) {
		tl_slot_t *s = &slots[i];
		snap_seen_t *v = &snap_seen[i];
		int spins = 0;

		v->b = NULL;
		if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&s->cur, __ATOMIC_ACQUIRE) == NULL)
			continue;
		while (spins++ < 1000) {
			if (__atomic_load_n(&s->busy, __ATOMIC_SEQ_CST)) {
				sched_yield();
				continue;
			}
			v->b = __atomic_load_n(&s->cur, __ATOMIC_ACQUIRE);
			if (v->b != NULL) {
				v->drops = __atomic_load_n(&v->b->drops,
				    __ATOMIC_ACQUIRE);
				v->n = __atomic_load_n(&v->b->n,
				    __ATOMIC_ACQUIRE);
			}
			if (!__atomic_load_n(&s->busy, __ATOMIC_SEQ_CST))
				break;
			v->b = NULL;
		}
	}
}

/* The queue, oldest first: each buffer into the copy (a slot's buffer
 * seen in snap_read_slots: only the records it had then), then written
 * and recycled as drain does.  A thread whose seen buffer was queued
 * since with more records than it had then (or emptied in place) went on
 * past the copy's cut: its buffers queued after that one are in the file
 * and not in the copy, or the copy's records of it would have a hole.
 * Returns true on a write error of the copy's. */
static bool
snap_drain(int fd, bool past, uint64_t *events)
{
	static uint32_t cut[SLOTS]; /* the threads past their cut */
	tl_buf_t *b = __atomic_exchange_n(&tl_queue, NULL, __ATOMIC_ACQUIRE);
	tl_buf_t *rev = NULL, *next;
	size_t ncut = 0;
	bool err = false;

	for (; b != NULL; b = next) {
		next = b->next;
		b->next = rev;
		rev = b;
	}
	for (b = rev; b != NULL; b = next) {
		uint32_t to = b->n, from = b->written;

		next = b->next;
		for (size_t i = 0; i < SLOTS; i++) {
			snap_seen_t *v = &snap_seen[i];

			if (v->b != b)
				continue;
			if (v->drops != b->drops)
				to = from; /* emptied since: those are gone */
			else if (v->n < to)
				to = v->n;
			if (to < b->n && ncut < SLOTS) /* at most one a slot */
				cut[ncut++] = b->tid;
			v->b = NULL;
			break;
		}
		for (size_t i = 0; i < ncut; i++)
			if (cut[i] == b->tid && to == b->n)
				to = from; /* after its thread's cut */
		if (!past && !err && to > from)
			err = snap_put(fd, b, &b->recs[from], to - from, events);
		write_buf(b);
		__atomic_sub_fetch(&tl_queued, 1, __ATOMIC_RELAXED);
		recycle(b);
	}
	return err;
}

/* A buffer seen in snap_read_slots and not queued since: its records
 * then, copied while its thread goes on, into the copy.  Returns true on
 * a write error. */
static bool
snap_partial(int fd, const snap_seen_t *v, uint64_t *events)
{
	uint32_t from = v->b->written;

	if (v->n <= from)
		return false;
	memcpy(tl_scratch->recs, &v->b->recs[from],
	    (size_t)(v->n - from) * sizeof(tlf_rec_t));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&v->b->drops, __ATOMIC_RELAXED) != v->drops)
		return false; /* emptied meanwhile: dropped, in no file */
	return snap_put(fd, v->b, tl_scratch->recs, v->n - from, events);
}

/* Copies [from, to) of the timeline's file to fd (read back through
 * /proc/self/fd: the file is open for writing only).  Returns true on
 * error (errno set). */
static bool
snap_copy_file(int fd, uint64_t from, uint64_t to)
{
	static char buf[SNAP_COPY];
	int in = tl_reopen();
	bool err = in < 0;

	while (!err && from < to) {
		size_t k = to - from < sizeof(buf) ? (size_t)(to - from) :
		    sizeof(buf);

		err = read_at(in, buf, k, from) ||
		    outfile_write_all(fd, buf, k);
		from += k;
	}
	if (in >= 0)
		close(in);
	return err;
}

/* Snapshot tl_snap_n's copy of the timeline so far, into tl_snap_result:
 * "<CUWARDEN_REPORT>.snap.N.timeline", whole or not at all (outfile.h). */
static void
snap_make(void)
{
	report_timeline_t *res = &tl_snap_result;
	const char *what = NULL;
	outfile_t of;
	tlf_header_t h = tl_header;
	uint64_t events = tl_events, len = tl_bytes;
	bool past = tl_write_error ||
	    __atomic_load_n(&tl_stop, __ATOMIC_RELAXED), err;
	sigset_t all;

	memset(res, 0, sizeof(*res));
	res->limit = tl_limit;
	res->clock = tl_tsc ? "tsc" : "monotonic";
	if (tl_write_error) {
		res->error = "the timeline could not be written";
		return;
	}
	if (tl_snap_bits == NULL) {
		tl_snap_bits = mmap(NULL, STACK_BITS / 8, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tl_snap_bits == MAP_FAILED)
			tl_snap_bits = NULL;
	}
	if (tl_snap_bits == NULL || scratch()) {
		res->error = "no memory for the snapshot's timeline";
		return;
	}
	if (report_timeline_path(tl_snap_name, sizeof(tl_snap_name),
	    tl_snap_n)) {
		res->error = "no name for the snapshot's timeline";
		return;
	}
	sigfillset(&all);
	if (outfile_begin(&of, tl_snap_name, false, &what)) {
		log_warn("snapshot %d: not writing its timeline to %s: %s "
		    "(errno %d)", tl_snap_n, tl_snap_name, what != NULL ? what :
		    "cannot create it", errno);
		res->error = "the snapshot's timeline could not be created";
		return;
	}
	of.saved = all; /* the writer's mask: every signal blocked */
	memcpy(tl_snap_bits, tl_stack_bits, STACK_BITS / 8);
	if (tl_tsc)
		tick_ratio_now(&h);
	snap_read_slots();
	err = outfile_write_all(of.fd, &h, sizeof(h)) ||
	    snap_copy_file(of.fd, sizeof(h), len) ||
	    snap_drain(of.fd, past, &events);
	for (size_t i = 0; i < SLOTS && !err && !past; i++)
		if (snap_seen[i].b != NULL)
			err = snap_partial(of.fd, &snap_seen[i], &events);
	if (err) {
		log_warn("snapshot %d: writing its timeline to %s failed "
		    "(errno %d)", tl_snap_n, tl_snap_name, errno);
		outfile_abort(&of);
		res->error = "the snapshot's timeline could not be written";
		return;
	}
	off_t end = lseek(of.fd, 0, SEEK_CUR);
	if (outfile_commit(&of, tl_snap_name, sizeof(tl_snap_name))) {
		res->error = "the snapshot's timeline could not be put in "
		    "place";
		return;
	}
	res->file = tl_snap_name;
	res->events = events;
	res->dropped = __atomic_load_n(&tl_dropped, __ATOMIC_RELAXED);
	res->bytes = end > 0 ? (uint64_t)end : 0;
	res->limit_reached = tl_limit_reached;
	res->stack_bits = tl_snap_bits;
	res->nstack_bits = STACK_BITS;
	res->after_limit = shim_tls_export(1);
	if (res->after_limit != NULL) /* the stacks it names, since folded */
		memcpy(tl_snap_bits, tl_stack_bits, STACK_BITS / 8);
	res->tick_ns_num = h.tick_ns_num;
	res->tick_ns_den = h.tick_ns_den;
}

/* Answers the snapshot asked for, if one is: made, or (at the end) an
 * error. */
static void
snap_answer(bool ending)
{
	unsigned asked = __atomic_load_n(&tl_snap_asked, __ATOMIC_ACQUIRE);
	uint64_t one = 1;

	if (asked == __atomic_load_n(&tl_snap_made, __ATOMIC_RELAXED))
		return;
	if (ending) {
		memset(&tl_snap_result, 0, sizeof(tl_snap_result));
		tl_snap_result.error = "the process is ending";
	} else {
		snap_make();
	}
	__atomic_store_n(&tl_snap_made, asked, __ATOMIC_RELEASE);
	(void)!write(tl_snap_efd, &one, sizeof(one));
}

static void *
writer_main(void *arg)
{
	uint64_t v;

	(void)arg;
	for (;;) {
		struct pollfd p = { tl_wake, POLLIN, 0 };

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		(void)!read(tl_wake, &v, sizeof(v));
		if (__atomic_load_n(&tl_closing, __ATOMIC_SEQ_CST))
			break;
		drain(DRAIN_RECYCLE);
		snap_answer(false);
	}
	finish();
	snap_answer(true);
	v = 1;
	(void)!write(tl_done, &v, sizeof(v));
	return NULL;
}

/* The file opened and its header written, the writer started, every
 * signal blocked in it.  Returns true on error (logged). */
static bool
writer_start(void)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t all, old;
	const char *what = NULL;
	tlf_header_t h;
	int e;

	if (report_timeline_path(tl_name, sizeof(tl_name), 0))
		return true;
	tl_stack_bits = mmap(NULL, STACK_BITS / 8, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tl_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	tl_done = eventfd(0, EFD_CLOEXEC);
	tl_snap_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (tl_stack_bits == MAP_FAILED || tl_wake < 0 || tl_done < 0 ||
	    tl_snap_efd < 0) {
		log_error("CUWARDEN_TIMELINE: no memory or eventfd (errno %d); "
		    "no timeline", errno);
		return true;
	}
	/* The writer's signals are all blocked: so are outfile's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (outfile_begin(&tl_of, tl_name, false, &what)) {
		e = errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		log_error("not writing the timeline to %s: %s (errno %d)",
		    tl_name, what != NULL ? what : "cannot create it", e);
		return true;
	}
	/* outfile_commit, on the writer, restores this mask: all blocked. */
	tl_of.saved = all;
	if (tl_of.stream) {
		outfile_abort(&tl_of);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		log_error("not writing the timeline to %s: a stream (the "
		    "timeline goes to a file); no timeline", tl_name);
		return true;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TLF_MAGIC, sizeof(h.magic));
	h.version = TLF_VERSION;
	h.header_size = sizeof(h);
	h.record_size = sizeof(tlf_rec_t);
	h.chunk_size = sizeof(tlf_chunk_t);
	h.pid = (uint32_t)getpid();
	h.clock = tl_tsc ? TLF_CLOCK_TSC : TLF_CLOCK_NS;
	h.start_mono_ns = tl_start_mono;
	h.start_real_ns = tl_start_real;
	h.tick_ns_num = h.tick_ns_den = 1; /* the TSC's: at the end */
	tl_header = h;
	tl_bytes = sizeof(h);
	if (outfile_write_all(tl_of.fd, &h, sizeof(h))) {
		outfile_abort(&tl_of);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		log_error("writing the timeline to %s failed (errno %d); no "
		    "timeline", tl_name, errno);
		return true;
	}
	e = pthread_attr_init(&attr);
	if (e == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 << 10);
		e = pthread_create(&tid, &attr, writer_main, NULL);
		pthread_attr_destroy(&attr);
	}
	if (e != 0)
		outfile_abort(&tl_of);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_error("CUWARDEN_TIMELINE: the writer thread cannot start "
		    "(errno %d); no timeline", e);
		return true;
	}
	return false;
}

/* ------------------------------------------------------------ the threads */

static void
thread_gone(void *arg);

static void
once_start(void)
{
	if (pthread_key_create(&tl_key, thread_gone) != 0 || writer_start()) {
		__atomic_store_n(&tl_failed, true, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&tl_started, true, __ATOMIC_RELEASE);
}

/* A buffer for slot s: its spare (written and given back by the writer),
 * else a new mapping.  A thread's second buffer on (busy: true) has its
 * pages faulted in by the one system call rather than one fault every 128
 * records; its first stays lazy, so that a thread of a few events costs a
 * page or two, not 256 KiB. */
static tl_buf_t *
buf_new(tl_slot_t *s, bool busy)
{
	tl_buf_t *b = __atomic_exchange_n(&s->spare, NULL, __ATOMIC_ACQUIRE);

	if (b == NULL) {
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | (busy ? MAP_POPULATE : 0),
		    -1, 0);
		if (b == MAP_FAILED)
			return NULL;
		b->slot = (uint32_t)(s - slots);
	}
	b->tid = (uint32_t)syscall(SYS_gettid);
	return b;
}

/* Counts what b holds as dropped and empties it (its thread's, not
 * queued). */
static void
buf_drop(tl_buf_t *b)
{
	__atomic_add_fetch(&tl_dropped, b->n, __ATOMIC_RELAXED);
	/* A seqlock's writer: the count moves before any record is written
	 * again (snap_partial's copy, taken meanwhile, is then not used). */
	__atomic_store_n(&b->drops, b->drops + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&b->n, 0, __ATOMIC_RELEASE);
}

/* s's buffer old (NULL: none yet) is full, or its thread ends (gone):
 * queued for the writer and a new one taken, or its events dropped when
 * the writer is behind, past the limit, or done.  Returns the buffer to
 * fill, NULL for none. */
static tl_buf_t *
handoff(tl_slot_t *s, tl_buf_t *old, bool gone)
{
	tl_buf_t *nb = NULL;

	__atomic_store_n(&s->busy, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tl_closing, __ATOMIC_SEQ_CST)) {
		/* After the last write: in no file and no report. */
		if (old != NULL && !gone)
			__atomic_store_n(&old->n, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
		return old;
	}
	if (old != NULL && (__atomic_load_n(&tl_drop_all, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&tl_queued, __ATOMIC_RELAXED) >= BUF_QUEUED)) {
		buf_drop(old);
		__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
		return gone ? NULL : old;
	}
	if (!gone && (nb = buf_new(s, old != NULL)) == NULL) {
		if (old != NULL)
			buf_drop(old);
		__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
		return old;
	}
	__atomic_store_n(&s->cur, nb, __ATOMIC_RELEASE);
	if (old != NULL && old->n > 0) {
		tl_buf_t *head = __atomic_load_n(&tl_queue, __ATOMIC_RELAXED);
		uint64_t one = 1;

		do
			old->next = head;
		while (!__atomic_compare_exchange_n(&tl_queue, &head, old,
		    true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
		__atomic_add_fetch(&tl_queued, 1, __ATOMIC_RELAXED);
		(void)!write(tl_wake, &one, sizeof(one));
	} else if (old != NULL) {
		munmap(old, sizeof(*old));
	}
	__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
	return nb;
}

/* The end of a thread that had a slot: its buffer to the writer, its
 * slot free for another thread. */
static void
thread_gone(void *arg)
{
	tl_slot_t *s = arg;

	if (s == NULL || tl_self != s)
		return;
	tl_self = NULL;
	(void)handoff(s, __atomic_load_n(&s->cur, __ATOMIC_RELAXED), true);
	__atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
}

static tl_slot_t *
slot_claim(void)
{
	pthread_once(&tl_once, once_start);
	if (!__atomic_load_n(&tl_started, __ATOMIC_ACQUIRE))
		return NULL;
	for (size_t i = 0; i < SLOTS; i++) {
		int z = 0;

		if (__atomic_load_n(&slots[i].used, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&slots[i].used, &z, 1, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			tl_self = &slots[i];
			(void)pthread_setspecific(tl_key, tl_self);
			return tl_self;
		}
	}
	return NULL;
}

void
shim_tl_put(unsigned ev, const reg_rec_t *r, uint64_t t)
{
	tl_slot_t *s = tl_self;
	tl_buf_t *b;
	tlf_rec_t *x;
	uint32_t n;

	if (unlikely(s == NULL) && (s = slot_claim()) == NULL) {
		__atomic_add_fetch(&tl_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	b = __atomic_load_n(&s->cur, __ATOMIC_RELAXED);
	if (unlikely(b == NULL || b->n == BUF_RECS)) {
		b = handoff(s, b, false);
		if (b == NULL || b->n == BUF_RECS)
			return; /* counted, or after the end */
	}
	n = b->n;
	x = &b->recs[n];
	x->t_ns = t;
	x->addr = r->base;
	x->size = r->size;
	x->stack = r->alloc_stack;
	x->kind = r->kind;
	x->event = (uint8_t)ev;
	x->device = r->device;
	__atomic_store_n(&b->n, n + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ a snapshot's timeline */

const report_timeline_t *
shim_timeline_snapshot(int n)
{
	static report_timeline_t late;
	unsigned req;
	uint64_t v, one = 1;
	struct pollfd p;
	int waited = 0;

	if (!__atomic_load_n(&shim_tl_on, __ATOMIC_ACQUIRE) ||
	    options_get(OPT_REPORT_FORMAT) != CW_FORMAT_JSON)
		return NULL;
	memset(&late, 0, sizeof(late));
	late.limit = tl_limit;
	if (!__atomic_load_n(&tl_started, __ATOMIC_ACQUIRE)) {
		/* No event yet (the writer starts at the first), or none
		 * could start. */
		late.error = __atomic_load_n(&tl_failed, __ATOMIC_RELAXED) ?
		    "the timeline could not be started" : NULL;
		return &late;
	}
	if (__atomic_load_n(&tl_closing, __ATOMIC_SEQ_CST)) {
		late.error = "the process is ending";
		return &late;
	}
	tl_snap_n = n;
	req = __atomic_add_fetch(&tl_snap_asked, 1, __ATOMIC_ACQ_REL);
	(void)!write(tl_wake, &one, sizeof(one));
	p.fd = tl_snap_efd;
	p.events = POLLIN;
	while (__atomic_load_n(&tl_snap_made, __ATOMIC_ACQUIRE) != req &&
	    waited < SNAP_WAIT_MS) {
		p.revents = 0;
		if (poll(&p, 1, 100) > 0)
			(void)!read(tl_snap_efd, &v, sizeof(v));
		waited += 100;
	}
	if (__atomic_load_n(&tl_snap_made, __ATOMIC_ACQUIRE) != req) {
		log_warn("snapshot %d: the timeline's writer did not copy the "
		    "timeline in %d s; the snapshot has none", n,
		    SNAP_WAIT_MS / 1000);
		late.error = "the writer did not copy the timeline in time";
		return &late;
	}
	return &tl_snap_result;
}

/* ------------------------------------------------------------ the end */

const report_timeline_t *
shim_timeline_finish(void)
{
	struct pollfd p;
	int r;

	if (!__atomic_load_n(&shim_tl_on, __ATOMIC_ACQUIRE))
		return NULL;
	tl_result.limit = tl_limit;
	if (__atomic_load_n(&tl_started, __ATOMIC_ACQUIRE))
		tl_result.clock = tl_tsc ? "tsc" : "monotonic";
	if (__atomic_load_n(&tl_started, __ATOMIC_ACQUIRE)) {
		uint64_t one = 1;

		__atomic_store_n(&tl_closing, 1, __ATOMIC_SEQ_CST);
		(void)!write(tl_wake, &one, sizeof(one));
		p.fd = tl_done;
		p.events = POLLIN;
		p.revents = 0;
		do
			r = poll(&p, 1, FINISH_WAIT_MS);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			log_error("the timeline's writer did not finish in %d "
			    "s; no timeline", FINISH_WAIT_MS / 1000);
			tl_result.error = "the writer did not finish in time";
			tl_result.dropped = __atomic_load_n(&tl_dropped,
			    __ATOMIC_RELAXED);
			return &tl_result;
		}
		tl_result.events = tl_events;
		tl_result.bytes = tl_result.file != NULL ? tl_bytes : 0;
		tl_result.limit_reached = tl_limit_reached;
		tl_result.stack_bits = tl_stack_bits;
		tl_result.nstack_bits = STACK_BITS;
		tl_result.after_limit = shim_tls_export(0);
		tl_result.tick_ns_num = tl_header.tick_ns_num;
		tl_result.tick_ns_den = tl_header.tick_ns_den;
	} else if (__atomic_load_n(&tl_failed, __ATOMIC_RELAXED)) {
		tl_result.error = "the timeline could not be started";
	}
	tl_result.dropped = __atomic_load_n(&tl_dropped, __ATOMIC_RELAXED);
	return &tl_result;
}

void
shim_timeline_postfork_child(void)
{
	__atomic_store_n(&shim_tl_on, false, __ATOMIC_RELAXED);
	if (__atomic_load_n(&tl_started, __ATOMIC_ACQUIRE) && tl_of.fd >= 0)
		close(tl_of.fd);
	__atomic_store_n(&tl_started, false, __ATOMIC_RELAXED);
}
