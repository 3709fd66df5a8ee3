// SPDX-License-Identifier: MIT
/*
 * ring_feed - a steady stream for the flight recorder's tests (--ring):
 * instants "seq" numbered args.n = 0, 1, 2, ... every 100 us, inside one
 * span "long" open from the first to the last, for SECONDS (default 3);
 * with TRIGGER_AT, CTRACE_TRIGGER("boom") right after seq TRIGGER_AT
 * (-1: after every seq, a program that fires triggers in a loop).
 *
 *   ring_feed [SECONDS [TRIGGER_AT]]
 *
 * Prints "ready pid=P main_tid=T", "armed" once a tracer is attached,
 * "triggered N" after the trigger, and "done last=N" at the end.
 * Exits 3 if no tracer attaches within 10 s.
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3, start;
	long trigger_at = argc > 2 ? atol(argv[2]) : -2, i;
	struct ctrace_span span;

	if (!ready_and_wait())
		return 3;
	puts("armed");
	fflush(stdout);
	start = now_s();
	CTRACE_SPAN_BEGIN(NULL, &span, "long", NULL);
	for (i = 0; now_s() - start < seconds; i++) {
		CTRACE_INSTANT_ARGS(NULL, "seq", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("n", i));
		if (trigger_at == -1) {
			CTRACE_TRIGGER("again");
		} else if (i == trigger_at) {
			CTRACE_TRIGGER("boom");
			printf("triggered %ld\n", i);
			fflush(stdout);
		}
		usleep(100);
	}
	CTRACE_SPAN_END(&span, NULL);
	printf("done last=%ld\n", i - 1);
	return 0;
}
