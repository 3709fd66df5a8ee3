// SPDX-License-Identifier: MIT
/*
 * test_redzone - a probe hit must not corrupt a leaf function's red zone
 * (tests/programs/redzone explains the mechanism and makes the calls).
 *
 *  - under ctrace-bpf, which attaches at the site's guarded 5-byte nop;
 *  - under bpftrace attached at the note's address (the 1-byte nop);
 *  - the control: the same leaf around an UNGUARDED 5-byte nop site, traced
 *    by bpftrace: there the kernel's call into its uprobe trampoline does
 *    write into the red zone, which shows the danger the guard avoids.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define CALLS 100000

/* One run per test, freed by the teardown even when the test fails. */
static struct trace_run r;

static int free_run(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

/* Reads "KEY=N" from the program's result line; -1 if absent. */
static long result(const struct trace_run *run, const char *key)
{
	char pat[40];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = run->prog_stdout ? strstr(run->prog_stdout, pat) : NULL;
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* bpftrace's "@n: N" at exit; -1 if absent. */
static long bpftrace_count(const struct trace_run *run)
{
	const char *p = run->tracer_stdout ? strstr(run->tracer_stdout, "@n: ") : NULL;

	return p ? strtol(p + 4, NULL, 10) : -1;
}

/*
 * tracer_args: none (ctrace-bpf's default, the int3 of the note's 1-byte
 * nop) or --fast (the guarded 5-byte nop, which the kernel turns into a
 * call that pushes below %rsp after its first hit: the case the guard is for).
 */
static void guarded_under_ctrace_bpf(const char *const *tracer_args)
{
	cJSON *e;
	double dropped, first_ts = 0;
	size_t n = 0;

	tr_require_root();
	if (tr_run(&r, "redzone", NULL, tracer_args) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0)
		fail_msg("redzone exited %d under ctrace-bpf: %s", r.prog_exit, r.prog_stdout);
	assert_int_equal(result(&r, "corrupted_calls"), 0);
	/* every call is an instant "rz" in the trace, or counted as dropped */
	cJSON_ArrayForEach(e, r.events) {
		if (tr_str(e, "name") && !strcmp(tr_str(e, "name"), "rz")) {
			if (!n++)
				first_ts = tr_num(e, "ts");
		}
	}
	dropped = tr_meta_num(&r, "dropped_events");
	if (n + dropped != CALLS)
		fail_msg("redzone made %d probe calls once it saw the semaphore raised, "
			 "but the trace has %zu \"rz\" events and %.0f dropped: %.0f lost "
			 "without a count; the first event came %.3f ms after the program "
			 "saw the semaphore raised (%s)",
			 CALLS, n, dropped, CALLS - n - dropped,
			 first_ts / 1e3 - result(&r, "armed_ns") / 1e6, r.prog_stdout);
}

static void test_guarded_under_ctrace_bpf(void **state)
{
	(void)state;
	guarded_under_ctrace_bpf(NULL);
}

static void test_guarded_under_ctrace_bpf_fast(void **state)
{
	static const char *const fast[] = { "--fast", NULL };

	(void)state;
	/* The nop5 path itself: this program never forks (see trace_options.c). */
	setenv("CTRACE_FAST_DESPITE_FORK", "1", 1);
	guarded_under_ctrace_bpf(fast);
	unsetenv("CTRACE_FAST_DESPITE_FORK");
}

static void test_guarded_under_bpftrace(void **state)
{
	const char *const argv[] = { "bpftrace", "-p", "{PID}", "-e",
				     "usdt:{EXE}:ctrace:instant { @n = count(); }", NULL };

	(void)state;
	tr_require_root();
	tr_require_command("bpftrace");
	if (tr_run_command(&r, "redzone", NULL, argv) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0)
		fail_msg("redzone exited %d under bpftrace: %s; bpftrace: %s",
			 r.prog_exit, r.prog_stdout, r.tracer_stderr);
	assert_int_equal(result(&r, "corrupted_calls"), 0);
	assert_int_equal(r.tracer_exit, 0);
	if (bpftrace_count(&r) <= 0)
		fail_msg("bpftrace counted no hit: %s %s", r.tracer_stdout, r.tracer_stderr);
}

/*
 * The control. Observed on Linux 6.18 x86-64: every call after the first
 * (the first hit goes through int3, then the kernel rewrites the nop5 into
 * a call to its trampoline) has 4 quadwords changed (-8..-32(%rsp): the
 * return address and the trampoline's pushes). If this fails, this kernel
 * does not optimize nop5 uprobes and the guarded tests above prove less.
 */
static void test_control_unguarded_is_corrupted(void **state)
{
	const char *const prog_args[] = { "control", NULL };
	const char *const argv[] = { "bpftrace", "-p", "{PID}", "-e",
				     "usdt:{EXE}:redzone_control:site { @n = count(); }", NULL };

	(void)state;
	tr_require_root();
	tr_require_command("bpftrace");
	if (tr_run_command(&r, "redzone", prog_args, argv) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit == 3)
		fail_msg("bpftrace never raised the control site's semaphore: %s", r.tracer_stderr);
	print_message("control: %s", r.prog_stdout);
	if (r.prog_exit != 1 || result(&r, "corrupted_calls") <= 0)
		fail_msg("the unguarded site was NOT corrupted (exit %d: %s): this kernel "
			 "does not turn a nop5 uprobe into a call", r.prog_exit, r.prog_stdout);
	assert_true(bpftrace_count(&r) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_guarded_under_ctrace_bpf, free_run),
		cmocka_unit_test_teardown(test_guarded_under_ctrace_bpf_fast, free_run),
		cmocka_unit_test_teardown(test_guarded_under_bpftrace, free_run),
		cmocka_unit_test_teardown(test_control_unguarded_is_corrupted, free_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
