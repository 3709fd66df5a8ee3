// SPDX-License-Identifier: MIT
/* JSON text -> debug annotations (pftrace_annot.h). */
#include "encode/perfetto/pftrace_annot.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "encode/perfetto/pftrace.h"

/* DebugAnnotation's fields. */
enum { DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6, DA_JSON = 9,
       DA_NAME = 10, DA_DICT = 11, DA_ARRAY = 12 };

/* Past this many digits a JSON number is read exactly as text (as pftrace_write.c's BIG_NUM_DIGITS). */
#define BIG_DIGITS 16
/* Deeper than this, a value is kept as its JSON text (cJSON refuses deeper input anyway). */
#define DEPTH_MAX 1000

struct reader {
	const char *p, *end;
	struct pftrace_annot *a;
	bool bad;
};

static void skip_ws(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static struct pb *level(struct pftrace_annot *a, unsigned depth)
{
	if (!a->n_levels) {
		/* All at once: a caller up the recursion holds a pointer to its own level. */
		size_t n = DEPTH_MAX + 3;

		a->levels = realloc(a->levels, n * sizeof(*a->levels));
		if (!a->levels)
			abort();
		memset(a->levels + a->n_levels, 0, (n - a->n_levels) * sizeof(*a->levels));
		a->n_levels = n;
	}
	if (depth >= a->n_levels)
		abort(); /* value() stops at DEPTH_MAX */
	a->levels[depth].n = 0;
	return &a->levels[depth];
}

static void put_utf8(struct pftrace_annot *a, uint32_t cp)
{
	char *q;

	pb_room(&a->text, 4);
	q = (char *)a->text.p + a->text.n;
	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xc0 | cp >> 6);
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xe0 | cp >> 12);
		*q++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (char)(0xf0 | cp >> 18);
		*q++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*q++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	}
	a->text.n = (size_t)((uint8_t *)q - a->text.p);
}

static uint32_t hex4(struct reader *r)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++, r->p++) {
		char c = r->p < r->end ? *r->p : 0;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (uint32_t)((c | 0x20) - 'a' + 10);
		else
			r->bad = true;
	}
	return v;
}

/*
 * A JSON string at r->p (its quote), unescaped into a->text, NUL-ended;
 * valid UTF-8, up to a NUL as cJSON reads it: *len bytes.
 */
static const char *string(struct reader *r, size_t *len)
{
	struct pftrace_annot *a = r->a;
	char *copy;
	const char *s;
	unsigned char high = 0; /* any byte past ASCII: then checked as UTF-8 */

	a->text.n = 0;
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		const char *run = r->p;

		while (r->p < r->end && *r->p != '"' && *r->p != '\\')
			high |= (unsigned char)*r->p++;
		pb_room(&a->text, (size_t)(r->p - run));
		memcpy(a->text.p + a->text.n, run, (size_t)(r->p - run));
		a->text.n += (size_t)(r->p - run);
		if (r->p >= r->end || *r->p == '"')
			break;
		r->p++; /* the backslash */
		switch (r->p < r->end ? *r->p++ : 0) {
		case '"': put_utf8(a, '"'); break;
		case '\\': put_utf8(a, '\\'); break;
		case '/': put_utf8(a, '/'); break;
		case 'b': put_utf8(a, '\b'); break;
		case 'f': put_utf8(a, '\f'); break;
		case 'n': put_utf8(a, '\n'); break;
		case 'r': put_utf8(a, '\r'); break;
		case 't': put_utf8(a, '\t'); break;
		case 'u': {
			uint32_t cp = hex4(r);

			high |= 0x80; /* and a NUL (\\u0000) ends the string: strlen() then */
			if (cp >= 0xd800 && cp < 0xdc00 && r->p + 1 < r->end && r->p[0] == '\\' && r->p[1] == 'u') {
				r->p += 2;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(r) - 0xdc00);
			}
			put_utf8(a, cp);
			break;
		}
		default: r->bad = true; break;
		}
	}
	if (r->p < r->end)
		r->p++; /* the closing quote */
	else
		r->bad = true;
	pb_room(&a->text, 1);
	a->text.p[a->text.n] = 0;
	*len = a->text.n;
	if (!(high & 0x80))
		return (const char *)a->text.p;
	s = pftrace_utf8((const char *)a->text.p, &copy);
	if (copy) { /* protobuf strings must be UTF-8 */
		size_t n = strlen(copy);

		a->text.n = 0;
		pb_room(&a->text, n + 1);
		memcpy(a->text.p, copy, n + 1);
		a->text.n = n;
		free(copy);
		s = (const char *)a->text.p;
	}
	*len = strlen(s);
	return s;
}

static bool number_char(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* A number's fields, as pftrace_write.c's fill_value() put them. */
static void number(struct reader *r, struct pb *out)
{
	const char *start = r->p;
	char tok[400];
	size_t digits = 0, len;

	for (; r->p < r->end && number_char(*r->p); r->p++)
		digits += *r->p >= '0' && *r->p <= '9';
	len = (size_t)(r->p - start);
	if (len >= sizeof(tok)) {
		r->bad = true;
		return;
	}
	if (digits == len - (*start == '-') && digits && digits < BIG_DIGITS) { /* a plain integer: most */
		int64_t v = 0;

		for (const char *c = start + (*start == '-'); c < r->p; c++)
			v = v * 10 + (*c - '0');
		pb_u(out, DA_INT, (uint64_t)(*start == '-' ? -v : v));
		return;
	}
	memcpy(tok, start, len);
	tok[len] = 0;
	if (digits >= BIG_DIGITS) {
		if (strpbrk(tok, ".eE"))
			pb_double(out, DA_DOUBLE, strtod(tok, NULL));
		else if (*tok == '-')
			pb_u(out, DA_INT, (uint64_t)strtoll(tok, NULL, 10));
		else
			pb_u(out, DA_UINT, strtoull(tok, NULL, 10));
		return;
	}
	{
		double d = strtod(tok, NULL);

		if (d == floor(d) && fabs(d) < 9.2e18)
			pb_u(out, DA_INT, (uint64_t)(int64_t)d);
		else
			pb_double(out, DA_DOUBLE, d);
	}
}

static void value(struct reader *r, struct pb *out, unsigned depth);

/* An object's or array's members, each an annotation (named: dict entries) in field `field` of out. */
static void members(struct reader *r, struct pb *out, unsigned depth, bool object)
{
	char close = object ? '}' : ']';
	size_t n = 0;

	r->p++;
	skip_ws(r);
	while (!r->bad && r->p < r->end && *r->p != close) {
		struct pb *m = level(r->a, depth + 1);

		if (n++) {
			if (*r->p != ',') {
				r->bad = true;
				return;
			}
			r->p++;
			skip_ws(r);
		}
		if (object) {
			const char *k;
			size_t kn;

			if (r->p >= r->end || *r->p != '"') {
				r->bad = true;
				return;
			}
			k = string(r, &kn);
			pb_bytes(m, DA_NAME, k, kn);
			skip_ws(r);
			if (r->p >= r->end || *r->p != ':') {
				r->bad = true;
				return;
			}
			r->p++;
			skip_ws(r);
		}
		value(r, m, depth + 1);
		pb_sub(out, object ? DA_DICT : DA_ARRAY, m);
		skip_ws(r);
	}
	if (r->p < r->end)
		r->p++;
	else
		r->bad = true;
	if (!n) /* an empty {} or []: no entries tell which */
		pb_bytes(out, DA_JSON, object ? "{}" : "[]", 2);
}

static void value(struct reader *r, struct pb *out, unsigned depth)
{
	skip_ws(r);
	if (r->p >= r->end || depth > DEPTH_MAX) {
		r->bad = true;
		return;
	}
	switch (*r->p) {
	case '{': members(r, out, depth, true); break;
	case '[': members(r, out, depth, false); break;
	case '"': {
		size_t n;
		const char *s = string(r, &n);

		pb_bytes(out, DA_STRING, s, n);
		break;
	}
	case 't': r->p += 4; pb_u(out, DA_BOOL, 1); break;
	case 'f': r->p += 5; pb_u(out, DA_BOOL, 0); break;
	case 'n': r->p += 4; pb_bytes(out, DA_JSON, "null", 4); break;
	default: number(r, out); break;
	}
	if (r->p > r->end)
		r->bad = true;
}

bool pftrace_annot_object(struct pftrace_annot *a, struct pb *te, unsigned field, const char *s, size_t n,
			  uint64_t (*intern_key)(void *ctx, const char *key, size_t len), void *ctx)
{
	struct reader r = { s, s + n, a, false };
	size_t members_n = 0;

	skip_ws(&r);
	if (r.p >= r.end || *r.p != '{')
		return false;
	r.p++;
	skip_ws(&r);
	while (!r.bad && r.p < r.end && *r.p != '}') {
		struct pb *m = level(a, 0);
		const char *k;
		size_t kn;
		uint64_t iid;

		if (members_n++) {
			if (*r.p != ',')
				return false;
			r.p++;
			skip_ws(&r);
		}
		if (r.p >= r.end || *r.p != '"')
			return false;
		k = string(&r, &kn);
		iid = intern_key(ctx, k, kn);
		pb_u(m, DA_NAME_IID, iid);
		skip_ws(&r);
		if (r.p >= r.end || *r.p != ':')
			return false;
		r.p++;
		value(&r, m, 0);
		pb_sub(te, field, m);
		skip_ws(&r);
	}
	return !r.bad && r.p < r.end;
}

const char *pftrace_annot_string(struct pftrace_annot *a, const char *s, size_t n)
{
	struct reader r = { s, s + n, a, false };
	size_t len;

	return n && *s == '"' ? string(&r, &len) : "";
}

void pftrace_annot_free(struct pftrace_annot *a)
{
	for (size_t i = 0; i < a->n_levels; i++)
		free(a->levels[i].p);
	free(a->levels);
	free(a->text.p);
	memset(a, 0, sizeof(*a));
}
