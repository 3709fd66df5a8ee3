// SPDX-License-Identifier: MIT
/*
 * test_batch - the batched path (usdt/ctrace_batch.h, userspace/ingest/batch_path.c)
 * with tests/programs/batched, traced by the real tracer, the trace read
 * back event by event: batching is the default (and --no-batch is not),
 * with -f too;
 * the events of an idle thread reach the file within a second; the last
 * events of a thread that returns and of a process that crashes are in the
 * trace; a forked child's copy of its parent's unflushed events is not
 * shown twice; a signal handler's site in the middle of an append corrupts
 * nothing; a span ended on another thread pairs; a long non-literal string
 * takes the per-event path and a short one is copied inline.
 *
 * (kept + dropped == emitted under a flood with a 64 KiB ring is
 * test_flood's, which runs batched by default.)
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "trace_run.h"

/* Runs `batched SCENARIO` under the tracer (extra tracer arguments or NULL); fails on error. */
static void run_scenario(struct trace_run *r, const char *scenario, const char *const *tracer_args)
{
	const char *const prog_args[] = { scenario, NULL };

	tr_require_root();
	if (tr_run(r, "batched", prog_args, tracer_args) < 0)
		fail_msg("%s", r->error);
}

static cJSON *metadata(const struct trace_run *r)
{
	cJSON *m = cJSON_GetObjectItem(r->trace, "metadata");

	if (!m)
		fail_msg("no metadata in the trace");
	return m;
}

static size_t count_named(const struct trace_run *r, const char *ph, const char *name)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events)
		n += tr_str(ev, "ph") && tr_str(ev, "name") && !strcmp(tr_str(ev, "ph"), ph) &&
		     !strcmp(tr_str(ev, "name"), name);
	return n;
}

/* The suite's per-event run (CI: CTRACE_NO_BATCH=1): the same guarantees, one probe per event. */
static bool per_event_run(void)
{
	return getenv("CTRACE_NO_BATCH") && !strcmp(getenv("CTRACE_NO_BATCH"), "1");
}

/* The events of a thread that returned with its buffer not full: batched, on that thread. */
static void test_default_is_batched(void **state)
{
	struct trace_run r;
	cJSON *m, *batch;

	(void)state;
	run_scenario(&r, "thread", NULL);
	m = metadata(&r);
	assert_string_equal(tr_str(m, "event_path"), per_event_run() ? "per_event" : "batched");
	batch = cJSON_GetObjectItem(m, "batch");
	assert_non_null(batch);
	if (!per_event_run())
		assert_true(tr_num(batch, "events") >= 10);
	for (int i = 0; i < 10; i++) {
		char name[32];
		cJSON *ev;

		snprintf(name, sizeof(name), "thread-%d", i);
		ev = tr_find(&r, "I", name);
		if (!ev)
			fail_msg("%s (before the thread returned) is not in the trace", name);
		assert_true(tr_num(ev, "tid") != (double)r.main_tid); /* its own thread's */
	}
	assert_int_equal((int)tr_num(m, "dropped_events"), 0);
	tr_free(&r);
}

/*
 * -f attaches for every process that maps the program (filtered in BPF):
 * it gets the same links and the same path as -p. Every process was pid -1
 * in the uprobe_multi link too, which the kernel refuses (EINVAL): -f fell
 * back to one perf uprobe per site and so to one probe per event.
 */
static void test_followed_like_one_process(void **state)
{
	const char *const follow[] = { "-f", NULL };
	struct trace_run one, followed;

	(void)state;
	run_scenario(&one, "thread", NULL);
	run_scenario(&followed, "thread", follow);
	assert_string_equal(tr_str(metadata(&followed), "probe_links"), tr_str(metadata(&one), "probe_links"));
	assert_string_equal(tr_str(metadata(&followed), "event_path"), tr_str(metadata(&one), "event_path"));
	assert_non_null(tr_find(&followed, "I", "thread-9"));
	tr_free(&one);
	tr_free(&followed);
}

static void test_no_batch(void **state)
{
	const char *const args[] = { "--no-batch", NULL };
	struct trace_run r;
	cJSON *m;

	(void)state;
	run_scenario(&r, "thread", args);
	m = metadata(&r);
	assert_string_equal(tr_str(m, "event_path"), "per_event");
	assert_int_equal((int)tr_num(cJSON_GetObjectItem(m, "batch"), "events"), 0);
	for (int i = 0; i < 10; i++) {
		char name[32];

		snprintf(name, sizeof(name), "thread-%d", i);
		assert_non_null(tr_find(&r, "I", name));
	}
	tr_free(&r);
}

static double ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Three events, then 3 s asleep: they are in the file (flushed every 50 ms) within 1 s. */
static void test_idle_thread_within_a_second(void **state)
{
	const char *const prog_args[] = { "idle", NULL };
	struct trace_run r;
	double done, waited = -1;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "batched", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, NULL) < 0 ||
	    tr_wait_line(&r, "done", 10000) < 0)
		fail_msg("%s", r.error);
	done = ms_now();
	while (ms_now() - done < 1000) {
		char *text = tr_read_file(r.trace_path, NULL);
		bool found = text && strstr(text, "\"idle-2\"");

		free(text);
		if (found) {
			waited = ms_now() - done;
			break;
		}
		usleep(10 * 1000);
	}
	if (waited < 0)
		fail_msg("the idle thread's events were not in the trace 1 s after they were emitted");
	print_message("idle events in the file %.0f ms after they were emitted\n", waited);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0 || tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(count_named(&r, "I", "idle-0"), 1);
	assert_int_equal(count_named(&r, "I", "idle-2"), 1);
	tr_free(&r);
}

/* SIGSEGV right after five events: the kernel side copies the buffer at the fatal signal. */
static void test_crash_keeps_last_events(void **state)
{
	struct trace_run r;

	(void)state;
	run_scenario(&r, "segv", NULL);
	assert_int_equal(r.prog_exit, 128 + 11);
	for (int i = 0; i < 5; i++) {
		char name[32];

		snprintf(name, sizeof(name), "crash-%d", i);
		if (count_named(&r, "I", name) != 1)
			fail_msg("%s (emitted before the crash) is %zu times in the trace, not once", name,
				 count_named(&r, "I", name));
	}
	tr_free(&r);
}

/* The child's copy of "pre-fork" (its parent's, unflushed at the fork) is not shown. */
static void test_fork_no_duplicates(void **state)
{
	const char *const args[] = { "-f", NULL };
	struct trace_run r;
	cJSON *pre, *child, *m;
	const char *done;
	int child_pid;

	(void)state;
	run_scenario(&r, "fork", args);
	done = strstr(r.prog_stdout, "done child=");
	assert_non_null(done);
	child_pid = atoi(done + strlen("done child="));
	assert_int_equal(count_named(&r, "I", "pre-fork"), 1);
	pre = tr_find(&r, "I", "pre-fork");
	assert_int_equal((int)tr_num(pre, "pid"), (int)r.pid);
	assert_int_equal(count_named(&r, "I", "child-event"), 1);
	child = tr_find(&r, "I", "child-event");
	assert_int_equal((int)tr_num(child, "pid"), child_pid);
	assert_int_equal(count_named(&r, "I", "post-fork"), 1);
	m = metadata(&r);
	assert_int_equal((int)tr_num(m, "dropped_events"), 0);
	tr_free(&r);
}

/* A handler's site hit in the middle of an append takes the per-event path: every event, once. */
static void test_signal_handler_during_append(void **state)
{
	struct trace_run r;
	const char *done;
	long main_n = -1, handler_n = -1;
	cJSON *m;

	(void)state;
	run_scenario(&r, "signal", NULL);
	done = strstr(r.prog_stdout, "done main=");
	assert_non_null(done);
	assert_int_equal(sscanf(done, "done main=%ld handler=%ld", &main_n, &handler_n), 2);
	assert_true(handler_n > 100);
	m = metadata(&r);
	assert_int_equal((int)tr_num(m, "dropped_events"), 0);
	assert_int_equal((int)tr_num(m, "bad_records"), 0);
	assert_int_equal((long)count_named(&r, "I", "main"), main_n);
	assert_int_equal((long)count_named(&r, "I", "handler"), handler_n);
	tr_free(&r);
}

/* Begun on a thread that stays idle, ended on main: a b/e pair, not an end without a begin. */
static void test_span_ended_on_another_thread(void **state)
{
	struct trace_run r;
	cJSON *b, *e, *m;

	(void)state;
	run_scenario(&r, "cross", NULL);
	b = tr_find(&r, "b", "cross");
	e = tr_find(&r, "e", "cross");
	assert_non_null(b);
	assert_non_null(e);
	assert_true(tr_num(b, "tid") != tr_num(e, "tid"));
	assert_true(tr_num(b, "ts") < tr_num(e, "ts"));
	assert_null(tr_find(&r, "I", "ctrace: span end without begin"));
	m = metadata(&r);
	assert_int_equal((int)tr_num(m, "unmatched_span_ends"), 0);
	assert_int_equal((int)tr_num(m, "spans_begun_before_tracing"), 0);
	tr_free(&r);
}

/*
 * A span begun on main and ended on a worker, again and again at the same
 * address, each BEGIN microseconds after the END before it on the other
 * thread: the two threads' events must come out in the order they ran.
 * Each batch's events were timed from their flush's anchor, the probe's
 * clock some 3-14 us after the site's TSC (the uprobe's own time, varying
 * from batch to batch): two threads' events a few us apart swapped, an
 * END closed the next BEGIN's span ("span end without begin", spans left
 * unfinished; 6-10 of them in 2 s of build/examples/demo). One mapping of
 * the TSC for every event (tsc_clock.c) keeps the order the TSC has.
 */
static void test_two_threads_in_the_order_they_ran(void **state)
{
	struct trace_run r;
	const cJSON *ev;
	long relays = -1;
	size_t begins = 0, ends = 0;
	cJSON *m;

	(void)state;
	run_scenario(&r, "relay", NULL);
	assert_non_null(strstr(r.prog_stdout, "done relays="));
	relays = strtol(strstr(r.prog_stdout, "done relays=") + 12, NULL, 10);
	m = metadata(&r);
	if (tr_num(m, "unmatched_span_ends") != 0 || tr_num(m, "unfinished_spans") != 0)
		fail_msg("%g span ends without a begin, %g spans unfinished, of %ld relays",
			 tr_num(m, "unmatched_span_ends"), tr_num(m, "unfinished_spans"), relays);
	cJSON_ArrayForEach(ev, r.events) {
		const char *ph = tr_str(ev, "ph"), *name = tr_str(ev, "name");

		if (!ph || !name || strcmp(name, "relay"))
			continue;
		if (!strcmp(ph, "b"))
			begins++;
		else if (!strcmp(ph, "e"))
			ends++;
		else
			fail_msg("a relay span written as '%s' (it begins and ends on two threads)", ph);
	}
	assert_int_equal((long)begins, relays);
	assert_int_equal((long)ends, relays);
	assert_int_equal((int)tr_num(m, "dropped_events"), 0);
	tr_free(&r);
}

/*
 * Runs the "exit" scenario with the tracer in a mount namespace of its own,
 * after `setup` (a shell command that must leave tracefs unmounted or
 * mounted), and checks that the events left in the buffer at _exit() are
 * there, watched as `watch` says.
 */
static void exit_watched(const char *setup, const char *env, const char *watch)
{
	const char *const prog_args[] = { "exit", NULL };
	char script[1024];
	const char *argv[] = { "unshare", "-m", "sh", "-c", script, NULL };
	struct trace_run r;
	cJSON *m;

	tr_require_root();
	snprintf(script, sizeof(script), "%s && exec env %s %s -p {PID} -o {TRACE}", setup, env, tr_tracer());
	if (tr_run_command(&r, "batched", prog_args, argv) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d (99: tracefs not as the case needs); stderr:\n%s",
			 r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "exit-%d", i);
		if (count_named(&r, "I", name) != 1)
			fail_msg("%s (emitted before _exit) is %zu times in the trace, not once", name,
				 count_named(&r, "I", name));
	}
	m = metadata(&r);
	assert_int_equal((int)tr_num(m, "dropped_events"), 0);
	if (!per_event_run()) {
		assert_non_null(tr_str(m, "batch_death_watch"));
		assert_string_equal(tr_str(m, "batch_death_watch"), watch);
	}
	tr_free(&r);
}

#define UNMOUNT_TRACEFS                                                                            \
	"{ umount /sys/kernel/debug/tracing; umount /sys/kernel/tracing; umount /sys/kernel/debug; } 2>/dev/null; " \
	"{ test ! -e /sys/kernel/tracing/events/syscalls || exit 99; }"
#define MOUNT_TRACEFS                                                                              \
	"{ test -e /sys/kernel/tracing/events/syscalls || mount -t tracefs nodev /sys/kernel/tracing; } && " \
	"{ test -e /sys/kernel/tracing/events/syscalls || exit 99; }"

/*
 * The syscall watch (CTRACE_DEATH_WATCH=syscalls: what kernels without
 * sched_prepare_exec get) on a machine without tracefs mounted (a fresh
 * one, without systemd): libbpf finds the syscall tracepoints that watch
 * exit() by their ids there. The events a process left in its buffer
 * when it called _exit() were lost, and not counted.
 */
static void test_exit_watched_without_tracefs(void **state)
{
	(void)state;
	exit_watched(UNMOUNT_TRACEFS, "CTRACE_DEATH_WATCH=syscalls", "raw_sys_enter");
}

/* With tracefs (mounted here if the machine has not): the syscall tracepoints themselves. */
static void test_exit_watched_with_tracefs(void **state)
{
	(void)state;
	exit_watched(MOUNT_TRACEFS, "CTRACE_DEATH_WATCH=syscalls", "syscall_tracepoints");
}

/*
 * Where the kernel has tp_btf/sched_prepare_exec (6.10), exits are copied
 * at the exit tracepoint, which 6.18 runs while the thread still has its
 * memory: the default, with tracefs there or not. (A kernel with
 * sched_prepare_exec that ran the exit tracepoint after letting the
 * memory go would keep the syscall watch, and fail here: then expect that
 * kernel's way.)
 */
static bool kernel_has_prepare_exec(void)
{
	return libbpf_find_vmlinux_btf_id("sched_prepare_exec", BPF_TRACE_RAW_TP) >= 0;
}

static void test_exit_watched_by_sched_tracepoints(void **state)
{
	(void)state;
	exit_watched(UNMOUNT_TRACEFS, "CTRACE_DEATH_WATCH=", kernel_has_prepare_exec() ? "sched_tracepoints" : "raw_sys_enter");
	exit_watched(MOUNT_TRACEFS, "CTRACE_DEATH_WATCH=", kernel_has_prepare_exec() ? "sched_tracepoints" : "syscall_tracepoints");
}

/*
 * Links of BPF programs loaded since `since` (CLOCK_BOOTTIME ns: the
 * tracer under test's, not another tracer's that may run on the machine)
 * whose names begin with `prefix` (BPF keeps 15 bytes of a name).
 */
static int links_of(const char *prefix, uint64_t since)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li;
		struct bpf_prog_info pi;
		__u32 len = sizeof(li), plen = sizeof(pi);
		int fd = bpf_link_get_fd_by_id(id), pfd = -1;

		memset(&li, 0, sizeof(li));
		memset(&pi, 0, sizeof(pi));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &li, &len) &&
		    (pfd = bpf_prog_get_fd_by_id(li.prog_id)) >= 0 && !bpf_obj_get_info_by_fd(pfd, &pi, &plen))
			n += pi.load_time >= since && !strncmp(pi.name, prefix, strlen(prefix));
		if (pfd >= 0)
			close(pfd);
		if (fd >= 0)
			close(fd);
	}
	return n;
}

/*
 * While ctrace-bpf batches, no syscall tracepoint is attached where the
 * kernel offers the scheduler's (a syscall tracepoint puts every thread
 * of the machine on the slow syscall path: getppid() of an untraced
 * process took 298 ns instead of 167 ns in one make bench run), although
 * tracefs is there: the exec watch is sched_prepare_exec.
 */
static void test_no_syscall_tracepoint_while_batching(void **state)
{
	const char *const prog_args[] = { "idle", NULL };
	char script[1024];
	const char *argv[] = { "unshare", "-m", "sh", "-c", script, NULL };
	struct trace_run r;
	struct timespec t0;
	uint64_t since;
	int syscall_links, exec_links;

	(void)state;
	clock_gettime(CLOCK_BOOTTIME, &t0);
	since = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
	tr_require_root();
	if (!kernel_has_prepare_exec() && !per_event_run())
		fail_msg("this kernel has no sched_prepare_exec tracepoint: exits and execs are watched by syscalls here");
	snprintf(script, sizeof(script), MOUNT_TRACEFS " && exec %s -p {PID} -o {TRACE}", tr_tracer());
	if (tr_init(&r) < 0 || tr_start_program(&r, "batched", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_command(&r, argv) < 0 ||
	    tr_wait_line(&r, "done", 10000) < 0)
		fail_msg("%s", r.error);
	/* The program sleeps 3 s after "done", traced. */
	syscall_links = links_of("ctrace_batch_sy", since) + links_of("ctrace_batch_ex", since);
	exec_links = links_of("ctrace_batch_pr", since);
	if (tr_wait(&r, 15000) < 0 || tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(syscall_links, 0);
	if (!per_event_run()) {
		assert_true(exec_links >= 1);
		assert_string_equal(tr_str(metadata(&r), "batch_death_watch"), "sched_tracepoints");
		assert_int_equal(count_named(&r, "I", "idle-0"), 1);
	}
	tr_free(&r);
}

/* 2000 bytes of args: per event, kept whole; 7 bytes built at run time: inline. */
static void test_long_and_short_strings(void **state)
{
	struct trace_run r;
	cJSON *lng, *shrt, *raw, *k;

	(void)state;
	run_scenario(&r, "long", NULL);
	lng = tr_find(&r, "I", "long-args");
	shrt = tr_find(&r, "I", "short-args");
	assert_non_null(lng);
	assert_non_null(shrt);
	raw = tr_arg(lng, "raw");
	assert_non_null(raw);
	assert_true(cJSON_IsString(raw));
	assert_int_equal(strlen(raw->valuestring), 2000);
	k = tr_arg(shrt, "k");
	assert_non_null(k);
	assert_true(cJSON_IsNumber(k) && k->valuedouble == 2);
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_batched),
		cmocka_unit_test(test_followed_like_one_process),
		cmocka_unit_test(test_no_batch),
		cmocka_unit_test(test_idle_thread_within_a_second),
		cmocka_unit_test(test_crash_keeps_last_events),
		cmocka_unit_test(test_fork_no_duplicates),
		cmocka_unit_test(test_exit_watched_without_tracefs),
		cmocka_unit_test(test_exit_watched_with_tracefs),
		cmocka_unit_test(test_exit_watched_by_sched_tracepoints),
		cmocka_unit_test(test_no_syscall_tracepoint_while_batching),
		cmocka_unit_test(test_signal_handler_during_append),
		cmocka_unit_test(test_span_ended_on_another_thread),
		cmocka_unit_test(test_two_threads_in_the_order_they_ran),
		cmocka_unit_test(test_long_and_short_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
