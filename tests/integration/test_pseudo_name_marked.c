// SPDX-License-Identifier: MIT
/*
 * test_pseudo_name_marked - BLOCKED by a loader bug (move into
 * test_hostile_kinds.c once fixed): a CTRACE_NEW_PID name longer than the
 * probe copies is cut without the visible "…[truncated]" every other cut
 * string gets: trace_model.c's new_pid() passes the name to
 * te_metadata_name(), which writes it with no suffix and ignores
 * ev->name_flags.
 *
 * Build by hand like the other integration tests:
 *   cc -g -O2 -std=gnu11 -D_GNU_SOURCE -Itests/lib tests/integration/blocked/test_pseudo_name_marked.c \
 *      build/tests/lib/target_check.o build/tests/lib/trace_run.o build/tests/lib/json_strict.o \
 *      -lcjson -lcmocka -lm -o build/tests/integration/test_pseudo_name_marked
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
