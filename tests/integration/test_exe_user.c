// SPDX-License-Identifier: MIT
/*
 * test_exe_user - `--exe PATH` traces the processes of every user running
 * PATH and says so, naming their uids; `--user USER` (name or uid) keeps
 * the trace to the processes of that real uid: those running at the start
 * and those started later. A process of another user never enters the
 * trace: no event of it, no name. With -p, a process of another user is
 * refused in one line; an unknown user is one line, exit 2.
 *
 * The program is ticker, copied where nobody can run it; two copies run
 * before the tracer (one as root, one as nobody via setpriv) and two after
 * it attached (the same).
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
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"
#include "cli_check.h"
#include "trace_run.h"

#define NOBODY 65534

static struct trace_run r;
static struct tr_cmd c;
static struct tr_child early[2], late[2]; /* [0] root's, [1] nobody's */

static void end_child(struct tr_child *child)
{
	if (child->pid > 0 && !child->reaped) {
		kill(child->pid, SIGKILL);
		tr_reap(child, 5000);
	}
	memset(child, 0, sizeof(*child));
}

static int free_all(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		end_child(&early[i]);
		end_child(&late[i]);
	}
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

static int wait_in_file(const char *path, const char *s, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		char *text = tr_read_file(path, NULL);
		bool found = text && strstr(text, s);

		free(text);
		if (found)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* ticker, as root (nobody false) or as nobody, its stdout in DIR/TAG.out. */
static void start_ticker(struct tr_child *child, const char *tag, bool nobody)
{
	const char *const as_root[] = { r.program, "30", NULL };
	const char *const as_nobody[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
					  r.program, "30", NULL };

	if (tr_spawn(child, r.dir, tag, nobody ? as_nobody : as_root) < 0)
		fail_msg("cannot start ticker %s", tag);
	if (wait_in_file(child->out_path, "ready", 10000) < 0)
		fail_msg("ticker %s did not start", tag);
}

static void start_early(void)
{
	char src[300];

	tr_require_root();
	tr_require_command("setpriv");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	chmod(r.dir, 0755);
	am_path(r.program, sizeof(r.program), r.dir, "ticker");
	am_copy_file(tr_program_path("ticker", src, sizeof(src)), r.program, 0755);
	start_ticker(&early[0], "early-root", false);
	start_ticker(&early[1], "early-nobody", true);
}

/* --exe PATH [user]: the early tickers at the start, the late ones once it attached; SIGINT then. */
static void trace_exe(const char *user)
{
	const char *args[] = { "--exe", r.program, user ? "--user" : NULL, user, NULL };

	snprintf(r.trace_path, sizeof(r.trace_path), "%s/exe.json", r.dir);
	{
		const char *argv[] = { tr_tracer(), "-o", r.trace_path, args[0], args[1], args[2], args[3], NULL };

		if (tr_start_command(&r, argv) < 0)
			fail_msg("%s", r.error);
	}
	if (wait_in_file(r.tracer.err_path, "tracing every process", 15000) < 0)
		fail_msg("the tracer did not start: %s", tr_read_file(r.tracer.err_path, NULL));
	start_ticker(&late[0], "late-root", false);
	start_ticker(&late[1], "late-nobody", true);
	for (int i = 0; i < 2; i++)
		if (wait_in_file(late[i].out_path, "armed", 10000) < 0)
			fail_msg("late ticker %d never saw its probes armed", i);
	usleep(300000); /* ticks of the late ones, at 1 a ms */
	assert_int_equal(kill(r.tracer.pid, SIGINT), 0);
	if (tr_wait_tracer(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("tracer exited %d: %s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
}

/* Events (any phase) of process pid in the trace, metadata records aside. */
static size_t events_of(pid_t pid)
{
	size_t n = 0;
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events)
		if (tr_num(ev, "pid") == (double)pid && tr_str(ev, "ph") && strcmp(tr_str(ev, "ph"), "M"))
			n++;
	return n;
}

static size_t any_record_of(pid_t pid)
{
	size_t n = 0;
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events)
		n += tr_num(ev, "pid") == (double)pid;
	return n;
}

/* Without --user: every user's processes, and the line names their uids. */
static void test_every_user_said(void **state)
{
	(void)state;
	start_early();
	trace_exe(NULL);
	if (!strstr(r.tracer_stderr, "of every user") || !strstr(r.tracer_stderr, "uid 0") ||
	    !strstr(r.tracer_stderr, "65534"))
		fail_msg("the start does not say whose processes are traced:\n%s", r.tracer_stderr);
	for (int i = 0; i < 2; i++) {
		if (!events_of(early[i].pid))
			fail_msg("no event of early ticker %d (pid %d)", i, (int)early[i].pid);
		if (!events_of(late[i].pid))
			fail_msg("no event of late ticker %d (pid %d)", i, (int)late[i].pid);
	}
}

/* --user nobody (by name, then by uid): nobody's processes only, early and late. */
static void exe_user(const char *user)
{
	start_early();
	trace_exe(user);
	if (!strstr(r.tracer_stderr, "nobody") || !strstr(r.tracer_stderr, "65534") ||
	    strstr(r.tracer_stderr, "every user"))
		fail_msg("the start does not say it traces nobody's processes alone:\n%s", r.tracer_stderr);
	if (!events_of(early[1].pid) || !events_of(late[1].pid))
		fail_msg("nobody's tickers: %zu and %zu events", events_of(early[1].pid), events_of(late[1].pid));
	if (any_record_of(early[0].pid) || any_record_of(late[0].pid))
		fail_msg("root's tickers are in the trace: %zu and %zu records", any_record_of(early[0].pid),
			 any_record_of(late[0].pid));
}

static void test_user_by_name(void **state)
{
	(void)state;
	exe_user("nobody");
}

static void test_user_by_uid(void **state)
{
	(void)state;
	exe_user("65534");
}

/* -p PID --user nobody, PID root's: refused in one line, nothing traced. */
static void test_pid_of_another_user_refused(void **state)
{
	char pid[24], out[320];
	const char *const args[] = { "-p", pid, "--user", "nobody", "-o", out, "-d", "0.3", NULL };

	(void)state;
	start_early();
	snprintf(pid, sizeof(pid), "%d", (int)early[0].pid);
	snprintf(out, sizeof(out), "%s/p.json", r.dir);
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	if (c.exit == 0)
		fail_msg("-p of root's process with --user nobody was traced: %s", c.err);
	cli_assert_one_line(c.err, "--user");
	assert_int_not_equal(access(out, F_OK), 0);
	/* nobody's own: traced */
	snprintf(pid, sizeof(pid), "%d", (int)early[1].pid);
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	if (c.exit != 0)
		fail_msg("-p of nobody's process with --user nobody: exit %d: %s", c.exit, c.err);
}

static void test_bad_user(void **state)
{
	static const char *const bad[] = { "no-such-user-xyz", "", "-1", "4294967295" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const args[] = { "--exe", "/bin/true", "--user", bad[i], NULL };

		cli_run_tracer(&c, NULL, NULL, args, 10000);
		if (c.exit != 2)
			fail_msg("--user '%s': exit %d, not 2: %s", bad[i], c.exit, c.err);
		cli_assert_one_line(c.err, "--user takes");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_user, free_all),
		cmocka_unit_test_teardown(test_every_user_said, free_all),
		cmocka_unit_test_teardown(test_user_by_name, free_all),
		cmocka_unit_test_teardown(test_user_by_uid, free_all),
		cmocka_unit_test_teardown(test_pid_of_another_user_refused, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
