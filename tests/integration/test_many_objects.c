// SPDX-License-Identifier: MIT
/*
 * test_many_objects - a thread may own a batch buffer in any number of
 * objects (the executable and each library with probes: usdt/ctrace_batch.h),
 * and when it dies with events in all of them, each buffer is copied by
 * the kernel side (bpf/ctrace.bpf.c: batch_rescue), or what was not is
 * counted: kept + dropped == emitted, exactly, and no event twice.
 *
 * tests/programs/many_objects emits events in its executable and in N
 * copies of one library built here from tests/programs/lib/probelib.c (as
 * test_libraries builds its own), then exits at once: only the copy at the
 * thread's death can keep the events still in the buffers. The same with
 * 20 threads in a row (each thread's buffers are taken over, and emptied,
 * by the next one), with 70 libraries (30 with perf uprobes), in a forked
 * child, and with the syscall watch of kernels without sched_prepare_exec.
 * A buffer the kernel side cannot watch (its table full) is counted and
 * said.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "probelib_build.h"
#include "target_check.h"
#include "trace_run.h"

/* As in tests/programs/many_objects.c. */
#define EVENTS 3
#define THREADS 20
#define MOST_LIBS 70

static char libdir[64];
static char build_error[2048];
static struct trace_run r;

/* libmany.so built once, copied to libmany0.so .. libmany69.so: each copy an object of its own. */
static int group_setup(void **state)
{
	char built[128];

	(void)state;
	snprintf(libdir, sizeof(libdir), "/tmp/ctrace-many-XXXXXX");
	if (!mkdtemp(libdir)) {
		snprintf(build_error, sizeof(build_error), "mkdtemp: %s", strerror(errno));
		libdir[0] = '\0';
		return 0;
	}
	chmod(libdir, 0755);
	if (probelib_build(libdir, "many", "-O2", built, sizeof(built), build_error, sizeof(build_error)) < 0)
		return 0;
	for (int k = 0; k < MOST_LIBS; k++)
		if (tr_shell("cp %s %s/libmany%d.so", built, libdir, k) != 0) {
			snprintf(build_error, sizeof(build_error), "cp %s to %s/libmany%d.so failed", built, libdir, k);
			return 0;
		}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (libdir[0])
		tr_shell("rm -rf %s", libdir);
	return 0;
}

/* A test's CTRACE_CONVERT: the environment's put back after it. */
static char *convert_was;
static bool converting;

static int free_all(void **state)
{
	(void)state;
	if (converting)
		tr_convert_end(convert_was);
	converting = false;
	unsetenv("CTRACE_DEATH_WATCH");
	unsetenv("CTRACE_BATCH_SLOTS_MAX");
	tr_free(&r);
	return 0;
}

static bool per_event_run(void)
{
	return getenv("CTRACE_NO_BATCH") && !strcmp(getenv("CTRACE_NO_BATCH"), "1");
}

/* `many_objects MODE WAIT DIR nlibs` traced with -p PID and tracer_args; fails unless both exit 0. */
static void run_many(const char *mode, int nlibs, const char *const *tracer_args)
{
	char n[16];
	const char *const prog_args[] = { mode, per_event_run() ? "armed" : "batched", libdir, n, NULL };

	tr_require_root();
	if (build_error[0])
		fail_msg("building the test library failed: %s", build_error);
	snprintf(n, sizeof(n), "%d", nlibs);
	if (tr_run(&r, "many_objects", prog_args, tracer_args) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0)
		fail_msg("many_objects exited %d; stdout:\n%s", r.prog_exit, r.prog_stdout);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d; stderr:\n%s", r.tracer_exit, r.tracer_stderr);
}

/*
 * The events of `threads` threads in nlibs + 1 objects found in the trace,
 * by their args.n: fails if one is there twice, or on another thread than
 * the rest of its thread's.
 */
static int count_kept(int nlibs, int threads)
{
	int objects = nlibs + 1, emitted = threads * objects * EVENTS, kept = 0;
	unsigned char *seen = calloc((size_t)emitted, 1);
	double *tids = calloc((size_t)threads, sizeof(double));
	const char *done = r.prog_stdout ? strstr(r.prog_stdout, "done emitted=") : NULL;
	const cJSON *ev;

	assert_non_null(seen);
	assert_non_null(tids);
	if (!done || atoi(done + strlen("done emitted=")) != emitted)
		fail_msg("many_objects did not say it emitted %d events; stdout:\n%s", emitted, r.prog_stdout);
	cJSON_ArrayForEach(ev, r.events) {
		const char *ph = tr_str(ev, "ph"), *name = tr_str(ev, "name");
		const cJSON *arg = tr_arg(ev, "n");
		double n = cJSON_IsNumber(arg) ? arg->valuedouble : -1;
		int t, obj, i;

		if (!ph || strcmp(ph, "I") || !name || (strcmp(name, "exe-hit") && strcmp(name, "lib-hit")))
			continue;
		if (!(n >= 0))
			fail_msg("a %s event without args.n", name);
		t = (int)n / 1000000;
		obj = (int)n % 1000000 / 100;
		i = (int)n % 100;
		if (t >= threads || obj >= objects || i >= EVENTS || (obj == 0) != !strcmp(name, "exe-hit"))
			fail_msg("%s event n=%.0f: not one many_objects emitted", name, n);
		if (seen[(t * objects + obj) * EVENTS + i]++)
			fail_msg("%s event n=%.0f is in the trace twice", name, n);
		if (!tids[t])
			tids[t] = tr_num(ev, "tid");
		else if (tids[t] != tr_num(ev, "tid"))
			fail_msg("thread %d's events are on threads %.0f and %.0f", t, tids[t], tr_num(ev, "tid"));
		kept++;
	}
	free(seen);
	free(tids);
	return kept;
}

/*
 * Every event is in the trace once, or counted in dropped_events. Nothing
 * here can fill the ring (a few KiB of events), so every event is expected
 * kept.
 */
static void check_every_event(int nlibs, int threads)
{
	int emitted = threads * (nlibs + 1) * EVENTS, kept = count_kept(nlibs, threads);
	double dropped = tr_meta_num(&r, "dropped_events");

	print_message("%d events emitted in %d objects by %d thread(s): %d kept, %.0f dropped\n", emitted,
		      nlibs + 1, threads, kept, dropped);
	if (kept + dropped != emitted)
		fail_msg("kept %d + dropped %.0f != emitted %d: %.0f events lost and not counted", kept, dropped,
			 emitted, emitted - kept - dropped);
	assert_int_equal(kept, emitted);
}

/* main's events in the executable and 8 libraries (9 buffers), then _exit(). */
static void test_exit_with_events_in_nine_objects(void **state)
{
	(void)state;
	run_many("exit", 8, NULL);
	check_every_event(8, 1);
}

/* 20 threads in a row, each with events in 9 objects. */
static void test_threads_in_a_row_with_events_in_nine_objects(void **state)
{
	(void)state;
	run_many("threads", 8, NULL);
	check_every_event(8, THREADS);
}

/*
 * 71 objects: past any handful of buffers a thread might be expected to
 * have. 31 with perf uprobes (CTRACE_NO_MULTI=1): they are detached one at
 * a time, and the 141 of 71 objects took 32 s here, past the harness's 30.
 */
static void test_exit_with_events_in_many_objects(void **state)
{
	int nlibs = getenv("CTRACE_NO_MULTI") && !strcmp(getenv("CTRACE_NO_MULTI"), "1") ? 30 : MOST_LIBS;

	(void)state;
	run_many("exit", nlibs, NULL);
	check_every_event(nlibs, 1);
}

/*
 * The process exits while the tracer is still attaching its libraries
 * (it waits for its executable's probes alone): a library whose file is
 * gone with the process is the process's end, not an error. Every event
 * of the executable is kept; the tracer exits 0 with nothing on stderr
 * about an attach.
 */
static void test_exit_during_the_attach(void **state)
{
	char n[16];
	const char *const prog_args[] = { "exit", per_event_run() ? "first-armed" : "first-batched", libdir, n, NULL };

	(void)state;
	tr_require_root();
	if (build_error[0])
		fail_msg("building the test library failed: %s", build_error);
	snprintf(n, sizeof(n), "%d", MOST_LIBS);
	if (tr_run(&r, "many_objects", prog_args, NULL) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0)
		fail_msg("many_objects exited %d; stdout:\n%s", r.prog_exit, r.prog_stdout);
	if (r.tracer_exit != 0 || (r.tracer_stderr && strstr(r.tracer_stderr, "cannot attach")))
		fail_msg("the tracer exited %d; stderr:\n%s", r.tracer_exit, r.tracer_stderr);
	assert_int_equal(tc_count(&r, "I", "exe-hit"), EVENTS);
}

/* The syscall watch (kernels before sched_prepare_exec): the same copies, from other programs. */
static void test_threads_watched_by_syscalls(void **state)
{
	(void)state;
	setenv("CTRACE_DEATH_WATCH", "syscalls", 1);
	run_many("threads", 8, NULL);
	check_every_event(8, THREADS);
}

/*
 * Followed (-f), main forks after its events in 9 objects: the child's
 * copies of main's 9 buffers, with its own events appended, are copied at
 * its exit; main's events once (not again from the child's copies), the
 * child's once.
 */
static void test_forked_child_with_events_in_nine_objects(void **state)
{
	const char *const follow[] = { "-f", NULL };

	(void)state;
	run_many("fork", 8, follow);
	check_every_event(8, 2);
}

/*
 * The same converted behind the capture (trace_behind.h): the conversion
 * never sees the child's memory, and the capture has no look at it, only
 * the fork: its literals are read from the files its parent mapped.
 */
static void test_forked_child_behind_the_capture(void **state)
{
	const char *const follow[] = { "-f", NULL };

	(void)state;
	convert_was = tr_convert_begin("behind");
	converting = true;
	run_many("fork", 8, follow);
	check_every_event(8, 2);
}

/*
 * A table of threads' buffers too small for the thread's 9
 * (CTRACE_BATCH_SLOTS_MAX=4): the 5 buffers the kernel side cannot copy at
 * the thread's death are counted in metadata.batch.unwatched_buffers and
 * said on stderr; the 4 it watches are copied.
 */
static void test_buffers_not_watched_are_said(void **state)
{
	const cJSON *batch;

	(void)state;
	if (per_event_run())
		skip(); /* no buffers */
	setenv("CTRACE_BATCH_SLOTS_MAX", "4", 1);
	run_many("exit", 8, NULL);
	batch = cJSON_GetObjectItem(tr_meta(&r), "batch");
	assert_int_equal((int)tr_num(batch, "unwatched_buffers"), 5);
	if (!strstr(r.tracer_stderr, "5 batch buffers were not watched"))
		fail_msg("the tracer did not say that 5 buffers were not watched; stderr:\n%s", r.tracer_stderr);
	if (count_kept(8, 1) < 4 * EVENTS)
		fail_msg("%d events kept: fewer than the %d of the 4 buffers watched", count_kept(8, 1), 4 * EVENTS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_exit_with_events_in_nine_objects, free_all),
		cmocka_unit_test_teardown(test_threads_in_a_row_with_events_in_nine_objects, free_all),
		cmocka_unit_test_teardown(test_exit_with_events_in_many_objects, free_all),
		cmocka_unit_test_teardown(test_exit_during_the_attach, free_all),
		cmocka_unit_test_teardown(test_threads_watched_by_syscalls, free_all),
		cmocka_unit_test_teardown(test_forked_child_with_events_in_nine_objects, free_all),
		cmocka_unit_test_teardown(test_forked_child_behind_the_capture, free_all),
		cmocka_unit_test_teardown(test_buffers_not_watched_are_said, free_all),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
