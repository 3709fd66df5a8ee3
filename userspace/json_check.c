// SPDX-License-Identifier: MIT
/*
 * json_check.c - is this text one plain JSON object, to copy as it is?
 *
 * cJSON parses and prints every args text the traced program sends, which
 * is safe but costs over a microsecond an event (parse into a tree, print,
 * free): the loader's slowest step by far. Most args are small, clean JSON
 * objects that can go into the trace unchanged. This checker accepts only
 * what RFC 8259 allows, with valid UTF-8 and nothing a JavaScript reader
 * would choke on (raw U+2028/U+2029), nested at most 64 deep; anything else
 * returns false and takes the cJSON path (args_json.c), which repairs or
 * wraps it. So a false "no" costs time, a false "yes" would break the
 * trace: when in doubt it says no.
 */
#include "json_check.h"

#include <stdint.h>
#include "json_writer.h"

#define MAX_DEPTH 64

struct cursor {
	const unsigned char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static bool string(struct cursor *c)
{
	c->p++; /* the opening quote */
	while (c->p < c->end) {
		unsigned char ch = *c->p;

		if (ch == '"') {
			c->p++;
			return true;
		}
		if (ch < 0x20)
			return false;
		if (ch == '\\') {
			if (++c->p >= c->end)
				return false;
			switch (*c->p) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				c->p++;
				break;
			case 'u':
				if (c->end - c->p < 5 || !is_hex(c->p[1]) || !is_hex(c->p[2]) ||
				    !is_hex(c->p[3]) || !is_hex(c->p[4]))
					return false;
				/* \ud800-\udfff escapes are left to cJSON, which checks the pairs. */
				if ((c->p[1] == 'd' || c->p[1] == 'D') && c->p[2] >= '8')
					return false;
				c->p += 5;
				break;
			default:
				return false;
			}
			continue;
		}
		if (ch < 0x80) {
			c->p++;
			continue;
		}
		{
			int32_t cp;
			size_t len = jw_utf8_next(c->p, (size_t)(c->end - c->p), &cp);

			if (cp < 0 || cp == 0x2028 || cp == 0x2029)
				return false;
			c->p += len;
		}
	}
	return false;
}

static bool digits(struct cursor *c)
{
	const unsigned char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > start;
}

static bool number(struct cursor *c)
{
	if (*c->p == '-')
		c->p++;
	if (c->p >= c->end)
		return false;
	if (*c->p == '0')
		c->p++;
	else if (!digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return false;
	}
	return true;
}

static bool word(struct cursor *c, const char *w)
{
	for (; *w; w++, c->p++)
		if (c->p >= c->end || *c->p != (unsigned char)*w)
			return false;
	return true;
}

static bool value(struct cursor *c, int depth);

/* An object or array after its opening bracket; `close` is '}' or ']'. */
static bool members(struct cursor *c, int depth, unsigned char close)
{
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			if (c->p >= c->end || *c->p != '"' || !string(c))
				return false;
			skip_ws(c);
			if (c->p >= c->end || *c->p != ':')
				return false;
			c->p++;
			skip_ws(c);
		}
		if (!value(c, depth))
			return false;
		skip_ws(c);
		if (c->p >= c->end)
			return false;
		if (*c->p == close) {
			c->p++;
			return true;
		}
		if (*c->p != ',')
			return false;
		c->p++;
		skip_ws(c);
	}
}

static bool value(struct cursor *c, int depth)
{
	if (c->p >= c->end)
		return false;
	switch (*c->p) {
	case '{':
	case '[':
		if (depth >= MAX_DEPTH)
			return false;
		return members(c, depth + 1, *c->p == '{' ? '}' : ']');
	case '"':
		return string(c);
	case 't':
		return word(c, "true");
	case 'f':
		return word(c, "false");
	case 'n':
		return word(c, "null");
	default:
		return (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) && number(c);
	}
}

bool json_plain_object(const char *text, size_t len, size_t *start, size_t *obj_len)
{
	struct cursor c = { (const unsigned char *)text, (const unsigned char *)text + len };
	const unsigned char *begin;

	skip_ws(&c);
	if (c.p >= c.end || *c.p != '{')
		return false;
	begin = c.p;
	if (!value(&c, 0))
		return false;
	*start = (size_t)(begin - (const unsigned char *)text);
	*obj_len = (size_t)(c.p - begin);
	skip_ws(&c);
	return c.p == c.end;
}
