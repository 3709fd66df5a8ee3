// SPDX-License-Identifier: MIT
/*
 * test_follow_parent_site - a child of a traced process whose first probe
 * is a site its parent hit before the fork must live, with or without -f.
 *
 * The kernel (6.18) turns a uprobe on a nop5 into a call to a per-process
 * "[uprobes-trampoline]" page after its first hit. That page is VM_DONTCOPY,
 * but the patched code page is copied by fork: the child's call jumps to an
 * unmapped page (dmesg: "segfault at <page> ip <same page> ... error 14").
 * So ctrace-bpf attaches at the note's 1-byte nop (int3), and refuses
 * --fast with -f, and --fast on a kernel that optimizes the nop5: the
 * child may run the site at its first instruction, before any notice of
 * the fork could reach the tracer.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

/* `forker --shared-site armed_hello forked 400`, traced with tracer_args. */
static void run_forker(const char *const *tracer_args)
{
	char exe[PATH_MAX];
	const char *args[] = { "--shared-site", exe, "forked", "400", NULL };

	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	if (tr_run(&r, "forker", args, tracer_args) < 0)
		fail_msg("%s", r.error);
	if (am_has_line(r.prog_stdout, "child killed") ||
	    am_has_line(r.prog_stdout, "grandchild killed"))
		fail_msg("a child of the traced process died; forker says:\n%s", r.prog_stdout);
}

/* -f: the child lives, and its events are in the trace. */
static void test_follow(void **state)
{
	static const char *const f[] = { "-f", NULL };
	long child, grandchild;

	(void)state;
	run_forker(f);
	assert_non_null(strstr(r.prog_stdout, "children ok"));
	child = am_need_field(r.prog_stdout, "child ", "pid");
	grandchild = am_need_field(r.prog_stdout, "grandchild ", "pid");
	assert_int_equal(am_count(&r, "I", "parent-shared", r.pid), 3);
	am_one(&r, "I", "child-shared", child);
	am_one(&r, "I", "child-hello", child);
	am_one(&r, "I", "grandchild-hello", grandchild);
}

/* Without -f the child is not traced, but it must not die either. */
static void test_no_follow(void **state)
{
	(void)state;
	run_forker(NULL);
	/* the exec'd child gives up waiting for a tracer (exit 3): nothing else */
	assert_false(am_has_line(r.prog_stdout, "child exited"));
	assert_false(am_has_line(r.prog_stdout, "grandchild exited"));
}

/*
 * Starts `forker --shared-site armed_hello forked 400` and the tracer with
 * tracer_args; returns once the tracer has exited (r.tracer_exit) or, if it
 * traces, once both have.
 */
static void start_forker(const char *const *tracer_args)
{
	char exe[PATH_MAX];
	const char *args[] = { "--shared-site", exe, "forked", "400", NULL };

	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	if (tr_init(&r) < 0 || tr_start_program(&r, "forker", args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, tracer_args) < 0)
		fail_msg("%s", r.error);
	am_wait_tracer(&r, TR_TIMEOUT_MS);
}

/* The tracer refused in one line naming `why`, and never armed the program. */
static void assert_refused(const char *why)
{
	char *out;

	if (r.tracer_exit != 2)
		fail_msg("the tracer exited %d, want 2 (refused); stderr:\n%s", r.tracer_exit,
			 r.tracer_stderr);
	if (!strstr(r.tracer_stderr, why) ||
	    strchr(r.tracer_stderr, '\n') != r.tracer_stderr + strlen(r.tracer_stderr) - 1)
		fail_msg("not one line saying \"%s\":\n%s", why, r.tracer_stderr);
	out = am_read_out(&r.prog);
	assert_false(am_has_line(out, "child pid="));
	free(out);
	kill((pid_t)r.pid, SIGKILL);
	tr_wait(&r, 5000);
}

/* -f --fast: every followed child would run its parent's sites; refused at once. */
static void test_follow_fast_refused(void **state)
{
	static const char *const ff[] = { "-f", "--fast", NULL };

	(void)state;
	start_forker(ff);
	assert_refused("-f");
}

/*
 * --fast alone: a child forked after the parent's sites fired must live.
 * A fork cannot be caught before the child runs its first instruction, so
 * where the kernel optimizes the nop5 (and so has the bug), --fast is
 * refused; elsewhere it traces at the 1-byte nop and the child lives.
 */
static void test_fast_never_kills_a_child(void **state)
{
	static const char *const fast[] = { "--fast", NULL };
	char *out;

	(void)state;
	start_forker(fast);
	if (r.tracer_exit == 2) {
		assert_refused("fork");
		return;
	}
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	out = am_read_out(&r.prog);
	if (am_has_line(out, "child killed") || am_has_line(out, "grandchild killed"))
		fail_msg("--fast: a child of the traced process died; forker says:\n%s", out);
	free(out);
	assert_int_equal(r.tracer_exit, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_follow, free_all),
		cmocka_unit_test_teardown(test_no_follow, free_all),
		cmocka_unit_test_teardown(test_follow_fast_refused, free_all),
		cmocka_unit_test_teardown(test_fast_never_kills_a_child, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
