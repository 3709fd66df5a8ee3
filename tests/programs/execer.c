// SPDX-License-Identifier: MIT
/*
 * execer - a traced process that replaces its program, for
 * tests/integration/test_exec.c.
 *
 *   execer [--from-thread] PROG [ARGS...]
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3 if
 * none comes), emits the instant "before-exec" {"pid":P} and execs PROG
 * ARGS... in the same process (exit 127 if that fails). With --from-thread
 * the exec is called by a second thread, which the kernel makes the
 * process's only thread, with the process's pid.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

static char **exec_argv;

static void *exec_from_thread(void *unused)
{
	(void)unused;
	execv(exec_argv[0], exec_argv);
	perror(exec_argv[0]);
	_exit(127);
}

int main(int argc, char **argv)
{
	char args[32];
	int from_thread = argc > 1 && !strcmp(argv[1], "--from-thread");

	argv += from_thread;
	argc -= from_thread;
	if (argc < 2) {
		fputs("usage: execer PROG [ARGS...]\n", stderr);
		return 2;
	}
	if (!ready_and_wait()) {
		puts("never armed");
		return 3;
	}
	snprintf(args, sizeof(args), "{\"pid\":%d}", (int)getpid());
	CTRACE_INSTANT(NULL, "before-exec", CTRACE_SCOPE_THREAD, args);
	if (from_thread) {
		pthread_t t;

		exec_argv = argv + 1;
		if (pthread_create(&t, NULL, exec_from_thread, NULL) == 0)
			pause(); /* the exec ends this thread */
		return 127;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
