// SPDX-License-Identifier: MIT
/*
 * test_bpftrace - ctrace probe sites are standard USDT probes: bpftrace lists
 * them and reads their arguments from the note's argument specs.
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

static const char *const probes[] = { "span_begin", "span_end", "instant",
				      "counter_set", "counter_add", "new_pid",
				      "discard", "batch" };

/* How many lines of text are exactly `line`. */
static int count_lines(const char *text, const char *line)
{
	size_t len = strlen(line);
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, line, len) && (p[len] == '\n' || p[len] == '\0');
	return n;
}

static void test_list_probes(void **state)
{
	char exe[4096], line[4200];
	const char *argv[] = { "bpftrace", "-l", NULL, NULL };
	char pattern[4200];

	(void)state;
	tr_require_root();
	tr_require_command("bpftrace");
	tr_program_abspath("every_macro", exe, sizeof(exe));
	snprintf(pattern, sizeof(pattern), "usdt:%s:ctrace:*", exe);
	argv[2] = pattern;
	assert_int_equal(tr_cmd_run(&c, argv, 20000), 0);
	if (c.exit != 0)
		fail_msg("bpftrace -l exited %d: %s", c.exit, c.err);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		snprintf(line, sizeof(line), "usdt:%s:ctrace:%s", exe, probes[i]);
		if (count_lines(c.out, line) != 1)
			fail_msg("bpftrace -l does not list %s once:\n%s", line, c.out);
	}
	/* and nothing else */
	{
		int lines = 0;

		for (const char *p = c.out; *p; p++)
			lines += *p == '\n';
		assert_int_equal(lines, 8);
	}
}

/*
 * bpftrace attached to every_macro prints what each probe's arguments hold:
 * the strings behind the pointers, the scope character, the counter's
 * double as its bit pattern.
 */
static void test_read_arguments(void **state)
{
	static const char script[] =
		"usdt:{EXE}:ctrace:instant { printf(\"I %s %d\\n\", str(arg1), arg2); }\n"
		"usdt:{EXE}:ctrace:span_begin { printf(\"B %s %s\\n\", str(arg2), str(arg3)); }\n"
		"usdt:{EXE}:ctrace:counter_set { printf(\"C %s %lu\\n\", str(arg1), arg2); }\n"
		"usdt:{EXE}:ctrace:counter_add { printf(\"A %s %lu\\n\", str(arg1), arg2); }\n"
		"usdt:{EXE}:ctrace:new_pid { printf(\"N %s\\n\", str(arg1)); }\n";
	static const char *const want[] = {
		"I inst-g 103", /* 'g' */
		"I inst-p 112", /* 'p' */
		"I inst-t 116", /* 't' */
		"I pseudo-instant 112",
		"I after-discard 116",
		"B outer {\"a\":1}",
		"B inner {\"b\":2}",
		"B cross-thread {\"from\":\"main\"}",
		"B never-ended {\"e\":5}",
		"C c 4617315517961601024", /* 5.0 */
		"C c 4607182418800017408", /* 1.0 */
		"A c 4612811918334230528", /* 2.5 */
		"A c 13830554455654793216", /* -1.0 */
		"A c 4598175219545276416", /* 0.25 */
		"N pseudo A",
	};
	/* bpftrace attaches probe after probe: every_macro waits 1 s (its
	 * SETTLE_MS) after the first raised the semaphore */
	const char *const prog_args[] = { "1000", NULL };
	const char *const argv[] = { "bpftrace", "-p", "{PID}", "-e", script, NULL };

	(void)state;
	tr_require_root();
	tr_require_command("bpftrace");
	if (tr_run_command(&r, "every_macro", prog_args, argv) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_int_equal(r.tracer_exit, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (count_lines(r.tracer_stdout, want[i]) != 1)
			fail_msg("bpftrace did not print '%s' once; it printed:\n%s\n%s",
				 want[i], r.tracer_stdout, r.tracer_stderr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_list_probes, free_all),
		cmocka_unit_test_teardown(test_read_arguments, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
