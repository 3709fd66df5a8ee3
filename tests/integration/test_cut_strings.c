// SPDX-License-Identifier: MIT
/*
 * test_cut_strings - a name or args with no NUL before an unreadable page
 * (PROT_NONE, or not mapped at all) is not a whole string: the trace shows
 * what was readable with the visible "…[truncated]" marker (a cut args
 * text is kept as {"raw": "...…[truncated]"}), under every program set
 * (CI forces each with CTRACE_PROGRAM_SET). A string whose NUL is the
 * page's last byte is whole, unmarked.
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
#include "group_run.h"
#include "trace_run.h"

#define TRUNC_MARK "\xe2\x80\xa6[truncated]" /* "…[truncated]" */

static struct trace_run run;

static int group_setup(void **state)
{
	(void)state;
	return tr_group_trace(&run, "cut_strings");
}

/* The instant whose name begins with `prefix`. */
static cJSON *instant_named(const char *prefix)
{
	cJSON *ev;

	cJSON_ArrayForEach(ev, run.events) {
		const char *ph = tr_str(ev, "ph"), *name = tr_str(ev, "name");

		if (ph && name && !strcmp(ph, "I") && !strncmp(name, prefix, strlen(prefix)))
			return ev;
	}
	return NULL;
}

static void expect_cut_name(const char *text)
{
	char want[128];
	cJSON *ev;

	tr_group_need();
	snprintf(want, sizeof(want), "%s%s", text, TRUNC_MARK);
	ev = instant_named(text);
	if (!ev)
		fail_msg("no instant named \"%s...\" in the trace", text);
	if (strcmp(tr_str(ev, "name"), want))
		fail_msg("the name before an unreadable page is \"%s\", not \"%s\"", tr_str(ev, "name"),
			 want);
}

static void test_name_before_prot_none(void **state)
{
	(void)state;
	expect_cut_name("cut-before-prot-none");
}

static void test_name_before_unmapped(void **state)
{
	(void)state;
	expect_cut_name("cut-before-unmapped");
}

static void test_args_before_prot_none(void **state)
{
	cJSON *ev, *raw;

	(void)state;
	tr_group_need();
	ev = instant_named("args-cut");
	assert_non_null(ev);
	raw = tr_arg(ev, "raw");
	if (!cJSON_IsString(raw) || strcmp(raw->valuestring, "{\"k\":\"cut-args\"" TRUNC_MARK))
		fail_msg("the args before a PROT_NONE page are %s, not a raw string cut with the marker",
			 cJSON_PrintUnformatted(cJSON_GetObjectItem(ev, "args")));
}

/* The control: a NUL in the page's last byte ends a whole string. */
static void test_whole_string_not_marked(void **state)
{
	cJSON *ev, *k;

	(void)state;
	tr_group_need();
	ev = instant_named("whole");
	assert_non_null(ev);
	k = tr_arg(ev, "k");
	assert_true(cJSON_IsString(k));
	assert_string_equal(k->valuestring, "ends-before-the-page");
	assert_string_equal(tr_str(ev, "name"), "whole");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_before_prot_none),
		cmocka_unit_test(test_name_before_unmapped),
		cmocka_unit_test(test_args_before_prot_none),
		cmocka_unit_test(test_whole_string_not_marked),
	};

	return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
}
