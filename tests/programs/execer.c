// SPDX-License-Identifier: MIT
/*
 * execer - a traced process that replaces its program, for
 * tests/integration/test_exec.c.
 *
 *   execer PROG [ARGS...]
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3 if
 * none comes), emits the instant "before-exec" {"pid":P} and execs PROG
 * ARGS... in the same process (exit 127 if that fails).
 */
#include <ctrace.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char args[32];

	if (argc < 2) {
		fputs("usage: execer PROG [ARGS...]\n", stderr);
		return 2;
	}
	printf("ready pid=%d main_tid=%d\n", (int)getpid(), (int)syscall(SYS_gettid));
	fflush(stdout);
	for (int i = 0; !CTRACE_ENABLED(); i++) {
		if (i == 10000) {
			puts("never armed");
			return 3;
		}
		usleep(1000);
	}
	snprintf(args, sizeof(args), "{\"pid\":%d}", (int)getpid());
	CTRACE_INSTANT(NULL, "before-exec", CTRACE_SCOPE_THREAD, args);
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
