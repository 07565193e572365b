#include "preamble.h"

/*
 * stack_python.c -- the Python frames of the calling thread (CPython 3.11,
 * 3.12 and 3.13), read from the interpreter's own structures without the GIL
 * and without calling Python code; doc/stacks.md, "Python frames".
 *
 * Finding the interpreter: the dynamic symbol tables of the loaded
 * objects are read once (our own walk over DT_GNU_HASH / DT_HASH, not
 * dlsym, whose failure path mallocs and which the shim interposes) for
 * Py_Version, PyGILState_GetThisThreadState, PyCode_Type, PyUnicode_Type,
 * PyBytes_Type and _PyEval_EvalFrameDefault (with its size).  The object
 * holding them is then kept loaded (dlopen RTLD_NOLOAD | RTLD_NODELETE):
 * every capture calls into it, after a program's dlclose too.
 *
 * The thread's state: PyGILState_GetThisThreadState is a pthread key
 * read (no GIL, no allocation, no Python code); the state it returns is
 * this thread's own, which only this thread frees, and its frame chain is
 * only changed by this thread -- which is here, inside a call out of the
 * interpreter (ctypes releases the GIL around it, the chain stays).  So the
 * reads below race with nothing; still every pointer is checked for
 * plausibility and every code object by its type before it is used, the
 * chain is bounded, and the layout is checked once with reads that cannot
 * fault (process_vm_readv) before the first direct read: a wrong offset
 * table turns Python frames off with a reason instead of crashing.
 *
 * Frames are tokens in the depot (STACK_PY_TAG | location id); a location
 * (file, function, line) is resolved once per (code object, instruction
 * offset) while the frame -- and so the code object -- is alive, and
 * kept in depot memory.  A direct-mapped cache maps (code, offset) to the
 * location without a lock; a miss resolves under the depot's lock.
 *
 * Locking: the depot's lock (stack_depot_lock) for resolution and the
 * tables; lookups of a cached (code, offset) take no lock.
 */

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fmt.h"
#include "hash.h"
#include "options.h"
#include "stackdepot_int.h"

/* The layout of one CPython minor version: byte offsets. */
typedef struct pylayout_s {
	unsigned minor;
	unsigned ts_cframe;     /* PyThreadState.cframe (3.13: current_frame) */
	unsigned ts_thread_id;  /* PyThreadState.thread_id (pthread_t) */
	unsigned cf_current;    /* _PyCFrame.current_frame; NO_CFRAME: none */
	unsigned fr_code;       /* _PyInterpreterFrame.f_code (f_executable) */
	unsigned fr_previous;
	unsigned fr_prev_instr; /* prev_instr (3.13: instr_ptr) */
	unsigned fr_is_entry;   /* 3.11; 0 = none */
	unsigned fr_owner;
	unsigned co_filename, co_qualname, co_linetable, co_firstlineno;
	unsigned co_firsttraceable, co_code;
	unsigned str_ascii_data;   /* sizeof(PyASCIIObject) */
	unsigned str_compact_data; /* sizeof(PyCompactUnicodeObject) */
} pylayout_t;

#define NO_CFRAME 0xffffu

/* From Include/internal/pycore_frame.h, Include/cpython/code.h, pystate.h
 * and unicodeobject.h of each version (offsetof against the headers of
 * 3.11.2, 3.11.7, 3.12.1 and 3.13.0; doc/stacks.md).  3.12: f_code first,
 * FRAME_OWNED_BY_CSTACK entry frames, no wstr in str objects.  3.13: no
 * _PyCFrame (the state holds current_frame), f_executable and instr_ptr
 * (the instruction executing, as prev_instr was during a call). */
static const pylayout_t layouts[] = {
	{ 11, 56, 152, 8, 32, 48, 56, 68, 69, 112, 128, 136, 72, 168, 184, 48,
	    72 },
	{ 12, 56, 136, 0, 0, 8, 56, 0, 70, 112, 128, 136, 68, 176, 192, 40,
	    56 },
	{ 13, 72, 152, NO_CFRAME, 0, 8, 56, 0, 70, 112, 128, 136, 68, 184, 200,
	    40, 56 },
};

#define OWNED_BY_GENERATOR 1
#define OWNED_BY_CSTACK 3 /* 3.12, 3.13 */
#define PY_CHAIN_MAX 1024 /* frames walked at most */
#define PY_NAME_MAX 1024  /* bytes of a file or function name kept */

enum { PY_UNKNOWN, PY_BUSY, PY_ON, PY_OFF };

static int py_state;               /* atomic: PY_* */
static const pylayout_t *lay;
static const char *py_reason = ""; /* why off (static text) */
static char py_reason_buf[64];
static char py_version[16];        /* "3.11" */
static void *(*get_tstate)(void);
static int (*is_initialized)(void);
static uintptr_t code_type, unicode_type, bytes_type;
static uintptr_t eval_lo, eval_hi;

/* ------------------------------------------------------ symbol lookup */

enum { SYM_VERSION, SYM_TSTATE, SYM_INIT, SYM_CODE, SYM_UNICODE, SYM_BYTES,
	SYM_EVAL, SYM_COUNT };
static const char *const sym_names[SYM_COUNT] = { "Py_Version",
	"PyGILState_GetThisThreadState", "Py_IsInitialized", "PyCode_Type",
	"PyUnicode_Type", "PyBytes_Type", "_PyEval_EvalFrameDefault" };

typedef struct symfind_s {
	uintptr_t addr[SYM_COUNT];
	size_t size[SYM_COUNT];
	bool found_any;
	const char *object; /* the interpreter's object ("": the program) */
} symfind_t;

/* A dynamic entry's address: glibc relocates most of them in place, some
 * loaders (and the vDSO) do not. */
static uintptr_t
dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

/* The number of symbols of a DT_GNU_HASH table: past the last chain of
 * the highest bucket. */
static size_t
gnu_nsyms(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoff = h[1], bloom = h[2];
	const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;

	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoff)
		return symoff;
	while ((chain[last - symoff] & 1) == 0)
		last++;
	return last + 1;
}

static int
sym_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	symfind_t *sf = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gnu = NULL, *sysv = NULL;
	size_t nsyms;

	(void)size;
	if (info->dlpi_name != NULL && strstr(info->dlpi_name, "vdso") != NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
			    info->dlpi_phdr[i].p_vaddr);
	if (dyn == NULL)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t a = dyn_addr(info, dyn->d_un.d_ptr);

		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)a;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)a;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)a;
		else if (dyn->d_tag == DT_HASH)
			sysv = (const uint32_t *)a;
	}
	if (symtab == NULL || strtab == NULL || (gnu == NULL && sysv == NULL))
		return 0;
	nsyms = gnu != NULL ? gnu_nsyms(gnu) : sysv[1];
	for (size_t i = 0; i < nsyms; i++) {
		const ElfW(Sym) *s = &symtab[i];
		const char *nm;

		if (s->st_shndx == SHN_UNDEF || s->st_value == 0)
			continue;
		nm = strtab + s->st_name;
		if (nm[0] != 'P' && nm[0] != '_')
			continue;
		for (int k = 0; k < SYM_COUNT; k++) {
			if (sf->addr[k] != 0 || strcmp(nm, sym_names[k]) != 0)
				continue;
			sf->addr[k] = info->dlpi_addr + s->st_value;
			sf->size[k] = s->st_size;
			sf->found_any = true;
		}
	}
	/* The interpreter is one object: stop once it was found. */
	if (sf->addr[SYM_TSTATE] == 0)
		return 0;
	sf->object = info->dlpi_name;
	return 1;
}

/* ------------------------------------------------------------ reading */

static inline bool
ptr_ok(uintptr_t p)
{
	return p >= 4096 && p < ((uintptr_t)1 << 47) && (p & 7) == 0;
}

static inline uintptr_t
rd_ptr(uintptr_t p)
{
	return *(const uintptr_t *)p;
}

/* A read that cannot fault (for the layout check): true on error. */
static bool
safe_read(uintptr_t addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)n;
}

static bool
safe_ptr(uintptr_t addr, uintptr_t *out)
{
	return !ptr_ok(addr) || safe_read(addr, out, sizeof(*out));
}

/* Checks the layout on this thread's chain with reads that cannot fault:
 * the state is this thread's, every frame's code object has PyCode_Type's
 * address as its type.  Returns NULL when it holds (*seen: code frames
 * checked; none yet: check again next time), else the reason. */
static const char *
layout_check(uintptr_t ts, unsigned *seen)
{
	uintptr_t cf, fr, code, type, tid;
	unsigned k = 0;

	*seen = 0;
	errno = 0;
	if (safe_ptr(ts + lay->ts_thread_id, &tid))
		return errno == ENOSYS || errno == EPERM ?
		    "layout not checked: process_vm_readv refused" :
		    "thread state unreadable";
	/* The key holds the state bound to this thread: another thread id
	 * says the offsets are wrong. */
	if (tid != (uintptr_t)pthread_self())
		return "thread state layout check failed";
	if (safe_ptr(ts + lay->ts_cframe, &cf))
		return "thread state unreadable";
	if (cf == 0)
		return NULL;
	if (lay->cf_current == NO_CFRAME)
		fr = cf;
	else if (safe_ptr(cf + lay->cf_current, &fr))
		return "frame chain unreadable";
	for (; fr != 0 && k < 64; k++) {
		uint8_t owner;

		if (!ptr_ok(fr) || safe_read(fr + lay->fr_owner, &owner, 1))
			return "frame unreadable";
		if (!(lay->minor >= 12 && owner == OWNED_BY_CSTACK)) {
			if (safe_ptr(fr + lay->fr_code, &code) ||
			    safe_ptr(code + 8, &type) || type != code_type)
				return "frame layout check failed";
			(*seen)++;
		}
		if (safe_ptr(fr + lay->fr_previous, &fr))
			return "frame chain unreadable";
	}
	return NULL;
}

/* ------------------------------------------------------------- set up */

static void
set_off(const char *reason)
{
	py_reason = reason;
	__atomic_store_n(&py_state, PY_OFF, __ATOMIC_RELEASE);
}

/* Finds the interpreter once.  Only one caller does the work; a racing
 * caller takes no Python frames this once. */
static void
py_setup(void)
{
	int expect = PY_UNKNOWN;
	symfind_t sf;
	uint32_t ver;
	const char *test;

	if (!__atomic_compare_exchange_n(&py_state, &expect, PY_BUSY, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	memset(&sf, 0, sizeof(sf));
	dl_iterate_phdr(sym_cb, &sf);
	if (sf.addr[SYM_TSTATE] == 0) {
		set_off(""); /* no interpreter: nothing to say */
		return;
	}
	if (!options_get(OPT_PYTHON_FRAMES)) {
		set_off("CUWARDEN_PYTHON_FRAMES=0");
		return;
	}
	ver = sf.addr[SYM_VERSION] != 0 ?
	    *(const uint32_t *)sf.addr[SYM_VERSION] : 0;
	/* Test hook (cuwarden(7)): pretend to be another version. */
	test = options_get_str(OPT_PYTHON_TEST_VERSION);
	if (test != NULL && test[0] != '\0')
		ver = (uint32_t)strtoul(test, NULL, 0);
	if (ver == 0) {
		set_off("python before 3.11 not supported");
		return;
	}
	fmt_snprintf(py_version, sizeof(py_version), "%u.%u", ver >> 24,
	    (ver >> 16) & 0xff);
	for (size_t i = 0; i < CW_ARRAY_SIZE(layouts); i++)
		if (ver >> 24 == 3 && ((ver >> 16) & 0xff) == layouts[i].minor)
			lay = &layouts[i];
	if (lay == NULL) {
		fmt_snprintf(py_reason_buf, sizeof(py_reason_buf),
		    "python %s not supported", py_version);
		set_off(py_reason_buf);
		return;
	}
	if (sf.addr[SYM_CODE] == 0 || sf.addr[SYM_UNICODE] == 0 ||
	    sf.addr[SYM_BYTES] == 0 || sf.addr[SYM_INIT] == 0) {
		set_off("python type objects not found");
		return;
	}
	code_type = sf.addr[SYM_CODE];
	unicode_type = sf.addr[SYM_UNICODE];
	bytes_type = sf.addr[SYM_BYTES];
	eval_lo = sf.addr[SYM_EVAL];
	eval_hi = eval_lo + sf.size[SYM_EVAL];
	get_tstate = (void *(*)(void))sf.addr[SYM_TSTATE];
	is_initialized = (int (*)(void))sf.addr[SYM_INIT];
	/* Every capture calls into the interpreter (Py_IsInitialized, the
	 * state's key) and reads its types: a libpython that a program
	 * dlopen'ed and dlclose's after Py_Finalize must stay mapped, or the
	 * next capture jumps into unmapped memory.  One more reference, never
	 * dropped, and RTLD_NODELETE, keep it (once, here: dlopen may malloc).
	 * The program itself ("") is never unloaded. */
	if (sf.object != NULL && sf.object[0] != '\0' &&
	    dlopen(sf.object, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) == NULL) {
		set_off("python library cannot be kept loaded");
		return;
	}
	if (!stack_pyloc_setup()) {
		set_off("out of memory");
		return;
	}
	/* The layout is checked on the first chain seen (py_capture). */
	__atomic_store_n(&py_state, PY_ON, __ATOMIC_RELEASE);
}

static int layout_checked; /* atomic: 0 no, 1 yes */
static bool py_disabled;   /* atomic: stack_python_set_enabled */

bool
stack_python_status(const char **version, const char **reason)
{
	int s = __atomic_load_n(&py_state, __ATOMIC_ACQUIRE);

	*version = py_version;
	*reason = s == PY_OFF ? py_reason : "";
	return s == PY_ON;
}

bool
stack_python_present(void)
{
	int s = __atomic_load_n(&py_state, __ATOMIC_ACQUIRE);

	return s == PY_ON || (s == PY_OFF && py_reason[0] != '\0');
}

/* ---------------------------------------------------------- locations */

/* str -> UTF-8 into buf (at most size - 1 bytes, NUL-terminated); "?"
 * when it is not an exact str we can read. */
static void
read_str(uintptr_t o, char *buf, size_t size)
{
	uint32_t state;
	unsigned kind;
	intptr_t len;
	uintptr_t data;
	size_t n = 0;

	strcpy(buf, "?");
	if (!ptr_ok(o) || rd_ptr(o + 8) != unicode_type)
		return;
	len = *(const intptr_t *)(o + 16);
	state = *(const uint32_t *)(o + 32);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || len < 0)
		return; /* not compact: no code object names one */
	data = o + (((state >> 6) & 1) ? lay->str_ascii_data :
	    lay->str_compact_data);
	for (intptr_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? ((const uint8_t *)data)[i] :
		    kind == 2 ? ((const uint16_t *)data)[i] :
		    ((const uint32_t *)data)[i];
		char u[4];
		size_t k;

		if (c < 0x80) {
			u[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | c >> 6);
			u[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | c >> 12);
			u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			u[0] = (char)(0xf0 | (c >> 18 & 7));
			u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k >= size)
			break;
		memcpy(buf + n, u, k);
		n += k;
	}
	buf[n] = '\0';
}

static unsigned
varint(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	unsigned v = 0, shift = 0;
	uint8_t b;

	do {
		if (p >= end || shift > 28)
			break;
		b = *p++;
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*pp = p;
	return v;
}

static int
svarint(const uint8_t **pp, const uint8_t *end)
{
	unsigned u = varint(pp, end);

	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/* The line of the instruction at `addr` (code units) from the location
 * table of 3.11-3.13 (InternalDocs/locations.md: entries of a first byte
 * 1cccclll -- code c, length l + 1 code units -- then code-specific
 * varints).  0 when the instruction has no line. */
int
stack_py_line(const uint8_t *p, size_t len, int firstline, unsigned addr)
{
	const uint8_t *end = p + len;
	int line = firstline;
	unsigned pos = 0;

	while (p < end) {
		uint8_t b = *p++;
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1u;
		bool none = false;

		if (!(b & 0x80))
			return 0; /* not at an entry: torn or unknown */
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			line += svarint(&p, end);
			(void)varint(&p, end);
			(void)varint(&p, end);
			(void)varint(&p, end);
			break;
		case 13:
			line += svarint(&p, end);
			break;
		case 10: case 11: case 12:
			line += (int)code - 10;
			p += 2;
			break;
		default:
			p += 1;
			break;
		}
		if (addr < pos + n)
			return none || line < 0 ? 0 : line;
		pos += n;
	}
	return 0;
}

/* Resolves (code, offset) to a location id; under the depot's lock. */
static uint32_t
resolve(uintptr_t code, unsigned off)
{
	char file[PY_NAME_MAX], func[PY_NAME_MAX];
	uintptr_t lt = rd_ptr(code + lay->co_linetable);
	uintptr_t qn = rd_ptr(code + lay->co_qualname);
	int first = *(const int *)(code + lay->co_firstlineno), line = 0;

	read_str(rd_ptr(code + lay->co_filename), file, sizeof(file));
	read_str(qn, func, sizeof(func));
	if (ptr_ok(lt) && rd_ptr(lt + 8) == bytes_type) {
		intptr_t n = *(const intptr_t *)(lt + 16);

		if (n > 0 && n < (1 << 26))
			line = stack_py_line((const uint8_t *)(lt + 32),
			    (size_t)n, first, off);
	}
	return stack_pyloc_intern(file, func, line);
}

/* The (code, offset) -> location cache: direct-mapped, lock-free to
 * read.  A writer (under the depot's lock) clears `code`, writes the rest,
 * then publishes `code`; a reader loads `code`, the rest, then `code`
 * again.  `check` (the code object's line table: a bytes object of its
 * own, on the cache line the walk reads anyway) tells a code object from
 * a later one at the same address. */
#define PYC_SLOTS (1u << 14)
typedef struct pyc_s {
	uintptr_t code;
	uint64_t off_loc; /* offset << 32 | location id */
	uintptr_t check;
} pyc_t;
static pyc_t pyc[PYC_SLOTS];

static inline uint32_t
pyc_slot(uintptr_t code, unsigned off)
{
	uint64_t h = ((uint64_t)code >> 4) * 0x9e3779b97f4a7c15ULL ^ off *
	    0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 40) & (PYC_SLOTS - 1);
}

static uint32_t
location_of(uintptr_t code, unsigned off)
{
	pyc_t *e = &pyc[pyc_slot(code, off)];
	uintptr_t check = rd_ptr(code + lay->co_linetable);
	uintptr_t c1 = __atomic_load_n(&e->code, __ATOMIC_ACQUIRE);
	uint64_t ol = __atomic_load_n(&e->off_loc, __ATOMIC_ACQUIRE);
	uintptr_t ck = __atomic_load_n(&e->check, __ATOMIC_ACQUIRE);
	uint32_t loc;

	if (c1 == code && (uint32_t)(ol >> 32) == off && ck == check &&
	    __atomic_load_n(&e->code, __ATOMIC_ACQUIRE) == code)
		return (uint32_t)ol;
	stack_depot_lock();
	loc = resolve(code, off);
	if (loc != 0) {
		__atomic_store_n(&e->code, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&e->off_loc, (uint64_t)off << 32 | loc,
		    __ATOMIC_RELEASE);
		__atomic_store_n(&e->check, check, __ATOMIC_RELEASE);
		__atomic_store_n(&e->code, code, __ATOMIC_RELEASE);
	}
	stack_depot_unlock();
	return loc;
}

/* ------------------------------------------------------------ capture */

size_t
stack_python_capture(uintptr_t *out, size_t max, uint16_t *ends,
    size_t *nends, size_t maxends)
{
	int s = __atomic_load_n(&py_state, __ATOMIC_ACQUIRE);
	uintptr_t ts, cf, fr;
	size_t n = 0, g = 0;

	*nends = 0;
	if (unlikely(s != PY_ON)) {
		if (s != PY_UNKNOWN)
			return 0;
		py_setup();
		if (__atomic_load_n(&py_state, __ATOMIC_ACQUIRE) != PY_ON)
			return 0;
	}
	if (unlikely(__atomic_load_n(&py_disabled, __ATOMIC_RELAXED)))
		return 0;
	/* Before Py_Initialize (a program embedding Python) and after
	 * Py_Finalize the state's pthread key is not the interpreter's. */
	if (!is_initialized())
		return 0;
	ts = (uintptr_t)get_tstate();
	if (!ptr_ok(ts))
		return 0;
	if (unlikely(!__atomic_load_n(&layout_checked, __ATOMIC_ACQUIRE))) {
		unsigned seen;
		const char *why = layout_check(ts, &seen);

		if (why != NULL) {
			set_off(why);
			return 0;
		}
		if (seen == 0)
			return 0; /* nothing verified yet: no frames this time */
		__atomic_store_n(&layout_checked, 1, __ATOMIC_RELEASE);
	}
	if (rd_ptr(ts + lay->ts_thread_id) != (uintptr_t)pthread_self())
		return 0; /* a state of another thread: never walked */
	cf = rd_ptr(ts + lay->ts_cframe);
	if (lay->cf_current == NO_CFRAME)
		fr = cf;
	else if (!ptr_ok(cf))
		return 0;
	else
		fr = rd_ptr(cf + lay->cf_current);
	for (unsigned k = 0; fr != 0 && k < PY_CHAIN_MAX && n < max; k++) {
		uint8_t owner;
		uintptr_t code, instr, first;
		bool entry;

		if (!ptr_ok(fr))
			break;
		owner = *(const uint8_t *)(fr + lay->fr_owner);
		if (lay->minor >= 12 && owner == OWNED_BY_CSTACK) {
			/* The entry frame of an _PyEval_EvalFrameDefault. */
			if (g < maxends && n > (g > 0 ? ends[g - 1] : 0u))
				ends[g++] = (uint16_t)n;
			fr = rd_ptr(fr + lay->fr_previous);
			continue;
		}
		code = rd_ptr(fr + lay->fr_code);
		if (!ptr_ok(code) || rd_ptr(code + 8) != code_type)
			break;
		entry = lay->fr_is_entry != 0 &&
		    *(const uint8_t *)(fr + lay->fr_is_entry) != 0;
		instr = rd_ptr(fr + lay->fr_prev_instr);
		first = code + lay->co_code;
		/* Incomplete frames (not yet started) are not shown, as
		 * CPython's own _PyFrame_IsIncomplete. */
		if (owner == OWNED_BY_GENERATOR || instr >= first + 2 *
		    (uintptr_t)*(const int *)(code + lay->co_firsttraceable)) {
			uintptr_t size = rd_ptr(code + 16); /* code units */
			unsigned off = instr >= first && (instr - first) / 2 <
			    size ? (unsigned)((instr - first) / 2) : 0;
			uint32_t loc = location_of(code, off);

			if (loc != 0)
				out[n++] = STACK_PY_TAG | loc;
		}
		if (entry && g < maxends && n > (g > 0 ? ends[g - 1] : 0u))
			ends[g++] = (uint16_t)n;
		fr = rd_ptr(fr + lay->fr_previous);
	}
	if (n > 0 && g < maxends && (g == 0 || ends[g - 1] < n))
		ends[g++] = (uint16_t)n;
	*nends = g;
	return n;
}

void
stack_python_set_enabled(bool on)
{
	__atomic_store_n(&py_disabled, !on, __ATOMIC_RELAXED);
}

bool
stack_python_is_eval(uintptr_t ret)
{
	return ret - 1 >= eval_lo && ret - 1 < eval_hi;
}

/* --------------------------------------------------------------- owner */

/* Frameworks whose Python files are never owners (doc/stacks.md): a file
 * is skipped when one of its path's directories or its name matches. */
static const char *const py_frameworks[] = { "torch", "jax", "jaxlib",
	"cupy", "cupyx", "numba", "triton", "tensorflow", "keras", "flax",
	"pycuda", "cuda", "rmm", "cudf", "transformers", "accelerate",
	"deepspeed", "apex", "ctypes", "importlib", "<*>" };

static bool
component_matches(const char *path, const char *const *pats, size_t npats)
{
	char comp[256];
	const char *p = path;

	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);

		if (len > 0 && len < sizeof(comp)) {
			memcpy(comp, p, len);
			comp[len] = '\0';
			for (size_t k = 0; k < npats; k++)
				if (pats[k] != NULL &&
				    fnmatch(pats[k], comp, 0) == 0)
					return true;
		}
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	return false;
}

const char *
stack_python_owner(stack_id_t id, const char *const *patterns,
    size_t npatterns)
{
	srec_t *r = stack_rec(id);

	if (r == NULL)
		return NULL;
	for (uint32_t i = 0; i < r->n; i++) {
		const char *file, *func;
		int line;

		if (!STACK_IS_PY(r->ips[i]) || stack_pyloc_get((uint32_t)
		    (r->ips[i] & ~STACK_PY_TAG), &file, &func, &line))
			continue;
		if (file[0] == '\0' || file[0] == '?' ||
		    component_matches(file, py_frameworks,
		    CW_ARRAY_SIZE(py_frameworks)) ||
		    component_matches(file, patterns, npatterns))
			continue;
		return file;
	}
	return NULL;
}

/* ---------------------------------------------------------- location table */

/* Locations (file, function, line), each kept once, ids 1, 2, 3 ...;
 * names interned.  All in depot memory and MAP_NORESERVE tables, never
 * freed; written under the depot's lock, read without (an id is
 * published, release, after its entry is written). */
#define PYLOC_MAX (1u << 20)
#define PYLOC_HASH (1u << 21)
#define PYSTR_HASH (1u << 18)

typedef struct pyloc_s {
	const char *file, *func;
	int line;
} pyloc_t;

static pyloc_t *locs;
static uint32_t *loc_hash;
static const char **str_hash;
static uint32_t nlocs; /* atomic: ids used 1 .. nlocs */
static size_t nstrs;

bool
stack_pyloc_setup(void)
{
	bool ok;

	stack_depot_lock();
	if (locs == NULL) {
		locs = stack_map_zero(PYLOC_MAX * sizeof(*locs));
		loc_hash = stack_map_zero(PYLOC_HASH * sizeof(*loc_hash));
		str_hash = stack_map_zero(PYSTR_HASH * sizeof(*str_hash));
	}
	ok = locs != NULL && loc_hash != NULL && str_hash != NULL;
	stack_depot_unlock();
	return ok;
}

static uint64_t
str_hash_of(const char *s)
{
	uint64_t h = HASH_GOLDEN;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return hash_mix64(h);
}

/* The interned copy of s, NULL when full.  Under the depot's lock. */
static const char *
str_intern(const char *s)
{
	uint64_t h = str_hash_of(s);

	for (uint32_t i = 0; i < PYSTR_HASH; i++) {
		const char **e = &str_hash[(h + i) & (PYSTR_HASH - 1)];

		if (*e == NULL) {
			if (nstrs >= PYSTR_HASH / 2)
				return NULL;
			*e = stack_depot_strdup(s);
			if (*e != NULL)
				nstrs++;
			return *e;
		}
		if (strcmp(*e, s) == 0)
			return *e;
	}
	return NULL;
}

uint32_t
stack_pyloc_intern(const char *file, const char *func, int line)
{
	const char *f = str_intern(file), *fn = str_intern(func);
	uint64_t h;

	if (f == NULL || fn == NULL)
		return 0;
	h = hash_mix64((uint64_t)(uintptr_t)f * 31 ^
	    (uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ULL ^ (uint64_t)line);
	for (uint32_t i = 0; i < PYLOC_HASH; i++) {
		uint32_t *e = &loc_hash[(h + i) & (PYLOC_HASH - 1)];
		uint32_t id = *e;

		if (id == 0) {
			id = nlocs + 1;
			if (id >= PYLOC_MAX)
				return 0;
			locs[id].file = f;
			locs[id].func = fn;
			locs[id].line = line;
			*e = id;
			__atomic_store_n(&nlocs, id, __ATOMIC_RELEASE);
			return id;
		}
		if (locs[id].file == f && locs[id].func == fn &&
		    locs[id].line == line)
			return id;
	}
	return 0;
}

bool
stack_pyloc_get(uint32_t id, const char **file, const char **func,
    int *line)
{
	if (id == 0 || id > __atomic_load_n(&nlocs, __ATOMIC_ACQUIRE))
		return true;
	*file = locs[id].file;
	*func = locs[id].func;
	*line = locs[id].line;
	return false;
}
