// SPDX-License-Identifier: MIT
/*
 * test_literals - literal strings are copied by the probe once, then sent
 * by address (metadata.literals_by_reference); the trace must not show it:
 * every event carries its name and args, also the last ones of a process
 * that exits right after them, and a run-time name in a reused buffer is
 * never mistaken for a literal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define N 1000

static void test_literals_once_then_by_reference(void **state)
{
	static const char *const args[] = { "1000", NULL };
	struct trace_run r;
	cJSON *e, *md;
	size_t inst = 0, ctr = 0, dyn[10] = { 0 };

	(void)state;
	tr_run_ok(&r, "literals", args, NULL);
	cJSON_ArrayForEach(e, r.events) {
		const char *ph = tr_str(e, "ph"), *name = tr_str(e, "name");

		if (!ph || !name)
			continue;
		if (!strcmp(ph, "I") && !strcmp(name, "lit-instant")) {
			cJSON *k = tr_arg(e, "k");

			assert_true(cJSON_IsNumber(k) && k->valuedouble == 1);
			inst++;
		} else if (!strcmp(ph, "C") && !strcmp(name, "lit-counter")) {
			ctr++;
		} else if (!strcmp(ph, "I") && !strncmp(name, "dyn-", 4) && name[4] >= '0' &&
			   name[4] <= '9' && !name[5]) {
			dyn[name[4] - '0']++;
		}
	}
	md = tr_meta(&r);
	if (tr_num(md, "dropped_events") != 0)
		fail_msg("%.0f events dropped", tr_num(md, "dropped_events"));
	assert_int_equal(inst, N);
	assert_int_equal(ctr, N);
	for (int d = 0; d < 10; d++)
		if (dyn[d] != N / 10)
			fail_msg("dyn-%d: %zu events, expected %d (a run-time name taken for a literal?)",
				 d, dyn[d], N / 10);
	/* Names and args of the 2 literal sites, all but their first use. */
	if (tr_num(md, "literals_by_reference") < 3 * (N - 1))
		fail_msg("only %.0f strings sent by reference", tr_num(md, "literals_by_reference"));
	assert_true(tr_num(md, "unreadable_strings") == 0);
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals_once_then_by_reference),
	};

	return cmocka_run_group_tests_name("literals", tests, NULL, NULL);
}
