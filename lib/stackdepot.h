/*
 * stackdepot.h -- call stacks, captured raw and kept once.
 *
 * Capture uses libunwind (UNW_LOCAL_ONLY, unw_backtrace) into a caller
 * buffer and never calls malloc.  A stack is stored once (hash of its
 * return addresses) in an append-only depot of mmap'd chunks; it is
 * resolved to (module, offset) frames when first stored, using the loaded
 * modules at that time (so a module dlclose'd later still names its
 * frames).  Modules are kept in a table of (path, build-id hex, load base).
 * Owner: infra.
 */
#ifndef CUWARDEN_STACKDEPOT_H
#define CUWARDEN_STACKDEPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define STACK_MAX_DEPTH 64
/* The depot keeps at most this many bytes of stack records (about a
 * million stacks of 20 frames); a new stack beyond it is not stored. */
#define STACK_DEPOT_MAX_BYTES ((size_t)256 << 20)

typedef struct stack_frame_s {
	uint32_t module;  /* index into the module table; UINT32_MAX = unknown;
	                   * STACK_MODULE_PYTHON: a Python frame */
	uintptr_t offset; /* address - module load base (or the raw address);
	                   * a Python frame's location id (stack_pyloc_get) */
} stack_frame_t;

/* A Python frame (doc/stacks.md, "Python frames"): in a stack it is the
 * token STACK_PY_TAG | location id (an address no code can have); its
 * module is STACK_MODULE_PYTHON. */
#define STACK_MODULE_PYTHON (UINT32_MAX - 1)
#define STACK_PY_TAG ((uintptr_t)0xfe00000000000000ULL)
#define STACK_IS_PY(ip) (((ip) & ~(uintptr_t)0xffffffffULL) == STACK_PY_TAG)

typedef struct stack_module_s {
	const char *path;     /* absolute path as the loader has it ("" = main
	                       * program, resolved through /proc/self/exe) */
	const char *build_id; /* lowercase hex, "" when the module has none */
	uintptr_t base;       /* load base when first seen */
} stack_module_t;

/* Captures the calling thread's stack (skipping `skip` innermost frames
 * besides stack_capture itself), at most CUWARDEN_STACK_DEPTH frames,
 * stores it and returns its id; 0 when depth is 0 or the depot is full.
 * Never calls malloc.  Async-signal-unsafe. */
stack_id_t stack_capture(unsigned skip);
/* The same, keeping at most depth frames (and never more than
 * CUWARDEN_STACK_DEPTH): for stacks that need fewer frames than the
 * allocation stacks, e.g. the free stack of a successful free. */
stack_id_t stack_capture_depth(unsigned skip, unsigned depth);
/* The same, without the innermost frames that are cuwarden's own (those of
 * the object this code is linked into: the shim's hooks and engine, the
 * library): the program's stack at the call it made.  At most 16 of ours
 * are unwound past; for the shim, whose call depth varies by entry
 * point. */
stack_id_t stack_capture_outside(void);
/* The same for a stack the caller already has. */
stack_id_t stack_intern(const uintptr_t *ips, size_t n);

/* Frames of a stack, innermost first.  Returns the count (0 for id 0 or
 * an unknown id). */
size_t stack_get(stack_id_t id, stack_frame_t *frames, size_t max);
size_t stack_get_ips(stack_id_t id, uintptr_t *ips, size_t max);

/* Module table.  Indices are stable for the process's life. */
size_t stack_module_count(void);
bool stack_module_get(uint32_t index, stack_module_t *out); /* true on error */

/* The module of the first frame of id whose module's file name matches
 * none of the patterns (fnmatch on the base name, e.g. "libcuda.so*"),
 * nor the object containing cuwarden itself; UINT32_MAX if every frame
 * matches.  Cached per stack. */
uint32_t stack_first_module_outside(stack_id_t id,
    const char *const *patterns, size_t npatterns);

/* The module index of the object cuwarden itself is linked into;
 * UINT32_MAX until the first stack has been stored. */
uint32_t stack_self_module(void);

/* Python frames (stack_python.c).  A location: file, function (the code
 * object's qualified name), line (0 = none).  true on error (unknown id). */
bool stack_pyloc_get(uint32_t id, const char **file, const char **func,
    int *line);
/* Whether Python frames are captured; *version is "3.11" (or "" when no
 * interpreter was seen), *reason why not ("" when they are, or when this
 * process has no interpreter). */
bool stack_python_status(const char **version, const char **reason);
/* Whether this process has a Python interpreter we looked at (frames on,
 * or off for a reason worth saying). */
bool stack_python_present(void);
/* The file of the first Python frame of id (innermost first) that is in
 * none of the frameworks (doc/stacks.md) and matches none of the patterns
 * on any path component; NULL when none.  The string lives forever. */
const char *stack_python_owner(stack_id_t id, const char *const *patterns,
    size_t npatterns);

size_t stack_count(void);       /* unique stacks stored */
/* Checks every invariant of the depot (tests, debug); aborts on a broken
 * one. */
void stack_validate(void);
size_t stack_bytes(void);       /* bytes the depot uses */
/* New stacks not stored because the depot was full (STACK_DEPOT_MAX_BYTES
 * of records, or 2^22 - 1 stacks): their captures returned 0. */
uint64_t stack_dropped(void);
/* Lowers the byte limit of records (tests); above the default it is the
 * default. */
void stack_set_limit(size_t bytes);

/* Fork: the depot stays valid in the child (it is only read and
 * appended), but its lock must not be held across fork. */
void stack_prefork(void);
void stack_postfork_parent(void);
void stack_postfork_child(void);

#endif /* CUWARDEN_STACKDEPOT_H */
