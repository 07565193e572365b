/*
 * tlformat.h -- the timeline file's layout (doc/report-schema.md, "The
 * timeline file"): the shim writes it (shim/timeline.c), cuwarden-audit
 * reads it (tools/timeline.c).  Only types and constants, no includes but
 * <stdint.h>, so tools/ (which never links libcuwarden) includes it too.
 *
 * A file is one header, then chunks: a chunk header and its records, all
 * of one thread, oldest first.  Integers are in the writing machine's
 * byte order (the header's magic says which).  Owner: shim.
 */
#ifndef CUWARDEN_TLFORMAT_H
#define CUWARDEN_TLFORMAT_H

#include <stdint.h>

#define TLF_MAGIC "CWTIMELN"  /* 8 bytes, no NUL */
#define TLF_VERSION 2 /* 2: the clock, and the TSC's ratio */
#define TLF_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" little-endian */

typedef struct tlf_header_s {
	char magic[8];         /* TLF_MAGIC */
	uint32_t version;      /* TLF_VERSION */
	uint32_t header_size;  /* sizeof(tlf_header_t): 64 */
	uint32_t record_size;  /* sizeof(tlf_rec_t): 32 */
	uint32_t chunk_size;   /* sizeof(tlf_chunk_t): 16 */
	uint32_t pid;
	uint32_t clock;         /* TLF_CLOCK_*: what the records' times
				 * count (version 1: 0, reserved) */
	uint64_t start_mono_ns; /* CLOCK_MONOTONIC at the timeline's start:
				 * the records' times count from it */
	uint64_t start_real_ns; /* CLOCK_REALTIME then (ns since 1970) */
	uint64_t tick_ns_num;   /* TLF_CLOCK_TSC: ns = ticks * num / den, */
	uint64_t tick_ns_den;   /* measured over the run; else 1 and 1 */
} tlf_header_t;

/* The records' clock. */
enum tlf_clock_e {
	TLF_CLOCK_NS = 0,  /* ns of CLOCK_MONOTONIC since start_mono_ns */
	TLF_CLOCK_TSC = 1  /* TSC ticks since start_mono_ns's moment: a
			    * reader converts them with tick_ns_num/den */
};

typedef struct tlf_chunk_s {
	uint32_t magic;  /* TLF_CHUNK_MAGIC */
	uint32_t count;  /* records that follow */
	uint32_t tid;    /* the thread that made them (gettid) */
	uint32_t reserved;
} tlf_chunk_t;

/* What a record says happened. */
enum tlf_event_e {
	TLF_ALLOC = 1,    /* an allocation recorded */
	TLF_FREE = 2,     /* freed by the program */
	TLF_TEARDOWN = 3, /* freed by a context's teardown */
	TLF_GONE = 4,     /* freed behind the shim's back: its address came
			   * back from the driver for a new allocation */
	TLF_EVENT_MAX = 4
};

/* One event.  A free carries the freed allocation's size, kind, device
 * and allocation stack, so a live set is summed without matching
 * addresses. */
typedef struct tlf_rec_s {
	uint64_t t_ns;   /* since start_mono_ns: ns, or TSC ticks (the
			  * header's clock; tools/timeline.c converts) */
	uint64_t addr;   /* base address or handle */
	uint64_t size;   /* bytes of the allocation */
	uint32_t stack;  /* its allocation stack's id (the report's
			  * timeline.stacks), 0: none */
	uint8_t kind;    /* kinds.h's index */
	uint8_t event;   /* enum tlf_event_e */
	int16_t device;  /* -1: none (host memory) */
} tlf_rec_t;

_Static_assert(sizeof(tlf_header_t) == 64, "timeline header: 64 bytes");
_Static_assert(sizeof(tlf_chunk_t) == 16, "timeline chunk header: 16 bytes");
_Static_assert(sizeof(tlf_rec_t) == 32, "timeline record: 32 bytes");

#endif /* CUWARDEN_TLFORMAT_H */
