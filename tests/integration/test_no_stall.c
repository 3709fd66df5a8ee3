// SPDX-License-Identifier: MIT
/*
 * test_no_stall - nothing the traced process controls may hold the tracer
 * past its stop: each test runs a program built to stall or starve a
 * tracer, traces it with -d, and requires the tracer to exit 0 well within
 * a bound (it is killed past it, and the test fails), with a strictly valid
 * trace holding the program's events.
 *
 *   - stall_files: FIFOs (and a symlink to one) where /proc/PID/maps names
 *     the files the process mapped; an open() of those names blocks.
 */
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "target_check.h"
#include "trace_run.h"

/*
 * How long the tracer may take after a -d of 2 s: the 2 s, the attach and
 * the flush, with room for a loaded machine. A tracer that blocks never ends
 * (it is killed at this bound).
 */
#define STOP_BOUND_MS 15000

/* program [args] traced with tracer_args; the tracer must exit 0 within bound_ms. */
static void trace_bounded(struct trace_run *r, const char *program, const char *const *prog_args,
			  const char *const *tracer_args, int bound_ms)
{
	tr_require_root();
	if (tr_init(r) < 0 || tr_start_program(r, program, prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_tracer(r, tracer_args) < 0)
		fail_msg("%s", r->error);
	if (tr_wait_tracer(r, bound_ms) < 0)
		fail_msg("%s", r->error);
	if (r->tracer_exit != 0)
		fail_msg("tracer exit %d: %s", r->tracer_exit, r->tracer_stderr);
	if (tr_load_trace(r) < 0)
		fail_msg("%s", r->error);
	assert_non_null(tr_meta(r));
}

static void test_fifo_at_mapped_name(void **state)
{
	static const char *const prog_args[] = { "8", NULL };
	static const char *const tracer_args[] = { "-d", "2", NULL };
	struct trace_run r;

	(void)state;
	trace_bounded(&r, "stall_files", prog_args, tracer_args, STOP_BOUND_MS);
	assert_true(tc_count(&r, "I", "tick") > 0);
	if (tr_wait(&r, 20000) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_at_mapped_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
