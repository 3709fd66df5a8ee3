// SPDX-License-Identifier: MIT
/*
 * table_flood - a traced program that tries to make the tracer's memory grow
 * without end, through one of the tables the tracer keeps per event:
 *
 *   table_flood spans N [ARGS_BYTES]   N CTRACE_SPAN_BEGINs, each on its own
 *                                      span, never ended (args of ARGS_BYTES)
 *   table_flood counters N             N COUNTER_ADDs, each to a new name
 *   table_flood markers N              N CTRACE_NEW_PIDs, each on a new marker,
 *                                      never discarded, one instant in each
 *   table_flood newpid_one N           N CTRACE_NEW_PIDs on one marker, one
 *                                      instant in each
 *
 * Then, after the flood, what a program goes on doing: an instant
 * "after-flood", a span "after-span" begun and ended, a COUNTER_ADD of 3 to
 * "after-counter" twice (the trace must show 3 then 6), and an instant on a
 * pseudo-process "after-pseudo". Prints "ready pid=P main_tid=T", waits up
 * to 10 s for a tracer (exit 3); after the flood prints "flood done" and
 * waits up to 60 s for SIGUSR1 (the test sends it once the tracer has
 * caught up: a slow one, under ASan, would have the events after the
 * flood find the ring still full); prints "flooded n=N still_armed=0|1" and
 * exits 0. Every event is paced a little (a yield every 256: batched, an
 * event costs tens of ns, not a microsecond) so that the tracer keeps up
 * and most of the flood reaches it.
 */
#include <ctrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

static volatile sig_atomic_t go_on;

static void on_usr1(int sig)
{
	(void)sig;
	go_on = 1;
}

static void pace(long i)
{
	if ((i & 255) == 255)
		usleep(200);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0, args_bytes = argc > 3 ? atol(argv[3]) : 0;
	static char name[64];
	char *args = NULL;
	struct ctrace_span *spans = NULL, after;
	static int one_marker, after_marker;
	char *markers = NULL;

	if (n <= 0 || args_bytes < 0 || args_bytes > 4096) {
		fprintf(stderr, "usage: table_flood spans|counters|markers|newpid_one N [ARGS_BYTES]\n");
		return 2;
	}
	if (args_bytes) {
		/* {"pad":"xxx..."}: a valid object of about ARGS_BYTES bytes */
		args = malloc((size_t)args_bytes + 16);
		if (!args)
			return 1;
		strcpy(args, "{\"pad\":\"");
		memset(args + 8, 'x', (size_t)args_bytes);
		strcpy(args + 8 + args_bytes, "\"}");
	}
	spans = calloc((size_t)n, sizeof(*spans));
	markers = calloc((size_t)n, 1);
	if (!spans || !markers)
		return 1;
	signal(SIGUSR1, on_usr1);
	if (!ready_and_wait()) {
		fprintf(stderr, "table_flood: no tracer attached within 10 s\n");
		return 3;
	}
	for (long i = 0; i < n; i++) {
		if (!strcmp(mode, "spans")) {
			CTRACE_SPAN_BEGIN(NULL, &spans[i], "leaked", args);
		} else if (!strcmp(mode, "counters")) {
			snprintf(name, sizeof(name), "counter %ld", i);
			CTRACE_COUNTER_ADD(NULL, name, 1);
		} else if (!strcmp(mode, "markers")) {
			snprintf(name, sizeof(name), "pseudo %ld", i);
			CTRACE_NEW_PID(&markers[i], name);
			CTRACE_INSTANT(&markers[i], "in-pseudo", CTRACE_SCOPE_THREAD, NULL);
		} else if (!strcmp(mode, "newpid_one")) {
			snprintf(name, sizeof(name), "again %ld", i);
			CTRACE_NEW_PID(&one_marker, name);
			CTRACE_INSTANT(&one_marker, "in-pseudo", CTRACE_SCOPE_THREAD, NULL);
		} else {
			fprintf(stderr, "table_flood: unknown mode '%s'\n", mode);
			return 2;
		}
		pace(i);
	}
	puts("flood done");
	fflush(stdout);
	for (int waited = 0; !go_on && waited < 6000; waited++)
		usleep(10000);
	CTRACE_INSTANT(NULL, "after-flood", CTRACE_SCOPE_THREAD, "{\"n\":1}");
	CTRACE_SPAN_BEGIN(NULL, &after, "after-span", NULL);
	CTRACE_SPAN_END(&after, NULL);
	CTRACE_COUNTER_ADD(NULL, "after-counter", 3);
	CTRACE_COUNTER_ADD(NULL, "after-counter", 3);
	CTRACE_NEW_PID(&after_marker, "after-pseudo-process");
	CTRACE_INSTANT(&after_marker, "after-pseudo", CTRACE_SCOPE_THREAD, NULL);
	printf("flooded n=%ld still_armed=%d\n", n, CTRACE_ENABLED());
	fflush(stdout);
	free(spans);
	free(markers);
	free(args);
	return 0;
}
