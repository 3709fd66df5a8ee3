// SPDX-License-Identifier: MIT
/* json_strict.c - see json_strict.h. A recursive-descent recognizer. */
#include "json_strict.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 10000

struct parser {
	const unsigned char *s;
	size_t n, i;
	int depth;
	bool time_fields;     /* check "ts"/"dur" of traceEvents' objects */
	bool in_events;       /* inside the top-level traceEvents array */
	char *why;
	size_t why_len;
};

static bool bad(struct parser *p, const char *what)
{
	size_t from = p->i > 30 ? p->i - 30 : 0;
	size_t len = p->n - from < 60 ? p->n - from : 60;

	if (p->why)
		snprintf(p->why, p->why_len, "offset %zu: %s, near \"%.*s\"", p->i,
			 what, (int)len, (const char *)p->s + from);
	return false;
}

/* Length of the UTF-8 sequence at s (1..4), 0 if invalid (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		if (c == 0xf4)
			hi = 0x8f; /* > U+10FFFF */
	} else
		return 0;
	if (n < need + 1)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k <= need; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return need + 1;
}

bool json_strict_utf8(const char *s, size_t n, size_t *bad_at)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(u + i, n - i);

		if (!k) {
			if (bad_at)
				*bad_at = i;
			return false;
		}
		i += k;
	}
	return true;
}

static void ws(struct parser *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static bool lit(struct parser *p, const char *word)
{
	size_t len = strlen(word);

	if (p->n - p->i < len || memcmp(p->s + p->i, word, len))
		return bad(p, "unexpected text");
	p->i += len;
	return true;
}

static int hex4(struct parser *p)
{
	int v = 0;

	if (p->n - p->i < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		unsigned char c = p->s[p->i + k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	p->i += 4;
	return v;
}

/* A string; if key is not NULL its (unescaped ASCII) text goes there. */
static bool string(struct parser *p, char *key, size_t key_len)
{
	size_t kn = 0;

	p->i++; /* the opening quote */
	for (;;) {
		unsigned char c;

		if (p->i >= p->n)
			return bad(p, "unterminated string");
		c = p->s[p->i];
		if (c == '"') {
			p->i++;
			break;
		}
		if (c < 0x20)
			return bad(p, "raw control byte in a string");
		if (c == '\\') {
			p->i++;
			if (p->i >= p->n)
				return bad(p, "unterminated escape");
			c = p->s[p->i++];
			if (c == 'u') {
				int v = hex4(p);

				if (v < 0)
					return bad(p, "bad \\u escape");
				if (v >= 0xdc00 && v <= 0xdfff)
					return bad(p, "lone low surrogate escape");
				if (v >= 0xd800 && v <= 0xdbff) {
					int lo;

					if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
						return bad(p, "lone high surrogate escape");
					p->i += 2;
					lo = hex4(p);
					if (lo < 0xdc00 || lo > 0xdfff)
						return bad(p, "high surrogate without low surrogate");
				}
				continue;
			}
			if (!strchr("\"\\/bfnrt", c) || c == '\0')
				return bad(p, "bad escape");
			continue;
		}
		{
			size_t k = utf8_len(p->s + p->i, p->n - p->i);

			if (!k)
				return bad(p, "invalid UTF-8 in a string");
			if (key && kn + 1 < key_len && k == 1)
				key[kn++] = (char)c;
			p->i += k;
		}
	}
	if (key)
		key[kn] = '\0';
	return true;
}

/* A number; *decimals = digits after the point, *exp = has an exponent. */
static bool number(struct parser *p, int *decimals, bool *exp)
{
	size_t start;

	*decimals = 0;
	*exp = false;
	if (p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n)
		return bad(p, "bad number");
	if (p->s[p->i] == '0')
		p->i++;
	else if (p->s[p->i] >= '1' && p->s[p->i] <= '9')
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	else
		return bad(p, "bad number");
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		start = p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (p->i == start)
			return bad(p, "no digit after the decimal point");
		*decimals = (int)(p->i - start);
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		*exp = true;
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		start = p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (p->i == start)
			return bad(p, "no digit in the exponent");
	}
	return true;
}

static bool value(struct parser *p, const char *key);

static bool object(struct parser *p)
{
	/* the objects directly inside traceEvents are the events */
	bool event = p->in_events && p->depth == 3;
	bool saved = p->in_events;

	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == '}') {
		p->i++;
		return true;
	}
	for (;;) {
		char key[16];

		ws(p);
		if (p->i >= p->n || p->s[p->i] != '"')
			return bad(p, "expected a member name");
		if (!string(p, key, sizeof(key)))
			return false;
		ws(p);
		if (p->i >= p->n || p->s[p->i] != ':')
			return bad(p, "expected ':'");
		p->i++;
		ws(p);
		/* entering traceEvents of the top-level object */
		p->in_events = saved || (p->depth == 1 && !strcmp(key, "traceEvents"));
		if (p->time_fields && event && (!strcmp(key, "ts") || !strcmp(key, "dur"))) {
			int decimals;
			bool exp;

			if (p->i >= p->n || !(p->s[p->i] == '-' || (p->s[p->i] >= '0' && p->s[p->i] <= '9')))
				return bad(p, "ts/dur is not a number");
			if (!number(p, &decimals, &exp))
				return false;
			if (exp || decimals > 3)
				return bad(p, "ts/dur with an exponent or more than 3 decimals");
		} else if (!value(p, key)) {
			return false;
		}
		p->in_events = saved;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == '}') {
			p->i++;
			return true;
		}
		return bad(p, "expected ',' or '}'");
	}
}

static bool array(struct parser *p)
{
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == ']') {
		p->i++;
		return true;
	}
	for (;;) {
		ws(p);
		if (!value(p, NULL))
			return false;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == ']') {
			p->i++;
			return true;
		}
		return bad(p, "expected ',' or ']'");
	}
}

static bool value(struct parser *p, const char *key)
{
	bool ok;
	int decimals;
	bool exp;

	(void)key;
	if (p->i >= p->n)
		return bad(p, "unexpected end");
	if (++p->depth > MAX_DEPTH)
		return bad(p, "nested too deep for this checker");
	switch (p->s[p->i]) {
	case '{': ok = object(p); break;
	case '[': ok = array(p); break;
	case '"': ok = string(p, NULL, 0); break;
	case 't': ok = lit(p, "true"); break;
	case 'f': ok = lit(p, "false"); break;
	case 'n': ok = lit(p, "null"); break;
	default:
		if (p->s[p->i] == '-' || (p->s[p->i] >= '0' && p->s[p->i] <= '9'))
			ok = number(p, &decimals, &exp);
		else
			ok = bad(p, "unexpected character");
	}
	p->depth--;
	return ok;
}

static bool run(const char *s, size_t n, bool time_fields, char *why, size_t why_len)
{
	struct parser p = { (const unsigned char *)s, n, 0, 0, time_fields, false, why, why_len };
	size_t at;

	if (!json_strict_utf8(s, n, &at)) {
		p.i = at;
		return bad(&p, "invalid UTF-8");
	}
	ws(&p);
	if (!value(&p, NULL))
		return false;
	ws(&p);
	if (p.i != p.n)
		return bad(&p, "text after the JSON value");
	return true;
}

bool json_strict_check(const char *s, size_t n, char *why, size_t why_len)
{
	return run(s, n, false, why, why_len);
}

bool json_strict_time_fields(const char *s, size_t n, char *why, size_t why_len)
{
	return run(s, n, true, why, why_len);
}
