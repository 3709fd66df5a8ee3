// SPDX-License-Identifier: MIT
/*
 * test_categories - --categories (userspace/lib/categories.c): what a list
 * selects, what it refuses, and the numbers that stand for names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "lib/categories.h"

static void test_named_ones_only(void **state)
{
	struct category_filter f;
	char err[300];

	(void)state;
	assert_int_equal(category_filter_parse(&f, "net,db", err, sizeof(err)), 0);
	assert_true(category_filter_traces(&f, "net"));
	assert_true(category_filter_traces(&f, "db"));
	assert_false(category_filter_traces(&f, "ctrace"));
	assert_false(category_filter_traces(&f, "ne"));
	assert_false(category_filter_traces(&f, "netdb"));
}

static void test_all_but_the_left_out(void **state)
{
	struct category_filter f;
	char err[300];

	(void)state;
	assert_int_equal(category_filter_parse(&f, "-verbose,-debug", err, sizeof(err)), 0);
	assert_false(category_filter_traces(&f, "verbose"));
	assert_false(category_filter_traces(&f, "debug"));
	assert_true(category_filter_traces(&f, "ctrace"));
	assert_true(category_filter_traces(&f, "net"));
	/* Both: the named ones less the left-out ones. */
	assert_int_equal(category_filter_parse(&f, "net,db,-db", err, sizeof(err)), 0);
	assert_true(category_filter_traces(&f, "net"));
	assert_false(category_filter_traces(&f, "db"));
	assert_false(category_filter_traces(&f, "ctrace"));
	/* No filter: every category. */
	assert_true(category_filter_traces(NULL, "anything"));
}

static void test_bad_lists_refused(void **state)
{
	static const char *const bad[] = { "", ",", "net,", ",net", "net,,db", "-", "--net", "n-et",
					   "9lives", "net db", "caf\xc3\xa9",
					   "a234567890123456789012345678901234567890123456789012345678901234" };
	struct category_filter f;
	char err[300];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (category_filter_parse(&f, bad[i], err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' taken", bad[i]);
		assert_non_null(strstr(err, "--categories"));
		assert_null(f.list);
		assert_true(category_filter_traces(&f, "net")); /* no filter left behind */
	}
}

static void test_numbers_of_names(void **state)
{
	unsigned net, db;

	(void)state;
	assert_int_equal(category_id("ctrace"), CATEGORY_DEFAULT_ID);
	assert_false(category_others_attached());
	net = category_id("net");
	db = category_id("db");
	assert_true(net > CATEGORY_DEFAULT_ID && db > net && db <= CATEGORY_IDS_MAX);
	assert_int_equal(category_id("net"), net);
	assert_string_equal(category_name(net), "net");
	assert_string_equal(category_name(db), "db");
	assert_string_equal(category_name(0), "ctrace");
	assert_string_equal(category_name(CATEGORY_UNKNOWN_ID), "(unknown)");
	assert_true(category_others_attached());
	/* Past CATEGORY_IDS_MAX: 0 (unknown), never another name's number. */
	for (unsigned i = 0; i < CATEGORY_IDS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%u", i);
		assert_true(category_id(name) <= CATEGORY_IDS_MAX);
	}
	assert_int_equal(category_id("one_too_many"), 0);
	assert_int_equal(category_id("net"), net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_ones_only),
		cmocka_unit_test(test_all_but_the_left_out),
		cmocka_unit_test(test_bad_lists_refused),
		cmocka_unit_test(test_numbers_of_names),
	};

	return cmocka_run_group_tests_name("categories", tests, NULL, NULL);
}
