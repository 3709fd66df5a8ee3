// SPDX-License-Identifier: MIT
/*
 * numbered - N events, each told apart by its number, for the tests of
 * --max-size and rotation (test_output.c): across the files a rotation
 * makes, every number must be there exactly once.
 *
 *   numbered [N]     (default 20000)
 *
 * Prints "ready pid=P main_tid=T", waits for a tracer (exit 3 if none
 * comes within 10 s), then: the main thread, named "numbered-main" by
 * CTRACE_THREAD_NAME, fires instants "n" with args {"i":k} for k = 0..N-1,
 * each hundred inside a span "hundred" {"from":k}; then prints
 * "emitted N" and exits 0. It pauses 1 ms every 1000 events so that the
 * ring buffer never fills (the test counts on no drop).
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ready.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	struct ctrace_span hundred;
	char args[64];

	if (!ready_and_wait()) {
		fprintf(stderr, "numbered: no tracer attached within 10 s\n");
		return 3;
	}
	CTRACE_THREAD_NAME("numbered-main");
	for (long k = 0; k < n; k++) {
		if (k % 100 == 0) {
			snprintf(args, sizeof(args), "{\"from\":%ld}", k);
			CTRACE_SPAN_BEGIN(NULL, &hundred, "hundred", args);
		}
		snprintf(args, sizeof(args), "{\"i\":%ld}", k);
		CTRACE_INSTANT(NULL, "n", CTRACE_SCOPE_THREAD, args);
		if (k % 100 == 99 || k == n - 1)
			CTRACE_SPAN_END(&hundred, NULL);
		if (k % 1000 == 999)
			usleep(1000);
	}
	printf("emitted %ld\n", n);
	return 0;
}
