#include "preamble.h"
/*
 * attribution.c -- who made an allocation: its owner (the first frame of
 * its stack outside CUDA's libraries, ours and CUWARDEN_OWNER_SKIP's
 * patterns; the stack itself is lib's stack_capture_outside, without our
 * own frames), and the cache that keeps it cheap.
 *
 * Locking: none of its own; the caches are direct-mapped words written
 * with relaxed atomics (a lost update costs one more lookup).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "ownerpats.h"

/* Owner patterns: CUDA's own libraries, ours, and CUWARDEN_OWNER_SKIP. */
static const char *owner_pats[MAX_OWNER_PATTERNS];
static size_t nowner_pats;
static char owner_skip_buf[1024];
static owner_id_t module_owner[OWNER_CACHE];
char shim_exe_path[512];

static const char *const cuda_libs[] = { OWNER_CUDA_PATTERNS };

void
shim_init_owner_patterns(void)
{
	size_t n = 0;

	for (size_t i = 0; i < CW_ARRAY_SIZE(cuda_libs); i++)
		owner_pats[n++] = cuda_libs[i];
	const char *skip = options_get_str(OPT_OWNER_SKIP);
	if (skip != NULL) {
		size_t len = strlen(skip);
		if (len >= sizeof(owner_skip_buf)) {
			log_warn("CUWARDEN_OWNER_SKIP is longer than %zu bytes; "
			    "ignored", sizeof(owner_skip_buf) - 1);
			len = 0;
		}
		memcpy(owner_skip_buf, skip, len);
		owner_skip_buf[len] = '\0';
		char *p = owner_skip_buf;
		size_t dropped = 0;
		while (*p != '\0') {
			char *end = strchr(p, ':');
			if (end != NULL)
				*end = '\0';
			if (*p != '\0') {
				if (n < MAX_OWNER_PATTERNS)
					owner_pats[n++] = p;
				else
					dropped++;
			}
			if (end == NULL)
				break;
			p = end + 1;
		}
		if (dropped != 0)
			log_warn("CUWARDEN_OWNER_SKIP: %zu pattern%s past the "
			    "first %zu ignored", dropped, dropped == 1 ? "" :
			    "s", MAX_OWNER_PATTERNS - CW_ARRAY_SIZE(cuda_libs));
	}
	nowner_pats = n;
}

static owner_id_t
intern_path(const char *path)
{
	owner_id_t id = owner_intern(path);

	if (id == 0) {
		/* Too long for an owner name: keep the file name. */
		const char *slash = strrchr(path, '/');
		if (slash != NULL)
			id = owner_intern(slash + 1);
	}
	return id;
}

/* The owner of an allocation made with stack st: the module of its first
 * frame outside CUDA's own libraries (and ours). */
/* stack id -> owner, direct-mapped, one 64-bit word per entry (stack id
 * high, owner low) so a reader never sees half an entry. */
#define STACK_OWNER_CACHE 4096
static uint64_t stack_owner[STACK_OWNER_CACHE];

static owner_id_t
owner_of_uncached(stack_id_t st)
{
	/* Made from Python: the first script outside the frameworks
	 * (doc/stacks.md, "Python frames"), not the interpreter. */
	const char *py = stack_python_owner(st, owner_pats, nowner_pats);
	if (py != NULL)
		return intern_path(py);
	uint32_t m = stack_first_module_outside(st, owner_pats, nowner_pats);
	if (m == UINT32_MAX)
		return 0;
	if (m < OWNER_CACHE) {
		owner_id_t id = __atomic_load_n(&module_owner[m],
		    __ATOMIC_RELAXED);
		if (id != 0)
			return id;
	}
	stack_module_t mod;
	if (stack_module_get(m, &mod))
		return 0;
	const char *path = mod.path;
	if (path == NULL || path[0] == '\0')
		path = shim_exe_path;
	if (path[0] == '\0')
		return 0;
	owner_id_t id = intern_path(path);
	if (m < OWNER_CACHE && id != 0)
		__atomic_store_n(&module_owner[m], id, __ATOMIC_RELAXED);
	return id;
}

owner_id_t
shim_owner_of(stack_id_t st)
{
	if (st == 0)
		return 0;
	uint64_t *slot = &stack_owner[st % STACK_OWNER_CACHE];
	uint64_t e = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if ((stack_id_t)(e >> 32) == st)
		return (owner_id_t)e;
	owner_id_t id = owner_of_uncached(st);
	__atomic_store_n(slot, (uint64_t)st << 32 | id, __ATOMIC_RELAXED);
	return id;
}
