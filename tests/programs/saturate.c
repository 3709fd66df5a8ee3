// SPDX-License-Identifier: MIT
/*
 * saturate - keeps every CPU busy firing events as fast as it can: two
 *  threads per CPU, each in a loop of spans and instants with arguments,
 * while a tracer is attached. A tracer competing with it for the CPUs must
 * still stop on time (-d) with a complete file.
 *
 *   saturate [SECONDS [THREADS_PER_CPU]]   (default 30 s: it runs on after the
 *                                          tracer is gone; 2 threads a CPU)
 *
 * Prints "ready pid=P main_tid=T threads=N", "armed mono_ns=NS" (CLOCK_MONOTONIC)
 * once it sees the tracer, "disarmed mono_ns=NS" once the tracer has let go
 * (within a millisecond); exits 0 after SECONDS, 3 if no tracer attaches
 * within 10 s.
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static atomic_int stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct ctrace_span sp;

		if (!CTRACE_ENABLED())
			continue;
		CTRACE_SPAN_BEGIN(NULL, &sp, "spin", "{\"what\":\"a span with some arguments\"}");
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, "{\"n\":1}");
		CTRACE_COUNTER_ADD(NULL, "spins", 1);
		CTRACE_SPAN_END(&sp, NULL);
	}
	return NULL;
}

static void say_mono(const char *what)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("%s mono_ns=%llu\n", what, (unsigned long long)now.tv_sec * 1000000000ull +
	       (unsigned long long)now.tv_nsec);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int per_cpu = argc > 2 ? atoi(argv[2]) : 2;
	int n = (int)(cpus > 0 ? cpus : 1) * (per_cpu > 0 ? per_cpu : 1);
	pthread_t *t = calloc((size_t)n, sizeof(*t));

	if (!t)
		return 1;
	printf("ready pid=%d main_tid=%d threads=%d\n", (int)getpid(), (int)syscall(SYS_gettid), n);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, spin, NULL) != 0)
			return 1;
	/* This thread only watches for the tracer (the spinners, created before, keep nice 0). */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	if (!wait_for_tracer()) {
		fprintf(stderr, "saturate: no tracer attached within 10 s\n");
		return 3;
	}
	/* When the probes rose, as closely as we can tell: the test measures -d from here. */
	say_mono("armed");
	for (long ms = 0, armed = 1; ms < seconds * 1000L; ms++) {
		if (armed && !CTRACE_ENABLED()) {
			say_mono("disarmed");
			armed = 0;
		}
		usleep(1000);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}
