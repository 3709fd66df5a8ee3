// SPDX-License-Identifier: MIT
/*
 * batched - what the batched path (usdt/ctrace_batch.h) must get right, one
 * scenario a run, for tests/integration/test_batch.c:
 *
 *   batched SCENARIO
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3 if
 * none comes), prints "armed", runs the scenario, prints "done ..." and:
 *
 *   idle       I "idle-0".."idle-2" (a few events: they stay in the
 *              buffer), "done", then sleeps 3 s and exits
 *   thread     a thread emits I "thread-0".."thread-9" and returns (its
 *              buffer is not full); main joins it, sleeps 300 ms, exits
 *   segv       I "crash-0".."crash-4", then a NULL write: SIGSEGV
 *   fork       I "pre-fork" (unflushed), fork(); the child emits I
 *              "child-event" and exits; the parent waits for it, emits
 *              I "post-fork", exits
 *   signal     SIGALRM every 100 us runs a handler that emits I "handler"
 *              while main emits I "main" in a loop (100000, and on until
 *              the handler ran 200 times, 10 s at most): prints
 *              "done main=N handler=M"
 *   cross      a span begun on a thread that then stays idle, ended on
 *              main 50 ms later (the end's batch may arrive first)
 *   exit       I "exit-0".."exit-2" (unflushed), "done", then _exit(0):
 *              exit_group() with no destructor run
 *   relay      20000 times: main begins span "relay" (one struct, one
 *              address), a worker ends it and hands it back, main begins
 *              it again microseconds later: "done relays=N"
 *   long       I "long-args" with a 2000-byte non-literal args (the
 *              per-event fallback) and "short-args" with {"k":1} built at
 *              run time (copied inline)
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handler_events;

static void on_alarm(int sig)
{
	(void)sig;
	CTRACE_INSTANT(NULL, "handler", CTRACE_SCOPE_THREAD, NULL);
	handler_events++;
}

static void *thread_events(void *arg)
{
	char name[32];

	(void)arg;
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "thread-%d", i);
		CTRACE_INSTANT(NULL, name, CTRACE_SCOPE_THREAD, NULL);
	}
	return NULL;
}

static struct ctrace_span cross;

static void *cross_idle(void *arg)
{
	(void)arg;
	CTRACE_SPAN_BEGIN(NULL, &cross, "cross", NULL);
	usleep(400 * 1000); /* idle with the BEGIN in its buffer */
	return NULL;
}

/* One span, begun by main and ended by a worker in turn (turn: 0 main, 1 worker, 2 stop). */
static struct ctrace_span relay;
static pthread_mutex_t relay_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t relay_cond = PTHREAD_COND_INITIALIZER;
static int relay_turn;

static void relay_wait(int turn)
{
	while (relay_turn != turn && relay_turn != 2)
		pthread_cond_wait(&relay_cond, &relay_lock);
}

static void relay_give(int turn)
{
	relay_turn = turn;
	pthread_cond_broadcast(&relay_cond);
}

static void *relay_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&relay_lock);
	for (;;) {
		relay_wait(1);
		if (relay_turn == 2)
			break;
		CTRACE_SPAN_END(&relay, NULL);
		relay_give(0);
	}
	pthread_mutex_unlock(&relay_lock);
	return NULL;
}

static double ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	double t0;

	printf("ready pid=%d main_tid=%d\n", (int)getpid(), (int)syscall(SYS_gettid));
	fflush(stdout);
	t0 = ms_now();
	while (!CTRACE_ENABLED()) {
		if (ms_now() - t0 > 10000) {
			puts("never armed");
			return 3;
		}
		usleep(1000);
	}
	puts("armed");
	fflush(stdout);
	if (!strcmp(what, "idle")) {
		CTRACE_INSTANT(NULL, "idle-0", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "idle-1", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "idle-2", CTRACE_SCOPE_THREAD, NULL);
		puts("done");
		fflush(stdout);
		sleep(3);
	} else if (!strcmp(what, "thread")) {
		pthread_t t;

		pthread_create(&t, NULL, thread_events, NULL);
		pthread_join(t, NULL);
		puts("done");
		fflush(stdout);
		usleep(300 * 1000);
	} else if (!strcmp(what, "segv")) {
		volatile int *null = NULL;

		CTRACE_INSTANT(NULL, "crash-0", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "crash-1", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "crash-2", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "crash-3", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "crash-4", CTRACE_SCOPE_THREAD, NULL);
		puts("done");
		fflush(stdout);
		*null = 1;
	} else if (!strcmp(what, "fork")) {
		pid_t child;

		CTRACE_INSTANT(NULL, "pre-fork", CTRACE_SCOPE_THREAD, NULL);
		child = fork();
		if (child == 0) {
			CTRACE_INSTANT(NULL, "child-event", CTRACE_SCOPE_THREAD, NULL);
			usleep(100 * 1000);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		CTRACE_INSTANT(NULL, "post-fork", CTRACE_SCOPE_THREAD, NULL);
		printf("done child=%d\n", (int)child);
		fflush(stdout);
		usleep(200 * 1000);
	} else if (!strcmp(what, "signal")) {
		struct sigaction sa;
		struct itimerval it = { { 0, 100 }, { 0, 100 } };
		long main_events = 0;
		int delivered;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		/*
		 * Spaced a little: a flood is test_flood's; here every event must
		 * fit. At least 100000 events, and on until the handler has run
		 * 200 times (at most 10 s): on a loaded machine the ticks of a
		 * short loop were fewer than the test needs to mean something.
		 */
		t0 = ms_now();
		for (; main_events < 100000 || (handler_events < 200 && ms_now() - t0 < 10000); main_events++) {
			CTRACE_INSTANT(NULL, "main", CTRACE_SCOPE_THREAD, NULL);
			for (volatile int spin = 0; spin < 200; spin++)
				;
		}
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		delivered = handler_events;
		printf("done main=%ld handler=%d\n", main_events, delivered);
		fflush(stdout);
		usleep(200 * 1000);
	} else if (!strcmp(what, "cross")) {
		pthread_t t;

		pthread_create(&t, NULL, cross_idle, NULL);
		usleep(50 * 1000);
		CTRACE_SPAN_END(&cross, NULL);
		pthread_join(t, NULL);
		puts("done");
		fflush(stdout);
		usleep(200 * 1000);
	} else if (!strcmp(what, "relay")) {
		pthread_t t;
		int n;

		pthread_create(&t, NULL, relay_worker, NULL);
		pthread_mutex_lock(&relay_lock);
		for (n = 0; n < 20000; n++) {
			CTRACE_SPAN_BEGIN(NULL, &relay, "relay", NULL);
			relay_give(1);
			relay_wait(0);
		}
		relay_give(2);
		pthread_mutex_unlock(&relay_lock);
		pthread_join(t, NULL);
		printf("done relays=%d\n", n);
		fflush(stdout);
		usleep(200 * 1000);
	} else if (!strcmp(what, "exit")) {
		CTRACE_INSTANT(NULL, "exit-0", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "exit-1", CTRACE_SCOPE_THREAD, NULL);
		CTRACE_INSTANT(NULL, "exit-2", CTRACE_SCOPE_THREAD, NULL);
		puts("done");
		fflush(stdout);
		_exit(0);
	} else if (!strcmp(what, "long")) {
		static char big[2001], small[32];

		memset(big, 'a', 2000);
		big[0] = '"';
		big[1999] = '"';
		snprintf(small, sizeof(small), "{\"k\":%d}", argc);
		CTRACE_INSTANT(NULL, "long-args", CTRACE_SCOPE_THREAD, big);
		CTRACE_INSTANT(NULL, "short-args", CTRACE_SCOPE_THREAD, small);
		puts("done");
		fflush(stdout);
		usleep(200 * 1000);
	} else {
		fprintf(stderr, "batched: unknown scenario '%s'\n", what);
		return 2;
	}
	return 0;
}
