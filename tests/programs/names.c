// SPDX-License-Identifier: MIT
/*
 * names - thread names and sort indexes, for test_names. After the tracer
 * armed the probes (exit 3 if none came):
 *   - the main thread names itself "main: the loop" (a literal), sets
 *     CTRACE_PROCESS_SORT_INDEX(-3) and CTRACE_THREAD_SORT_INDEX(5);
 *   - thread "given" names itself with CTRACE_THREAD_NAME (a name built at
 *     run time, longer than the kernel's 15 bytes), fires "named", waits 300 ms (the tracer reads
 *     /proc's names every 100 ms meanwhile) and fires "still named";
 *   - thread "renamer" fires "before", renames itself with
 *     pthread_setname_np ("renamed-one"), fires "after-setname", renames
 *     itself with prctl(PR_SET_NAME) ("renamed-two"), fires "after-prctl"
 *     and exits at once: within a millisecond or so, well between two of
 *     the tracer's looks at /proc;
 *   - thread "other" is renamed by the main thread ("renamed-by-main",
 *     pthread_setname_np of another thread), then fires "other-after" and
 *     lives on 300 ms: when the tracer first shows it (its events are
 *     modelled late), /proc already gives the new name.
 * Prints "given_tid=T renamer_tid=T other_tid=T" and "names done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

#define GIVEN_NAME "acceptor: a name longer than the kernel's fifteen bytes"

static long given_tid, renamer_tid, other_tid;
static volatile int other_ready, other_go;

static void *given(void *arg)
{
	char name[96];

	(void)arg;
	given_tid = syscall(SYS_gettid);
	snprintf(name, sizeof(name), "%s", GIVEN_NAME); /* built at run time, as most are */
	CTRACE_THREAD_NAME(name);
	CTRACE_INSTANT(NULL, "named", CTRACE_SCOPE_THREAD, NULL);
	usleep(300000);
	CTRACE_INSTANT(NULL, "still named", CTRACE_SCOPE_THREAD, NULL);
	return NULL;
}

static void *renamer(void *arg)
{
	(void)arg;
	renamer_tid = syscall(SYS_gettid);
	CTRACE_INSTANT(NULL, "before", CTRACE_SCOPE_THREAD, NULL);
	pthread_setname_np(pthread_self(), "renamed-one");
	CTRACE_INSTANT(NULL, "after-setname", CTRACE_SCOPE_THREAD, NULL);
	prctl(PR_SET_NAME, "renamed-two", 0, 0, 0);
	CTRACE_INSTANT(NULL, "after-prctl", CTRACE_SCOPE_THREAD, NULL);
	return NULL;
}

static void *other(void *arg)
{
	(void)arg;
	other_tid = syscall(SYS_gettid);
	CTRACE_INSTANT(NULL, "other-before", CTRACE_SCOPE_THREAD, NULL);
	__atomic_store_n(&other_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&other_go, __ATOMIC_ACQUIRE))
		usleep(100);
	CTRACE_INSTANT(NULL, "other-after", CTRACE_SCOPE_THREAD, NULL);
	usleep(300000);
	return NULL;
}

int main(void)
{
	pthread_t g, r, o;

	if (!ready_and_wait())
		return 3;
	CTRACE_THREAD_NAME("main: the loop");
	CTRACE_PROCESS_SORT_INDEX(-3);
	CTRACE_THREAD_SORT_INDEX(5);
	pthread_create(&g, NULL, given, NULL);
	pthread_create(&r, NULL, renamer, NULL);
	pthread_join(r, NULL);
	pthread_create(&o, NULL, other, NULL);
	/* Renamed once it fired "other-before" (a busy machine may start it late). */
	while (!__atomic_load_n(&other_ready, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(1000);
	pthread_setname_np(o, "renamed-by-main");
	__atomic_store_n(&other_go, 1, __ATOMIC_RELEASE);
	pthread_join(o, NULL);
	pthread_join(g, NULL);
	printf("given_tid=%ld renamer_tid=%ld other_tid=%ld\n", given_tid, renamer_tid, other_tid);
	printf("names done\n");
	fflush(stdout);
	return 0;
}
