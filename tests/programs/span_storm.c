// SPDX-License-Identifier: MIT
/*
 * span_storm - spans all the time, on three threads, across the edges of a
 * trace, for tests/integration/test_edges.c.
 *
 *   span_storm MS
 *     Begins the span "before-tracer" while nobody traces (its BEGIN is not
 *     recorded), prints "ready pid=P main_tid=T", waits up to 10 s for a
 *     tracer (exit 3 if none), emits the instant "armed" the moment its
 *     probes are up, ends "before-tracer", then for MS milliseconds runs,
 *     on the main thread and two workers, nested spans "outer" > "inner"
 *     (a few microseconds each, in bursts of 4) and a counter "n". Then ends
 *     a span it never began (a mistake) and exits 0. Launched by the
 *     tracer (-- span_storm MS), "before-tracer" is traced too.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

static long run_ms;

static void *storm(void *arg)
{
	struct timespec t0;
	volatile unsigned spin;
	unsigned pairs = 0;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < run_ms) {
		struct ctrace_span outer, inner;

		CTRACE_SPAN_BEGIN(NULL, &outer, "outer", NULL);
		CTRACE_SPAN_BEGIN(NULL, &inner, "inner", NULL);
		for (spin = 0; spin < 200; spin++)
			;
		CTRACE_SPAN_END(&inner, NULL);
		CTRACE_COUNTER_ADD(NULL, "n", 1);
		CTRACE_SPAN_END(&outer, NULL);
		/* ~10,000 pairs a second a thread: many spans in flight at the stop, no drops */
		if (++pairs % 4 == 0)
			usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ctrace_span before, never_begun;
	struct timespec t0;
	pthread_t workers[2];

	if (argc != 2) {
		fputs("usage: span_storm MS\n", stderr);
		return 2;
	}
	run_ms = atol(argv[1]);
	CTRACE_SPAN_BEGIN(NULL, &before, "before-tracer", NULL);
	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!CTRACE_ENABLED()) {
		if (ms_since(&t0) >= 10000) {
			puts("never armed");
			return 3;
		}
		usleep(100);
	}
	CTRACE_INSTANT(NULL, "armed", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_SPAN_END(&before, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&workers[i], NULL, storm, NULL);
	storm(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(workers[i], NULL);
	CTRACE_SPAN_END(&never_begun, NULL);
	return 0;
}
