/*
 * tp_env.c -- the environment array an earlier constructor saw
 * (libtpenv.so, tp_env_early.c) must still be whole once the shim's
 * constructor has put CUWARDEN_SEE_THROUGH's variables in: a thread of
 * that library may be walking it (getenv).  check_see_env.sh.
 *
 * Prints "N of M entries changed" and the value of
 * PYTORCH_NO_CUDA_MEMORY_CACHING; exits 1 when an entry changed.
 */
#include <stdio.h>
#include <stdlib.h>

extern char **tp_env_before;
extern char *tp_env_copy[];
extern size_t tp_env_n;

int
main(void)
{
	const char *v = getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
	size_t bad = 0;

	for (size_t i = 0; i < tp_env_n; i++)
		bad += tp_env_before[i] != tp_env_copy[i];
	printf("%zu of %zu entries changed\n", bad, tp_env_n);
	printf("PYTORCH_NO_CUDA_MEMORY_CACHING=%s\n", v != NULL ? v : "(unset)");
	return bad != 0;
}
