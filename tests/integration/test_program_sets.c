// SPDX-License-Identifier: MIT
/*
 * test_program_sets - the loader picks the best BPF program set the kernel
 * takes, says which and why under -v, and records it in the trace's
 * metadata; CTRACE_PROGRAM_SET forces each set (the way every fallback is
 * run on a kernel that has better), CTRACE_NO_MULTI and CTRACE_NO_COOKIES
 * the perf-uprobe, cookie-less attach of kernels before 6.6 and 5.15; a
 * mistyped set is one line and a non-zero exit. Each time the traced
 * program's events are all there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static struct trace_run r;
static struct tr_cmd c;

/* The switches as the suite was run (make test-program-sets sets them), put back after each test. */
static const char *const switches[] = { "CTRACE_PROGRAM_SET", "CTRACE_NO_MULTI", "CTRACE_NO_COOKIES" };
static char *saved[3];

static int save_switches(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		saved[i] = getenv(switches[i]) ? strdup(getenv(switches[i])) : NULL;
	return 0;
}

static int clean(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	for (int i = 0; i < 3; i++)
		if (saved[i])
			setenv(switches[i], saved[i], 1);
		else
			unsetenv(switches[i]);
	return 0;
}

/* A string of metadata; the test fails if it is not there. */
static const char *meta_str(const char *key)
{
	const char *v = tr_str(tr_meta(&r), key);

	if (!v)
		fail_msg("the trace's metadata has no \"%s\"", key);
	return v;
}

static bool feature(const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(tr_meta(&r), "kernel_features"), name));
}

/* Traces `literals 200` with -v; its events must all be there. */
static void run_literals(void)
{
	static const char *const args[] = { "200", NULL };
	static const char *const tracer_args[] = { "-v", NULL };

	if (tr_run(&r, "literals", args, tracer_args) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	{
		cJSON *e;
		int inst = 0, ctr = 0;

		cJSON_ArrayForEach(e, r.events) {
			const char *ph = tr_str(e, "ph"), *name = tr_str(e, "name");

			if (ph && name && !strcmp(ph, "I") && !strcmp(name, "lit-instant"))
				inst++;
			if (ph && name && !strcmp(ph, "C") && !strcmp(name, "lit-counter"))
				ctr++;
		}
		assert_int_equal(inst, 200);
		assert_int_equal(ctr, 200);
	}
	assert_true(tr_meta_num(&r, "unreadable_strings") == 0);
	assert_true(tr_meta_num(&r, "dropped_events") == 0);
}

/* The -v line that says which set was loaded. */
static void expect_verbose_line(const char *set)
{
	char want[64];

	snprintf(want, sizeof(want), "ctrace-bpf: program set %s (", set);
	if (!strstr(r.tracer_stderr, want))
		fail_msg("no \"%s\" line under -v; stderr: %s", want, r.tracer_stderr);
}

/* Unforced: the best set the probed features allow, as metadata says they are. */
static void test_best_set_taken(void **state)
{
	const char *want;

	(void)state;
	tr_require_root();
	unsetenv("CTRACE_PROGRAM_SET");
	run_literals();
	if (feature("sleepable_uprobes") && feature("task_storage"))
		want = feature("bpf_copy_from_user_str") ? "copy_str" : "copy_user";
	else
		want = "probe_read";
	assert_string_equal(meta_str("program_set"), want);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(tr_meta(&r), "program_set_forced")));
	expect_verbose_line(want);
}

static void run_forced(const char *set)
{
	setenv("CTRACE_PROGRAM_SET", set, 1);
	run_literals();
	assert_string_equal(meta_str("program_set"), set);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(tr_meta(&r), "program_set_forced")));
	expect_verbose_line(set);
	if (!strstr(r.tracer_stderr, "forced by CTRACE_PROGRAM_SET"))
		fail_msg("the -v line does not say the set was forced: %s", r.tracer_stderr);
}

static void test_forced_copy_str(void **state)
{
	(void)state;
	tr_require_root();
	run_forced("copy_str");
}

static void test_forced_copy_user(void **state)
{
	(void)state;
	tr_require_root();
	run_forced("copy_user");
}

static void test_forced_probe_read(void **state)
{
	(void)state;
	tr_require_root();
	run_forced("probe_read");
}

/* The attach of kernels before 6.6 (perf uprobes) and 5.15 (no cookies). */
static void test_perf_uprobes_without_cookies(void **state)
{
	(void)state;
	tr_require_root();
	setenv("CTRACE_PROGRAM_SET", "probe_read", 1);
	setenv("CTRACE_NO_MULTI", "1", 1);
	setenv("CTRACE_NO_COOKIES", "1", 1);
	run_literals();
	assert_string_equal(meta_str("probe_links"), "perf_uprobe");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(tr_meta(&r), "bpf_cookies")));
	if (!strstr(r.tracer_stderr, "one perf uprobe per site; no BPF cookies"))
		fail_msg("the -v line does not say how it attached: %s", r.tracer_stderr);
}

static void test_unknown_set_is_one_line(void **state)
{
	char prog[300], dir[] = "/tmp/ctrace-test-set.XXXXXX", out[64];
	const char *argv[] = { tr_tracer(), "-o", out, "--",
			       tr_program_path("every_macro", prog, sizeof(prog)), NULL };

	(void)state;
	tr_require_root();
	if (!mkdtemp(dir))
		fail_msg("mkdtemp failed");
	snprintf(out, sizeof(out), "%s/trace.json", dir);
	setenv("CTRACE_PROGRAM_SET", "copy_everything", 1);
	tr_cmd_run(&c, argv, 10000);
	assert_int_equal(c.exit, 1);
	assert_string_equal(c.err, "ctrace-bpf: CTRACE_PROGRAM_SET=copy_everything is not a program set:"
			    " use copy_str, copy_user or probe_read\n");
	/* Said before anything ran: no file left behind. */
	assert_true(access(out, F_OK) != 0);
	unlink(out);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_best_set_taken, clean),
		cmocka_unit_test_teardown(test_forced_copy_str, clean),
		cmocka_unit_test_teardown(test_forced_copy_user, clean),
		cmocka_unit_test_teardown(test_forced_probe_read, clean),
		cmocka_unit_test_teardown(test_perf_uprobes_without_cookies, clean),
		cmocka_unit_test_teardown(test_unknown_set_is_one_line, clean),
	};

	return cmocka_run_group_tests_name("program_sets", tests, save_switches, NULL);
}
