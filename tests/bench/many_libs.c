// SPDX-License-Identifier: MIT
/*
 * many_libs - how long ctrace-bpf takes to attach to a process that has
 * loaded many libraries with probes, as its user sees it: from starting the
 * tracer to every library's semaphore being up (CTRACE_ENABLED() true in
 * each: the tracer raises an object's semaphore only once all its sites are
 * attached), then from SIGINT to every semaphore being down again, and to
 * the tracer's exit.
 *
 *   many_libs DIR N TRACER [TRACER ARGS...]
 *
 * dlopens DIR/libbench_00.so ... (N of them, many_libs_lib.c), then starts
 * "TRACER ARGS... -p <own pid>" itself, so that the clock starts at fork.
 * Prints "libraries", "attach_ms", "detach_ms" and "exit_ms"; -1 for a
 * wait that timed out (10 s to attach, 20 s to detach). Fails only when
 * the attach timed out.
 */
#include "bench.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LIBS 64

static int (*armed[MAX_LIBS])(void);

/* How many libraries have their semaphore up. */
static int count_armed(int n)
{
	int up = 0;

	for (int i = 0; i < n; i++)
		up += armed[i]() != 0;
	return up;
}

/* Polls every 100 us until count_armed() == want; the time it took, or -1. */
static double wait_for(int n, int want, double t0, double timeout_ms)
{
	while (count_armed(n) != want) {
		if (bench_now_ns() - t0 > timeout_ms * 1e6)
			return -1;
		usleep(100);
	}
	return (bench_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	char path[4096], pid[16];
	char *args[32];
	double t0, attach_ms, detach_ms, exit_ms;
	int n, nargs = 0, status;
	pid_t tracer;

	if (argc < 4 || (n = atoi(argv[2])) < 1 || n > MAX_LIBS || argc > 28) {
		fputs("usage: many_libs DIR N TRACER [TRACER ARGS...]\n", stderr);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/libbench_%02d.so", argv[1], i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(*(void **)&armed[i] = dlsym(h, "bench_lib_armed"))) {
			fprintf(stderr, "many_libs: %s\n", dlerror());
			return 1;
		}
	}
	for (int i = 3; i < argc; i++)
		args[nargs++] = argv[i];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	args[nargs++] = "-p";
	args[nargs++] = pid;
	args[nargs] = NULL;

	t0 = bench_now_ns();
	tracer = fork();
	if (tracer == 0) {
		execvp(args[0], args);
		_exit(127);
	}
	attach_ms = wait_for(n, n, t0, 10000);
	t0 = bench_now_ns();
	kill(tracer, SIGINT);
	detach_ms = wait_for(n, 0, t0, 20000);
	waitpid(tracer, &status, 0);
	exit_ms = (bench_now_ns() - t0) / 1e6;
	printf("libraries %d\nattach_ms %.1f\ndetach_ms %.1f\nexit_ms %.1f\n", n,
	       attach_ms, detach_ms, exit_ms);
	return attach_ms < 0;
}
