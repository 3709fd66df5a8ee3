// SPDX-License-Identifier: MIT
/*
 * test_scope - CTRACE_SCOPE: tests/programs/scopes traced by the real
 * tracer. One probe hit per scope carries its length in TSC ticks; the
 * trace must still show each scope as an "X" on its thread, at the right
 * time, nested, and ended on an early return too.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static void test_scopes_nest_at_the_right_time(void **state)
{
	struct trace_run r;
	cJSON *outer, *inner[4];
	size_t n;

	(void)state;
	tr_run_ok(&r, "scopes", NULL, NULL);

	outer = tr_find(&r, "X", "outer");
	assert_non_null(outer);
	n = tr_find_all(&r, "X", "inner", inner, 4);
	assert_int_equal(n, 2);
	assert_true(tr_num(outer, "pid") == (double)r.pid);
	assert_true(tr_num(outer, "tid") == (double)r.main_tid);
	/* outer sleeps 5+5+5+5 ms: at least 20 ms, and not wildly more. */
	assert_true(tr_num(outer, "dur") >= 20000.0);
	assert_true(tr_num(outer, "dur") < 20000.0 * 10);
	for (size_t i = 0; i < n; i++) {
		assert_true(tr_num(inner[i], "tid") == (double)r.main_tid);
		assert_true(tr_num(inner[i], "dur") >= 5000.0);
		/* Nested: inside outer, so Perfetto and DevTools stack them. */
		tr_assert_inside(inner[i], outer);
	}
	/* In program order, the second (left by an early return) has args. */
	assert_true(tr_num(inner[0], "ts") + tr_num(inner[0], "dur") <= tr_num(inner[1], "ts") ||
		    tr_num(inner[1], "ts") + tr_num(inner[1], "dur") <= tr_num(inner[0], "ts"));
	{
		cJSON *i1 = tr_num(inner[0], "ts") < tr_num(inner[1], "ts") ? inner[1] : inner[0];
		cJSON *a = tr_arg(i1, "i");

		assert_non_null(a);
		assert_true(cJSON_IsNumber(a) && a->valuedouble == 1);
	}
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scopes_nest_at_the_right_time),
	};

	return cmocka_run_group_tests_name("scope", tests, NULL, NULL);
}
