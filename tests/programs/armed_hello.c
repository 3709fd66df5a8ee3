// SPDX-License-Identifier: MIT
/*
 * armed_hello - a small traced process for the tests of several processes,
 * exec and containers (test_processes.c, test_exec.c, test_container.c).
 *
 *   armed_hello [TAG [WAIT_MS [settle | exit:N]]]
 *
 * The first statement of main is the instant "first" (in the trace only if
 * the process was traced from its first instruction). Then it prints
 * "ready pid=P main_tid=T" (its own view of its ids: inside a PID namespace
 * these are the namespace's), waits up to WAIT_MS (default 10000) for a
 * tracer to raise the semaphore (polling it every millisecond), prints
 * "armed after N ms" (or exits 3 if none came), and emits (with "settle":
 * 200 ms later, once a tracer that has just armed it surely listens), all on
 * its main thread:
 *
 *   I "hello" {"tag":TAG,"ns_pid":P}   (TAG default "none")
 *   X "work"  of about 2 ms
 *
 * then exits 0 (N with exit:N).
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

int main(int argc, char **argv)
{
	const char *tag = argc > 1 ? argv[1] : "none";
	long wait_ms = argc > 2 ? atol(argv[2]) : 10000;
	int settle = argc > 3 && !strcmp(argv[3], "settle");
	int code = argc > 3 && !strncmp(argv[3], "exit:", 5) ? atoi(argv[3] + 5) : 0;
	struct ctrace_span work;
	struct timespec t0;
	char args[256];
	long elapsed;

	CTRACE_INSTANT(NULL, "first", CTRACE_SCOPE_THREAD, NULL);
	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!CTRACE_ENABLED()) {
		if (ms_since(&t0) >= wait_ms) {
			puts("never armed");
			return 3;
		}
		usleep(1000);
	}
	elapsed = ms_since(&t0);
	if (settle)
		usleep(200 * 1000);
	/* The tag comes from the test: plain letters, no JSON escaping needed. */
	snprintf(args, sizeof(args), "{\"tag\":\"%.200s\",\"ns_pid\":%d}", tag, (int)getpid());
	/* Before anything slow (stdout may be a pipe): the event comes first. */
	CTRACE_INSTANT(NULL, "hello", CTRACE_SCOPE_THREAD, args);
	printf("armed after %ld ms\n", elapsed);
	fflush(stdout);
	CTRACE_SPAN_BEGIN(NULL, &work, "work", NULL);
	usleep(2000);
	CTRACE_SPAN_END(&work, NULL);
	return code;
}
