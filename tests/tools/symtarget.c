/*
 * symtarget.c -- a test program built with -g that writes a cuwarden
 * report about itself, so symbolization is tested without the shim: the
 * leak's stack is the return address of capture() (inside leak_some(),
 * through the always-inlined helper inner()) and the return address of
 * leak_some() in main().  leak_some() is called from two lines of main():
 * two stacks that differ only in the caller's offset (two fingerprints,
 * one symbolic fingerprint).  Offsets are runtime address minus the load
 * bias (dlpi_addr), as lib/stackdepot.c records them.
 *
 * Usage: symtarget REPORT.json
 * The line numbers the test expects are marked LINE-CALL, LINE-INNER,
 * LINE-MAIN and LINE-MAIN2 in this file.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *frames[2][2];
static int slot;
static char build_id[129];
static uintptr_t bias;

static int
find_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n =
			    (const ElfW(Nhdr) *)(const void *)p;
			const unsigned char *desc = (const unsigned char *)p +
			    sizeof(*n) + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0) {
				for (unsigned k = 0; k < n->n_descsz && k < 64;
				    k++)
					sprintf(build_id + 2 * k, "%02x",
					    desc[k]);
				return 1;
			}
			p += sizeof(*n) + ((n->n_namesz + 3) & ~3u) +
			    ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the program */
}

__attribute__((noinline)) static void
capture(void)
{
	frames[slot][0] = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void
inner(void)
{
	capture(); /* LINE-INNER */
}

__attribute__((noinline)) void leak_some(void);

__attribute__((noinline)) void
leak_some(void)
{
	frames[slot][1] = __builtin_return_address(0);
	inner(); /* LINE-CALL */
	__asm__ volatile("" ::: "memory");
}

int
main(int argc, char **argv)
{
	char exe[4096];
	ssize_t n;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: symtarget REPORT.json\n");
		return 99;
	}
	slot = 0;
	leak_some(); /* LINE-MAIN */
	slot = 1;
	leak_some(); /* LINE-MAIN2 */
	dl_iterate_phdr(find_main, NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 99;
	exe[n] = '\0';
	f = fopen(argv[1], "w");
	if (f == NULL)
		return 99;
	fprintf(f, "{\"format\": \"cuwarden-report\", \"version\": 1, "
	    "\"pid\": %d, \"ppid\": %d, \"command\": [\"symtarget\"], "
	    "\"exe\": \"%s\", \"mode\": \"audit\", "
	    "\"exit\": {\"how\": \"exit\", \"status\": 0}, "
	    "\"coverage\": {\"hooks_active\": true, \"allocations\": 1, "
	    "\"frees\": 0, \"untracked_frees\": 0}, "
	    "\"summary\": {\"leaked_bytes\": 4096, \"leaked_allocations\": 1, "
	    "\"violations\": 0}, "
	    "\"modules\": [{\"path\": \"\", \"build_id\": \"%s\", "
	    "\"base\": \"0x%lx\"}, {\"path\": \"%s\", \"build_id\": "
	    "\"0000\", \"base\": \"0x0\"}], "
	    "\"leaks\": [{\"kind\": \"device\", \"size\": 4096, \"count\": 1, "
	    "\"bytes\": 4096, \"device\": 0, \"owner\": \"%s\", "
	    "\"api\": \"cuMemAlloc_v2\", \"addresses\": [\"0x1000\"], "
	    "\"stack\": [{\"module\": 0, \"offset\": \"0x%lx\"}, "
	    "{\"module\": 0, \"offset\": \"0x%lx\"}]}, "
	    "{\"kind\": \"device\", \"size\": 4096, \"count\": 1, "
	    "\"bytes\": 4096, \"device\": 0, \"owner\": \"%s\", "
	    "\"api\": \"cuMemAlloc_v2\", \"addresses\": [\"0x9000\"], "
	    "\"stack\": [{\"module\": 0, \"offset\": \"0x%lx\"}, "
	    "{\"module\": 0, \"offset\": \"0x%lx\"}]}, "
	    "{\"kind\": \"managed\", \"size\": 64, \"count\": 1, "
	    "\"bytes\": 64, \"device\": 0, \"owner\": \"\", "
	    "\"api\": \"cuMemAllocManaged\", "
	    "\"stack\": [{\"module\": 1, \"offset\": \"0x%lx\"}]}], "
	    "\"violations\": []}\n",
	    (int)getpid(), (int)getppid(), exe, build_id,
	    (unsigned long)bias, exe, exe,
	    (unsigned long)((uintptr_t)frames[0][0] - bias),
	    (unsigned long)((uintptr_t)frames[0][1] - bias), exe,
	    (unsigned long)((uintptr_t)frames[1][0] - bias),
	    (unsigned long)((uintptr_t)frames[1][1] - bias),
	    (unsigned long)((uintptr_t)frames[0][0] - bias));
	return fclose(f) != 0 ? 99 : 0;
}
