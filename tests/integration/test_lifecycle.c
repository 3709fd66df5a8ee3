// SPDX-License-Identifier: MIT
/*
 * test_lifecycle - what a trace leaves in a process and what the next one
 * finds there, with tests/programs/lifecycle (every event numbered) traced
 * by the real tracer, the traces read back event by event:
 *   - a quiet, a busy and an idle process traced three times in a row:
 *     each trace has every event of its window, none lost or counted lost;
 *   - a second tracer refused at once leaves the first one's trace whole,
 *     and two tracers at once each get every event of their windows;
 *   - each trace counts as dropped only what was dropped in its window;
 *   - threads that come and go (their tids reused), a program exec()ing
 *     itself with address randomization off, vfork() children under -f:
 *     kept + dropped == emitted, to the event, nothing twice.
 * Batched by default; CI runs it again with CTRACE_NO_BATCH=1.
 */
#include <math.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static bool per_event_run(void)
{
	return getenv("CTRACE_NO_BATCH") && !strcmp(getenv("CTRACE_NO_BATCH"), "1");
}

/* Reads another trace file into r (the one read before is freed). */
static void load_trace(struct trace_run *r, const char *path)
{
	free(r->trace_text);
	cJSON_Delete(r->trace);
	r->trace_text = NULL;
	r->trace = NULL;
	r->events = NULL;
	snprintf(r->trace_path, sizeof(r->trace_path), "%s", path);
	if (tr_load_trace(r) < 0)
		fail_msg("%s", r->error);
}

static void start_program(struct trace_run *r, const char *const *args)
{
	tr_require_root();
	if (tr_init(r) < 0 || tr_start_program(r, "lifecycle", args) < 0 || tr_wait_line(r, "ready", 10000) < 0)
		fail_msg("%s", r->error);
}

/* `ctrace-bpf -p PID -o DIR/NAME ARGS...` to its end; the trace read into r. */
static void trace_once(struct trace_run *r, const char *name, const char *const *more)
{
	char pid[16], out[300];
	const char *args[16] = { "-p", pid, "-o", out };
	struct tr_cmd res = { 0 };
	size_t n = 4;

	snprintf(pid, sizeof(pid), "%ld", r->pid);
	snprintf(out, sizeof(out), "%s/%s", r->dir, name);
	for (; more && *more && n < 15; more++)
		args[n++] = *more;
	args[n] = NULL;
	if (tr_run_tracer(&res, NULL, NULL, args, TR_TIMEOUT_MS) < 0 || res.exit != 0)
		fail_msg("ctrace-bpf exited %d: %s", res.exit, res.err ? res.err : "");
	tr_cmd_free(&res);
	load_trace(r, out);
}

/* The values of counter "n" in file order (the samples of one thread: its order). */
static size_t counter_values(const struct trace_run *r, long *v, size_t max)
{
	const cJSON *ev;
	size_t k = 0;

	cJSON_ArrayForEach(ev, r->events)
		if (tr_str(ev, "ph") && !strcmp(tr_str(ev, "ph"), "C") && tr_str(ev, "name") &&
		    !strcmp(tr_str(ev, "name"), "n") && k < max)
			v[k++] = (long)tr_num(cJSON_GetObjectItem(ev, "args"), "value");
	return k;
}

static size_t count_named(const struct trace_run *r, const char *name)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events)
		n += tr_str(ev, "name") && !strcmp(tr_str(ev, "name"), name);
	return n;
}

/*
 * One window's counter: at least `least` samples, numbered one after the
 * other (none missing inside the window), none counted dropped.
 */
static void assert_whole_window(const struct trace_run *r, int trace, size_t least)
{
	static long v[100000];
	size_t n = counter_values(r, v, sizeof(v) / sizeof(v[0]));

	if (n < least)
		fail_msg("trace %d: %zu samples of the counter, at least %zu expected (dropped_events %.0f)", trace,
			 n, least, tr_meta_num(r, "dropped_events"));
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[i - 1] + 1)
			fail_msg("trace %d: sample %ld follows %ld: a gap in the window", trace, v[i], v[i - 1]);
	if (tr_meta_num(r, "dropped_events") != 0)
		fail_msg("trace %d: %.0f events counted dropped", trace, tr_meta_num(r, "dropped_events"));
	print_message("trace %d: samples %ld..%ld\n", trace, n ? v[0] : -1, n ? v[n - 1] : -1);
}

/* Three traces of one process, -d 1 each: every sample of each window. */
static void traced_three_times(const char *period_ms, size_t least)
{
	const char *const args[] = { "paced", period_ms, "30", NULL };
	const char *const more[] = { "-d", "1", NULL };
	struct trace_run r;

	start_program(&r, args);
	for (int i = 1; i <= 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "trace-%d.json", i);
		trace_once(&r, name, more);
		assert_whole_window(&r, i, least);
		if (i > 1 && !per_event_run() &&
		    tr_num(cJSON_GetObjectItem(tr_meta(&r), "batch"), "adopted_buffers") < 1)
			fail_msg("trace %d: the buffer of the earlier traces was not found at the attach", i);
	}
	tr_free(&r);
}

/* A counter every 100 ms: traces after the first used to be empty (the buffer never fills). */
static void test_quiet_process_traced_three_times(void **state)
{
	(void)state;
	traced_three_times("100", 5);
}

/* Every millisecond: a buffer fills about every 0.7 s. */
static void test_busy_process_traced_three_times(void **state)
{
	(void)state;
	traced_three_times("1", 300);
}

/* One sample at the start, then nothing: each trace is whole, empty, and says nothing was lost. */
static void test_idle_process_traced_three_times(void **state)
{
	const char *const args[] = { "paced", "100000", "30", NULL };
	const char *const more[] = { "-d", "0.5", NULL };
	struct trace_run r;

	(void)state;
	start_program(&r, args);
	for (int i = 1; i <= 3; i++) {
		long v[4];

		trace_once(&r, i == 1 ? "a.json" : i == 2 ? "b.json" : "c.json", more);
		assert_int_equal(counter_values(&r, v, 4), 0);
		assert_int_equal((int)tr_meta_num(&r, "dropped_events"), 0);
	}
	tr_free(&r);
}

/* The tracer of `out`, started in the background for `secs`. */
static void start_tracer(const struct trace_run *r, struct tr_child *c, const char *tag, const char *out,
			 const char *secs)
{
	char pid[16];
	const char *argv[] = { tr_tracer(), "-p", pid, "-o", out, "-d", secs, NULL };

	snprintf(pid, sizeof(pid), "%ld", r->pid);
	if (tr_spawn(c, r->dir, tag, argv) < 0)
		fail_msg("cannot start the tracer");
}

/* A second ctrace-bpf on the same output, refused at once: the first one's trace is whole. */
static void test_second_tracer_refused_first_whole(void **state)
{
	const char *const args[] = { "paced", "50", "30", NULL };
	struct tr_child first = { 0 };
	struct tr_cmd res = { 0 };
	struct trace_run r;
	char out[300], pid[16];

	(void)state;
	start_program(&r, args);
	snprintf(out, sizeof(out), "%s/shared.json", r.dir);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	start_tracer(&r, &first, "first", out, "3");
	usleep(1000 * 1000);
	{
		const char *const second[] = { "-p", pid, "-o", out, "-d", "1", NULL };

		if (tr_run_tracer(&res, NULL, NULL, second, TR_TIMEOUT_MS) < 0)
			fail_msg("the second tracer did not run");
		if (res.exit == 0)
			fail_msg("a second tracer writing the same file was not refused");
		tr_cmd_free(&res);
	}
	if (tr_reap(&first, TR_TIMEOUT_MS) < 0 || tr_exit_code(&first) != 0)
		fail_msg("the first tracer exited %d", tr_exit_code(&first));
	load_trace(&r, out);
	assert_whole_window(&r, 1, 20);
	tr_free(&r);
}

/* Two tracers at once, on other files: each has every sample of its own window. */
static void test_two_tracers_at_once(void **state)
{
	const char *const args[] = { "paced", "20", "30", NULL };
	struct tr_child a = { 0 }, b = { 0 };
	struct trace_run r;
	char out_a[300], out_b[300];

	(void)state;
	start_program(&r, args);
	snprintf(out_a, sizeof(out_a), "%s/a.json", r.dir);
	snprintf(out_b, sizeof(out_b), "%s/b.json", r.dir);
	start_tracer(&r, &a, "a", out_a, "3");
	usleep(1000 * 1000);
	start_tracer(&r, &b, "b", out_b, "1");
	if (tr_reap(&b, TR_TIMEOUT_MS) < 0 || tr_exit_code(&b) != 0 || tr_reap(&a, TR_TIMEOUT_MS) < 0 ||
	    tr_exit_code(&a) != 0)
		fail_msg("the tracers exited %d and %d", tr_exit_code(&a), tr_exit_code(&b));
	load_trace(&r, out_a);
	assert_whole_window(&r, 1, 60);
	load_trace(&r, out_b);
	assert_whole_window(&r, 2, 20);
	tr_free(&r);
}

/*
 * Three floods, each traced by a tracer of its own with a 64 KiB ring:
 * each trace's kept + dropped is its own flood's count, not the earlier
 * floods' drops again.
 */
static void test_drops_of_each_window_only(void **state)
{
	const char *const args[] = { "bursts", "300", "3", NULL };
	struct trace_run r;
	char pid[16];

	(void)state;
	start_program(&r, args);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	for (int round = 1; round <= 3; round++) {
		struct tr_child t = { 0 };
		char out[300], line[32], *text, *at;
		const char *argv[] = { tr_tracer(), "-p", pid, "-o", out, "-b", "64K", NULL };
		unsigned long long emitted = 0, kept, dropped;
		int armed = 0;

		snprintf(out, sizeof(out), "%s/round-%d.json", r.dir, round);
		if (tr_spawn(&t, r.dir, "round", argv) < 0)
			fail_msg("cannot start the tracer");
		snprintf(line, sizeof(line), "emitted round=%d", round);
		if (tr_wait_line(&r, line, 20000) < 0)
			fail_msg("%s", r.error);
		kill(t.pid, SIGINT);
		if (tr_reap(&t, TR_TIMEOUT_MS) < 0 || tr_exit_code(&t) != 0)
			fail_msg("round %d: the tracer exited %d", round, tr_exit_code(&t));
		text = tr_read_file(r.prog.out_path, NULL);
		at = text ? strstr(text, line) : NULL;
		if (!at || sscanf(at + strlen(line), " n=%llu armed=%d", &emitted, &armed) != 2 || armed != 1)
			fail_msg("round %d: no count from the program: %s", round, text ? text : "");
		free(text);
		load_trace(&r, out);
		kept = count_named(&r, "b");
		dropped = (unsigned long long)tr_meta_num(&r, "dropped_events");
		print_message("round %d: emitted %llu, kept %llu, dropped %llu\n", round, emitted, kept, dropped);
		if (kept + dropped != emitted)
			fail_msg("round %d: kept %llu + dropped %llu = %llu, but %llu were emitted", round, kept,
				 dropped, kept + dropped, emitted);
	}
	tr_free(&r);
}

/*
 * 40,000 threads, 4 alive at a time, one instant each: past pid_max
 * (32768 by default) the kernel gives new threads the tids of old ones,
 * which take over the old ones' buffers.
 */
static void test_thread_churn_exact(void **state)
{
	const char *const args[] = { "churn", "40000", "4", NULL };
	struct trace_run r;
	size_t kept;
	double dropped;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "lifecycle", args, NULL) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0 || r.tracer_exit != 0)
		fail_msg("lifecycle exited %d, the tracer %d: %s", r.prog_exit, r.tracer_exit, r.tracer_stderr);
	kept = count_named(&r, "t");
	dropped = tr_meta_num(&r, "dropped_events");
	print_message("40000 threads: kept %zu, dropped %.0f\n", kept, dropped);
	if (kept + (size_t)dropped != 40000)
		fail_msg("kept %zu + dropped %.0f, but 40000 were emitted", kept, dropped);
	tr_free(&r);
}

/* exec() of itself five times, address randomization off: the new images' buffers where the old ones' were. */
static void test_reexec_same_addresses_exact(void **state)
{
	const char *const args[] = { "reexec", "5", "10", NULL };
	struct trace_run r;
	size_t kept = 0;
	double dropped;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "lifecycle", args, NULL) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0 || r.tracer_exit != 0)
		fail_msg("lifecycle exited %d, the tracer %d: %s", r.prog_exit, r.tracer_exit, r.tracer_stderr);
	for (int k = 0; k <= 5; k++) {
		const cJSON *ev;
		size_t n = 0;

		cJSON_ArrayForEach(ev, r.events)
			n += tr_str(ev, "name") && !strcmp(tr_str(ev, "name"), "e") &&
			     tr_num(cJSON_GetObjectItem(ev, "args"), "k") == k;
		if (n > 10)
			fail_msg("image k=%d: %zu events, 10 were emitted", k, n);
		kept += n;
	}
	dropped = tr_meta_num(&r, "dropped_events");
	if (kept + (size_t)dropped != 60)
		fail_msg("kept %zu + dropped %.0f, but 60 were emitted", kept, dropped);
	assert_int_equal((int)kept, 60);
	tr_free(&r);
}

/*
 * vfork() children under -f: each child's event once. A child appends to
 * its parent's very buffer (one memory, one TLS), so batched its events
 * come with its parent's; they came twice, or not at all when the child
 * was the one to take the buffer.
 */
static void test_vfork_children_once(void **state)
{
	const char *const args[] = { "vfork", "5", NULL };
	const char *const follow[] = { "-f", NULL };
	struct trace_run r;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "lifecycle", args, follow) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0 || r.tracer_exit != 0)
		fail_msg("lifecycle exited %d, the tracer %d: %s", r.prog_exit, r.tracer_exit, r.tracer_stderr);
	assert_int_equal((int)count_named(&r, "parent"), 5);
	if (count_named(&r, "child") != 5)
		fail_msg("%zu \"child\" events for 5 emitted", count_named(&r, "child"));
	assert_int_equal((int)tr_meta_num(&r, "dropped_events"), 0);
	tr_free(&r);
}

/*
 * exec()s that fail, under the syscall watch (the exit and exec watch of
 * kernels whose exit tracepoint runs after the memory goes: Debian's 6.1
 * and 6.12): its copy at the exec's entry is not the thread's last, and
 * every "try" comes once, none lost.
 */
static void test_failed_execs_exact(void **state)
{
	const char *const args[] = { "failexec", "50", NULL };
	struct trace_run r;
	int rc;

	(void)state;
	tr_require_root();
	setenv("CTRACE_DEATH_WATCH", "syscalls", 1);
	rc = tr_run(&r, "lifecycle", args, NULL);
	unsetenv("CTRACE_DEATH_WATCH");
	if (rc < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0 || r.tracer_exit != 0)
		fail_msg("lifecycle exited %d, the tracer %d: %s", r.prog_exit, r.tracer_exit, r.tracer_stderr);
	/* syscall_tracepoints, or raw_sys_enter where tracefs is not mounted: both see the exec's entry */
	if (!per_event_run() && !strstr(tr_str(tr_meta(&r), "batch_death_watch"), "sys"))
		fail_msg("the exec watch was %s, not one of the syscalls'", tr_str(tr_meta(&r), "batch_death_watch"));
	if (count_named(&r, "try") != 50)
		fail_msg("%zu \"try\" kept, %.0f dropped, 50 emitted", count_named(&r, "try"),
			 tr_meta_num(&r, "dropped_events"));
	tr_free(&r);
}

/* Whether the program has printed the line `line` (tr_wait_line would kill it at its timeout). */
static bool printed(const struct trace_run *r, const char *line)
{
	char *out = tr_read_file(r->prog.out_path, NULL);
	bool found = out && strstr(out, line) != NULL;

	free(out);
	return found;
}

/*
 * A program announcing 300,000 buffers that are not (its own calls of the
 * flush) under --max-memory 32M: the tracer keeps within it and the ring,
 * stops when the program is done, and still has the program's real events; the streams
 * it would not keep are counted in metadata.memory.
 */
static void test_forged_announcements_bounded(void **state)
{
	const char *const args[] = { "forge", "300000", NULL };
	struct tr_child t = { 0 };
	struct trace_run r;
	char pid[16], out[300];
	long peak = 0, kib;
	bool stopped = false;
	double evicted;

	(void)state;
	start_program(&r, args);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	snprintf(out, sizeof(out), "%s/forged.json", r.dir);
	{
		const char *argv[] = { tr_tracer(), "-p", pid, "--max-memory", "32M", "-o", out, NULL };

		if (tr_spawn(&t, r.dir, "tracer", argv) < 0)
			fail_msg("cannot start the tracer");
	}
	for (int waited = 0; waited < TR_TIMEOUT_MS; waited += 20) { /* until it exits (a zombie: its memory gone) */
		siginfo_t si = { 0 };

		if (waitid(P_PID, (id_t)t.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == t.pid)
			break;
		if ((kib = tr_tracer_peak_kib(t.pid)) > peak)
			peak = kib;
		/* Stopped once the program is done, however long its forgeries took (a loaded machine). */
		if (!stopped && printed(&r, "done\n"))
			stopped = kill(t.pid, SIGINT) == 0;
		usleep(20 * 1000);
	}
	if (tr_reap(&t, TR_TIMEOUT_MS) < 0 || tr_exit_code(&t) != 0)
		fail_msg("the tracer exited %d", tr_exit_code(&t));
	load_trace(&r, out);
	print_message("forged: tracer peak RSS %ld KiB\n", peak);
#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow and quarantine: checked by the plain build */
	if (peak > (32 + 8) * 1024)
		fail_msg("the tracer's peak RSS was %ld KiB, over --max-memory 32M and the 8 MiB ring", peak);
#endif
	assert_int_equal((int)count_named(&r, "before"), 1);
	assert_int_equal((int)count_named(&r, "after"), 1);
	evicted = tr_num(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(tr_meta(&r), "memory"), "tables"),
					     "batch_streams"),
			 "evicted");
	if (!per_event_run() && !(evicted > 0))
		fail_msg("300,000 announcements kept within --max-memory 32M, none refused: the test proves nothing");
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet_process_traced_three_times),
		cmocka_unit_test(test_busy_process_traced_three_times),
		cmocka_unit_test(test_idle_process_traced_three_times),
		cmocka_unit_test(test_second_tracer_refused_first_whole),
		cmocka_unit_test(test_two_tracers_at_once),
		cmocka_unit_test(test_drops_of_each_window_only),
		cmocka_unit_test(test_thread_churn_exact),
		cmocka_unit_test(test_reexec_same_addresses_exact),
		cmocka_unit_test(test_vfork_children_once),
		cmocka_unit_test(test_forged_announcements_bounded),
		cmocka_unit_test(test_failed_execs_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
