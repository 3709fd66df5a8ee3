// SPDX-License-Identifier: MIT
/*
 * busy_threads - a process that keeps every CPU busy with many threads, so
 * that a tracer at an equal share of the CPU gets a few thousandths of one:
 * N threads spin, each firing an instant "spin" every ~1 ms of its own CPU
 * time (so the tracer has records to take at the stop too).
 *
 *   busy_threads N SECONDS
 *
 * Prints "ready ...", waits for a tracer, then starts the threads (the
 * tracer's start is not what this is about: a tracer started from another
 * session is not in the target's autogroup), prints "spinning", and after
 * SECONDS fires "end" and exits 0 (1: no tracer came).
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static atomic_bool stop;

static void *spin(void *arg)
{
	volatile unsigned long sink = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 200000; i++)
			sink += (unsigned long)i;
		CTRACE_INSTANT(NULL, "spin", CTRACE_SCOPE_THREAD, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, seconds = argc > 2 ? atoi(argv[2]) : 0;
	pthread_attr_t attr;
	pthread_t *t = calloc(n > 0 ? (size_t)n : 1, sizeof(*t));
	int traced;

	if (n <= 0 || seconds <= 0 || !t) {
		fprintf(stderr, "usage: busy_threads N SECONDS\n");
		return 2;
	}
	traced = ready_and_wait();
	if (!traced)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, spin, NULL) != 0) {
			fprintf(stderr, "busy_threads: cannot start thread %d\n", i);
			return 2;
		}
	puts("spinning");
	fflush(stdout);
	sleep((unsigned)seconds);
	CTRACE_INSTANT(NULL, "end", CTRACE_SCOPE_THREAD, NULL);
	atomic_store(&stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
