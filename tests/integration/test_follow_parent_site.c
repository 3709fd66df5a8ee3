// SPDX-License-Identifier: MIT
/*
 * test_follow_parent_site - a child of a traced process whose first probe
 * is a site its parent hit before the fork must live, with or without -f.
 *
 * The kernel (6.18) turns a uprobe on a nop5 into a call to a per-process
 * "[uprobes-trampoline]" page after its first hit. That page is VM_DONTCOPY,
 * but the patched code page is copied by fork: the child's call jumps to an
 * unmapped page (dmesg: "segfault at <page> ip <same page> ... error 14").
 * So ctrace-bpf attaches at the note's 1-byte nop (int3) unless --fast.
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
	if (!realpath(tr_program_path("armed_hello", exe, sizeof(exe)), exe))
		fail_msg("armed_hello: %s", strerror(errno));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_follow, free_all),
		cmocka_unit_test_teardown(test_no_follow, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
