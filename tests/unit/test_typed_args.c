// SPDX-License-Identifier: MIT
/*
 * Typed args end to end in one process: pairs encoded by the real header
 * (usdt/ctrace_args.h, the code CTRACE_INSTANT_ARGS runs) and written by
 * userspace/ingest/typed_args.c as JSON, exactly; the encoding holds no NUL (the
 * per-event probe reads it as a string) and stays within its buffer; a
 * text cut anywhere or with any bit changed is refused or written as valid
 * JSON, never read past its end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#undef CTRACE_SITE_LAYOUT_ONLY /* the real header's encoder */
#include "../../include/ctrace.h"
#include "encode/json/args_json.h"
#include "json_strict.h"
#include "ingest/typed_args.h"

/* The encoded pairs: a copy of the buffer CTRACE_INSTANT_ARGS would pass. */
struct encoded {
	char b[CTRACE__KV_BYTES];
	size_t n;
};

#define ENCODE(out, ...)                                                       \
	do {                                                                   \
		CTRACE__KV_BUILD(__VA_ARGS__)                                  \
		const char *text_ = CTRACE__KV_TEXT;                           \
		(out).n = (size_t)(ctrace__kv - ctrace__kv_buf);               \
		assert_true((out).n < CTRACE__KV_BYTES);                       \
		memcpy((out).b, text_, (out).n + 1);                           \
	} while (0)

/* What `write` writes of the text, NUL-terminated, malloc'd. */
static char *output_of(void (*write)(struct json_writer *w, const char *s, size_t n), const char *s,
		       size_t n)
{
	struct json_writer w;
	struct stat st;
	FILE *f = tmpfile();
	char *out;

	assert_non_null(f);
	assert_int_equal(jw_init(&w, fileno(f), 64), 0);
	write(&w, s, n);
	assert_int_equal(jw_flush(&w), 0);
	jw_free(&w);
	assert_int_equal(fstat(fileno(f), &st), 0);
	out = malloc((size_t)st.st_size + 1);
	assert_non_null(out);
	assert_int_equal(pread(fileno(f), out, (size_t)st.st_size, 0), st.st_size);
	out[st.st_size] = '\0';
	fclose(f);
	return out;
}

static void write_members(struct json_writer *w, const char *s, size_t n)
{
	jw_lit(w, "{");
	typed_args_write_members(w, s, n);
	jw_lit(w, "}");
}

static void write_tree(struct json_writer *w, const char *s, size_t n)
{
	cJSON *o = typed_args_cjson(s, n);

	assert_non_null(o);
	jw_cjson(w, o);
	cJSON_Delete(o);
}

/* What the writer makes of the text: "{members}" (or "(refused)"). */
static char *written(const char *s, size_t n)
{
	if (typed_args_check(s, n) < 0)
		return strdup("(refused)");
	return output_of(write_members, s, n);
}

/* The same text through the cJSON tree (span args merged from begin and end). */
static char *written_cjson(const char *s, size_t n)
{
	return output_of(write_tree, s, n);
}

static void assert_valid_json(const char *out)
{
	char why[200];

	if (!json_strict_check(out, strlen(out), why, sizeof(why))) {
		print_error("not valid JSON (%s): %s\n", why, out);
		fail();
	}
}

static void assert_writes(const struct encoded *e, int pairs, const char *want)
{
	char *out = written(e->b, e->n);
	char *tree = written_cjson(e->b, e->n);

	assert_int_equal(strlen(e->b), e->n); /* no NUL inside: the per-event probe reads a string */
	assert_int_equal(typed_args_check(e->b, e->n), pairs);
	assert_string_equal(out, want);
	assert_valid_json(out);
	assert_string_equal(tree, want); /* the merge's path writes the same */
	free(out);
	free(tree);
}

static void test_numbers_exact(void **state)
{
	struct encoded e;
	long long neg = -1;

	(void)state;
	ENCODE(e, CTRACE_ARG_INT("min", -9223372036854775807ll - 1), CTRACE_ARG_INT("neg", neg),
	       CTRACE_ARG_UINT("max", 18446744073709551615ull), CTRACE_ARG_INT("zero", 0));
	assert_writes(&e, 4, "{\"min\":-9223372036854775808,\"neg\":-1,\"max\":18446744073709551615,\"zero\":0}");
	/* Written so that they read back as doubles: a whole one with ".0". */
	ENCODE(e, CTRACE_ARG_DOUBLE("tenth", 0.1), CTRACE_ARG_DOUBLE("big", 1e300), CTRACE_ARG_DOUBLE("neg", -2.5),
	       CTRACE_ARG_DOUBLE("int", 3));
	assert_writes(&e, 4, "{\"tenth\":0.1,\"big\":1e+300,\"neg\":-2.5,\"int\":3.0}");
	ENCODE(e, CTRACE_ARG_DOUBLE("nzero", -0.0), CTRACE_ARG_DOUBLE("huge", 18446744073709551616.0));
	assert_writes(&e, 2, "{\"nzero\":-0.0,\"huge\":1.8446744073709552e+19}");
	ENCODE(e, CTRACE_ARG_DOUBLE("nan", NAN), CTRACE_ARG_DOUBLE("inf", INFINITY), CTRACE_ARG_DOUBLE("ninf", -INFINITY));
	assert_writes(&e, 3, "{\"nan\":\"NaN\",\"inf\":\"Infinity\",\"ninf\":\"-Infinity\"}");
	/* An int given a double is cut toward zero, as a C cast does. */
	ENCODE(e, CTRACE_ARG_INT("cut", -7.9));
	assert_writes(&e, 1, "{\"cut\":-7}");
}

/*
 * Integers take the septets their value needs (1 to 10, after a count):
 * at each length's edges, both signs, the value comes back exactly and
 * the pair is as short as said; the 10-byte form of older headers still
 * decodes.
 */
static void test_integers_every_length(void **state)
{
	struct encoded e;
	char want[96];

	(void)state;
	for (int k = 0; k <= 9; k++) {
		unsigned long long top = k < 9 ? (1ull << (7 * k + 7)) - 1 : ~0ull; /* the largest of k+1 septets */
		long long s = k < 9 ? (long long)((1ull << (7 * k + 6)) - 1) : 9223372036854775807ll;

		ENCODE(e, CTRACE_ARG_UINT("u", top));
		assert_int_equal(e.n, 2 + 3 + 1 + (size_t)k + 1); /* magic, type+len+key, count, septets */
		snprintf(want, sizeof(want), "{\"u\":%llu}", top);
		assert_writes(&e, 1, want);
		ENCODE(e, CTRACE_ARG_UINT("u", top + 1)); /* one septet more (0 after the largest) */
		snprintf(want, sizeof(want), "{\"u\":%llu}", top + 1);
		assert_writes(&e, 1, want);
		ENCODE(e, CTRACE_ARG_INT("i", s), CTRACE_ARG_INT("n", -s - 1));
		assert_int_equal(e.n, 2 + 2 * (3 + 1 + (size_t)k + 1)); /* zigzag: both k+1 septets */
		snprintf(want, sizeof(want), "{\"i\":%lld,\"n\":%lld}", s, -s - 1);
		assert_writes(&e, 2, want);
	}
	/* The 10-byte form: 4096 = 0x1000, septets 0x00 0x20 then zeros, each | 0x80. */
	assert_int_equal(typed_args_check("\x1fT" "u\x02k" "\x80\xa0\x80\x80\x80\x80\x80\x80\x80\x80", 15), 1);
	{
		char *out = written("\x1fT" "u\x02k" "\x80\xa0\x80\x80\x80\x80\x80\x80\x80\x80"
				    "i\x02m" "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81", 28);

		assert_string_equal(out, "{\"k\":4096,\"m\":-1}");
		free(out);
	}
	/* Counts out of range, septets without their top bit, or past the end: not typed args. */
	assert_int_equal(typed_args_check("\x1fT" "U\x02k" "\x80", 6), -1);
	assert_int_equal(typed_args_check("\x1fT" "U\x02k" "\x8b" "\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81", 17), -1);
	assert_int_equal(typed_args_check("\x1fT" "U\x02k" "\x82\x81\x01", 8), -1);
	assert_int_equal(typed_args_check("\x1fT" "U\x02k" "\x83\x81\x81", 8), -1);
	assert_int_equal(typed_args_check("\x1fT" "I\x02k" "\x8a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x83", 16), -1);
}

static void test_strings(void **state)
{
	struct encoded e;
	const char *null = NULL;

	(void)state;
	ENCODE(e, CTRACE_ARG_STR("q", "say \"hi\"\\ \x01"), CTRACE_ARG_STR("utf8", "\xc3\xa9\xff\xe2\x80\xa8"),
	       CTRACE_ARG_STR("null", null), CTRACE_ARG_STR("low", (const char *)0x10));
	assert_writes(&e, 4, "{\"q\":\"say \\\"hi\\\"\\\\ \\u0001\",\"utf8\":\"\xc3\xa9\xef\xbf\xbd\\u2028\","
			     "\"null\":null,\"low\":\"(unreadable)\"}");
	ENCODE(e, CTRACE_ARG_STR("empty", ""), CTRACE_ARG_STR("key \"quoted\"", "v"));
	assert_writes(&e, 2, "{\"empty\":\"\",\"key \\\"quoted\\\"\":\"v\"}");
}

/* Four long strings: each cut to what is left, every key kept, the buffer never overrun. */
static void test_long_strings_cut(void **state)
{
	struct encoded e;
	char big[1200];
	char *out;
	cJSON *o;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ENCODE(e, CTRACE_ARG_STR("a", big), CTRACE_ARG_STR("b", big), CTRACE_ARG_INT("n", 5),
	       CTRACE_ARG_STR("c_key_of_thirty_one_bytes_____", big));
	assert_int_equal(strlen(e.b), e.n);
	assert_int_equal(typed_args_check(e.b, e.n), 4);
	out = written(e.b, e.n);
	assert_valid_json(out);
	o = cJSON_Parse(out);
	assert_non_null(o);
	assert_true(strlen(cJSON_GetObjectItem(o, "a")->valuestring) > 300); /* the first takes most */
	assert_non_null(strstr(cJSON_GetObjectItem(o, "a")->valuestring, "\xe2\x80\xa6[truncated]"));
	assert_non_null(strstr(cJSON_GetObjectItem(o, "b")->valuestring, "[truncated]"));
	assert_int_equal(cJSON_GetObjectItem(o, "n")->valueint, 5);
	assert_non_null(cJSON_GetObjectItem(o, "c_key_of_thirty_one_bytes_____"));
	cJSON_Delete(o);
	free(out);
}

/* Hostile texts: cut anywhere, any bit flipped, made-up heads. */
static void test_hostile_texts(void **state)
{
	struct encoded e;

	(void)state;
	ENCODE(e, CTRACE_ARG_INT("i", -5), CTRACE_ARG_STR("s", "text"), CTRACE_ARG_DOUBLE("d", 0.5),
	       CTRACE_ARG_STR("n", (const char *)NULL));
	for (size_t cut = 0; cut < e.n; cut++) {
		char *heap = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees a read past */
		char *out;

		memcpy(heap, e.b, cut);
		out = written(heap, cut);
		if (strcmp(out, "(refused)"))
			assert_valid_json(out);
		free(out);
		free(heap);
	}
	for (size_t at = 0; at < e.n; at++) {
		for (int bit = 0; bit < 8; bit++) {
			char *heap = malloc(e.n);
			char *out, *tree;

			memcpy(heap, e.b, e.n);
			heap[at] = (char)(heap[at] ^ (1 << bit));
			out = written(heap, e.n);
			if (strcmp(out, "(refused)")) {
				assert_valid_json(out);
				tree = written_cjson(heap, e.n);
				assert_valid_json(tree);
				free(tree);
			}
			free(out);
			free(heap);
		}
	}
	assert_int_equal(typed_args_check("\x1fT", 2), 0);                 /* no pairs: no args */
	assert_int_equal(typed_args_check("\x1fT" "i\x00", 4), -1);       /* a key length byte of 0 */
	assert_int_equal(typed_args_check("\x1fT" "z\x01", 4), -1);       /* an unknown type */
	assert_int_equal(typed_args_check("\x1fT" "n\x01" "x", 5), -1);   /* bytes after the last pair */
	assert_int_equal(typed_args_check("\x1fT" "s\x01\x85\x80" "ab", 8), -1); /* a length past the end */
	assert_int_equal(typed_args_check("{\"a\":1}", 7), -1);           /* JSON is not typed args */
	assert_false(typed_args_marked("\x1f", 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_exact),
		cmocka_unit_test(test_integers_every_length),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_long_strings_cut),
		cmocka_unit_test(test_hostile_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
