// SPDX-License-Identifier: MIT
/*
 * launched - the command of launch mode (`ctrace-bpf [options] -- launched
 * ...`), for tests/integration/test_launch.c.
 *
 *   launched [EXIT_CODE | signal:N] [threads:N]
 *
 * The first statement of main is the instant "main-first": it is in the
 * trace only if tracing was active before the program's first instruction
 * (the tracer holds the command at its entry point until every probe is
 * attached). Nothing waits for a tracer: untraced, every probe is skipped.
 *
 * Then, in order: a counter "uid" set to getuid() and "gid" to getgid() (so
 * the trace itself says which user ran it), N threads (default 0) that each
 * name themselves "hello-K" and emit an instant "thread-hello" {"k":K}, the
 * instant "main-last", and the end: exit with EXIT_CODE (default 0), or kill
 * itself with signal N. Prints "uid=U gid=G pid=P tid=T armed=A" first and
 * "thread K tid=T" per thread, so that a test can check every id.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <ctrace.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct worker {
	pthread_t thread;
	int k;
	int tid;
};

static void *hello(void *arg)
{
	struct worker *w = arg;
	char name[16], args[32];

	w->tid = (int)syscall(SYS_gettid);
	snprintf(name, sizeof(name), "hello-%d", w->k);
	pthread_setname_np(pthread_self(), name);
	snprintf(args, sizeof(args), "{\"k\":%d}", w->k);
	CTRACE_INSTANT(NULL, "thread-hello", CTRACE_SCOPE_THREAD, args);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[8];
	int code = 0, sig = 0, nthreads = 0;

	CTRACE_INSTANT(NULL, "main-first", CTRACE_SCOPE_THREAD, NULL);
	/* Armed at the first statement: what the instant above relied on. */
	printf("uid=%d gid=%d pid=%d tid=%d armed=%d\n", (int)getuid(), (int)getgid(),
	       (int)getpid(), (int)syscall(SYS_gettid), CTRACE_ENABLED());
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "signal:", 7))
			sig = atoi(argv[i] + 7);
		else if (!strncmp(argv[i], "threads:", 8))
			nthreads = atoi(argv[i] + 8);
		else
			code = atoi(argv[i]);
	}
	if (nthreads > 8)
		nthreads = 8;
	CTRACE_COUNTER_SET(NULL, "uid", getuid());
	CTRACE_COUNTER_SET(NULL, "gid", getgid());
	for (int k = 0; k < nthreads; k++) {
		workers[k].k = k;
		if (pthread_create(&workers[k].thread, NULL, hello, &workers[k]))
			return 4;
	}
	for (int k = 0; k < nthreads; k++) {
		pthread_join(workers[k].thread, NULL);
		printf("thread %d tid=%d\n", k, workers[k].tid);
	}
	CTRACE_INSTANT(NULL, "main-last", CTRACE_SCOPE_THREAD, NULL);
	fflush(stdout);
	if (sig) {
		/* The default action, whatever the tracer left us with. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return code;
}
