/* SPDX-License-Identifier: MIT */
/*
 * test_args_json.c - untrusted args text -> cJSON object -> written JSON.
 * Every output is checked byte by byte where the expected text is known, and
 * always for being valid UTF-8 with no raw control bytes, and for parsing
 * back (with cJSON) to an object.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include "json_strict.h"

#include "encode/json/args_json.h"

#define FFFD "\xef\xbf\xbd"
#define MARK "\xe2\x80\xa6[truncated]"

/* Strict UTF-8 check, written independently of the code under test (tests/lib). */
static int utf8_valid(const unsigned char *s, size_t n)
{
	return json_strict_utf8((const char *)s, n, NULL);
}

/* Output must be valid UTF-8, hold no raw control byte or DEL and parse back with
 * cJSON (trailing bytes rejected) to an object. */
static void check_output(const char *out, size_t len)
{
	size_t i;
	cJSON *back;

	assert_true(utf8_valid((const unsigned char *)out, len));
	for (i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) {
			print_error("raw control byte at %zu in [%s]\n", i, out);
			fail();
		}
	assert_int_equal(strlen(out), len);
	back = cJSON_ParseWithOpts(out, NULL, 1);
	if (!back) {
		print_error("does not parse back: [%.*s]\n", (int)len, out);
		fail();
	}
	assert_true(cJSON_IsObject(back));
	cJSON_Delete(back);
}

/* jw_cjson(obj) into a temp file, read back (NUL-terminated). */
static char *write_obj(const cJSON *obj, struct json_writer *keep, size_t *len)
{
	struct json_writer w;
	struct stat st;
	FILE *f = tmpfile();
	char *out;
	int fd;

	assert_non_null(f);
	fd = fileno(f);
	if (keep) { /* reuse the caller's writer (and its scratch buffer) */
		w = *keep;
		w.fd = fd;
	} else {
		assert_int_equal(jw_init(&w, fd, 64), 0);
	}
	jw_cjson(&w, obj);
	assert_int_equal(jw_flush(&w), 0);
	assert_int_equal(fstat(fd, &st), 0);
	out = malloc((size_t)st.st_size + 1);
	assert_non_null(out);
	assert_int_equal(pread(fd, out, (size_t)st.st_size, 0), st.st_size);
	out[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	if (keep)
		*keep = w;
	else
		jw_free(&w);
	fclose(f);
	return out;
}

/* args_parse + jw_cjson; the output is always checked. */
static char *args_out(const char *text, size_t n, bool truncated, size_t *len)
{
	cJSON *obj = args_parse(text, n, truncated);
	char *out;

	assert_non_null(obj);
	assert_true(cJSON_IsObject(obj));
	out = write_obj(obj, NULL, len);
	cJSON_Delete(obj);
	check_output(out, *len);
	return out;
}

static void expect_args_n(const char *text, size_t n, bool truncated,
			  const char *want, size_t wlen)
{
	size_t len;
	char *out = args_out(text, n, truncated, &len);

	if (len != wlen || memcmp(out, want, wlen) != 0) {
		print_error("args [%.*s]\ngot  [%s]\nwant [%.*s]\n", (int)n,
			    text, out, (int)wlen, want);
		fail();
	}
	free(out);
}
#define expect_args(text, trunc, want) \
	expect_args_n(text, sizeof(text) - 1, trunc, want, sizeof(want) - 1)

static void test_empty(void **state)
{
	(void)state;
	expect_args("", false, "{}");
	expect_args_n(NULL, 0, false, "{}", 2);
	expect_args("{}", false, "{}");
	expect_args(" \t\n{ }\r\n", false, "{}");
}

static void test_object_kept(void **state)
{
	(void)state;
	expect_args("{\"a\":1,\"b\":\"x\",\"c\":[1,2.5,{\"d\":null}],\"e\":true,"
		    "\"f\":false,\"g\":{},\"h\":[],\"\":\"\"}",
		    false,
		    "{\"a\":1,\"b\":\"x\",\"c\":[1,2.5,{\"d\":null}],\"e\":true,"
		    "\"f\":false,\"g\":{},\"h\":[],\"\":\"\"}");
	/* re-printed compact; escapes normalised */
	expect_args("{ \"a\" :\t1 ,\n\"s\": \"q\\\"\\\\\\/\\n\\u0041\\u00e9\" }",
		    false, "{\"a\":1,\"s\":\"q\\\"\\\\/\\nA\xc3\xa9\"}");
	/* duplicate keys are kept, in order */
	expect_args("{\"a\":1,\"a\":2,\"a\":\"x\"}", false,
		    "{\"a\":1,\"a\":2,\"a\":\"x\"}");
	/* a UTF-8 byte order mark is skipped by cJSON */
	expect_args("\xef\xbb\xbf{\"a\":1}", false, "{\"a\":1}");
}

static void test_not_object_is_raw(void **state)
{
	(void)state;
	expect_args("[1,2]", false, "{\"raw\":\"[1,2]\"}");
	expect_args("42", false, "{\"raw\":\"42\"}");
	expect_args("\"s\"", false, "{\"raw\":\"\\\"s\\\"\"}");
	expect_args("null", false, "{\"raw\":\"null\"}");
	expect_args("true", false, "{\"raw\":\"true\"}");
	expect_args("hello world", false, "{\"raw\":\"hello world\"}");
	expect_args("{a:1}", false, "{\"raw\":\"{a:1}\"}");
	expect_args("{\"a\":1,}", false, "{\"raw\":\"{\\\"a\\\":1,}\"}");
	expect_args("{\"a\":+1}", false, "{\"raw\":\"{\\\"a\\\":+1}\"}");
	expect_args("{\"a\":NaN}", false, "{\"raw\":\"{\\\"a\\\":NaN}\"}");
	expect_args("{\"a\":\"\\x\"}", false,
		    "{\"raw\":\"{\\\"a\\\":\\\"\\\\x\\\"}\"}");
	expect_args("{\"a\":1", false, "{\"raw\":\"{\\\"a\\\":1\"}");
	/* trailing garbage */
	expect_args("{\"a\":1} x", false, "{\"raw\":\"{\\\"a\\\":1} x\"}");
	expect_args("{}{}", false, "{\"raw\":\"{}{}\"}");
	expect_args("{}\n\t", false, "{}"); /* trailing whitespace is fine */
	/* control bytes in raw text are escaped */
	expect_args("a\x01\x7f\n", false, "{\"raw\":\"a\\u0001\\u007f\\n\"}");
}

/* cJSON's laxer numbers are re-printed as valid JSON numbers; values out of
 * range come out as null. */
static void test_number_quirks(void **state)
{
	(void)state;
	expect_args("{\"a\":01,\"b\":1.,\"c\":1e999,\"d\":-1e999,\"e\":-0.0,"
		    "\"f\":1E2,\"g\":0.1}",
		    false,
		    "{\"a\":1,\"b\":1,\"c\":null,\"d\":null,\"e\":-0,\"f\":100,"
		    "\"g\":0.1}");
}

static void test_surrogate_escapes(void **state)
{
	(void)state;
	expect_args("{\"a\":\"\\ud800\"}", false,
		    "{\"raw\":\"{\\\"a\\\":\\\"\\\\ud800\\\"}\"}");
	expect_args("{\"a\":\"\\udc00\"}", false,
		    "{\"raw\":\"{\\\"a\\\":\\\"\\\\udc00\\\"}\"}");
	expect_args("{\"a\":\"\\ud800\\u0041\"}", false,
		    "{\"raw\":\"{\\\"a\\\":\\\"\\\\ud800\\\\u0041\\\"}\"}");
	expect_args("{\"a\":\"\\ud800", false,
		    "{\"raw\":\"{\\\"a\\\":\\\"\\\\ud800\"}");
	/* a proper pair is decoded */
	expect_args("{\"a\":\"\\ud83d\\ude00\"}", false,
		    "{\"a\":\"\xf0\x9f\x98\x80\"}");
	/* \u0000 ends cJSON's C string: cut, still valid */
	expect_args("{\"a\":\"x\\u0000y\"}", false, "{\"a\":\"x\"}");
	/* U+2028/U+2029, raw or escaped in the input, come out escaped */
	expect_args("{\"a\":\"\xe2\x80\xa8\\u2029\"}", false,
		    "{\"a\":\"\\u2028\\u2029\"}");
}

static char *nested(size_t depth, const char *open, const char *mid,
		    const char *close, size_t *len)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close), i;
	char *s = malloc(depth * (lo + lc) + lm + 1), *p = s;

	assert_non_null(s);
	for (i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, mid, lm);
	p += lm;
	for (i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

/* 100000-deep nesting is rejected (no stack overflow) and kept as raw;
 * nesting within cJSON's limit is kept as an object. */
static void test_deep_nesting(void **state)
{
	static const char *const kinds[][2] = { { "[", "]" },
						{ "{\"a\":", "}" } };
	size_t k, n, len;

	(void)state;
	for (k = 0; k < 2; k++) {
		char *text = nested(100000, kinds[k][0], "1", kinds[k][1], &n);
		cJSON *obj = args_parse(text, n, false);
		cJSON *raw;
		char *out;

		assert_non_null(obj);
		raw = cJSON_GetObjectItemCaseSensitive(obj, "raw");
		assert_true(cJSON_IsString(raw));
		assert_string_equal(raw->valuestring, text);
		assert_null(raw->next);
		out = write_obj(obj, NULL, &len);
		check_output(out, len);
		free(out);
		cJSON_Delete(obj);
		free(text);
	}
	{
		char *text = nested(500, "{\"a\":", "[]", "}", &n);

		expect_args_n(text, n, false, text, n);
		free(text);
	}
}

static void test_truncated(void **state)
{
	(void)state;
	/* never parsed, even when the cut text happens to be valid JSON */
	expect_args("{\"a\":1}", true, "{\"raw\":\"{\\\"a\\\":1}" MARK "\"}");
	expect_args("{\"a\":\"xy", true,
		    "{\"raw\":\"{\\\"a\\\":\\\"xy" MARK "\"}");
	expect_args("", true, "{\"raw\":\"" MARK "\"}");
	/* the cut fell inside a UTF-8 sequence */
	expect_args("ab\xf0\x9f\x98", true, "{\"raw\":\"ab" FFFD MARK "\"}");
}

static void test_invalid_utf8_repaired(void **state)
{
	(void)state;
	/* in keys and values of a valid object */
	expect_args("{\"k\xff\":\"v\xc0\x80w\xed\xa0\x80\",\"t\":\"\xe2\x82\"}",
		    false,
		    "{\"k" FFFD "\":\"v" FFFD FFFD "w" FFFD FFFD FFFD "\",\"t\":\""
		    FFFD "\"}");
	expect_args("{\"a\":\"\xf4\x90\x80\x80\x80\"}", false,
		    "{\"a\":\"" FFFD FFFD FFFD FFFD FFFD "\"}");
	/* a NUL byte in the text is data, not its end */
	expect_args("{\"a\":\"x\0y\"}", false, "{\"a\":\"x" FFFD "y\"}");
	/* in raw text */
	expect_args("\xff\xfe x\xc3", false,
		    "{\"raw\":\"" FFFD FFFD " x" FFFD "\"}");
	/* valid UTF-8 is kept */
	expect_args("{\"\xc3\xa9\":\"\xe2\x82\xac\xf0\x9f\x98\x80\"}", false,
		    "{\"\xc3\xa9\":\"\xe2\x82\xac\xf0\x9f\x98\x80\"}");
}

static void expect_repair(const char *in, size_t n, const char *want,
			  size_t wlen)
{
	size_t len = 12345;
	char *out = utf8_repair(in, n, &len);

	assert_non_null(out);
	assert_int_equal(len, wlen);
	assert_memory_equal(out, want, wlen);
	assert_int_equal(out[len], '\0');
	free(out);
}
#define check_repair(in, want) \
	expect_repair(in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_utf8_repair(void **state)
{
	(void)state;
	check_repair("", "");
	expect_repair(NULL, 0, "", 0);
	check_repair("plain ascii\x01\x7f", "plain ascii\x01\x7f");
	check_repair("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
		     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	check_repair("a\0b", "a" FFFD "b");
	check_repair("\xc0\xaf", FFFD FFFD);              /* overlong */
	check_repair("\xe0\x80\xaf", FFFD FFFD FFFD);     /* overlong */
	check_repair("\xed\xb2\x80", FFFD FFFD FFFD);     /* surrogate */
	check_repair("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* > 10FFFF */
	check_repair("\xe2\x82" "A", FFFD "A");           /* truncated */
	check_repair("\xf0\x9f\x98", FFFD);               /* truncated at end */
	check_repair("\x80\xbf" "x", FFFD FFFD "x");      /* stray */
	check_repair("\xff", FFFD);
}

/* jw_cjson on trees not made by args_parse: still valid output. */
static void test_jw_cjson_any_tree(void **state)
{
	cJSON *o = cJSON_CreateObject();
	size_t len;
	char *out;
	static const char want[] =
		"{\"s\":\"" FFFD "a\\u2028\\n\",\"n\":null,\"i\":null,"
		"\"x\":1.5}";

	(void)state;
	out = write_obj(NULL, NULL, &len);
	assert_string_equal(out, "{}");
	free(out);

	cJSON_AddStringToObject(o, "s", "\xff" "a\xe2\x80\xa8\n");
	cJSON_AddNumberToObject(o, "n", NAN);
	cJSON_AddNumberToObject(o, "i", INFINITY);
	cJSON_AddNumberToObject(o, "x", 1.5);
	out = write_obj(o, NULL, &len);
	check_output(out, len);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(out, want, len);
	free(out);
	cJSON_Delete(o);
}

/* An object bigger than the scratch buffer: same bytes on the slow path
 * (first) and the fast path (after the buffer grew). */
static void test_big_object_scratch(void **state)
{
	struct json_writer w;
	cJSON *o = cJSON_CreateObject();
	char key[16], val[201], *out1, *out2, *want, *p, *plain;
	size_t len1, len2, i, cap1;

	(void)state;
	/* bytes both print paths must repair: invalid UTF-8, U+2028 */
	memset(val, 'v', 200);
	memcpy(val, "\xff\xe2\x80\xa8", 4);
	val[200] = '\0';
	want = malloc(1000 * 230 + 3);
	assert_non_null(want);
	p = want;
	*p++ = '{';
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		cJSON_AddStringToObject(o, key, val);
		p += sprintf(p, "%s\"%s\":\"" FFFD "\\u2028%s\"",
			     i ? "," : "", key, val + 4);
	}
	*p++ = '}';
	*p = '\0';

	assert_int_equal(jw_init(&w, -1, 1 << 16), 0);
	out1 = write_obj(o, &w, &len1);
	cap1 = w.scratch_cap;
	plain = cJSON_PrintUnformatted(o); /* what has to fit in scratch */
	assert_non_null(plain);
	assert_true(cap1 > strlen(plain));
	cJSON_free(plain);
	out2 = write_obj(o, &w, &len2);
	assert_int_equal(w.scratch_cap, cap1); /* no growth the second time */
	assert_string_equal(out1, want);
	assert_string_equal(out2, want);
	check_output(out1, len1);
	jw_free(&w);
	free(out1);
	free(out2);
	free(want);
	cJSON_Delete(o);
}

/* Random bytes and mutated JSON: the output is always valid. */
static void test_fuzz(void **state)
{
	static const char seedtext[] =
		"{\"a\":[1,{\"b\":\"\\u00e9\\ud83d\\ude00\"}],\"c\":-1.5e3}";
	uint32_t x = 2463534242u;
	char buf[256];
	int round;

	(void)state;
	for (round = 0; round < 20000; round++) {
		size_t n, i, len;
		char *out;

		if (round % 2) { /* random bytes, biased to JSON syntax */
			static const char syn[] = "{}[]\":,\\u0123456789eE.+-tfn ";

			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			n = x % sizeof(buf);
			for (i = 0; i < n; i++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				buf[i] = (x & 256) ? syn[x % (sizeof(syn) - 1)]
						   : (char)(x >> 24);
			}
		} else { /* the seed with a few bytes changed */
			n = sizeof(seedtext) - 1;
			memcpy(buf, seedtext, n);
			for (i = 0; i < 3; i++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				buf[x % n] = (char)(x >> 24);
			}
		}
		out = args_out(buf, n, round % 7 == 0, &len);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_object_kept),
		cmocka_unit_test(test_not_object_is_raw),
		cmocka_unit_test(test_number_quirks),
		cmocka_unit_test(test_surrogate_escapes),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_invalid_utf8_repaired),
		cmocka_unit_test(test_utf8_repair),
		cmocka_unit_test(test_jw_cjson_any_tree),
		cmocka_unit_test(test_big_object_scratch),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
