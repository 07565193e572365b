/*
 * preamble.h -- included first by every .c of lib/, shim/ and preload/.
 * Configure results as constants (jemalloc style), so code reads
 * `if (config_debug)` rather than #ifdef.
 */
#ifndef CUWARDEN_PREAMBLE_H
#define CUWARDEN_PREAMBLE_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static const bool config_debug = CW_DEBUG;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* A busy-wait's pause between polls. */
#if defined(__x86_64__) || defined(__i386__)
#define cw_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cw_cpu_relax() __asm__ __volatile__("yield")
#else
#define cw_cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif
#define CW_TLS __thread __attribute__((tls_model("initial-exec")))
#define CW_UNUSED __attribute__((unused))
/* A function the sanitizers must not instrument (one that runs before the
 * ASan runtime is set up). */
#define CW_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#define CW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Our own assertion: never malloc, never stdio (see log.h). */
void cw_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn));
#define cw_assert(e) \
	do { \
		if (config_debug && unlikely(!(e))) \
			cw_assert_fail(#e, __FILE__, __LINE__); \
	} while (0)
#define not_reached() cw_assert_fail("not reached", __FILE__, __LINE__)

#include "cuwarden.h"
#include "types.h"

#endif /* CUWARDEN_PREAMBLE_H */
