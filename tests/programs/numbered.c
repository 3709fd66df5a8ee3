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
 * each hundred inside a span "hundred" {"from":k}, while a second thread,
 * "numbered-helper", fires an instant "h" every 0.5 ms (so that files
 * begin with either thread's event); then prints "emitted N" and exits 0. It pauses 1 ms every 1000 events so that the
 * ring buffer never fills (the test counts on no drop).
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ready.h"

static atomic_int done;

static void *helper(void *arg)
{
	(void)arg;
	CTRACE_THREAD_NAME("numbered-helper");
	while (!atomic_load(&done)) {
		CTRACE_INSTANT(NULL, "h", CTRACE_SCOPE_THREAD, NULL);
		usleep(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	struct ctrace_span hundred;
	char args[64];
	pthread_t th;

	if (!ready_and_wait()) {
		fprintf(stderr, "numbered: no tracer attached within 10 s\n");
		return 3;
	}
	CTRACE_THREAD_NAME("numbered-main");
	if (pthread_create(&th, NULL, helper, NULL)) {
		perror("pthread_create");
		return 1;
	}
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
	atomic_store(&done, 1);
	pthread_join(th, NULL);
	printf("emitted %ld\n", n);
	return 0;
}
