// SPDX-License-Identifier: MIT
/*
 * test_hostile_kinds - hostile input through the event kinds test_hostile
 * does not reach (tests/programs/hostile_kinds.c): pseudo-process and
 * counter names, a span crossing threads, JSON with lone surrogates and raw
 * bytes, a span ended twice, DISCARD of an unknown marker, and a burst of
 * the worst records there are (1 MiB name, 100,000-deep args). The trace is
 * strict JSON (tr_run checks RFC 8259 and UTF-8), each string reads back
 * escaped or visibly cut, nothing is lost uncounted, nothing stalls.
 */
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
#include "group_run.h"
#include "trace_run.h"

#define TRUNC_MARK "\xe2\x80\xa6[truncated]" /* "…[truncated]" */
#define FFFD "\xef\xbf\xbd"                  /* U+FFFD */

static struct trace_run run;

static int group_setup(void **state)
{
	(void)state;
	return tr_group_trace(&run, "hostile_kinds");
}

static const char *pseudo_name(double pid)
{
	cJSON *m = tr_find_meta(&run, "process_name", pid, pid);

	if (!m)
		fail_msg("pseudo-process %.0f has no name", pid);
	return tr_str(cJSON_GetObjectItem(m, "args"), "name");
}

static void test_pseudo_process_names(void **state)
{
	double p1, p2;
	const char *name;
	size_t n;

	(void)state;
	tr_group_need();
	p1 = tr_num(tr_group_one("I", "in-pseudo1"), "pid");
	p2 = tr_num(tr_group_one("I", "in-pseudo2"), "pid");
	assert_true(p1 >= 1073741824.0 && p2 >= 1073741824.0 && p1 != p2);
	/* bad bytes replaced, control bytes and quotes read back exactly */
	assert_string_equal(pseudo_name(p1), "pseudo " FFFD FFFD " \x01 \"q\" \\ end");
	/* 1 MiB: cut (that the cut is marked is blocked/test_pseudo_name_marked.c) */
	name = pseudo_name(p2);
	n = strlen(name);
	assert_true(n > 64 && n < 4096);
	assert_true(strspn(name, "y") >= 64);
}

static void test_counter_names(void **state)
{
	cJSON *c[4];

	(void)state;
	tr_group_need();
	assert_int_equal(tr_find_all(&run, "C", "ctr " FFFD " \x01\"\\ end", c, 4), 2);
	/* one counter: ADD went on from SET's value */
	assert_true(tr_num(cJSON_GetObjectItem(c[1], "args"), "value") == 8);
}

static void test_span_across_threads(void **state)
{
	const char *name = "cross " FFFD FFFD " \x1b[31m end";
	cJSON *b = tr_group_one("b", name), *e = tr_group_one("e", name);

	(void)state;
	tr_group_need();
	assert_string_equal(tr_str(b, "id"), tr_str(e, "id"));
	assert_true(tr_num(b, "tid") != tr_num(e, "tid"));
	assert_string_equal(cJSON_GetStringValue(tr_arg(b, "begin")), "\xf0\x9f\x8e\x89");
	assert_string_equal(cJSON_GetStringValue(tr_arg(e, "end")), FFFD "\x01\"");
}

static void test_args_edge_cases(void **state)
{
	const char *raw;
	cJSON *args;

	(void)state;
	tr_group_need();
	/* a lone surrogate is no text: kept as the raw string */
	raw = cJSON_GetStringValue(tr_arg(tr_group_one("I", "args-lone-surrogate"), "raw"));
	assert_non_null(raw);
	assert_string_equal(raw, "{\"k\":\"\\ud800\"}");
	/* raw bytes inside strings and keys: kept as an object, made valid */
	assert_string_equal(cJSON_GetStringValue(tr_arg(tr_group_one("I", "args-raw-bytes"), "k")),
			    FFFD "\x01\x7f");
	args = cJSON_GetObjectItem(tr_group_one("I", "args-key-bytes"), "args");
	assert_non_null(args);
	assert_non_null(args->child);
	assert_string_equal(args->child->string, "\x01" FFFD);
}

static void test_pairing_and_markers(void **state)
{
	cJSON *meta;

	(void)state;
	tr_group_need();
	tr_group_one("X", "twice");
	tr_group_one("I", "ctrace: span end without begin"); /* the second END */
	meta = tr_meta(&run);
	assert_true(tr_num(meta, "unmatched_span_ends") == 1);
	/* DISCARD of a marker never used: its events stay with the process */
	assert_true(tr_num(tr_group_one("I", "after-discard"), "pid") == run.pid);
}

/* 2000 records of the worst kind: all there or counted, in little time. */
static void test_worst_records_burst(void **state)
{
	cJSON *ev;
	size_t kept = 0;
	double dropped;

	(void)state;
	tr_group_need();
	assert_non_null(strstr(run.prog_stdout, "burst=2000 still_armed=1"));
	cJSON_ArrayForEach(ev, run.events) {
		const char *name = tr_str(ev, "name");

		if (name && !strncmp(name, "yyyyyyyy", 8) && !strcmp(tr_str(ev, "ph"), "I")) {
			const char *raw = cJSON_GetStringValue(tr_arg(ev, "raw"));

			/* the deep args are cut (2 KiB), so kept as text, never parsed */
			if (!raw || strncmp(raw, "{{{{", 4) || !strstr(raw, TRUNC_MARK))
				fail_msg("a burst event lost its args: %s", raw ? raw : "(none)");
			kept++;
		}
	}
	dropped = tr_meta_num(&run, "dropped_events");
	if (kept + dropped != 2000)
		fail_msg("kept %zu + dropped %.0f != 2000", kept, dropped);
	tr_group_one("I", "after");
	/* no stall: the tracer ended soon after the program did */
	if (run.tracer_seconds > 5)
		fail_msg("the tracer took %.1f s", run.tracer_seconds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pseudo_process_names),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_span_across_threads),
		cmocka_unit_test(test_args_edge_cases),
		cmocka_unit_test(test_pairing_and_markers),
		cmocka_unit_test(test_worst_records_burst),
	};

	return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
}
