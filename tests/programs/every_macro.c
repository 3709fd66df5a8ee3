// SPDX-License-Identifier: MIT
/*
 * every_macro - uses every CTRACE_* macro once with known values, so that
 * tests/integration/test_trace.c can check the trace event by event.
 *
 * Prints "ready pid=P main_tid=T worker_tid=W" once the worker thread exists
 * (so the test knows every tid before tracing), waits up to 10 s for a tracer
 * (exit 3 if none comes), runs the scenario below and exits 0.
 *
 *   every_macro [SETTLE_MS]
 *
 * SETTLE_MS (default 0): wait that long after the tracer raised the
 * semaphore. Only for tools such as bpftrace, which attach one probe after
 * the other and so raise the semaphore before they are fully attached;
 * ctrace-bpf is tested without it.
 *
 * Scenario, in order (test_trace.c relies on these names and values):
 *   main:   X "outer" {"a":1}+{"d":4} containing X "inner" {"b":2}+{"c":3}
 *   main -> worker-1: span "cross-thread" {"from":"main"} / {"to":"worker"}
 *   main:   I "inst-g" (s g), "inst-p" (s p), "inst-t" (s t), args {"scope":..}
 *   main:   C "c" = 5, +2.5, -1           -> 5, 7.5, 6.5
 *   &m:     NEW_PID "pseudo A"; I "pseudo-instant"; X "pseudo-span";
 *           C "c" = 1, +1                 -> 1, 2 (its own "c")
 *   &m:     DISCARD; C "c" +0.25 -> 6.75 in the real process (proves both
 *           that the marker went back and that the two "c" are separate);
 *           I "after-discard"
 *   main:   span "never-ended" begun, never ended
 *   main:   SPAN_END of a span never begun
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int worker_tid;     /* set by the worker once it runs */
static int step;           /* 1: end the cross-thread span; 2: exit */
static int worker_done;    /* the worker ended the span */
static struct ctrace_span cross;

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void wait_for(int *var, int value)
{
	pthread_mutex_lock(&lock);
	while (*var < value)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void set_to(int *var, int value)
{
	pthread_mutex_lock(&lock);
	*var = value;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-1");
	set_to(&worker_tid, gettid_());
	wait_for(&step, 1);
	CTRACE_SPAN_END(&cross, "{\"to\":\"worker\"}");
	set_to(&worker_done, 1);
	/*
	 * Stay alive until main is done: the tracer names a thread from
	 * /proc/PID/task/TID/comm when it first sees one of its events.
	 */
	wait_for(&step, 2);
	return NULL;
}

int main(int argc, char **argv)
{
	struct ctrace_span outer, inner, pseudo_span, never, never_begun;
	pthread_t th;
	int m; /* only its address matters: the pseudo-process marker */
	int settle_ms = argc > 1 ? atoi(argv[1]) : 0;

	if (pthread_create(&th, NULL, worker, NULL)) {
		perror("pthread_create");
		return 1;
	}
	wait_for(&worker_tid, 1);
	printf("ready pid=%d main_tid=%d worker_tid=%d\n", (int)getpid(),
	       gettid_(), worker_tid);
	fflush(stdout);

	if (!wait_for_tracer()) {
		fprintf(stderr, "every_macro: no tracer attached within 10 s\n");
		return 3;
	}
	if (settle_ms > 0)
		usleep((useconds_t)settle_ms * 1000);

	/* Nested spans; the sleeps give them durations that nest visibly. */
	CTRACE_SPAN_BEGIN(NULL, &outer, "outer", "{\"a\":1}");
	usleep(1000);
	CTRACE_SPAN_BEGIN(NULL, &inner, "inner", "{\"b\":2}");
	usleep(2000);
	CTRACE_SPAN_END(&inner, "{\"c\":3}");
	usleep(1000);
	CTRACE_SPAN_END(&outer, "{\"d\":4}");

	/* Begun here, ended by the worker. */
	CTRACE_SPAN_BEGIN(NULL, &cross, "cross-thread", "{\"from\":\"main\"}");
	usleep(1000);
	set_to(&step, 1);
	wait_for(&worker_done, 1);

	CTRACE_INSTANT(NULL, "inst-g", CTRACE_SCOPE_GLOBAL, "{\"scope\":\"g\"}");
	CTRACE_INSTANT(NULL, "inst-p", CTRACE_SCOPE_PROCESS, "{\"scope\":\"p\"}");
	CTRACE_INSTANT(NULL, "inst-t", CTRACE_SCOPE_THREAD, "{\"scope\":\"t\"}");

	CTRACE_COUNTER_SET(NULL, "c", 5);
	CTRACE_COUNTER_ADD(NULL, "c", 2.5);
	CTRACE_COUNTER_ADD(NULL, "c", -1);

	CTRACE_NEW_PID(&m, "pseudo A");
	CTRACE_INSTANT(&m, "pseudo-instant", CTRACE_SCOPE_PROCESS, NULL);
	CTRACE_SPAN_BEGIN(&m, &pseudo_span, "pseudo-span", NULL);
	usleep(500);
	CTRACE_SPAN_END(&pseudo_span, NULL);
	CTRACE_COUNTER_SET(&m, "c", 1);
	CTRACE_COUNTER_ADD(&m, "c", 1);

	CTRACE_DISCARD(&m);
	CTRACE_COUNTER_ADD(&m, "c", 0.25);
	CTRACE_INSTANT(&m, "after-discard", CTRACE_SCOPE_THREAD, NULL);

	CTRACE_SPAN_BEGIN(NULL, &never, "never-ended", "{\"e\":5}");
	memset(&never_begun, 0, sizeof(never_begun));
	CTRACE_SPAN_END(&never_begun, NULL);

	/* Give the tracer a moment to name the worker before it exits. */
	usleep(200 * 1000);
	set_to(&step, 2);
	pthread_join(th, NULL);
	return 0;
}
