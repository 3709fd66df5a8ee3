// SPDX-License-Identifier: MIT
/*
 * test_harness - the checks the other tests rely on can fail: the strict JSON
 * validator rejects what RFC 8259 rejects (cJSON does not always), the time
 * field check rejects long decimals, and a run of a program that never gets
 * ready fails instead of hanging. No BPF here: runs without root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "json_strict.h"
#include "trace_run.h"

static bool valid(const char *s)
{
	char why[200];

	return json_strict_check(s, strlen(s), why, sizeof(why));
}

static void test_strict_json(void **state)
{
	static const char *const good[] = {
		"{}", " [1, -0.5, 2e10, 1E-3, true, false, null] ", "\"\\u00e9\\ud83d\\ude00\"",
		"{\"a\":{\"b\":[]},\"a\":1}", "\"\xc3\xa9 \xf0\x9f\x98\x80\"", "0",
	};
	static const char *const bad[] = {
		"", "{", "{} x", "01", "1.", "-", ".5", "+1", "NaN", "Infinity", "[1,]",
		"{\"a\"}", "{'a':1}", "\"\x01\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
		"\"\\ud800\"", "\"\\udc00x\"", "\"\\x41\"", "[1]\x0b", "{\"a\":1,}", "tru",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!valid(good[i]))
			fail_msg("rejected valid JSON: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (valid(bad[i]))
			fail_msg("accepted invalid JSON: %s", bad[i]);
	/* an embedded NUL is not JSON either */
	assert_false(json_strict_check("{}\0", 3, NULL, 0));
}

static void test_time_fields(void **state)
{
	char why[200];

	(void)state;
	assert_true(tr_check_time_fields("{\"traceEvents\":[{\"ts\":1.123,\"dur\":0}]}", why, sizeof(why)));
	assert_false(tr_check_time_fields("{\"traceEvents\":[{\"ts\":1.1234}]}", why, sizeof(why)));
	assert_false(tr_check_time_fields("{\"traceEvents\":[{\"dur\":1e3}]}", why, sizeof(why)));
	assert_false(tr_check_time_fields("{\"traceEvents\":[{\"ts\":\"1\"}]}", why, sizeof(why)));
	/* only the events' own ts/dur, not those inside args */
	assert_true(tr_check_time_fields("{\"traceEvents\":[{\"args\":{\"ts\":1.23456}}]}", why, sizeof(why)));
}

static void test_utf8(void **state)
{
	(void)state;
	assert_true(tr_valid_utf8("a\xc3\xa9\xe2\x80\xa6\xf4\x8f\xbf\xbf", 10));
	assert_false(tr_valid_utf8("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	assert_false(tr_valid_utf8("\xe2\x80", 2));         /* cut short */
	assert_false(tr_valid_utf8("\x80", 1));
}

/* A program that exits without "ready": an error, quickly, not a hang. */
static void test_no_ready_line_fails(void **state)
{
	const char *const args[] = { "-c", "echo not ready; exit 4", NULL };
	struct trace_run r;

	(void)state;
	assert_int_equal(tr_init(&r), 0);
	assert_int_equal(tr_start_program(&r, "/bin/sh", args), 0);
	assert_int_equal(tr_wait_line(&r, "ready", 5000), -1);
	assert_non_null(strstr(r.error, "exited (status 4)"));
	tr_free(&r);
}

/* A program that hangs before "ready" is killed at the deadline. */
static void test_hang_times_out(void **state)
{
	const char *const args[] = { "-c", "sleep 30", NULL };
	struct trace_run r;

	(void)state;
	assert_int_equal(tr_init(&r), 0);
	assert_int_equal(tr_start_program(&r, "/bin/sh", args), 0);
	assert_int_equal(tr_wait_line(&r, "ready", 300), -1);
	assert_non_null(strstr(r.error, "no 'ready' line"));
	assert_true(r.prog.reaped);
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_json),
		cmocka_unit_test(test_time_fields),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_no_ready_line_fails),
		cmocka_unit_test(test_hang_times_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
