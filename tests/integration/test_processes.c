// SPDX-License-Identifier: MIT
/*
 * test_processes - more than one thread and more than one process, with the
 * real tracer and real BPF:
 *
 *   - threads created after the attach are traced, every event on its real
 *     tid, each a thread of its own in the trace (late_threads);
 *   - -p PID,PID traces both, each as its own process (pid, process_name);
 *   - --exe PATH traces every process running PATH, the one already running
 *     and one started after the tracer (from its first instruction), and no
 *     process running something else;
 *   - -f/--follow adds the children a traced process forks (and their
 *     children), and a forked child that execs a program with probes; each
 *     is its own process in the trace; without -f none of them is.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

static struct trace_run r;
static struct tr_child extra[2]; /* more processes than trace_run holds */

static int free_all(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		if (extra[i].pid && !extra[i].reaped) {
			kill(extra[i].pid, SIGKILL);
			tr_reap(&extra[i], 5000);
		}
		memset(&extra[i], 0, sizeof(extra[i]));
	}
	tr_free(&r);
	return 0;
}

/* Starts test program `name` ARGS as extra[i] and waits for its "ready". */
static long start_extra(int i, const char *name, const char *const *args)
{
	const char *argv[8];
	char path[300];
	size_t n = 0;

	argv[n++] = tr_program_path(name, path, sizeof(path));
	for (size_t k = 0; args && args[k] && n < 7; k++)
		argv[n++] = args[k];
	argv[n] = NULL;
	if (tr_spawn(&extra[i], r.dir, i ? "extra1" : "extra0", argv) < 0)
		fail_msg("cannot start %s", path);
	am_wait_out_line(&extra[i], "ready", 10000);
	return extra[i].pid;
}

/* Reaps extra[i]; its exit code. */
static int reap_extra(int i)
{
	if (tr_reap(&extra[i], TR_TIMEOUT_MS) < 0)
		fail_msg("extra process %d did not exit (killed)", (int)extra[i].pid);
	return tr_exit_code(&extra[i]);
}

/* Each of late_threads's threads: its events on its own tid, and its name. */
static void assert_late_threads(long pid, const char *out)
{
	cJSON *ev[16];
	long tids[3];
	size_t n;

	for (int k = 0; k < 3; k++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "thread %d ", k);
		tids[k] = am_need_field(out, prefix, "tid");
		assert_true(tids[k] != pid);
	}
	n = am_find(&r, "I", "late-hello", pid, ev, 16);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		int k = (int)am_arg_num(ev[i], "k");

		assert_true(k >= 0 && k < 3);
		if (tr_num(ev[i], "tid") != tids[k])
			fail_msg("late-hello of thread %d is on tid %.0f; that thread's tid is %ld",
				 k, tr_num(ev[i], "tid"), tids[k]);
		/* a thread of its own in the trace, with a thread_name */
		assert_non_null(tr_find_meta(&r, "thread_name", pid, tids[k]));
	}
	n = am_find(&r, "X", "late-work", pid, ev, 16);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_true(tr_num(ev[i], "tid") == tids[(int)am_arg_num(ev[i], "k")]);
	assert_true(tr_num(am_one(&r, "I", "main-hello", pid), "tid") == pid);
}

/* Threads that did not exist when the tracer attached. */
static void test_threads_after_attach(void **state)
{
	(void)state;
	tr_require_root();
	if (tr_run(&r, "late_threads", NULL, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_late_threads(r.pid, r.prog_stdout);
}

/* -p A,B: two processes, each its own process in the trace. */
static void test_two_pids(void **state)
{
	char pids[48];
	const char *args[4] = { "-p", pids, NULL };
	cJSON *hello;
	long other;
	char *out;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "armed_hello", NULL) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	other = start_extra(0, "late_threads", NULL);
	snprintf(pids, sizeof(pids), "%ld,%ld", r.pid, other);
	am_start_tracer(&r, args);
	am_finish(&r, TR_TIMEOUT_MS);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_int_equal(reap_extra(0), 0);
	/* it stopped when both had exited, not at the first */
	assert_string_equal(am_stop_reason(&r), "every traced process exited");

	hello = am_one(&r, "I", "hello", r.pid);
	assert_true(tr_num(hello, "tid") == r.pid);
	am_one(&r, "X", "work", r.pid);
	assert_string_equal(am_process_name(&r, r.pid), "armed_hello");
	assert_string_equal(am_process_name(&r, other), "late_threads");
	out = am_read_out(&extra[0]);
	assert_late_threads(other, out);
	free(out);
	/* nothing of one in the other */
	assert_int_equal(am_count(&r, "I", "hello", other), 0);
	assert_int_equal(am_count(&r, "I", "late-hello", r.pid), 0);
}

/*
 * --exe PATH: A runs PATH before the tracer starts, B after it is tracing;
 * C runs another program all along. A and B are in the trace, B from its
 * first instruction; C is not.
 */
static void test_exe_now_and_later(void **state)
{
	char exe[300];
	const char *args[] = { "--exe", exe, "-d", "1.2", NULL };
	const char *const b_args[] = { "B", NULL };
	/*
	 * A waits 200 ms after it sees itself armed: this test is about A
	 * being found at all, not about the moment it is armed.
	 */
	const char *const a_args[] = { "A", "10000", "settle", NULL };
	long b, c;
	cJSON *ev;

	(void)state;
	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	if (tr_init(&r) < 0 || tr_start_program(&r, "armed_hello", a_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	c = start_extra(1, "late_threads", NULL);
	am_start_tracer(&r, args);
	if (!tc_wait_file_has(r.tracer.err_path, "tracing every process", 10000))
		fail_msg("the tracer did not start tracing: %s", tr_read_file(r.tracer.err_path, NULL));
	b = start_extra(0, "armed_hello", b_args);
	am_finish(&r, TR_TIMEOUT_MS);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_int_equal(reap_extra(0), 0);
	assert_string_equal(am_stop_reason(&r), "duration elapsed");

	/* A, already running */
	assert_string_equal(am_arg_str(am_one(&r, "I", "hello", r.pid), "tag"), "A");
	am_one(&r, "X", "work", r.pid);
	assert_string_equal(am_process_name(&r, r.pid), "armed_hello");
	/* B, started later: traced from its first instruction */
	assert_true(tr_num(am_one(&r, "I", "first", b), "tid") == b);
	assert_string_equal(am_arg_str(am_one(&r, "I", "hello", b), "tag"), "B");
	am_one(&r, "X", "work", b);
	assert_string_equal(am_process_name(&r, b), "armed_hello");
	/* C runs another program: not one event */
	cJSON_ArrayForEach(ev, r.events)
		if (tr_num(ev, "pid") == c)
			fail_msg("late_threads (pid %ld) is in a trace of --exe armed_hello: \"%s\"",
				 c, tr_str(ev, "name"));
}

/*
 * --exe PATH, the loader held up (stopped: a loaded machine, as on CI)
 * while B starts, runs and exits: B's batched events are read after it is
 * gone, its memory and /proc entries with it. Their names are literals,
 * sent by address; the loader reads them from the program's file, where
 * the kernel's exec record says the image was mapped. Before: every name
 * "(unreadable)" (CI on 07e6f42: "first" not found).
 */
static void test_exe_started_and_gone_before_the_loader_reads(void **state)
{
	char exe[300];
	const char *args[] = { "--exe", exe, "-d", "1.5", NULL };
	const char *const b_args[] = { "B", NULL };
	long b;

	(void)state;
	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_start_tracer(&r, args);
	if (!tc_wait_file_has(r.tracer.err_path, "tracing every process", 10000))
		fail_msg("the tracer did not start tracing: %s", tr_read_file(r.tracer.err_path, NULL));
	assert_int_equal(kill(r.tracer.pid, SIGSTOP), 0);
	b = start_extra(0, "armed_hello", b_args);
	assert_int_equal(reap_extra(0), 0); /* armed (the probes need no loader) and gone */
	assert_int_equal(kill(r.tracer.pid, SIGCONT), 0);
	am_finish(&r, TR_TIMEOUT_MS);
	assert_true(tr_num(am_one(&r, "I", "first", b), "tid") == b);
	assert_string_equal(am_arg_str(am_one(&r, "I", "hello", b), "tag"), "B");
	am_one(&r, "X", "work", b);
	assert_int_equal(tr_meta_num(&r, "unreadable_strings"), 0);
}

/* The pids forker's processes print: child, grandchild, exec-child. */
struct family {
	long parent, child, grandchild, exec_child;
};

/*
 * Runs `forker armed_hello forked 400` under `-p PID [-f]`. Returns what
 * forker printed (caller frees) and its family.
 */
static char *run_forker(bool follow, struct family *f)
{
	char exe[300];
	const char *prog_args[4];
	const char *const follow_args[] = { "-f", NULL };
	size_t n = 0;

	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	prog_args[n++] = exe;
	prog_args[n++] = "forked";
	/* without -f nobody arms it: it gives up after 400 ms (exit 3) */
	prog_args[n++] = "400";
	prog_args[n] = NULL;
	if (tr_run(&r, "forker", prog_args, follow ? follow_args : NULL) < 0)
		fail_msg("%s", r.error);
	f->parent = r.pid;
	f->child = am_need_field(r.prog_stdout, "child ", "pid");
	/* AM_NONE if the child died before it could fork it */
	f->grandchild = am_field(r.prog_stdout, "grandchild ", "pid");
	f->exec_child = am_need_field(r.prog_stdout, "exec-child ", "pid");
	return strdup(r.prog_stdout);
}

/* The "ctrace: fork" instant in parent that names child. */
static void assert_fork_event(long parent, long child)
{
	cJSON *ev[8];
	size_t n = am_find(&r, "I", "ctrace: fork", parent, ev, 8);

	for (size_t i = 0; i < n && i < 8; i++)
		if (am_arg_num(ev[i], "child_pid") == child)
			return;
	fail_msg("no \"ctrace: fork\" in process %ld for its child %ld", parent, child);
}

/* One instant of process pid, on its main thread, carrying its own pid. */
static void assert_hello(const char *name, long pid)
{
	cJSON *ev = am_one(&r, "I", name, pid);

	assert_true(tr_num(ev, "tid") == pid);
	assert_true(am_arg_num(ev, "pid") == pid);
}

/* -f: children, grandchildren and an exec'd child, each its own process. */
static void test_follow_forks(void **state)
{
	struct family f;
	char *out;
	cJSON *exec;

	(void)state;
	out = run_forker(true, &f);
	if (!strstr(out, "children ok"))
		fail_msg("forker's children did not all exit 0:\n%s", out);
	free(out);
	assert_int_equal(r.prog_exit, 0);
	assert_string_equal(am_stop_reason(&r), "every traced process exited");

	assert_hello("parent-before", f.parent);
	assert_hello("parent-after", f.parent);
	assert_hello("child-hello", f.child);
	assert_hello("grandchild-hello", f.grandchild);
	assert_fork_event(f.parent, f.child);
	assert_fork_event(f.parent, f.exec_child);
	assert_fork_event(f.child, f.grandchild);
	/*
	 * Each its own process, with a process_name. (The fork children live
	 * a few ms: whether the tracer still finds their comm in /proc is
	 * luck, so their name is not checked; the exec'd one waits for it.)
	 */
	assert_non_null(am_process_name(&r, f.child));
	assert_non_null(am_process_name(&r, f.grandchild));
	assert_string_equal(am_process_name(&r, f.exec_child), "armed_hello");
	/* the exec'd child: its exec, then its new program's events */
	exec = am_one(&r, "I", "ctrace: exec", f.exec_child);
	assert_non_null(strstr(am_arg_str(exec, "path"), "/armed_hello"));
	{
		cJSON *hello = am_one(&r, "I", "hello", f.exec_child);

		assert_string_equal(am_arg_str(hello, "tag"), "forked");
		assert_true(am_arg_num(hello, "ns_pid") == f.exec_child);
		assert_true(tr_num(hello, "ts") > tr_num(exec, "ts"));
		am_one(&r, "X", "work", f.exec_child);
	}
	/* the parent's events stay the parent's */
	assert_int_equal(am_count(&r, "I", "parent-before", f.child), 0);
}

/* Without -f: the parent only. */
static void test_no_follow_without_f(void **state)
{
	struct family f;
	cJSON *ev;
	char *out;

	(void)state;
	out = run_forker(false, &f);
	/* nobody armed the exec'd armed_hello: it gave up */
	if (!strstr(out, "exec-child exited 3"))
		fail_msg("the exec'd child should have given up waiting for a tracer:\n%s", out);
	free(out);
	assert_hello("parent-before", f.parent);
	assert_hello("parent-after", f.parent);
	cJSON_ArrayForEach(ev, r.events) {
		double pid = tr_num(ev, "pid");

		if (pid == f.child || pid == f.grandchild || pid == f.exec_child)
			fail_msg("without -f, child process %.0f is in the trace: \"%s\"", pid,
				 tr_str(ev, "name"));
	}
	assert_int_equal(am_count(&r, "I", "ctrace: fork", NAN), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_threads_after_attach, free_all),
		cmocka_unit_test_teardown(test_two_pids, free_all),
		cmocka_unit_test_teardown(test_exe_now_and_later, free_all),
		cmocka_unit_test_teardown(test_exe_started_and_gone_before_the_loader_reads, free_all),
		cmocka_unit_test_teardown(test_follow_forks, free_all),
		cmocka_unit_test_teardown(test_no_follow_without_f, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
