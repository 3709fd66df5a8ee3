// SPDX-License-Identifier: MIT
/*
 * dso_loader - a process whose probes live in its executable and in shared
 * libraries (built by the test from tests/programs/lib/probelib.c), for
 * tests/integration/test_libraries.c.
 *
 *   dso_loader late EARLY_SO LATE_SO
 *     dlopen()s EARLY_SO, prints "ready pid=P main_tid=T", waits up to 10 s
 *     for a tracer to arm the executable and EARLY_SO (exit 3 if not), then
 *     dlopen()s LATE_SO (after the attach, so only a tracer that watches for
 *     new libraries can see it), prints "late armed_ms=N" (how long after the
 *     dlopen its semaphore rose; -1: not within 1 s), waits until 300 ms after that dlopen, and calls
 *     EARLY_SO's probelib_hit(1), LATE_SO's probelib_hit(2), and emits the
 *     executable's own instant "exe-hit". Exits 0.
 *
 *   dso_loader soon EARLY_SO LATE_SO DELAY_MS
 *     Like late, but once armed waits for SIGUSR1 (sent by the test when
 *     the tracer has done its first attach; exit 3 if none within 10 s),
 *     then dlopen()s LATE_SO and calls its probelib_hit(2) DELAY_MS after
 *     (its first probe hit), checking meanwhile, without sleeping, when its
 *     semaphore rose. Prints "soon armed_us=N" (microseconds after the
 *     dlopen() returned; -1: not by the hit) and exits 0.
 *
 *   dso_loader reuse EARLY_SO A_SO B_SO
 *     Like late, then dlopen()s A_SO, waits for its probes, calls its
 *     probelib_hello(), dlclose()s it, dlopen()s B_SO (mapped where A_SO
 *     was, if the kernel reuses the hole), waits for its probes, calls its
 *     probelib_hello(). Prints "reuse same_base=0|1 a=0x.. b=0x.." and
 *     exits 0 (4 if a library was not armed within 2 s).
 *
 *   dso_loader loop EARLY_SO MS
 *     dlopen()s EARLY_SO, prints "ready ...", and for MS milliseconds calls
 *     probelib_hit(i) and emits "exe-tick" every 2 ms, traced or not. Then
 *     prints "hits=N armed_hits=M" (M: calls made while EARLY_SO's
 *     semaphore was up, i.e. while its probe site fired) and exits 0.
 *
 * Exit 2 on bad arguments or a library that does not load (dlerror on
 * stderr).
 */
#define _GNU_SOURCE /* dladdr */
#include <ctrace.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

struct probelib {
	void *handle;
	void (*hit)(int);
	void (*hello)(void);
	int (*armed)(void);
	long (*wait_armed)(long);
};

static int load(const char *path, struct probelib *l)
{
	/* RTLD_LOCAL: two libraries built from one source keep their own symbols. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	l->handle = h;
	*(void **)&l->hit = dlsym(h, "probelib_hit");
	*(void **)&l->hello = dlsym(h, "probelib_hello");
	*(void **)&l->armed = dlsym(h, "probelib_armed");
	*(void **)&l->wait_armed = dlsym(h, "probelib_wait_armed");
	if (!l->hit || !l->hello || !l->armed || !l->wait_armed) {
		fprintf(stderr, "%s: not a probelib\n", path);
		return -1;
	}
	return 0;
}

/* Loads EARLY_SO, says ready, waits for a tracer to arm it and the executable. */
static int start(const char *early_so, struct probelib *early)
{
	struct timespec t0;

	if (load(early_so, early) < 0)
		return 2;
	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!CTRACE_ENABLED() || !early->armed()) {
		if (ms_since(&t0) >= 10000) {
			puts("never armed");
			return 3;
		}
		usleep(1000);
	}
	return 0;
}

/* start, then loads a second library: after the attach. */
static int start_then_load(const char *early_so, struct probelib *early, const char *so,
			   struct probelib *lib)
{
	int err = start(early_so, early);

	if (err)
		return err;
	return load(so, lib) < 0 ? 2 : 0;
}

static int soon(const char *early_so, const char *late_so, long delay_ms)
{
	struct probelib early, later;
	struct timespec t0;
	long armed_us = -1;
	const struct timespec ten_s = { 10, 0 };
	sigset_t usr1;
	int err;

	/* Blocked before the ready line: a signal sent early waits, it is not lost. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	err = start(early_so, &early);
	if (err)
		return err;
	if (sigtimedwait(&usr1, NULL, &ten_s) != SIGUSR1) {
		puts("no SIGUSR1");
		return 3;
	}
	if (load(late_so, &later) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (us_since(&t0) < delay_ms * 1000)
		if (armed_us < 0 && later.armed())
			armed_us = us_since(&t0);
	later.hit(2);
	printf("soon armed_us=%ld\n", armed_us);
	fflush(stdout);
	CTRACE_INSTANT(NULL, "exe-hit", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}

static int reuse(const char *early_so, const char *a_so, const char *b_so)
{
	struct probelib early, a, b;
	Dl_info ia, ib;
	int err = start_then_load(early_so, &early, a_so, &a);

	if (err)
		return err;
	if (a.wait_armed(2000) < 0)
		return 4;
	a.hello();
	if (!dladdr(*(void **)&a.hello, &ia))
		return 2;
	dlclose(a.handle);
	if (load(b_so, &b) < 0)
		return 2;
	if (b.wait_armed(2000) < 0)
		return 4;
	b.hello();
	if (!dladdr(*(void **)&b.hello, &ib))
		return 2;
	printf("reuse same_base=%d a=%p b=%p\n", ia.dli_fbase == ib.dli_fbase, ia.dli_fbase,
	       ib.dli_fbase);
	fflush(stdout);
	CTRACE_INSTANT(NULL, "exe-hit", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}

static int late(const char *early_so, const char *late_so)
{
	struct probelib early, later;
	struct timespec t0;
	long armed_ms;
	int err = start_then_load(early_so, &early, late_so, &later);

	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	armed_ms = later.wait_armed(1000);
	printf("late armed_ms=%ld\n", armed_ms);
	fflush(stdout);
	while (ms_since(&t0) < 300)
		usleep(1000);
	early.hit(1);
	later.hit(2);
	CTRACE_INSTANT(NULL, "exe-hit", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}

static int loop(const char *so, long ms)
{
	struct probelib lib;
	struct timespec t0;
	long hits = 0, armed_hits = 0;

	if (load(so, &lib) < 0)
		return 2;
	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < ms) {
		armed_hits += lib.armed() != 0;
		lib.hit((int)hits++);
		CTRACE_INSTANT(NULL, "exe-tick", CTRACE_SCOPE_THREAD, NULL);
		usleep(2000);
	}
	printf("hits=%ld armed_hits=%ld\n", hits, armed_hits);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "late"))
		return late(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "soon"))
		return soon(argv[2], argv[3], atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "reuse"))
		return reuse(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "loop"))
		return loop(argv[2], atol(argv[3]));
	fputs("usage: dso_loader late EARLY_SO LATE_SO | soon EARLY_SO LATE_SO DELAY_MS |"
	      " reuse EARLY_SO A_SO B_SO | loop SO MS\n", stderr);
	return 2;
}
