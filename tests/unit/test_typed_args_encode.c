/* SPDX-License-Identifier: MIT */
/*
 * test_typed_args_encode.c - the loader's writer of typed args
 * (userspace/encode/json/typed_args_encode.c) against the reader (typed_args.c): each
 * pair reads back as written, to the last digit; a pair that does not fit
 * is left out whole and the text still decodes exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "ingest/typed_args.h"
#include "encode/json/typed_args_encode.h"

static struct typed_text t;

static void test_pairs_read_back_as_written(void **state)
{
	cJSON *o;
	char *json;

	(void)state;
	typed_text_begin(&t);
	typed_text_num(&t, 'i', "neg", (uint64_t)-1234567890123LL);
	typed_text_num(&t, 'u', "max", UINT64_MAX);
	typed_text_str(&t, "s", "a \"b\"\n", 6, false);
	typed_text_str(&t, "cut", "partial", 7, true);
	typed_text_flag(&t, 'x', "unreadable");
	typed_text_flag(&t, 'n', "null");
	assert_int_equal(typed_args_check(t.b, t.n), 6);
	o = typed_args_cjson(t.b, t.n);
	assert_non_null(o);
	json = cJSON_PrintUnformatted(o);
	assert_non_null(strstr(json, "\"neg\":-1234567890123"));
	assert_non_null(strstr(json, "\"max\":18446744073709551615"));
	assert_non_null(strstr(json, "\"s\":\"a \\\"b\\\"\\n\""));
	assert_non_null(strstr(json, "\"cut\":\"partial"));
	assert_null(strstr(json, "\"cut\":\"partial\""));   /* marked cut */
	assert_non_null(strstr(json, "\"unreadable\":\"(unreadable)\""));
	assert_non_null(strstr(json, "\"null\":null"));
	free(json);
	cJSON_Delete(o);
}

static void test_what_does_not_fit_is_left_out_whole(void **state)
{
	static char big[3 * TYPED_TEXT_BYTES];
	int pairs;

	(void)state;
	memset(big, 'y', sizeof(big));
	typed_text_begin(&t);
	typed_text_num(&t, 'u', "first", 1);
	/* Longer than the format's 14-bit length and than the text: cut, marked. */
	typed_text_str(&t, "big", big, sizeof(big), false);
	/* No room left: these are left out, the text stays whole. */
	for (int i = 0; i < 100; i++)
		typed_text_num(&t, 'u', "later", (uint64_t)i);
	typed_text_flag(&t, 'x', "later_flag");
	assert_true(t.n <= sizeof(t.b));
	pairs = typed_args_check(t.b, t.n);
	assert_int_equal(pairs, 2);
	/* A key longer than its length byte holds: left out. */
	memset(big, 'k', 300);
	big[300] = '\0';
	typed_text_begin(&t);
	typed_text_num(&t, 'u', big, 1);
	assert_int_equal(typed_args_check(t.b, t.n), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_read_back_as_written),
		cmocka_unit_test(test_what_does_not_fit_is_left_out_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
