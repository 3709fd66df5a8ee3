// SPDX-License-Identifier: MIT
/*
 * The args fast path (userspace/encode/json/json_check.c) may say "no" to good JSON
 * (cJSON then handles it) but never "yes" to anything that is not exactly
 * one JSON object: what it accepts is copied into the trace unchanged.
 * The same scanner is the tests' strict validator (tests/lib/json_strict.c),
 * so it is checked here against an independent reader: fixed cases for
 * the forms cJSON is lenient about, and on 200,000 mutations every yes must
 * be an object that cJSON reads to its last byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "encode/json/json_check.h"

static bool accepts(const char *s)
{
	size_t start, len;

	return json_plain_object(s, strlen(s), &start, &len);
}

static void test_accepts_clean_objects(void **state)
{
	static const char *const good[] = {
		"{}", " { } ", "{\"a\":1}", "{\"bytes\":42,\"ok\":true,\"n\":null}",
		"{\"s\":\"caf\xc3\xa9 \\u00e9 \\n \\\" \\\\ \\/\"}", "{\"x\":[1,-2.5e+3,0.0,{\"y\":[]}]}",
		"{\"dup\":1,\"dup\":2}", "\t{\"a\" : [ true , false ]}\n",
	};
	size_t start, len;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!accepts(good[i]))
			fail_msg("refused a clean object: %s", good[i]);
	assert_true(json_plain_object("  {\"a\":1} ", 10, &start, &len));
	assert_int_equal(start, 2);
	assert_int_equal(len, 7); /* the object without the whitespace */
}

static void test_refuses_everything_else(void **state)
{
	static const char *const bad[] = {
		"", "[]", "1", "\"s\"", "null", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}",
		"{,}", "{a:1}", "{'a':1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}",
		"{\"a\":-}", "{\"a\":1e}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":tru}",
		"{\"a\":1}{}", "{\"a\":1} x", "{\"a\":\"\x01\"}", "{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\uDC00\"}",
		"{\"a\":\"\xff\"}", "{\"a\":\"\xc0\x80\"}", "{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\xe2\x80\xa8\"}", "{\"a\":\"unterminated}", "{\"a\":[1,2}", "{\"a\":[1 2]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepts(bad[i]))
			fail_msg("accepted: %s", bad[i]);
}

static void test_nesting_is_bounded(void **state)
{
	char deep[2 * 70 + 8];
	size_t n = 0;

	(void)state;
	for (int depth = 60; depth <= 70; depth++) {
		n = 0;
		deep[n++] = '{';
		deep[n++] = '"';
		deep[n++] = 'a';
		deep[n++] = '"';
		deep[n++] = ':';
		for (int i = 1; i < depth; i++)
			deep[n++] = '[';
		for (int i = 1; i < depth; i++)
			deep[n++] = ']';
		deep[n++] = '}';
		deep[n] = '\0';
		/* 64 levels at most, counting the object itself */
		assert_int_equal(accepts(deep), depth <= 64);
	}
}

/*
 * `edits` random edits of buf's n bytes (NUL-terminated, cap bytes of room):
 * a byte replaced, deleted, or inserted, from alphabet.
 */
static void mutate(char *buf, size_t cap, size_t *n, int edits, unsigned *seed, const char *alphabet)
{
	size_t letters = strlen(alphabet);

	for (int e = 0; e < edits && *n > 0; e++) {
		size_t at;

		*seed = *seed * 1103515245u + 12345u;
		at = (*seed >> 8) % *n;
		*seed = *seed * 1103515245u + 12345u;
		switch ((*seed >> 8) % 3) {
		case 0: /* replace */
			buf[at] = alphabet[(*seed >> 12) % letters];
			break;
		case 1: /* delete */
			memmove(buf + at, buf + at + 1, *n - at);
			(*n)--;
			break;
		default: /* insert */
			if (*n + 1 < cap) {
				memmove(buf + at + 1, buf + at, *n - at + 1);
				buf[at] = alphabet[(*seed >> 12) % letters];
				(*n)++;
			}
		}
	}
}

/* Every yes must be one object, to its last byte: mutate good inputs byte by byte. */
static void test_never_accepts_invalid(void **state)
{
	static const char *const seeds[] = {
		"{\"a\":1,\"b\":[true,null,\"x\\u0041\"],\"c\":{\"d\":-0.5e-7}}",
		"{\"caf\xc3\xa9\":\"\xe2\x82\xac\",\"e\":[]}",
	};
	static const char alphabet[] = "{}[]\",:\\u0123456789abcdefABCDEF-+.eE tfnrl \x01\x7f\x80\xc3\xa9\xe2\xff";
	char buf[128];
	unsigned seed = 12345;
	int accepted = 0;

	(void)state;
	for (int round = 0; round < 200000; round++) {
		const char *base = seeds[round % 2];
		size_t n = strlen(base), start, len;
		int edits = 1 + round % 3;

		memcpy(buf, base, n + 1);
		mutate(buf, sizeof(buf), &n, edits, &seed, alphabet);
		if (json_plain_object(buf, n, &start, &len)) {
			const char *end = NULL;
			cJSON *v = cJSON_ParseWithLengthOpts(buf + start, len, &end, 0);
			bool object = v && cJSON_IsObject(v) && end == buf + start + len;

			cJSON_Delete(v);
			accepted++;
			if (!object || buf[start] != '{')
				fail_msg("accepted what is not one JSON object: %.*s", (int)n, buf);
		}
	}
	/* The mutations keep some inputs valid: the check above did run. */
	assert_true(accepted > 1000);
}

/*
 * json_plain_object() takes the commonest shape, a flat object of plain
 * ASCII, in a quick pass of its own before the full scan: on mutations of
 * such objects (numbers of every form, strings, true/false/null, empty
 * keys) it must answer exactly as the full scan alone does.
 */
static void test_flat_shape_agrees_with_full_scan(void **state)
{
	static const char *const seeds[] = {
		"{\"bytes\":4096,\"file\":\"/var/data/a.bin\",\"ok\":true,\"n\":null}",
		"{\"a\":-0.5e-7,\"b\":10E+3,\"c\":0,\"\":false,\"d\":\"\"}",
		"{}",
	};
	static const char alphabet[] = "{}[]\",:\\u0123456789-+.eE tfnrl \x01\x7f\x80\xc3";
	char buf[128];
	unsigned seed = 777;
	int accepted = 0;

	(void)state;
	for (int round = 0; round < 300000; round++) {
		const char *base = seeds[round % 3];
		size_t n = strlen(base), start, len;
		int edits = round % 4; /* 0: the seed itself */
		struct json_check c = {
			.flags = JSON_CHECK_OBJECT | JSON_CHECK_NO_SEPARATORS | JSON_CHECK_NO_SURROGATE_ESCAPES,
			.max_depth = 64,
		};
		bool full, plain;

		memcpy(buf, base, n + 1);
		mutate(buf, sizeof(buf), &n, edits, &seed, alphabet);
		full = json_check(buf, n, &c);
		plain = json_plain_object(buf, n, &start, &len);
		if (full != plain || (full && (start != c.start || len != c.len)))
			fail_msg("full scan %d (%zu+%zu), json_plain_object %d (%zu+%zu): %.*s", full, c.start,
				 c.len, plain, start, len, (int)n, buf);
		accepted += plain;
	}
	assert_true(accepted > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_clean_objects),
		cmocka_unit_test(test_refuses_everything_else),
		cmocka_unit_test(test_nesting_is_bounded),
		cmocka_unit_test(test_never_accepts_invalid),
		cmocka_unit_test(test_flat_shape_agrees_with_full_scan),
	};

	return cmocka_run_group_tests_name("json_check", tests, NULL, NULL);
}
