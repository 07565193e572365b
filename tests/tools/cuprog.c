/*
 * cuprog.c -- a driver-API test program for cuwarden-audit, linked against
 * tests/fakecuda/libcuda.so.1 (built with -g; the test checks the
 * function and file:line of the leaking call, marked LINE-ALLOC and
 * LINE-LEAK below).
 *
 * Usage: cuprog MODE
 *   none       never touches CUDA, exits 0
 *   clean      allocates and frees, exits 0
 *   status     allocates and frees, exits 3
 *   leak       leaks 2 x 1 MiB of device memory from leak_some()
 *   violation  frees one allocation twice, leaks nothing
 *   crash      leaks, then dies of SIGSEGV
 *   fork       leaks 1 MiB, forks a child that execs "cuprog leak",
 *              waits for it
 *   orphan     forks a child that waits for its parent to exit, then execs
 *              "cuprog leak"; the parent exits at once without waiting
 *   sleep      allocates and frees, then sleeps up to 10 s (signal test)
 *   selfkill   leaks 1 MiB, then dies of SIGKILL (no report: lost)
 *   killchild  allocates and frees, forks a child that execs "cuprog
 *              selfkill", waits for it, exits 0
 *   orphankill as orphan, the child execs "cuprog selfkill"
 *   forknone   allocates and frees; a fork child (no exec) allocates and
 *              dies of SIGKILL, another execs "cuprog idle" and is
 *              killed by SIGKILL; waits for both, exits 0 (nothing lost)
 *   idle       never touches CUDA, sleeps up to 10 s
 *   badfrees   frees, with every free entry point, a pointer or handle
 *              never allocated (the driver refuses each: invalid_free);
 *              leaks nothing
 *   mangled    leaks 1 MiB through a function whose symbol is a C++ name,
 *              _ZN2cw8leak_cxxEi: cw::leak_cxx(int) demangled
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#define MIB ((size_t)1 << 20)

static void
check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "cuprog: %s failed: %d\n", what, (int)r);
		exit(99);
	}
}

static void
setup(void)
{
	CUdevice dev;
	CUcontext ctx;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

__attribute__((noinline)) static CUdeviceptr
alloc_buf(size_t size)
{
	CUdeviceptr p = 0;

	check(cuMemAlloc(&p, size), "cuMemAlloc"); /* LINE-ALLOC */
	return p;
}

__attribute__((noinline)) void leak_some(int n);

__attribute__((noinline)) void
leak_some(int n)
{
	for (int i = 0; i < n; i++)
		(void)alloc_buf(MIB); /* LINE-LEAK */
	__asm__ volatile("" ::: "memory");
}

/* A C function under a C++ symbol name (--demangle). */
__attribute__((noinline)) void leak_cxx(int n) __asm__("_ZN2cw8leak_cxxEi");

__attribute__((noinline)) void
leak_cxx(int n)
{
	leak_some(n);
	__asm__ volatile("" ::: "memory");
}

static void
clean(void)
{
	CUdeviceptr p = alloc_buf(4096);

	check(cuMemFree(p), "cuMemFree");
}

/* One invalid free per free entry point, each refused by the driver
 * (a fake handle, 0xdead... and up). */
static void
bad_frees(void)
{
	CUstream s;

	check(cuStreamCreate(&s, 0), "cuStreamCreate");
	(void)cuMemFree((CUdeviceptr)0xdead0000);
	(void)cuMemFreeAsync((CUdeviceptr)0xdead1000, s);
	(void)cuStreamSynchronize(s);
	(void)cuMemFreeHost((void *)(uintptr_t)0xdead2000);
	(void)cuMemHostUnregister((void *)(uintptr_t)0xdead3000);
	(void)cuIpcCloseMemHandle((CUdeviceptr)0xdead4000);
	(void)cuMemRelease((CUmemGenericAllocationHandle)0xdead5000);
	(void)cuMemAddressFree((CUdeviceptr)0xdead6000, 4096);
	(void)cuMemUnmap((CUdeviceptr)0xdead7000, 4096);
	(void)cuArrayDestroy((CUarray)(uintptr_t)0xdead8000);
	check(cuStreamDestroy(s), "cuStreamDestroy");
}

static void
exec_self(const char *self, const char *mode)
{
	execl(self, self, mode, (char *)NULL);
	perror("cuprog: execl");
	_exit(98);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pid_t pid;
	int st;

	if (strcmp(mode, "none") == 0)
		return 0;
	if (strcmp(mode, "idle") == 0) {
		sleep(10);
		return 0;
	}
	if (strcmp(mode, "orphan") == 0 || strcmp(mode, "orphankill") == 0) {
		pid_t parent = getpid();

		pid = fork();
		if (pid == 0) {
			while (getppid() == parent)
				usleep(10000);
			exec_self(argv[0], strcmp(mode, "orphan") == 0 ? "leak" :
			    "selfkill");
		}
		return 0;
	}
	setup();
	if (strcmp(mode, "badfrees") == 0) {
		setup();
		bad_frees();
		return 0;
	}
	if (strcmp(mode, "clean") == 0) {
		clean();
		return 0;
	}
	if (strcmp(mode, "status") == 0) {
		clean();
		return 3;
	}
	if (strcmp(mode, "leak") == 0) {
		leak_some(2);
		return 0;
	}
	if (strcmp(mode, "mangled") == 0) {
		setup();
		leak_cxx(1);
		return 0;
	}
	if (strcmp(mode, "violation") == 0) {
		CUdeviceptr p = alloc_buf(65536);

		check(cuMemFree(p), "cuMemFree");
		if (cuMemFree(p) == CUDA_SUCCESS)
			fprintf(stderr, "cuprog: second free succeeded?\n");
		return 0;
	}
	if (strcmp(mode, "crash") == 0) {
		leak_some(1);
		fflush(NULL);
		raise(SIGSEGV);
		return 97;
	}
	if (strcmp(mode, "fork") == 0) {
		leak_some(1);
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			exec_self(argv[0], "leak");
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 96;
		return 0;
	}
	if (strcmp(mode, "selfkill") == 0) {
		leak_some(1);
		fflush(NULL);
		raise(SIGKILL);
		return 97;
	}
	if (strcmp(mode, "killchild") == 0) {
		clean();
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			exec_self(argv[0], "selfkill");
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 96;
		return 0;
	}
	if (strcmp(mode, "forknone") == 0) {
		clean();
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			CUdeviceptr p = 0;

			(void)cuMemAlloc(&p, MIB);
			raise(SIGKILL);
			_exit(97);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 96;
		pid = fork();
		if (pid == 0)
			exec_self(argv[0], "idle");
		if (pid < 0)
			return 96;
		usleep(300000);
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) != pid)
			return 96;
		return 0;
	}
	if (strcmp(mode, "sleep") == 0) {
		clean();
		sleep(10);
		return 0;
	}
	fprintf(stderr, "usage: cuprog none|clean|status|leak|violation|"
	    "crash|fork|orphan|sleep|selfkill|killchild|orphankill|forknone|idle\n");
	return 99;
}
