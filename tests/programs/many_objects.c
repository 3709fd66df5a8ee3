// SPDX-License-Identifier: MIT
/*
 * many_objects - a thread's events in the executable and in N shared
 * libraries (each object has its own batch buffer per thread:
 * usdt/ctrace_batch.h), the process exiting right after them, so that only
 * the kernel side's copy at the thread's death can keep them; for
 * tests/integration/test_many_objects.c.
 *
 *   many_objects MODE WAIT DIR N
 *
 * dlopen()s DIR/libmany0.so .. DIR/libmany{N-1}.so (copies of one library
 * built from tests/programs/lib/probelib.c: each copy its own object),
 * prints "ready pid=P main_tid=T", and waits up to 10 s for a tracer to arm
 * every object (exit 3 if it does not): WAIT "batched" waits for each
 * object's batch semaphore too, "armed" only for its per-event one (what
 * --no-batch raises); "first-batched" and "first-armed" wait so for the
 * executable alone (the tracer still attaching the libraries). Then:
 *
 *   exit      main emits EVENTS events in the executable and in each
 *             library
 *   threads   THREADS threads one after another, each emitting EVENTS
 *             events in the executable and in each library, then
 *             returning (the next thread takes its buffers over and
 *             empties them)
 *   fork      main emits EVENTS events in each object, fork()s; the
 *             child (thread 1) emits EVENTS more in each, into its copies
 *             of main's buffers, and _exit(0)s; main waits for it
 *
 * prints "done emitted=E" and _exit(0)s: no destructor, no flush. Each
 * event says which it is in args.n: thread * 1000000 + object * 100 + i,
 * object 0 the executable (I "exe-hit" {"n":n}), object k + 1 libmany{k}
 * (I "lib-hit" {"lib":"many","n":n}). Exit 2 on bad arguments or a library
 * that does not load.
 */
#include <ctrace.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

#define EVENTS 3
#define THREADS 20
#define LIBS_MAX 9999 /* object * 100 stays below a thread's 1000000 */

struct lib {
	void (*hit)(int);
	int (*armed)(void);
	int (*batching)(void);
};

static struct lib libs[LIBS_MAX];
static int nlibs;

static int load(const char *dir, int k)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/libmany%d.so", dir, k);
	/* RTLD_LOCAL: the copies keep their own symbols. */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	*(void **)&libs[k].hit = dlsym(h, "probelib_hit");
	*(void **)&libs[k].armed = dlsym(h, "probelib_armed");
	*(void **)&libs[k].batching = dlsym(h, "probelib_batching");
	if (!libs[k].hit || !libs[k].armed || !libs[k].batching) {
		fprintf(stderr, "%s: not a probelib\n", path);
		return -1;
	}
	return 0;
}

static int first_only;

/* Every object armed (and batching, if asked)? The executable alone, with first_only. */
static int all_armed(int batched)
{
	if (!CTRACE_ENABLED() || (batched && !ctrace_batch_semaphore.semaphore))
		return 0;
	for (int k = 0; k < nlibs && !first_only; k++)
		if (!libs[k].armed() || (batched && !libs[k].batching()))
			return 0;
	return 1;
}

static void exe_hit(int n)
{
	char args[32];

	snprintf(args, sizeof(args), "{\"n\":%d}", n);
	CTRACE_INSTANT(NULL, "exe-hit", CTRACE_SCOPE_THREAD, args);
}

/* EVENTS events in each object, numbered for thread t. */
static void emit_everywhere(int t)
{
	for (int i = 0; i < EVENTS; i++)
		exe_hit(t * 1000000 + i);
	for (int k = 0; k < nlibs; k++)
		for (int i = 0; i < EVENTS; i++)
			libs[k].hit(t * 1000000 + (k + 1) * 100 + i);
}

static void *thread_main(void *arg)
{
	emit_everywhere((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0;
	int threads = 1, batched;

	if (argc != 5 || (strcmp(argv[1], "exit") && strcmp(argv[1], "threads") && strcmp(argv[1], "fork")) ||
	    (strcmp(argv[2] + (strncmp(argv[2], "first-", 6) ? 0 : 6), "batched") &&
	     strcmp(argv[2] + (strncmp(argv[2], "first-", 6) ? 0 : 6), "armed")) ||
	    atoi(argv[4]) < 0 ||
	    atoi(argv[4]) > LIBS_MAX) {
		fprintf(stderr, "usage: many_objects exit|threads|fork [first-]batched|armed DIR N (N <= %d)\n", LIBS_MAX);
		return 2;
	}
	first_only = !strncmp(argv[2], "first-", 6);
	batched = !strcmp(argv[2] + (first_only ? 6 : 0), "batched");
	for (nlibs = 0; nlibs < atoi(argv[4]); nlibs++)
		if (load(argv[3], nlibs) < 0)
			return 2;
	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!all_armed(batched)) {
		if (ms_since(&t0) >= 10000) {
			puts("never armed");
			return 3;
		}
		usleep(1000);
	}
	if (!strcmp(argv[1], "exit")) {
		emit_everywhere(0);
	} else if (!strcmp(argv[1], "fork")) {
		pid_t child;
		int status;

		emit_everywhere(0);
		child = fork();
		if (child == 0) {
			emit_everywhere(1);
			_exit(0);
		}
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
			fputs("fork failed\n", stderr);
			return 2;
		}
		threads = 2;
	} else {
		threads = THREADS;
		for (long t = 0; t < threads; t++) {
			pthread_t th;

			if (pthread_create(&th, NULL, thread_main, (void *)t) || pthread_join(th, NULL)) {
				fputs("pthread_create failed\n", stderr);
				return 2;
			}
		}
	}
	printf("done emitted=%d\n", threads * (nlibs + 1) * EVENTS);
	fflush(stdout);
	_exit(0);
}
