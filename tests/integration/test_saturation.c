// SPDX-License-Identifier: MIT
/*
 * test_saturation - a target whose threads keep every CPU busy firing
 * events flat out (tests/programs/saturate, two threads a CPU) leaves the
 * tracer a small share of a CPU. `-d 2` must still end within 10%: the
 * trace stops 2.0-2.2 s after the probes rose, and the tracer exits at most
 * DETACH_EXTRA later than that bound, with a complete, valid file whose
 * losses are counted (the ring buffer overflows under such a load). Three
 * runs, each must keep it. (It took 75 s and 264 s before rounds were
 * bounded by time.) Converted behind a capture (trace_behind.h), the
 * command ends when the conversion does: what is bounded is the probes'
 * going (the target's semaphore down), and the target is stopped then, so
 * that the conversion has the CPUs it would have once a load ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define RUNS 3
/*
 * The kernel's part of the exit: the uprobe links go with an RCU grace
 * period, which under this load takes 50-360 ms; the tracer starts it
 * before the deadline's drain but cannot hurry it (2.07-2.24 s seen on a
 * machine also running other tests).
 */
#define DETACH_EXTRA 0.3
#define DURATION 2.0
#define SLACK 0.10 /* -d within 10% */
/*
 * Built with ASan (make SANITIZE=1: the tracer beside us is too), the
 * tracer's own exit takes 0.1-0.4 s more here (the sanitizer's teardown):
 * the trace must still stop on time, the exit gets that much more.
 */
#if defined(__SANITIZE_ADDRESS__)
#define EXIT_EXTRA 0.4
#else
#define EXIT_EXTRA 0.0
#endif
/*
 * With perf uprobes (kernels before uprobe_multi links, or CTRACE_NO_MULTI)
 * the kernel releases them one after the other, a grace period each (0.1 s
 * under this load: 0.6-1.4 s for the six of this target): the trace stops
 * on time, the exit waits for the kernel. Bounded loosely, against a hang.
 */
#define PERF_EXIT_LIMIT 5.0

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CLOCK_MONOTONIC seconds saturate printed as `what` mono_ns=NS. */
static double said_at(struct trace_run *run, const char *what)
{
	char *out = tr_read_file(run->prog.out_path, NULL), line[32], pattern[32];
	const char *at;
	unsigned long long ns = 0;

	snprintf(line, sizeof(line), "\n%s mono_ns=", what); /* a line of its own: "armed" is in "disarmed" */
	snprintf(pattern, sizeof(pattern), "\n%s mono_ns=%%llu", what);
	at = out ? strstr(out, line) : NULL;
	if (!at || sscanf(at, pattern, &ns) != 1)
		fail_msg("saturate did not say when it was %s: %s", what, out ? out : "");
	free(out);
	return (double)ns / 1e9;
}

/*
 * One run: the seconds from the probes' rise to the tracer's exit (behind
 * a capture: to the probes' going); *stopped: to the trace's stop; *perf:
 * the probes were perf uprobes.
 */
static double one_run(int i, double *stopped, bool *perf)
{
	const char *const prog_args[] = { "60", NULL };
	/*
	 * A 64 KiB ring: with the default one the loader now keeps up with
	 * four threads on per-event probes (CI, copy_user set: 1.39 M events
	 * in 2 s, none lost), and a run that loses nothing proves nothing.
	 */
	const char *const tracer_args[] = { "-d", "2", "-b", "64K", NULL };
	struct trace_run run;
	double took, events, dropped, armed;
	bool behind = tr_converts_behind();
	cJSON *m;
	char trace_path[sizeof(run.trace_path)];

	/*
	 * The file on tmpfs: what is timed is the tracer with the CPUs taken,
	 * not the disk. The loader writes ~200 MB in these 2 s, which this
	 * VM's disk takes longer to sync than the 10% that -d allows (CI:
	 * 2.515 s once, the fdatasync alone 143 ms).
	 */
	snprintf(trace_path, sizeof(trace_path), "/dev/shm/ctrace-saturation-%d-%d.json", (int)getpid(), i);
	if (tr_init(&run) < 0)
		fail_msg("run %d: %s", i, run.error);
	memcpy(run.trace_path, trace_path, sizeof(trace_path));
	if (tr_start_program(&run, "saturate", prog_args) < 0 ||
	    tr_wait_line(&run, "ready", 10000) < 0 || tr_start_tracer(&run, tracer_args) < 0 ||
	    tr_wait_line(&run, "armed", 20000) < 0)
		fail_msg("run %d: %s", i, run.error);
	if (behind) {
		if (tr_wait_line(&run, "disarmed", TR_TIMEOUT_MS) < 0)
			fail_msg("run %d: %s", i, run.error);
		took = said_at(&run, "disarmed");
		kill((pid_t)run.prog.pid, SIGKILL);
	}
	if (tr_wait_tracer(&run, TR_TIMEOUT_MS) < 0)
		fail_msg("run %d: %s", i, run.error);
	if (!behind) {
		took = now_s();
		kill((pid_t)run.prog.pid, SIGKILL);
	}
	armed = said_at(&run, "armed");
	took -= armed;
	if (run.tracer_exit != 0)
		fail_msg("run %d: the tracer exited %d: %s", i, run.tracer_exit, run.tracer_stderr);
	if (tr_load_trace(&run) < 0) { /* strict JSON, one value */
		unlink(trace_path);
		fail_msg("run %d: %s", i, run.error);
	}
	unlink(trace_path); /* read: its 200 MB go back to memory */
	m = tr_meta(&run);
	*stopped = tr_num(m, "trace_stop_monotonic_ns") / 1e9 - armed;
	*perf = tr_str(m, "probe_links") && !strcmp(tr_str(m, "probe_links"), "perf_uprobe");
	events = tr_num(m, "events_written");
	dropped = tr_num(m, "dropped_events");
	print_message("      run %d: -d 2 stopped %.3f s and %s %.3f s after the probes rose; %.0f events written, %.0f dropped (%.0f unread at the stop)\n",
		      i, *stopped, behind ? "let go" : "ended", took, events, dropped,
		      tr_num(m, "records_unread_at_stop"));
	assert_string_equal(tr_str(m, "stop_reason"), "duration elapsed");
	if (events != cJSON_GetArraySize(run.events))
		fail_msg("run %d: metadata.events_written %.0f, the file holds %d", i, events,
			 cJSON_GetArraySize(run.events));
	if (!(dropped > 0))
		fail_msg("run %d: nothing dropped while every CPU fired events: the load proves nothing", i);
	if (!tr_find(&run, "I", "ctrace: events dropped"))
		fail_msg("run %d: %.0f dropped, and no \"ctrace: events dropped\" instant", i, dropped);
	tr_free(&run);
	return took;
}

static void test_duration_kept_under_saturation(void **state)
{
	double worst = 0, worst_stop = 0, least_stop = 1e9;
	bool perf = false;

	(void)state;
	tr_require_root();
	/* The test itself must see the tracer's exit when it happens, not a timeslice later. */
	setpriority(PRIO_PROCESS, 0, -10);
	for (int i = 1; i <= RUNS; i++) {
		double stopped, took = one_run(i, &stopped, &perf);

		worst = took > worst ? took : worst;
		worst_stop = stopped > worst_stop ? stopped : worst_stop;
		least_stop = stopped < least_stop ? stopped : least_stop;
	}
	if (least_stop < DURATION * 0.99 || worst_stop > DURATION * (1 + SLACK))
		fail_msg("-d 2 stopped the trace %.3f to %.3f s after the probes rose", least_stop,
			 worst_stop);
	if (perf && worst > PERF_EXIT_LIMIT)
		fail_msg("-d 2 with perf uprobes ended up to %.3f s after the probes rose (limit %.1f s)",
			 worst, PERF_EXIT_LIMIT);
	if (!perf && worst > DURATION * (1 + SLACK) + DETACH_EXTRA + EXIT_EXTRA)
		fail_msg("-d 2 ended up to %.3f s after the probes rose (limit %.1f s)", worst,
			 DURATION * (1 + SLACK) + DETACH_EXTRA + EXIT_EXTRA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_kept_under_saturation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
