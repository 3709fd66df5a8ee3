// SPDX-License-Identifier: MIT
/*
 * demo - a small "server" with ctrace probes compiled in, for trying
 * ctrace-bpf: `./build/examples/demo [SECONDS]` runs on its own (the probes
 * cost nothing) until SECONDS pass (default: forever); trace it with
 * `sudo ./build/ctrace-bpf -p $(pidof demo) -d 3`.
 *
 * Two workers take requests from a queue the main thread fills. Each request
 * is a span that begins on the main thread and ends on a worker (an async
 * slice); the work inside is nested spans on the worker's own track; the
 * queue depth and bytes handled are counters; a cache flush is an instant;
 * each worker's requests also go to a pseudo-process of their own.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <ctrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_LEN 64

struct request {
	struct ctrace_span span; /* begun by main, ended by a worker */
	int id;
	int size;
};

static struct request *queue[QUEUE_LEN];
static int q_head, q_tail;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static volatile int stopping;

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static void parse(struct request *r)
{
	struct ctrace_span sp;

	CTRACE_SPAN_BEGIN(NULL, &sp, "parse", NULL);
	sleep_us(100 + r->size % 300);
	CTRACE_SPAN_END(&sp, NULL);
}

static void handle(struct request *r, int worker)
{
	struct ctrace_span sp;
	char args[64];

	args[0] = '\0';
	if (CTRACE_ENABLED()) /* only format the arguments while traced */
		snprintf(args, sizeof(args), "{\"request\":%d,\"bytes\":%d}", r->id, r->size);
	CTRACE_SPAN_BEGIN(NULL, &sp, "handle", args);
	parse(r);
	sleep_us(200 + (r->id * 37) % 500);
	CTRACE_COUNTER_ADD(NULL, "bytes handled", r->size);
	CTRACE_SPAN_END(&sp, NULL);
	/* The same work, seen per worker in a pseudo-process of its own. */
	CTRACE_INSTANT(&queue[worker], "request done", CTRACE_SCOPE_THREAD, args);
}

static void *worker_main(void *arg)
{
	int worker = (int)(long)arg, handled = 0;

	pthread_setname_np(pthread_self(), worker ? "worker-B" : "worker-A");

	for (;;) {
		struct request *r;

		pthread_mutex_lock(&q_lock);
		while (q_head == q_tail && !stopping)
			pthread_cond_wait(&q_cond, &q_lock);
		if (q_head == q_tail) {
			pthread_mutex_unlock(&q_lock);
			break;
		}
		r = queue[q_head++ % QUEUE_LEN];
		CTRACE_COUNTER_SET(NULL, "queue depth", q_tail - q_head);
		pthread_mutex_unlock(&q_lock);
		/* Every 100 requests, a fresh pseudo-process for this worker's next batch. */
		if (handled++ % 100 == 0 && CTRACE_ENABLED()) {
			char pname[64];

			snprintf(pname, sizeof(pname), "worker %c: batch %d", 'A' + worker, handled / 100);
			CTRACE_NEW_PID(&queue[worker], pname);
		}
		handle(r, worker);
		CTRACE_SPAN_END(&r->span, "{\"status\":\"ok\"}");
		free(r);
	}
	CTRACE_DISCARD(&queue[worker]);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	pthread_t workers[2];
	struct timespec start, now;
	int id = 0;

	printf("demo: pid %d; trace it with: sudo ctrace-bpf -p %d -d 3\n", (int)getpid(), (int)getpid());
	fflush(stdout);
	for (long i = 0; i < 2; i++)
		pthread_create(&workers[i], NULL, worker_main, (void *)i);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct request *r = calloc(1, sizeof(*r));

		r->id = ++id;
		r->size = (id * 7919) % 4096;
		CTRACE_SPAN_BEGIN(NULL, &r->span, "request", NULL);
		pthread_mutex_lock(&q_lock);
		if (q_tail - q_head < QUEUE_LEN) {
			queue[q_tail++ % QUEUE_LEN] = r;
			r = NULL;
		}
		CTRACE_COUNTER_SET(NULL, "queue depth", q_tail - q_head);
		pthread_cond_signal(&q_cond);
		pthread_mutex_unlock(&q_lock);
		if (r) { /* queue full: drop it */
			CTRACE_SPAN_END(&r->span, "{\"status\":\"dropped\"}");
			free(r);
		}
		if (id % 100 == 0)
			CTRACE_INSTANT(NULL, "cache flush", CTRACE_SCOPE_PROCESS, NULL);
		sleep_us(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds > 0 && (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 >= seconds)
			break;
	}
	pthread_mutex_lock(&q_lock);
	stopping = 1;
	pthread_cond_broadcast(&q_cond);
	pthread_mutex_unlock(&q_lock);
	for (int i = 0; i < 2; i++)
		pthread_join(workers[i], NULL);
	return 0;
}
