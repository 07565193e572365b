#include "preamble.h"

/*
 * stackdepot.c -- call stacks, captured raw and kept once.
 *
 * FIRST VERSION (placeholder): capture returns 0 (no stack), nothing is
 * stored.  The depot, module table and libunwind capture land next.
 */

#include "stackdepot.h"

stack_id_t
stack_capture(unsigned skip)
{
	(void)skip;
	return 0;
}

stack_id_t
stack_intern(const uintptr_t *ips, size_t n)
{
	(void)ips;
	(void)n;
	return 0;
}

size_t
stack_get(stack_id_t id, stack_frame_t *frames, size_t max)
{
	(void)id;
	(void)frames;
	(void)max;
	return 0;
}

size_t
stack_get_ips(stack_id_t id, uintptr_t *ips, size_t max)
{
	(void)id;
	(void)ips;
	(void)max;
	return 0;
}

size_t
stack_module_count(void)
{
	return 0;
}

bool
stack_module_get(uint32_t index, stack_module_t *out)
{
	(void)index;
	(void)out;
	return true;
}

uint32_t
stack_first_module_outside(stack_id_t id, const char *const *patterns,
    size_t npatterns)
{
	(void)id;
	(void)patterns;
	(void)npatterns;
	return UINT32_MAX;
}

size_t
stack_count(void)
{
	return 0;
}

size_t
stack_bytes(void)
{
	return 0;
}

void
stack_prefork(void)
{
}

void
stack_postfork_parent(void)
{
}

void
stack_postfork_child(void)
{
}
