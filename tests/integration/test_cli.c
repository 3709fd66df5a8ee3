// SPDX-License-Identifier: MIT
/*
 * test_cli - the command line of ctrace-bpf: each error is one line on
 * stderr and a non-zero exit; --help; and every way of stopping (-d, SIGINT,
 * SIGTERM) leaves a complete trace while the target goes on running.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

/* Freed by the teardown, also when a test fails. */
static struct trace_run r;
static struct tr_cmd c;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

static void test_help(void **state)
{
	const char *const args[] = { "--help", NULL };

	(void)state;
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	assert_int_equal(c.exit, 0);
	assert_non_null(strstr(c.out, "-p"));
	assert_non_null(strstr(c.out, "Examples"));
	assert_non_null(strstr(c.out, "ctrace-bpf -p "));
}

static void test_no_such_pid(void **state)
{
	char pid[24], out[64];
	const char *const args[] = { "-p", pid, "-o", out, NULL };

	(void)state;
	snprintf(pid, sizeof(pid), "%d", cli_free_pid());
	snprintf(out, sizeof(out), "/tmp/ctrace-test-nopid-%d.json", (int)getpid());
	unlink(out);
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	assert_int_not_equal(c.exit, 0);
	cli_assert_one_line(c.err, NULL);
	assert_non_null(strstr(c.err, pid));
	assert_int_not_equal(access(out, F_OK), 0); /* no file left behind */
}

static void test_non_numeric_pid(void **state)
{
	const char *const args[] = { "-p", "abc", NULL };
	const char *const args2[] = { "-p", "12x", NULL };

	(void)state;
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	assert_int_not_equal(c.exit, 0);
	cli_assert_one_line(c.err, NULL);
	assert_non_null(strstr(c.err, "abc"));
	cli_run_tracer(&c, NULL, NULL, args2, 20000);
	assert_int_not_equal(c.exit, 0);
	cli_assert_one_line(c.err, NULL);
}

/*
 * A running process built without ctrace (yet): one line says it waits, and
 * where it looked; -d ends the wait with a complete file and exit 0.
 */
static void test_no_probes(void **state)
{
	const char *const sleep_args[] = { "10", NULL };
	char pid[24], link[64], exe[4096];
	const char *const args[] = { "-p", pid, "-o", "/dev/null", "-d", "0.3", NULL };
	ssize_t n = 0;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "/bin/sleep", sleep_args) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	/* wait for the exec, then learn the binary's real path */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)r.prog.pid);
	for (int i = 0; i < 1000; i++) {
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (n > 0 && strstr(exe, "sleep"))
			break;
		usleep(1000);
	}
	assert_true(n > 0);
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	assert_int_equal(c.exit, 0);
	{
		/* the first line: waiting, naming where it looked; the last: the end */
		const char *nl = strchr(c.err, '\n');

		if (!nl || !strstr(c.err, "waiting for") || strstr(c.err, "waiting for") > nl)
			fail_msg("the first line does not say it waits: %s", c.err);
		if (!strstr(c.err, exe) || strstr(c.err, exe) > nl)
			fail_msg("the first line does not name %s, where it looked: %s", exe, c.err);
		if (!strstr(c.err, "duration elapsed"))
			fail_msg("-d did not end it: %s", c.err);
	}
}

/*
 * A program started through a script that exec()s it (as pyenv's python3
 * shim does), none of them with probes: the end of the trace says so, in
 * one line naming every object looked in, the exec()d program too (the
 * start's "waiting" line could only name the shell). A traced program's
 * end does not say it.
 */
static void test_no_probes_said_at_the_end(void **state)
{
	const char *const args[] = { "-o", "/dev/null", "--", "/bin/sh", "-c", "exec /bin/sleep 0.3", NULL };
	char prog[4096], sleep_path[4096];
	const char *line;

	(void)state;
	tr_require_root();
	assert_non_null(realpath("/bin/sleep", sleep_path));
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	assert_int_equal(c.exit, 0);
	line = strstr(c.err, "no probe was attached in the whole trace (looked in: ");
	if (!line)
		fail_msg("the end does not say no probe was ever attached: %s", c.err);
	if (!strstr(line, sleep_path) || strchr(line, '\n') < strstr(line, sleep_path))
		fail_msg("the end's line does not name %s, the program the script exec()d: %s", sleep_path, line);
	assert_true(strchr(line, '\n') && !strchr(line, '\n')[1]); /* the last line, whole */
	{
		const char *const traced[] = { "-o", "/dev/null", "--",
					       tr_program_path("armed_hello", prog, sizeof(prog)), NULL };

		cli_run_tracer(&c, NULL, NULL, traced, 20000);
		assert_int_equal(c.exit, 0);
		if (strstr(c.err, "no probe was attached"))
			fail_msg("said of a traced program: %s", c.err);
	}
}

static void test_unwritable_output(void **state)
{
	const char *const prog_args[] = { "20", NULL };
	const char *const args[] = { "-o", "/proc/nonexistent/x.json", NULL };

	(void)state;
	tr_require_root();
	/* the tracer adds -o TMP first; the second -o is the one that counts */
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, args) < 0 ||
	    tr_wait_tracer(&r, 20000) < 0)
		fail_msg("%s", r.error);
	assert_int_not_equal(r.tracer_exit, 0);
	cli_assert_one_line(r.tracer_stderr, NULL);
	assert_non_null(strstr(r.tracer_stderr, "/proc/nonexistent/x.json"));
}

/* A trace of ticker that stopped while ticker kept running. */
static void check_stopped_trace(struct trace_run *run)
{
	cJSON *ticks[1];

	if (tr_load_trace(run) < 0)
		fail_msg("%s", run->error);
	assert_non_null(tr_meta(run));
	assert_true(tr_find_all(run, "I", "tick", ticks, 1) == 1);
	assert_true(tr_find(run, "C", "ticks") != NULL);
	/* the target is still there: the tracer stopped on its own */
	assert_false(run->prog.reaped);
	assert_int_equal(kill(run->prog.pid, 0), 0);
	/* and it detached: the program sees its semaphore fall back to 0 */
	if (tr_wait_line(run, "disarmed", 5000) < 0)
		fail_msg("the target still sees a tracer after the tracer exited: %s", run->error);
}

/* First and last ts of the "tick" instants, in seconds. */
static void tick_span(const struct trace_run *run, double *first, double *last)
{
	cJSON *ev;

	*first = 1e300;
	*last = 0;
	cJSON_ArrayForEach(ev, run->events) {
		const char *name = tr_str(ev, "name");
		double ts = tr_num(ev, "ts") / 1e6;

		if (name && !strcmp(name, "tick")) {
			*first = ts < *first ? ts : *first;
			*last = ts > *last ? ts : *last;
		}
	}
}

static void test_duration(void **state)
{
	const char *const prog_args[] = { "20", NULL };
	const char *const args[] = { "-d", "1", NULL };
	double first, last;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, args) < 0 ||
	    tr_wait_tracer(&r, 15000) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("ctrace-bpf -d 1 exited %d: %s", r.tracer_exit, r.tracer_stderr);
	/* setup and detach add to the 1 s; a stop at the target's end (20 s) or
	 * a -d ignored would be far out */
	if (r.tracer_seconds < 0.95 || r.tracer_seconds > 4)
		fail_msg("ctrace-bpf -d 1 ran %.2f s", r.tracer_seconds);
	check_stopped_trace(&r);
	tick_span(&r, &first, &last);
	if (last - first < 0.5 || last - first > 1.6)
		fail_msg("ticks were traced for %.2f s with -d 1", last - first);
}

/* Stopping with a signal (SIGINT as Ctrl-C, SIGTERM as kill). */
static void stop_with(int sig)
{
	const char *const prog_args[] = { "20", NULL };

	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, NULL) < 0 ||
	    tr_wait_line(&r, "armed", 10000) < 0)
		fail_msg("%s", r.error);
	usleep(300 * 1000); /* ticks while traced */
	kill(r.tracer.pid, sig);
	if (tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("ctrace-bpf exited %d after %s: %s", r.tracer_exit,
			 strsignal(sig), r.tracer_stderr);
	check_stopped_trace(&r);
}

static void test_sigint(void **state)
{
	(void)state;
	stop_with(SIGINT);
}

static void test_sigterm(void **state)
{
	(void)state;
	stop_with(SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_help, free_all),
		cmocka_unit_test_teardown(test_no_such_pid, free_all),
		cmocka_unit_test_teardown(test_non_numeric_pid, free_all),
		cmocka_unit_test_teardown(test_no_probes, free_all),
		cmocka_unit_test_teardown(test_no_probes_said_at_the_end, free_all),
		cmocka_unit_test_teardown(test_unwritable_output, free_all),
		cmocka_unit_test_teardown(test_duration, free_all),
		cmocka_unit_test_teardown(test_sigint, free_all),
		cmocka_unit_test_teardown(test_sigterm, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
