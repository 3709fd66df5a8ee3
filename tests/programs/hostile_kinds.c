// SPDX-License-Identifier: MIT
/*
 * hostile_kinds - hostile input through every kind of event that
 * tests/programs/hostile.c leaves out: pseudo-process names (bad UTF-8,
 * control bytes, quotes, 1 MiB), counter names, a span begun on one thread
 * and ended on another (its name and both args go through the async path),
 * args whose JSON holds a lone surrogate escape, raw bytes inside strings
 * or in keys, a span ended twice, DISCARD of a marker never used, and then a
 * burst of 2000 instants that each carry a 1 MiB name and 100,000-deep args,
 * to show that the tracer neither stalls nor loses count. Last: "after".
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3),
 * prints "burst=2000 still_armed=0|1" and exits 0.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hostile_strings.h"
#include "ready.h"

#define BURST 2000

static struct ctrace_span crossing;

static void *end_elsewhere(void *arg)
{
	(void)arg;
	CTRACE_SPAN_END(&crossing, "{\"end\":\"\xff\\u0001\\\"\"}");
	return NULL;
}

int main(void)
{
	int pseudo1, pseudo2, never;
	struct ctrace_span twice;
	pthread_t t;
	char *big = big_string('y'), *deep = deep_nesting('{', '}');

	if (!big || !deep)
		return 1;
	if (!ready_and_wait()) {
		fprintf(stderr, "hostile_kinds: no tracer attached within 10 s\n");
		return 3;
	}

	/* Pseudo-process names. */
	CTRACE_NEW_PID(&pseudo1, "pseudo \xff\xfe \x01 \"q\" \\ end");
	CTRACE_INSTANT(&pseudo1, "in-pseudo1", CTRACE_SCOPE_PROCESS, NULL);
	CTRACE_NEW_PID(&pseudo2, big);
	CTRACE_INSTANT(&pseudo2, "in-pseudo2", CTRACE_SCOPE_PROCESS, NULL);

	/* Counter names. */
	CTRACE_COUNTER_SET(NULL, "ctr \xff \x01\"\\ end", 7);
	CTRACE_COUNTER_ADD(NULL, "ctr \xff \x01\"\\ end", 1);

	/* A span across threads with hostile name and args at both ends. */
	CTRACE_SPAN_BEGIN(NULL, &crossing, "cross \xc0\xaf \x1b[31m end", "{\"begin\":\"\\ud83c\\udf89\"}");
	if (pthread_create(&t, NULL, end_elsewhere, NULL) != 0)
		return 1;
	pthread_join(t, NULL);

	/* Args: a lone surrogate escape, raw bytes in a string, in a key. */
	CTRACE_INSTANT(NULL, "args-lone-surrogate", CTRACE_SCOPE_THREAD, "{\"k\":\"\\ud800\"}");
	CTRACE_INSTANT(NULL, "args-raw-bytes", CTRACE_SCOPE_THREAD, "{\"k\":\"\xff\x01\x7f\"}");
	CTRACE_INSTANT(NULL, "args-key-bytes", CTRACE_SCOPE_THREAD, "{\"\x01\xfe\":1}");

	/* Ended twice; a marker discarded that never was. */
	CTRACE_SPAN_BEGIN(NULL, &twice, "twice", NULL);
	CTRACE_SPAN_END(&twice, NULL);
	CTRACE_SPAN_END(&twice, NULL);
	CTRACE_DISCARD(&never);
	CTRACE_INSTANT(&never, "after-discard", CTRACE_SCOPE_THREAD, NULL);

	/* The worst records, as fast as possible. */
	for (int i = 0; i < BURST; i++)
		CTRACE_INSTANT(NULL, big, CTRACE_SCOPE_THREAD, deep);

	CTRACE_INSTANT(NULL, "after", CTRACE_SCOPE_THREAD, "{\"ok\":true}");
	printf("burst=%d still_armed=%d\n", BURST, CTRACE_ENABLED());
	fflush(stdout);
	free(big);
	free(deep);
	return 0;
}
