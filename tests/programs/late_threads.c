// SPDX-License-Identifier: MIT
/*
 * late_threads - threads created after the tracer attached, for
 * tests/integration/test_processes.c.
 *
 *   late_threads [N [RENAME_MS]]
 *
 * Prints "ready pid=P main_tid=T" with only its main thread running, waits up
 * to 10 s for a tracer (exit 3 if none comes), then starts N threads (default
 * 3, at most 8). Thread K names itself "late-K" (RENAME_MS after it started,
 * default 0: a thread that gets its name late in life, as pool workers do),
 * prints "thread K tid=T",
 * emits an instant "late-hello" {"k":K} and an X "late-work" of ~1 ms, and
 * stays alive until main lets it go 300 ms later: long enough for the tracer,
 * which reads thread names from /proc every 100 ms, to learn its name. Main
 * emits "main-hello" once every thread said hello, joins them and exits 0.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int said_hello, released;
static int rename_ms;

static void *late(void *arg)
{
	int k = (int)(long)arg;
	struct ctrace_span sp;
	char name[16], args[32];

	snprintf(name, sizeof(name), "late-%d", k);
	if (rename_ms)
		usleep(rename_ms * 1000);
	pthread_setname_np(pthread_self(), name);
	snprintf(args, sizeof(args), "{\"k\":%d}", k);
	/* One line per thread, whole: stdout is shared. */
	pthread_mutex_lock(&lock);
	printf("thread %d tid=%d\n", k, (int)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_unlock(&lock);
	CTRACE_INSTANT(NULL, "late-hello", CTRACE_SCOPE_THREAD, args);
	CTRACE_SPAN_BEGIN(NULL, &sp, "late-work", args);
	usleep(1000);
	CTRACE_SPAN_END(&sp, NULL);
	pthread_mutex_lock(&lock);
	said_hello++;
	pthread_cond_broadcast(&cond);
	while (!released)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t threads[8];

	if (n < 1 || n > 8)
		n = 3;
	rename_ms = argc > 2 ? atoi(argv[2]) : 0;
	if (!ready_and_wait()) {
		puts("never armed");
		return 3;
	}
	for (int k = 0; k < n; k++)
		if (pthread_create(&threads[k], NULL, late, (void *)(long)k))
			return 4;
	pthread_mutex_lock(&lock);
	while (said_hello < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	CTRACE_INSTANT(NULL, "main-hello", CTRACE_SCOPE_THREAD, NULL);
	usleep(300 * 1000);
	pthread_mutex_lock(&lock);
	released = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int k = 0; k < n; k++)
		pthread_join(threads[k], NULL);
	return 0;
}
