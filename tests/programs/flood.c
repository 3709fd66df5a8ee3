// SPDX-License-Identifier: MIT
/*
 * flood - two threads fire instants as fast as they can for MS milliseconds
 * (default 300) once a tracer is attached, then the program prints exactly
 * how many each fired and exits 0. With a small ring buffer most are lost:
 * the test checks that kept + dropped == emitted, to the event.
 *
 *   flood [MS]
 *
 * Prints "ready pid=P main_tid=T", "armed" once it sees the tracer, then
 * "emitted t0=N t1=N total=N still_armed=0|1". still_armed says the tracer
 * stayed attached all along (so every instant fired reached the probe).
 * Exits 3 if no tracer attaches within 10 s.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static atomic_int go, stop;

struct worker {
	pthread_t thread;
	unsigned long long fired;
};

static void *fire(void *arg)
{
	struct worker *w = arg;
	unsigned long long n = 0;

	while (!atomic_load_explicit(&go, memory_order_acquire))
		;
	/* Only what was fired while armed reaches the probe; the tracer stays
	 * attached until we exit, so this counts exactly the probe hits. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (!CTRACE_ENABLED())
			continue;
		CTRACE_INSTANT(NULL, "flood", CTRACE_SCOPE_THREAD, NULL);
		n++;
	}
	w->fired = n;
	return NULL;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 300;
	struct worker w[2] = { { 0 } };
	struct timespec run = { ms / 1000, (ms % 1000) * 1000000L };

	if (!ready_and_wait()) {
		fprintf(stderr, "flood: no tracer attached within 10 s\n");
		return 3;
	}
	puts("armed");
	fflush(stdout);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&w[i].thread, NULL, fire, &w[i]) != 0)
			return 1;
	atomic_store_explicit(&go, 1, memory_order_release);
	nanosleep(&run, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	printf("emitted t0=%llu t1=%llu total=%llu still_armed=%d\n", w[0].fired, w[1].fired,
	       w[0].fired + w[1].fired, CTRACE_ENABLED());
	fflush(stdout);
	return 0;
}
