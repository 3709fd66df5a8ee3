// SPDX-License-Identifier: MIT
/*
 * test_pseudo_name_marked - a CTRACE_NEW_PID name longer than the probe
 * copies is cut with the visible "…[truncated]" every other cut string
 * gets, in the pseudo-process's process_name (chrome_trace.c writes the
 * names the model gives it, with their flags).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define TRUNC_MARK "\xe2\x80\xa6[truncated]"

static struct trace_run run;

static void test_long_pseudo_name_marked(void **state)
{
	cJSON *ev[4], *m;
	const char *name;
	size_t n;

	(void)state;
	tr_require_root();
	if (tr_run(&run, "hostile_kinds", NULL, NULL) < 0)
		fail_msg("%s", run.error);
	assert_int_equal(tr_find_all(&run, "I", "in-pseudo2", ev, 4), 1);
	m = tr_find_meta(&run, "process_name", tr_num(ev[0], "pid"), tr_num(ev[0], "pid"));
	assert_non_null(m);
	name = tr_str(cJSON_GetObjectItem(m, "args"), "name");
	n = strlen(name);
	if (n < strlen(TRUNC_MARK) || strcmp(name + n - strlen(TRUNC_MARK), TRUNC_MARK))
		fail_msg("a 1 MiB pseudo-process name was cut to %zu bytes without a marker: ...%s",
			 n, name + (n > 20 ? n - 20 : 0));
	tr_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_pseudo_name_marked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
