/*
 * seethrough.h -- "seeing through the caches" (cuwarden-audit
 * --see-through, CUWARDEN_SEE_THROUGH=1): the environment that turns the
 * frameworks' caching allocators off, so that every tensor or array is
 * one CUDA allocation the shim sees, and pool mode on, so that the run
 * stays fast.  One table, used by the tool (tools/run_see.c) and by the
 * shim alone (shim/seethrough.c); doc/audit.md ("Seeing through the
 * caches") says why each line is there.  Header only: the tool links no
 * lib/ code.
 *
 * A variable already set (to any value, empty included) is kept: the
 * user's choice wins, and is said.
 */
#ifndef CUWARDEN_SEETHROUGH_H
#define CUWARDEN_SEETHROUGH_H

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* X(variable, value, framework, what the value does) */
#define SEE_THROUGH_VARS(X) \
	X("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync", "PyTorch", \
	    "caching allocator off: a cudaMallocAsync per tensor, " \
	    "stream-ordered, as fast as the cache") \
	X("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", "PyTorch", \
	    "where PYTORCH_CUDA_ALLOC_CONF is kept: no cache, a cudaMalloc " \
	    "per tensor") \
	X("XLA_PYTHON_CLIENT_ALLOCATOR", "platform", "JAX", \
	    "BFC allocator off: an allocation per buffer") \
	X("XLA_PYTHON_CLIENT_PREALLOCATE", "false", "JAX", \
	    "no preallocated 75% of the GPU") \
	X("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "0", "Numba", \
	    "deallocations not batched: each array freed when it dies") \
	X("CUWARDEN_MODE", "pool", "cuwarden", \
	    "pool mode: the allocations served fast")

/* CuPy has no variable for its memory pools: a sitecustomize.py turns
 * them off when cupy is imported (preload/python/sitecustomize.py).  Its
 * directory goes first on PYTHONPATH; it is found beside the shim, at
 * each of these paths relative to the shim's directory, in order:
 * installed (<pkglibdir>/python), then the build tree (preload/.libs/../
 * python, copied there by make). */
#define SEE_THROUGH_HOOK_DIRS { "python", "../python" }
#define SEE_THROUGH_HOOK_FILE "sitecustomize.py"
#define SEE_THROUGH_PATHVAR "PYTHONPATH"
/* How the hook's first line starts: a sitecustomize.py without it (some
 * other package's, in a "python" directory near where the shim was
 * installed) is never put first on PYTHONPATH. */
#define SEE_THROUGH_HOOK_MARK "# cuwarden see-through "

/* Whether the file at path is our hook: its first bytes are the mark.  No
 * allocation (the shim calls it from its constructor). */
static inline bool
see_hook_is_ours(const char *path)
{
	char head[sizeof(SEE_THROUGH_HOOK_MARK) - 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n == (ssize_t)sizeof(head) &&
	    memcmp(head, SEE_THROUGH_HOOK_MARK, sizeof(head)) == 0;
}

/* Whether dir is one of the ':'-separated elements of list. */
static inline bool
see_path_has(const char *list, const char *dir)
{
	size_t n = strlen(dir);
	const char *p = list;

	for (;;) {
		if (strncmp(p, dir, n) == 0 && (p[n] == ':' || p[n] == '\0'))
			return true;
		if ((p = strchr(p, ':')) == NULL)
			return false;
		p++;
	}
}

#endif /* CUWARDEN_SEETHROUGH_H */
