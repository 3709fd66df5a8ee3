// SPDX-License-Identifier: MIT
/*
 * span_events - instants inside spans and counters, for test_otlp (an
 * OTLP span's events are the instants of its thread it encloses):
 *   FRAMES times: span "frame" {"n":N} (BEGIN/END) holding a CTRACE_SCOPE
 *   "work" {"n":N} that holds the instant "mark" {"n":N,"at":"work"}, then,
 *   after "work", the instant "after-work" {"n":N} still in "frame"; the
 *   counter "queue" set to N after each frame; on a worker thread, the
 *   scope "worker-job" holding the instant "job-mark" (scope process).
 * Prints "ready pid=P main_tid=T", waits for the tracer (exit 3 if none
 * came), then "done" and exits 0.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "ready.h"

#define FRAMES 50

static volatile unsigned long sink;

static void *worker(void *arg)
{
	(void)arg;
	CTRACE_SCOPE(NULL, "worker-job", NULL);
	sink++;
	CTRACE_INSTANT(NULL, "job-mark", CTRACE_SCOPE_PROCESS, NULL);
	sink++;
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (!ready_and_wait())
		return 3;
	for (int n = 0; n < FRAMES; n++) {
		char args[48], mark[64];
		int frame;

		snprintf(args, sizeof(args), "{\"n\":%d}", n);
		snprintf(mark, sizeof(mark), "{\"n\":%d,\"at\":\"work\"}", n);
		CTRACE_SPAN_BEGIN(NULL, &frame, "frame", args);
		{
			CTRACE_SCOPE(NULL, "work", args);
			for (int i = 0; i < 100; i++)
				sink++;
			CTRACE_INSTANT(NULL, "mark", CTRACE_SCOPE_THREAD, mark);
			for (int i = 0; i < 100; i++)
				sink++;
		}
		CTRACE_INSTANT(NULL, "after-work", CTRACE_SCOPE_THREAD, args);
		CTRACE_SPAN_END(&frame, NULL);
		CTRACE_COUNTER_SET(NULL, "queue", n);
	}
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	puts("done");
	return 0;
}
