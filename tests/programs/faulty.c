// SPDX-License-Identifier: MIT
/*
 * faulty - a target for the fault tests: it keeps busy enough that the
 * tracer has written data to its file within a fraction of a second, and it
 * can die in the middle of a trace.
 *
 *   faulty run SECONDS   every millisecond a burst of 20 instants "burst"
 *                        (args {"i":N}) and a counter, for SECONDS; exit 0
 *   faulty crash         once traced: 200 ms of bursts, then a span "doomed"
 *                        is begun and the program dies of SIGSEGV
 *   faulty exit          the same, but it exits 0 with the span "left open"
 *
 * Prints "ready pid=P main_tid=T"; "armed" when it sees a tracer attach
 * (CTRACE_ENABLED() turns true) and "disarmed" when it sees it go (the last
 * tracer detached: the probes are off again); "alive N" every 100 ms in run
 * mode, so a test sees that it goes on running unharmed.
 */
#include <ctrace.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static int was_armed;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *what)
{
	puts(what);
	fflush(stdout);
}

/* One millisecond's events; notes armed/disarmed transitions. */
static void burst(long round)
{
	int armed = CTRACE_ENABLED();
	char args[48] = "";

	if (armed != was_armed) {
		say(armed ? "armed" : "disarmed");
		was_armed = armed;
	}
	for (int i = 0; i < 20; i++) {
		if (CTRACE_ENABLED())
			snprintf(args, sizeof(args), "{\"i\":%ld}", round * 20 + i);
		CTRACE_INSTANT(NULL, "burst", CTRACE_SCOPE_THREAD, args);
	}
	CTRACE_COUNTER_SET(NULL, "rounds", round);
	usleep(1000);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "run";
	double seconds = argc > 2 ? atof(argv[2]) : 5, start, armed_at = 0;
	struct ctrace_span span;

	say_ready();
	start = now_s();
	if (!strcmp(mode, "run")) {
		long last_alive = -1;

		for (long round = 0; now_s() - start < seconds; round++) {
			long tenth = (long)((now_s() - start) * 10);

			burst(round);
			if (tenth != last_alive) {
				printf("alive %ld\n", tenth);
				fflush(stdout);
				last_alive = tenth;
			}
		}
		return 0;
	}
	/* crash / exit: wait for the tracer, run traced for a while, then go. */
	for (long round = 0;; round++) {
		burst(round);
		if (was_armed && !armed_at)
			armed_at = now_s();
		if (armed_at && now_s() - armed_at > 0.2)
			break;
		if (!armed_at && now_s() - start > 10) {
			fprintf(stderr, "faulty: no tracer attached within 10 s\n");
			return 3;
		}
	}
	if (!strcmp(mode, "crash")) {
		CTRACE_SPAN_BEGIN(NULL, &span, "doomed", "{\"why\":\"SIGSEGV next\"}");
		say("crashing");
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)(uintptr_t)argc = 0; /* a small address: never mapped */
		return 1;
	}
	CTRACE_SPAN_BEGIN(NULL, &span, "left open", NULL);
	say("exiting");
	return 0;
}
