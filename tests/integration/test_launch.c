// SPDX-License-Identifier: MIT
/*
 * test_launch - launch mode, `ctrace-bpf [options] -- CMD [ARGS...]`, with
 * the real tracer, real BPF and tests/programs/launched.c:
 *
 *   - CMD is traced from its first instruction: the instant on the first
 *     line of its main is in the trace, before any other of its events;
 *   - tracing stops when CMD exits, and the tracer exits with CMD's exit
 *     code, 128+N when signal N killed it, with a complete trace each time;
 *   - run via sudo (SUDO_UID/SUDO_GID set while root), CMD runs as that user;
 *   - threads CMD starts are traced by their real tids.
 *
 * The command's stdout is the tracer's (launch mode hands it down), so what
 * launched prints is in r.tracer_stdout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

#define NOBODY 65534

static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	tr_free(&r);
	return 0;
}

/*
 * The program `launched`, copied into the test's directory (0755): via sudo
 * it runs as nobody, who may not be able to reach the build tree (a home
 * directory).
 */
static void copy_launched(void)
{
	char src[300];

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	chmod(r.dir, 0755);
	am_path(r.program, sizeof(r.program), r.dir, "launched");
	am_copy_file(tr_program_path("launched", src, sizeof(src)), r.program, 0755);
}

/* Runs `ctrace-bpf -o TRACE -- launched ARGS...` to its end and loads the trace. */
static void launch(const char *const *prog_args, int want_exit)
{
	const char *argv[24];
	size_t n = 0;

	copy_launched();
	argv[n++] = "--";
	argv[n++] = r.program;
	for (size_t i = 0; prog_args && prog_args[i] && n < 23; i++)
		argv[n++] = prog_args[i];
	argv[n] = NULL;
	am_start_tracer(&r, argv);
	am_wait_tracer(&r, TR_TIMEOUT_MS);
	if (r.tracer_exit != want_exit)
		fail_msg("the tracer exited %d, the command's exit code is %d; stderr:\n%s",
			 r.tracer_exit, want_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	/* the command's own report of its ids: "uid=U gid=G pid=P tid=T armed=A" */
	r.pid = am_need_field(r.tracer_stdout, "uid=", "pid");
	r.main_tid = am_need_field(r.tracer_stdout, "uid=", "tid");
}

/* The trace ended because the command ended, with everything it emitted. */
static void assert_complete(void)
{
	if (strcmp(am_stop_reason(&r), "target exited"))
		fail_msg("stop_reason is \"%s\", not \"target exited\"", am_stop_reason(&r));
	am_one(&r, "I", "main-last", r.pid);
	assert_true(tr_meta_num(&r, "dropped_events") == 0);
}

/* The instant on main's first line is in the trace, and is its first event. */
static void test_traced_from_first_instruction(void **state)
{
	static const char *const none[] = { NULL };
	cJSON *first, *ev, *target, *cmdline;
	double first_ts;

	(void)state;
	launch(none, 0);
	/* it saw itself armed at its first statement */
	assert_int_equal(am_need_field(r.tracer_stdout, "uid=", "armed"), 1);
	first = am_one(&r, "I", "main-first", r.pid);
	assert_true(tr_num(first, "tid") == r.pid);
	assert_true(r.main_tid == r.pid);
	first_ts = tr_num(first, "ts");
	/* nothing of the command's comes before it */
	cJSON_ArrayForEach(ev, r.events) {
		if (ev == first || !strcmp(tr_str(ev, "ph"), "M"))
			continue;
		if (tr_num(ev, "ts") < first_ts)
			fail_msg("\"%s\" at %.3f comes before main-first at %.3f",
				 tr_str(ev, "name"), tr_num(ev, "ts"), first_ts);
	}
	/* and it happened after the trace started */
	assert_true(first_ts * 1000 >=
		    tr_num(cJSON_GetObjectItem(r.trace, "context"), "trace_start_monotonic_ns") - 1000);
	assert_complete();
	/* the trace is about the command: its pid, its path, its arguments */
	target = am_target(&r, "context");
	assert_true(tr_num(target, "pid") == r.pid);
	assert_string_equal(tr_str(target, "exe"), r.program);
	cmdline = cJSON_GetObjectItem(target, "cmdline");
	assert_int_equal(cJSON_GetArraySize(cmdline), 1);
	assert_string_equal(cJSON_GetArrayItem(cmdline, 0)->valuestring, r.program);
	assert_string_equal(am_process_name(&r, r.pid), "launched");
	/*
	 * It ran as we do (root), or, when the tests themselves run via sudo
	 * (tests/run-integration re-runs itself so for a user with sudo), as
	 * the user who ran sudo: the tracer inherits SUDO_UID from us.
	 */
	{
		const char *sudo_uid = getenv("SUDO_UID");
		double want = sudo_uid && *sudo_uid && geteuid() == 0 ? atof(sudo_uid) : (double)getuid();

		assert_true(am_arg_num(am_one(&r, "C", "uid", r.pid), "value") == want);
	}
}

/* The tracer's exit code is the command's; its arguments reach it. */
static void test_exit_code(void **state)
{
	static const char *const args[] = { "7", NULL };
	cJSON *cmdline;

	(void)state;
	launch(args, 7);
	assert_complete();
	am_one(&r, "I", "main-first", r.pid);
	cmdline = cJSON_GetObjectItem(am_target(&r, "context"), "cmdline");
	assert_int_equal(cJSON_GetArraySize(cmdline), 2);
	assert_string_equal(cJSON_GetArrayItem(cmdline, 1)->valuestring, "7");
}

/* A command killed by signal N: exit code 128+N, and a complete trace. */
static void test_killed_by_signal(void **state)
{
	static const char *const term[] = { "signal:15", NULL };
	static const char *const kill9[] = { "signal:9", NULL };

	(void)state;
	launch(term, 128 + 15);
	assert_complete();
	tr_free(&r);
	launch(kill9, 128 + 9);
	assert_complete();
}

/* Via sudo (root with SUDO_UID/SUDO_GID), the command runs as that user. */
static void test_runs_as_sudo_user(void **state)
{
	static const char *const none[] = { NULL };
	struct stat st;

	(void)state;
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	launch(none, 0);
	/* what the command says, and what it emitted into the trace */
	assert_int_equal(am_need_field(r.tracer_stdout, "uid=", "uid"), NOBODY);
	assert_int_equal(am_need_field(r.tracer_stdout, "uid=", "gid"), NOBODY);
	assert_true(am_arg_num(am_one(&r, "C", "uid", r.pid), "value") == NOBODY);
	assert_true(am_arg_num(am_one(&r, "C", "gid", r.pid), "value") == NOBODY);
	/* still traced from its first instruction: the tracer kept its rights */
	am_one(&r, "I", "main-first", r.pid);
	assert_complete();
	/* and the trace is the user's */
	assert_int_equal(stat(r.trace_path, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
}

/* Threads of the command: each event on its real tid, none on main's. */
static void test_threads_by_real_tid(void **state)
{
	static const char *const args[] = { "threads:3", NULL };
	cJSON *ev[8];
	long tids[3];
	size_t n;

	(void)state;
	launch(args, 0);
	for (int k = 0; k < 3; k++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "thread %d ", k);
		tids[k] = am_need_field(r.tracer_stdout, prefix, "tid");
		assert_true(tids[k] != r.pid);
		for (int j = 0; j < k; j++)
			assert_true(tids[j] != tids[k]);
	}
	n = am_find(&r, "I", "thread-hello", r.pid, ev, 8);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		double k = am_arg_num(ev[i], "k");

		assert_true(k >= 0 && k < 3);
		if (tr_num(ev[i], "tid") != tids[(int)k])
			fail_msg("thread-hello of thread %.0f has tid %.0f, the thread's tid is %ld",
				 k, tr_num(ev[i], "tid"), tids[(int)k]);
	}
	assert_true(tr_num(am_one(&r, "I", "main-last", r.pid), "tid") == r.pid);
	assert_complete();
}

/*
 * `-o - -- CMD`: standard output carries the trace alone (strict JSON from
 * its first byte to its last); what the command prints goes to stderr.
 */
static void test_trace_alone_on_stdout(void **state)
{
	const char *argv[8];
	FILE *f;

	(void)state;
	copy_launched();
	argv[0] = "-o";
	argv[1] = "-";
	argv[2] = "--";
	argv[3] = r.program;
	argv[4] = NULL;
	am_start_tracer(&r, argv);
	am_wait_tracer(&r, TR_TIMEOUT_MS);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d; stderr:\n%s", r.tracer_exit, r.tracer_stderr);
	if (strstr(r.tracer_stdout, "uid="))
		fail_msg("the command's output is in the trace:\n%.300s", r.tracer_stdout);
	/* the command's report went to stderr */
	r.pid = am_need_field(r.tracer_stderr, "uid=", "pid");
	f = fopen(r.trace_path, "w");
	assert_non_null(f);
	fputs(r.tracer_stdout, f);
	fclose(f);
	if (tr_load_trace(&r) < 0) /* strict JSON, the whole of it */
		fail_msg("%s", r.error);
	am_one(&r, "I", "main-first", r.pid);
	assert_complete();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_traced_from_first_instruction, free_all),
		cmocka_unit_test_teardown(test_exit_code, free_all),
		cmocka_unit_test_teardown(test_killed_by_signal, free_all),
		cmocka_unit_test_teardown(test_runs_as_sudo_user, free_all),
		cmocka_unit_test_teardown(test_threads_by_real_tid, free_all),
		cmocka_unit_test_teardown(test_trace_alone_on_stdout, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
