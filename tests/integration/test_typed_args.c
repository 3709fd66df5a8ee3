// SPDX-License-Identifier: MIT
/*
 * test_typed_args - CTRACE_INSTANT_ARGS, CTRACE_SPAN_BEGIN_ARGS and
 * CTRACE_SPAN_END_ARGS: tests/programs/typed_args traced by the real tracer
 * in both event paths (the default, batched, and --no-batch), the trace read
 * back event by event. What a user relies on:
 *   - each pair is in the event's args with its type: integers exact to the
 *     last digit (2^64-1, INT64_MIN: no double rounding), doubles as
 *     numbers that read back as doubles (2.0, not 2), NaN as the string
 *     "NaN", strings escaped, NULL as null;
 *   - a span's begin and end pairs are both in its X;
 *   - a string too long for the pairs' buffer is cut and says so, and the
 *     pair after it is still there;
 *   - Chrome DevTools' trace engine reads the file (the events are its own).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static const char *const no_batch[] = { "--no-batch", NULL };

/* The text of the one event named `name` as the file has it (the digits as written). */
static char *event_text(const struct trace_run *r, const char *name)
{
	char pat[64];
	const char *at, *start, *end;

	snprintf(pat, sizeof(pat), "\"name\":\"%s\"", name);
	at = strstr(r->trace_text, pat);
	assert_non_null(at);
	assert_null(strstr(at + 1, pat)); /* one event of that name */
	for (start = at; start > r->trace_text && *start != '\n'; start--)
		;
	end = strchr(at, '\n');
	assert_non_null(end);
	return strndup(start, (size_t)(end - start));
}

static cJSON *args_of(const cJSON *ev)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");

	assert_true(cJSON_IsObject(a));
	return a;
}

static void typed(const char *const *tracer_args, bool per_event)
{
	const char *const prog_args[] = { "/tmp/a \"b\"\\c \xc3\xa9", NULL };
	struct trace_run r;
	cJSON *ev, *a, *sum;
	char *text;

	tr_run_ok(&r, "typed_args", prog_args, tracer_args);
	assert_non_null(strstr(r.prog_stdout, "typed done"));
	/* The path asked for (without --no-batch, batched where the kernel and the set allow). */
	if (per_event)
		assert_string_equal(tr_str(tr_meta(&r), "event_path"), "per_event");
	else if (!strcmp(tr_str(tr_meta(&r), "event_path"), "batched"))
		assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "batch"), "events") >= 5);

	ev = tr_find(&r, "I", "read");
	assert_non_null(ev);
	a = args_of(ev);
	assert_int_equal(cJSON_GetArraySize(a), 4);
	assert_true(tr_num(a, "fd") == -3);
	assert_true(tr_num(a, "ms") == 0.25);
	assert_string_equal(tr_str(a, "path"), prog_args[0]);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "bytes")));
	text = event_text(&r, "read");
	assert_non_null(strstr(text, "\"args\":{\"fd\":-3,\"bytes\":18446744073709551615,\"ms\":0.25,"
				     "\"path\":\"/tmp/a \\\"b\\\"\\\\c \xc3\xa9\"}"));
	free(text);

	ev = tr_find(&r, "X", "op");
	assert_non_null(ev);
	a = args_of(ev);
	assert_int_equal(cJSON_GetArraySize(a), 4); /* begin's two, then end's two */
	assert_true(tr_num(a, "id") == 7);
	assert_string_equal(tr_str(a, "name"), "op \"one\"");
	assert_string_equal(tr_str(a, "ratio"), "NaN");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "res")));

	ev = tr_find(&r, "I", "long");
	assert_non_null(ev);
	a = args_of(ev);
	assert_int_equal(cJSON_GetArraySize(a), 3);
	assert_true(strlen(tr_str(a, "text")) > 300);
	assert_true(strlen(tr_str(a, "text")) < 1000);
	assert_non_null(strstr(tr_str(a, "text"), "xxx\xe2\x80\xa6[truncated]"));
	text = event_text(&r, "long");
	/* exact, and a whole double written as one (Perfetto types it by how it is written) */
	assert_non_null(strstr(text, "\"n\":-9223372036854775808,\"whole\":2.0}"));
	free(text);

	/* A JSON text beside them is as it always was. */
	ev = tr_find(&r, "I", "plain");
	assert_non_null(ev);
	assert_true(tr_num(args_of(ev), "fd") == -3);
	assert_true(tr_meta_num(&r, "dropped_events") == 0);

	sum = tr_checker_summary(r.trace_path);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sum, "ok")));
	{
		int instants = 0, op = 0;
		cJSON *e;

		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sum, "instants"))
			instants += !strcmp(tr_str(e, "name"), "read") || !strcmp(tr_str(e, "name"), "long");
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sum, "slices"))
			op += !strcmp(tr_str(e, "name"), "op");
		assert_int_equal(instants, 2);
		assert_int_equal(op, 1);
	}
	cJSON_Delete(sum);
	tr_free(&r);
}

static void test_typed_args_batched(void **state)
{
	(void)state;
	typed(NULL, false);
}

static void test_typed_args_per_event(void **state)
{
	(void)state;
	typed(no_batch, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typed_args_batched),
		cmocka_unit_test(test_typed_args_per_event),
	};

	tr_require_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
