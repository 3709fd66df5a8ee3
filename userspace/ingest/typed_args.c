// SPDX-License-Identifier: MIT
/*
 * typed_args.c - typed args (typed_args.h) decoded by hand: the format is
 * this project's own (usdt/ctrace_args.h), made for a program that must
 * not format text, so no library reads it.
 */
#include "ingest/typed_args.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTRACE_ARGS_FORMAT_ONLY
#include "ctrace_args.h"

#define MAGIC_LEN (sizeof(CTRACE__KV_MAGIC) - 1)

/* One pair as decoded; key and str point into the text. */
struct pair {
	char type;
	const char *key;
	size_t key_len;
	uint64_t num;
	const char *str;
	size_t str_len;
};

/* `count` bytes of 7 bits each, lowest first, each with its top bit set: false if one has not. */
static bool septets(const unsigned char *p, size_t count, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < count; i++) {
		if (!(p[i] & 0x80))
			return false;
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
	}
	return true;
}

/* The pair at *at: true and *at past it, or false (malformed). */
static bool next_pair(const char *s, size_t n, size_t *at, struct pair *pr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = *at;
	uint64_t len;

	if (n - i < 2 || p[i + 1] == 0)
		return false;
	pr->type = (char)p[i];
	pr->key_len = (size_t)p[i + 1] - 1;
	pr->key = s + i + 2;
	i += 2;
	if (pr->key_len > n - i)
		return false;
	i += pr->key_len;
	switch (pr->type) {
	case 'i':
	case 'u':
	case 'd':
		/* 10 septets hold 70 bits: the top 6 must be 0 */
		if (n - i < CTRACE__KV_NUM_BYTES || !septets(p + i, CTRACE__KV_NUM_BYTES, &pr->num) ||
		    (p[i + CTRACE__KV_NUM_BYTES - 1] & 0x7e))
			return false;
		i += CTRACE__KV_NUM_BYTES;
		break;
	case 'I':
	case 'U': {
		/* 0x80 | count, then count (1-10) septets: written as the 10-byte kinds */
		size_t count = n - i >= 1 && (p[i] & 0x80) ? (size_t)(p[i] & 0x7f) : 0;

		if (count < 1 || count > CTRACE__KV_NUM_BYTES || n - i - 1 < count ||
		    !septets(p + i + 1, count, &pr->num) ||
		    (count == CTRACE__KV_NUM_BYTES && (p[i + count] & 0x7e)))
			return false;
		i += 1 + count;
		if (pr->type == 'I')
			pr->num = (pr->num >> 1) ^ (0 - (pr->num & 1)); /* zigzag back */
		pr->type = pr->type == 'I' ? 'i' : 'u';
		break;
	}
	case 's':
	case 'S':
		if (n - i < CTRACE__KV_LEN_BYTES || !septets(p + i, CTRACE__KV_LEN_BYTES, &len))
			return false;
		i += CTRACE__KV_LEN_BYTES;
		if (len > n - i)
			return false;
		pr->str = s + i;
		pr->str_len = (size_t)len;
		i += (size_t)len;
		break;
	case 'n':
	case 'x':
		break;
	default:
		return false;
	}
	*at = i;
	return true;
}

bool typed_args_marked(const char *s, size_t n)
{
	return n >= MAGIC_LEN && !memcmp(s, CTRACE__KV_MAGIC, MAGIC_LEN);
}

int typed_args_check(const char *s, size_t n)
{
	struct pair pr;
	size_t at = MAGIC_LEN;
	int count = 0;

	if (!typed_args_marked(s, n))
		return -1;
	while (at < n) {
		if (!next_pair(s, n, &at, &pr))
			return -1;
		count++;
	}
	return count;
}

/*
 * A finite double as JSON that reads back as a double, not an integer
 * (Perfetto types an arg by how its number is written): a whole one gets
 * ".0" (3.0, -0.0), any other as jw_double() writes it (jw_shortest_g). The C locale: the loader never calls
 * setlocale(). Returns the length.
 */
static int double_text(double d, char *b, size_t cap)
{
	if (d == 0 && signbit(d))
		return snprintf(b, cap, "-0.0");
	if (d >= -9007199254740992.0 && d <= 9007199254740992.0 && d == (double)(long long)d)
		return snprintf(b, cap, "%lld.0", (long long)d);
	return jw_shortest_g(d, b, cap);
}

/* What a pointer below 64 KiB is shown as, as names are. */
#define UNREADABLE "(unreadable)"

static void write_value(struct json_writer *w, const struct pair *pr)
{
	double d;

	switch (pr->type) {
	case 'i':
		jw_i64(w, (long long)(int64_t)pr->num);
		break;
	case 'u':
		jw_u64(w, pr->num);
		break;
	case 'd':
		memcpy(&d, &pr->num, sizeof(d));
		if (isfinite(d)) {
			char b[40];

			jw_raw(w, b, (size_t)double_text(d, b, sizeof(b)));
		} else {
			jw_double(w, d); /* "NaN", "Infinity", "-Infinity": JSON has no such numbers */
		}
		break;
	case 's':
		jw_str(w, pr->str, pr->str_len, NULL);
		break;
	case 'S':
		jw_str(w, pr->str, pr->str_len, JW_TRUNC_SUFFIX);
		break;
	case 'n':
		jw_lit(w, "null");
		break;
	default: /* 'x' */
		jw_lit(w, "\"" UNREADABLE "\"");
		break;
	}
}

int typed_args_write_members(struct json_writer *w, const char *s, size_t n)
{
	struct pair pr;
	size_t at = MAGIC_LEN;
	int count = 0;

	while (at < n && next_pair(s, n, &at, &pr)) {
		if (count++)
			jw_lit(w, ",");
		jw_str(w, pr.key, pr.key_len, NULL);
		jw_lit(w, ":");
		write_value(w, &pr);
	}
	return count;
}

/*
 * cJSON keeps numbers as doubles: an integer beyond 2^53 would come out
 * rounded, and a whole double as an integer, so numbers go in as raw text
 * (made above: valid JSON as it is).
 */
static cJSON *cjson_value(const struct pair *pr)
{
	char digits[40];
	char *text;
	cJSON *v;
	double d;

	switch (pr->type) {
	case 'i':
		snprintf(digits, sizeof(digits), "%" PRId64, (int64_t)pr->num);
		return cJSON_CreateRaw(digits);
	case 'u':
		snprintf(digits, sizeof(digits), "%" PRIu64, pr->num);
		return cJSON_CreateRaw(digits);
	case 'd':
		memcpy(&d, &pr->num, sizeof(d));
		if (isnan(d))
			return cJSON_CreateString("NaN");
		if (isinf(d))
			return cJSON_CreateString(d > 0 ? "Infinity" : "-Infinity");
		double_text(d, digits, sizeof(digits));
		return cJSON_CreateRaw(digits);
	case 's':
	case 'S':
		/* cJSON strings end at a NUL; the bytes are repaired at printing (jw_cjson) */
		text = malloc(pr->str_len + sizeof(JW_TRUNC_SUFFIX));
		if (!text)
			return NULL;
		memcpy(text, pr->str, pr->str_len);
		text[pr->str_len] = '\0';
		if (pr->type == 'S')
			strcat(text, JW_TRUNC_SUFFIX);
		v = cJSON_CreateString(text);
		free(text);
		return v;
	case 'n':
		return cJSON_CreateNull();
	default:
		return cJSON_CreateString(UNREADABLE);
	}
}

cJSON *typed_args_cjson(const char *s, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	struct pair pr;
	size_t at = MAGIC_LEN;

	while (o && at < n && next_pair(s, n, &at, &pr)) {
		char key[CTRACE__KV_KEY_MAX + 1 + 256];
		size_t klen = pr.key_len < sizeof(key) - 1 ? pr.key_len : sizeof(key) - 1;
		cJSON *v = cjson_value(&pr);

		memcpy(key, pr.key, klen);
		key[klen] = '\0';
		if (!v) {
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddItemToObject(o, key, v);
	}
	return o;
}
