// SPDX-License-Identifier: MIT
/*
 * spread_spans - spans of known, spread durations, for the summary's
 * percentiles (tests/integration/test_summary.c) and the status line.
 *
 *   spread_spans [ROUNDS [NAMES]]
 *     Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit
 *     3 if none), then ROUNDS times (default 1): the span "spread" 100
 *     times, lasting 20 us, 40 us, ... 2 ms (busy-waited, in a shuffled
 *     order), each followed by the span "short" (nothing inside), the
 *     counter "depth" set to the multiple of 20 us, and the instant "round"
 *     once; then sleeps 100 ms. Then NAMES spans (default 0), each of a name
 *     of its own: "name-0", "name-1", ... Exits 0.
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "elapsed.h"
#include "ready.h"

static void busy_us(long us)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (us_since(&t0) < us)
		;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1, names = argc > 2 ? atol(argv[2]) : 0;

	say_ready();
	if (!wait_for_tracer())
		return 3;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 100; i++) {
			int k = (i * 37) % 100 + 1; /* 37 is prime to 100: each of 1..100 once */
			struct ctrace_span s, t;

			CTRACE_SPAN_BEGIN(NULL, &s, "spread", NULL);
			busy_us(20L * k);
			CTRACE_SPAN_END(&s, NULL);
			CTRACE_SPAN_BEGIN(NULL, &t, "short", NULL);
			CTRACE_SPAN_END(&t, NULL);
			CTRACE_COUNTER_SET(NULL, "depth", k);
		}
		CTRACE_INSTANT(NULL, "round", CTRACE_SCOPE_THREAD, NULL);
		sleep_ms(100);
	}
	for (long i = 0; i < names; i++) {
		char name[32];
		struct ctrace_span s;

		snprintf(name, sizeof(name), "name-%ld", i);
		CTRACE_SPAN_BEGIN(NULL, &s, name, NULL);
		CTRACE_SPAN_END(&s, NULL);
	}
	return 0;
}
