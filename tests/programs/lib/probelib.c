// SPDX-License-Identifier: MIT
/*
 * probelib.c - a shared library with ctrace probes, for
 * tests/integration/test_libraries.c. Not built by the Makefile (it has no
 * main): the test builds it, the way users build theirs, into its temp dir:
 *
 *   cc -shared -fPIC -Iinclude -DPROBELIB_NAME='"early"' probelib.c -o libearly.so
 *
 * Each .so built from it is its own object with its own semaphore (hidden
 * visibility), and says which one it is in every event it emits.
 */
#include <ctrace.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#ifndef PROBELIB_NAME
#define PROBELIB_NAME "probelib"
#endif

/* I "lib-hit" {"lib":NAME,"n":n} on the calling thread. */
void probelib_hit(int n)
{
	char args[64];

	if (CTRACE_ENABLED())
		snprintf(args, sizeof(args), "{\"lib\":\"%s\",\"n\":%d}", PROBELIB_NAME, n);
	CTRACE_INSTANT(NULL, "lib-hit", CTRACE_SCOPE_THREAD, args);
}

/*
 * I "hello from NAME" {"from":"NAME"}: both strings literals, which the
 * tracer copies once and then sends by address. Two libraries built with
 * names of one length have their literals at the same offsets: mapped at
 * the same address one after the other, they pass the same pointers.
 */
void probelib_hello(void)
{
	CTRACE_INSTANT(NULL, "hello from " PROBELIB_NAME, CTRACE_SCOPE_THREAD,
		       "{\"from\":\"" PROBELIB_NAME "\"}");
}

/* True while a tracer has raised this library's own semaphore. */
int probelib_armed(void)
{
	return CTRACE_ENABLED();
}

/* True while a batching tracer has raised this library's batch semaphore (usdt/ctrace_batch.h). */
int probelib_batching(void)
{
	return ctrace_batch_semaphore.semaphore != 0;
}

/*
 * Waits up to timeout_ms, polling every 1 ms, for this library's semaphore:
 * the milliseconds it took, or -1 if it never rose.
 */
long probelib_wait_armed(long timeout_ms)
{
	struct timespec t0, now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (CTRACE_ENABLED())
			return ms;
		if (ms >= timeout_ms)
			return -1;
		usleep(1000);
	}
}
