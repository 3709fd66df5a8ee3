// SPDX-License-Identifier: MIT
#include "session/tracer_priority.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static bool started, raised;
static int nice_at_start;

/* The watcher (tracer_priority_watch): its thread id, kept at -20 throughout. */
static struct {
	pthread_t thread;
	bool running;
	pid_t tid;
	uint64_t raise_at_ns;
	volatile sig_atomic_t *stop_request;
	bool quit;
} watch;

/* A nice value is a thread's own: each thread of the process set apart (the watcher's stays). */
static void set_every_thread(int nice)
{
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *d;

	setpriority(PRIO_PROCESS, 0, nice);
	while (tasks && (d = readdir(tasks))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

		if (tid > 0 && !(watch.running && tid == watch.tid))
			setpriority(PRIO_PROCESS, (id_t)tid, nice);
	}
	if (tasks)
		closedir(tasks);
}

void tracer_priority_raise(void)
{
	int nice;

	if (!started) {
		errno = 0;
		nice = getpriority(PRIO_PROCESS, 0);
		if (errno)
			return;
		nice_at_start = nice;
		started = true;
	}
	/* The watcher and the loop may both come: one does it. */
	if (!__atomic_exchange_n(&raised, true, __ATOMIC_ACQ_REL))
		set_every_thread(-20);
}

void tracer_priority_for_child(void)
{
	if (started)
		setpriority(PRIO_PROCESS, 0, nice_at_start);
}

void tracer_priority_restore(void)
{
	if (__atomic_exchange_n(&raised, false, __ATOMIC_ACQ_REL))
		set_every_thread(nice_at_start);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps in short steps; at the moment or the request, every thread goes up. */
static void *watcher(void *arg)
{
	const struct timespec step = { 0, WATCH_STEP_NS };

	(void)arg;
	__atomic_store_n(&watch.tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&watch.quit, __ATOMIC_ACQUIRE)) {
		if (*watch.stop_request || (watch.raise_at_ns && now_ns() >= watch.raise_at_ns)) {
			tracer_priority_raise();
			break;
		}
		nanosleep(&step, NULL);
	}
	return NULL;
}

void tracer_priority_watch(uint64_t raise_at_ns, volatile sig_atomic_t *stop_request)
{
	if (!__atomic_load_n(&raised, __ATOMIC_ACQUIRE) || watch.running)
		return; /* no right to raise it, or watched already */
	watch.raise_at_ns = raise_at_ns;
	watch.stop_request = stop_request;
	watch.quit = false;
	/* Started while the tracer is raised: it runs at -20 from its first instruction. */
	watch.running = pthread_create(&watch.thread, NULL, watcher, NULL) == 0;
	while (watch.running && !__atomic_load_n(&watch.tid, __ATOMIC_ACQUIRE))
		sched_yield();
}

void tracer_priority_watch_end(void)
{
	if (!watch.running)
		return;
	__atomic_store_n(&watch.quit, true, __ATOMIC_RELEASE);
	pthread_join(watch.thread, NULL);
	watch.running = false;
	watch.tid = 0;
}
