/* SPDX-License-Identifier: MIT */
/*
 * test_usdt_spec.c - --usdt's grammar (userspace/attach/usdt_spec.c): what each
 * form asks for, every preset parsed by the same parser, the cookie that
 * names a probe and how its arguments are read, and a one-line reason for
 * each kind of mistake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attach/usdt_spec.h"

static struct usdt_specs s;
static char err[400];

static int reset(void **state)
{
	(void)state;
	memset(&s, 0, sizeof(s));
	err[0] = '\0';
	return 0;
}

static void test_an_instant_with_a_string_argument(void **state)
{
	(void)state;
	assert_int_equal(usdt_specs_add(&s, "libfoo:request(ARG1=str:path,ARG2=int)", err, sizeof(err)), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.n_probes, 1);
	assert_false(s.spec[0].span);
	assert_string_equal(s.spec[0].title, "libfoo:request");
	assert_string_equal(s.probe[0].provider, "libfoo");
	assert_string_equal(s.probe[0].name, "request");
	assert_int_equal(s.probe[0].role, USDT_ROLE_INSTANT);
	assert_int_equal(s.probe[0].how[1], CTRACE_USDT_HOW_STR);
	assert_int_equal(s.probe[0].how[2], CTRACE_USDT_HOW_VALUE);
	assert_string_equal(s.probe[0].arg_names[1], "path");
	assert_string_equal(s.probe[0].arg_names[2], "");
	assert_int_equal(s.spec[0].name_arg, -1);
}

static void test_a_span_named_by_an_argument_pairs_by_name(void **state)
{
	(void)state;
	assert_int_equal(usdt_specs_add(&s, "p:b(ARG0=str)~p:e1(ARG0=str)|p:e2,name=ARG0", err, sizeof(err)), 0);
	assert_true(s.spec[0].span);
	assert_int_equal(s.spec[0].n_ends, 2);
	assert_int_equal(s.probe[s.spec[0].end[0]].role, USDT_ROLE_END);
	assert_string_equal(s.probe[s.spec[0].end[1]].name, "e2");
	assert_int_equal(s.spec[0].name_arg, 0);
	/* e2 does not carry the name: ends pair innermost-first, not by name. */
	assert_false(s.spec[0].end_names_match);
	reset(NULL);
	assert_int_equal(usdt_specs_add(&s, "p:b(ARG0=str)~p:e(ARG0=str),name=ARG0,title=x y", err, sizeof(err)), 0);
	assert_true(s.spec[0].end_names_match);
	assert_string_equal(s.spec[0].title, "x y");
}

static void test_every_preset_parses(void **state)
{
	static const char *const presets[] = { "cxx", "python", "postgres", "java" };

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		reset(NULL);
		if (usdt_specs_add(&s, presets[i], err, sizeof(err)))
			fail_msg("preset %s: %s", presets[i], err);
		assert_true(s.n >= 3);
		for (size_t k = 0; k < s.n; k++)
			assert_string_equal(s.spec[k].preset, presets[i]);
	}
	/* cxx: the type is read through the type_info and demangled. */
	reset(NULL);
	assert_int_equal(usdt_specs_add(&s, "cxx", err, sizeof(err)), 0);
	assert_int_equal(s.probe[0].how[1], CTRACE_USDT_HOW_STR_AT_8);
	assert_true(s.probe[0].demangle[1]);
}

static void test_the_cookie_names_the_probe(void **state)
{
	(void)state;
	assert_int_equal(usdt_specs_add(&s, "java", err, sizeof(err)), 0);
	for (size_t i = 0; i < s.n_probes; i++) {
		uint64_t c = usdt_probe_cookie(&s, i);

		assert_ptr_equal(usdt_probe_of_cookie(&s, c), &s.probe[i]);
		for (int a = 0; a < CTRACE_USDT_ARGS; a++)
			assert_int_equal(c >> (CTRACE_USDT_HOW_SHIFT + 2 * a) & 3, s.probe[i].how[a]);
	}
	/* Another's cookie (another index, other ways to read): no probe. */
	assert_null(usdt_probe_of_cookie(&s, s.n_probes));
	assert_null(usdt_probe_of_cookie(&s, usdt_probe_cookie(&s, 0) ^ (1ull << CTRACE_USDT_HOW_SHIFT)));
}

static void expect_error(const char *spec, const char *words)
{
	reset(NULL);
	assert_int_equal(usdt_specs_add(&s, spec, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("--usdt %s: '%s' does not say '%s'", spec, err, words);
	assert_null(strchr(err, '\n'));
}

static void test_mistakes_are_one_line_each(void **state)
{
	(void)state;
	expect_error("pyhton", "not a preset");
	expect_error("p:", "is not PROVIDER:NAME");
	expect_error("p:n(ARG12=str)", "n from 0 to 11");
	expect_error("p:n(ARG0=float)", "int, str, strlen or cxxtype");
	expect_error("p:n(ARG0=str", "end with ')'");
	expect_error("p:b~", "a span is BEGIN~END");
	expect_error("p:b~p:e~p:f", "a span is BEGIN~END");
	expect_error("p:b~p:e,name=ARG0", "needs ARG0=str");
	expect_error("p:b~p:e,colour=red", "an option is");
	expect_error("p:b~p:b", "asked for twice");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_an_instant_with_a_string_argument, reset),
		cmocka_unit_test_setup(test_a_span_named_by_an_argument_pairs_by_name, reset),
		cmocka_unit_test_setup(test_every_preset_parses, reset),
		cmocka_unit_test_setup(test_the_cookie_names_the_probe, reset),
		cmocka_unit_test_setup(test_mistakes_are_one_line_each, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
