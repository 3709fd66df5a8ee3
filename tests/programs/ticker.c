// SPDX-License-Identifier: MIT
/*
 * ticker - a long-running traced program for the CLI tests: every millisecond
 * an instant "tick" and a counter "ticks", for SECONDS (default 20), whether
 * traced or not.
 *
 *   ticker [SECONDS]
 *
 * Prints "ready pid=P main_tid=T" at start, then "armed" when it first sees
 * the semaphore raised (a tracer attached) and "disarmed" when it sees it
 * fall back to zero (the tracer detached), so that a test can tell where the
 * tracer is without reading its messages.
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 20;
	int was_armed = 0;
	struct timespec start, now;

	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0;; i++) {
		int armed = CTRACE_ENABLED();

		if (armed != was_armed) {
			puts(armed ? "armed" : "disarmed");
			fflush(stdout);
			was_armed = armed;
		}
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_COUNTER_SET(NULL, "ticks", i);
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= seconds)
			return 0;
	}
}
