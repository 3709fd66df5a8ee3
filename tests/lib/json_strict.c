// SPDX-License-Identifier: MIT
/*
 * json_strict.c - see json_strict.h. The scanning is the loader's own strict
 * scanner (userspace/encode/json/json_check.c), at a depth no trace reaches; this file
 * adds the time fields' rule.
 */
#include "json_strict.h"

#include <stdio.h>
#include <string.h>
#include "encode/json/json_check.h"

#define MAX_DEPTH 10000

bool json_strict_utf8(const char *s, size_t n, size_t *bad)
{
	return json_check_utf8(s, n, bad);
}

/*
 * Members come after their values, innermost first: an event's ts or dur
 * (a member of an object at depth 3) is judged when the top-level member
 * holding it ends, and counts only if that member is "traceEvents".
 */
struct time_fields {
	const char *text;
	char pending[96]; /* the first bad ts/dur since the last top-level member */
	char why[128];
};

static bool plain_decimal(const char *v, size_t n)
{
	const char *dot;

	if (!n || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')))
		return false;
	if (memchr(v, 'e', n) || memchr(v, 'E', n))
		return false;
	dot = memchr(v, '.', n);
	return !dot || (size_t)(v + n - dot - 1) <= 3;
}

static const char *time_member(void *ctx, int depth, const char *key, const char *value,
			       size_t value_len)
{
	struct time_fields *t = ctx;

	if (depth == 3 && (!strcmp(key, "ts") || !strcmp(key, "dur")) && !t->pending[0] &&
	    !plain_decimal(value, value_len))
		snprintf(t->pending, sizeof(t->pending),
			 "offset %zu: ts/dur not a number, or with an exponent or more than 3 decimals",
			 (size_t)(value - t->text));
	if (depth != 1)
		return NULL;
	if (!strcmp(key, "traceEvents") && t->pending[0]) {
		snprintf(t->why, sizeof(t->why), "%s", t->pending);
		return t->why;
	}
	t->pending[0] = '\0';
	return NULL;
}

static bool run(const char *s, size_t n, bool time_fields, char *why, size_t why_len)
{
	struct time_fields t = { .text = s };
	struct json_check c = { .max_depth = MAX_DEPTH, .why = why, .why_len = why_len };
	size_t at;

	if (!json_check_utf8(s, n, &at)) {
		if (why)
			snprintf(why, why_len, "offset %zu: invalid UTF-8", at);
		return false;
	}
	if (time_fields) {
		c.member = time_member;
		c.ctx = &t;
	}
	return json_check(s, n, &c);
}

bool json_strict_check(const char *s, size_t n, char *why, size_t why_len)
{
	return run(s, n, false, why, why_len);
}

bool json_strict_time_fields(const char *s, size_t n, char *why, size_t why_len)
{
	return run(s, n, true, why, why_len);
}
