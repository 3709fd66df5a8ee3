// SPDX-License-Identifier: MIT
/*
 * json_check.c - the strict JSON scanner (see json_check.h).
 *
 * Its first user is the args fast path: cJSON parses and prints every args
 * text the traced program sends, which is safe but costs over a
 * microsecond an event (parse into a tree, print, free): the loader's
 * slowest step by far. Most args are small, clean JSON objects that can go
 * into the trace unchanged. For them it accepts only what RFC 8259 allows,
 * with valid UTF-8 and nothing a JavaScript reader would choke on (raw
 * U+2028/U+2029), nested at most 64 deep; anything else takes the cJSON
 * path (args_json.c), which repairs or wraps it. So a false "no" costs
 * time, a false "yes" would break the trace: when in doubt it says no.
 * The repair of cut traces and the tests' validator need the same
 * strictness (cJSON accepts "01", "1.", raw control bytes, invalid UTF-8
 * and \u escapes with bad hex digits), so they use it too.
 */
#include "encode/json/json_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "encode/json/json_writer.h"

#define KEY_MAX 32

struct scan {
	const unsigned char *s, *p, *end;
	const struct json_check *c;
	unsigned flags; /* c's, at hand */
	int max_depth;
	int depth;
};

static bool fail(struct scan *sc, const char *what)
{
	const struct json_check *c = sc->c;

	if (c->why) {
		size_t at = (size_t)(sc->p - sc->s), n = (size_t)(sc->end - sc->s);
		size_t from = at > 30 ? at - 30 : 0;
		size_t len = n - from < 60 ? n - from : 60;

		snprintf(c->why, c->why_len, "offset %zu: %s, near \"%.*s\"", at, what,
			 (int)len, (const char *)sc->s + from);
	}
	return false;
}

static void skip_ws(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

static int hex4(const unsigned char *p)
{
	int v = 0;

	for (int k = 0; k < 4; k++) {
		unsigned char ch = p[k];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v |= ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			v |= ch - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A \u escape after its backslash: surrogates only as a high-low pair. */
static bool unicode_escape(struct scan *sc)
{
	int v, lo;

	if (sc->end - sc->p < 5 || (v = hex4(sc->p + 1)) < 0)
		return fail(sc, "bad \\u escape");
	sc->p += 5;
	if (v < 0xd800 || v > 0xdfff)
		return true;
	if (sc->flags & JSON_CHECK_NO_SURROGATE_ESCAPES)
		return fail(sc, "surrogate escape"); /* args_json.c's cJSON path takes those */
	if (v >= 0xdc00)
		return fail(sc, "lone low surrogate escape");
	if (sc->end - sc->p < 6 || sc->p[0] != '\\' || sc->p[1] != 'u')
		return fail(sc, "lone high surrogate escape");
	lo = hex4(sc->p + 2);
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail(sc, "high surrogate without low surrogate");
	sc->p += 6;
	return true;
}

static bool string(struct scan *sc)
{
	sc->p++; /* the opening quote */
	while (sc->p < sc->end) {
		unsigned char ch = *sc->p;

		if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
			sc->p++; /* most bytes: plain ASCII */
			continue;
		}
		if (ch == '"') {
			sc->p++;
			return true;
		}
		if (ch < 0x20)
			return fail(sc, "raw control byte in a string");
		if (ch == '\\') {
			if (++sc->p >= sc->end)
				return fail(sc, "unterminated escape");
			switch (*sc->p) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				sc->p++;
				break;
			case 'u':
				if (!unicode_escape(sc))
					return false;
				break;
			default:
				return fail(sc, "bad escape");
			}
			continue;
		}
		{
			int32_t cp;
			size_t len = jw_utf8_next(sc->p, (size_t)(sc->end - sc->p), &cp);

			if (cp < 0)
				return fail(sc, "invalid UTF-8 in a string");
			if ((cp == 0x2028 || cp == 0x2029) && (sc->flags & JSON_CHECK_NO_SEPARATORS))
				return fail(sc, "raw U+2028/U+2029");
			sc->p += len;
		}
	}
	return fail(sc, "unterminated string");
}

static bool digits(struct scan *sc)
{
	const unsigned char *start = sc->p;

	while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
		sc->p++;
	return sc->p > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number(struct scan *sc)
{
	if (*sc->p == '-')
		sc->p++;
	if (sc->p >= sc->end)
		return fail(sc, "bad number");
	if (*sc->p == '0')
		sc->p++;
	else if (!digits(sc))
		return fail(sc, "bad number");
	if (sc->p < sc->end && *sc->p == '.') {
		sc->p++;
		if (!digits(sc))
			return fail(sc, "no digit after the decimal point");
	}
	if (sc->p < sc->end && (*sc->p == 'e' || *sc->p == 'E')) {
		sc->p++;
		if (sc->p < sc->end && (*sc->p == '+' || *sc->p == '-'))
			sc->p++;
		if (!digits(sc))
			return fail(sc, "no digit in the exponent");
	}
	return true;
}

static bool word(struct scan *sc, const char *w)
{
	for (; *w; w++, sc->p++)
		if (sc->p >= sc->end || *sc->p != (unsigned char)*w)
			return fail(sc, "unexpected text");
	return true;
}

/* A scanned string's unescaped ASCII bytes (escapes and others left out), cut to KEY_MAX - 1. */
static void key_text(const unsigned char *q, const unsigned char *end, char *key)
{
	size_t kn = 0;

	for (q++; q < end - 1;) { /* between the quotes */
		if (*q == '\\') {
			q += q[1] == 'u' ? 6 : 2;
			continue;
		}
		if (*q < 0x80 && kn + 1 < KEY_MAX)
			key[kn++] = (char)*q;
		q++;
	}
	key[kn] = '\0';
}

static bool value(struct scan *sc);

/* An object or array after its opening bracket; `close` is '}' or ']'. */
static bool members(struct scan *sc, unsigned char close)
{
	const struct json_check *c = sc->c;
	char key[KEY_MAX];

	sc->p++;
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == close) {
		sc->p++;
		return true;
	}
	for (;;) {
		const unsigned char *at, *name = sc->p;

		if (close == '}') {
			if (sc->p >= sc->end || *sc->p != '"')
				return fail(sc, "expected a member name");
			if (!string(sc))
				return false;
			if (c->member)
				key_text(name, sc->p, key);
			skip_ws(sc);
			if (sc->p >= sc->end || *sc->p != ':')
				return fail(sc, "expected ':'");
			sc->p++;
			skip_ws(sc);
		}
		at = sc->p;
		if (!value(sc))
			return false;
		if (close == '}' && c->member) {
			const char *why = c->member(c->ctx, sc->depth, key, (const char *)at,
						    (size_t)(sc->p - at));

			if (why) {
				sc->p = at;
				return fail(sc, why);
			}
		}
		skip_ws(sc);
		if (sc->p >= sc->end)
			return fail(sc, "unexpected end");
		if (*sc->p == close) {
			sc->p++;
			return true;
		}
		if (*sc->p != ',')
			return fail(sc, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		sc->p++;
		skip_ws(sc);
	}
}

static bool value(struct scan *sc)
{
	bool ok;

	if (sc->p >= sc->end)
		return fail(sc, "unexpected end");
	switch (*sc->p) {
	case '{':
	case '[':
		if (sc->depth >= sc->max_depth)
			return fail(sc, "nested too deep");
		sc->depth++;
		ok = members(sc, *sc->p == '{' ? '}' : ']');
		sc->depth--;
		return ok;
	case '"':
		return string(sc);
	case 't':
		return word(sc, "true");
	case 'f':
		return word(sc, "false");
	case 'n':
		return word(sc, "null");
	default:
		if (*sc->p == '-' || (*sc->p >= '0' && *sc->p <= '9'))
			return number(sc);
		return fail(sc, "unexpected character");
	}
}

bool json_check(const char *text, size_t n, struct json_check *c)
{
	struct scan sc = { (const unsigned char *)text, (const unsigned char *)text,
			   (const unsigned char *)text + n, c, c->flags, c->max_depth, 0 };
	const unsigned char *begin;

	/*
	 * Strings refuse raw control bytes anyway: outside them, the only ones
	 * allowed are whitespace. One pass for them keeps skip_ws() simple.
	 */
	if (c->flags & JSON_CHECK_NO_CONTROL)
		for (; sc.p < sc.end; sc.p++)
			if (*sc.p < 0x20)
				return fail(&sc, "raw control byte");
	sc.p = sc.s;
	skip_ws(&sc);
	if ((c->flags & JSON_CHECK_OBJECT) && (sc.p >= sc.end || *sc.p != '{'))
		return fail(&sc, "not an object");
	begin = sc.p;
	if (!value(&sc))
		return false;
	c->start = (size_t)(begin - sc.s);
	c->len = (size_t)(sc.p - begin);
	skip_ws(&sc);
	if (sc.p != sc.end)
		return fail(&sc, "text after the JSON value");
	return true;
}

bool json_check_utf8(const char *s, size_t n, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		int32_t cp;
		size_t k;

		if (u[i] < 0x80) {
			i++;
			continue;
		}
		k = jw_utf8_next(u + i, n - i, &cp);
		if (cp < 0) {
			if (bad)
				*bad = i;
			return false;
		}
		i += k;
	}
	return true;
}

/*
 * The shape most args texts have, {"key":value,...} with no whitespace,
 * no escape, no byte outside printable ASCII, and values that are such
 * strings, numbers, true, false or null: checked in one pass, a few
 * instructions a byte (the full scan below takes about 18, a tenth of the
 * loader's time under a flood of events with args). True only for text
 * that is such an object, which the full scan accepts too (it is a strict
 * subset of what json_plain_object() takes); false says nothing: the full
 * scan decides.
 */
/* At p, after a string's opening quote: its plain ASCII bytes up to its closing quote, which it returns (end: none). */
static const char *plain_string_end(const char *p, const char *end)
{
	while (p < end && *p != '"') {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '\\')
			return end;
		p++;
	}
	return p;
}

static bool flat_object(const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	if (n < 2 || *p++ != '{' || end[-1] != '}')
		return false;
	if (p == end - 1)
		return true; /* {} */
	for (;;) {
		/* "key": printable ASCII, no quote, no backslash */
		if (*p++ != '"')
			return false;
		p = plain_string_end(p, end);
		if (end - p < 3 || p[1] != ':')
			return false;
		p += 2;
		if (*p == '"') { /* a string value, as a key */
			p = plain_string_end(p + 1, end);
			if (p == end)
				return false;
			p++;
		} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
			/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
			if (*p == '-')
				p++;
			if (p < end && *p == '0')
				p++;
			else if (p < end && *p >= '1' && *p <= '9')
				while (p < end && *p >= '0' && *p <= '9')
					p++;
			else
				return false;
			if (p < end && *p == '.') {
				if (++p == end || *p < '0' || *p > '9')
					return false;
				while (p < end && *p >= '0' && *p <= '9')
					p++;
			}
			if (p < end && (*p == 'e' || *p == 'E')) {
				if (++p < end && (*p == '+' || *p == '-'))
					p++;
				if (p == end || *p < '0' || *p > '9')
					return false;
				while (p < end && *p >= '0' && *p <= '9')
					p++;
			}
		} else if (end - p >= 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) {
			p += 4;
		} else if (end - p >= 5 && !memcmp(p, "false", 5)) {
			p += 5;
		} else {
			return false;
		}
		if (p == end - 1)
			return true; /* at the closing brace */
		if (p >= end || *p++ != ',')
			return false;
	}
}

bool json_plain_object(const char *text, size_t len, size_t *start, size_t *obj_len)
{
	struct json_check c = {
		.flags = JSON_CHECK_OBJECT | JSON_CHECK_NO_SEPARATORS | JSON_CHECK_NO_SURROGATE_ESCAPES,
		.max_depth = 64,
	};

	if (flat_object(text, len)) {
		*start = 0;
		*obj_len = len;
		return true;
	}
	if (!json_check(text, len, &c))
		return false;
	*start = c.start;
	*obj_len = c.len;
	return true;
}
