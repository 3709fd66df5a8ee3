// SPDX-License-Identifier: MIT
#include "encode/otlp/otlp_json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encode/json/json_writer.h"

static void grow(struct otlp_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->n + more <= b->cap)
		return;
	while (cap < b->n + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	b->p = p;
	b->cap = cap;
}

void ob_raw(struct otlp_buf *b, const char *s, size_t n)
{
	grow(b, n + 1);
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void ob_str(struct otlp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	grow(b, n * 6 + 3);
	b->p[b->n++] = '"';
	while (i < n) {
		unsigned char c = u[i];
		int32_t cp;
		size_t k;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			b->p[b->n++] = (char)c;
			i++;
			continue;
		}
		if (c < 0x80) {
			b->n += (size_t)sprintf(b->p + b->n, c == '"' ? "\\\"" : c == '\\' ? "\\\\" : "\\u%04x", c);
			i++;
			continue;
		}
		k = jw_utf8_next(u + i, n - i, &cp);
		if (cp < 0) {
			memcpy(b->p + b->n, "\xef\xbf\xbd", 3); /* U+FFFD, 3 bytes: fits the 6 per byte */
			b->n += 3;
		} else {
			memcpy(b->p + b->n, s + i, k);
			b->n += k;
		}
		i += k;
	}
	b->p[b->n++] = '"';
	b->p[b->n] = '\0';
}

/* Digits without printf: a span has four numbers, on the loop's path. */
void ob_u64_str(struct otlp_buf *b, uint64_t v)
{
	char t[32], *end;

	t[0] = '"';
	end = jw_put_u64(t + 1, v);
	*end++ = '"';
	ob_raw(b, t, (size_t)(end - t));
}

void ob_double(struct otlp_buf *b, double v)
{
	char t[40], *end;

	if (!isfinite(v))
		v = 0; /* the model passes finite samples only */
	end = jw_put_whole(t, v); /* most samples */
	ob_raw(b, t, end ? (size_t)(end - t) : (size_t)jw_shortest_g(v, t, sizeof(t)));
}

void ob_hex(struct otlp_buf *b, const uint8_t *id, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	grow(b, 2 * n + 3);
	b->p[b->n++] = '"';
	for (size_t i = 0; i < n; i++) {
		b->p[b->n++] = digits[id[i] >> 4];
		b->p[b->n++] = digits[id[i] & 15];
	}
	b->p[b->n++] = '"';
	b->p[b->n] = '\0';
}

void ob_free(struct otlp_buf *b)
{
	free(b->p);
	*b = (struct otlp_buf){ 0 };
}

static void attr_key(struct otlp_buf *b, bool *first, const char *key, const char *kind)
{
	if (!*first)
		ob_lit(b, ",");
	*first = false;
	ob_lit(b, "{\"key\":");
	ob_str(b, key, strlen(key));
	ob_lit(b, ",\"value\":{\"");
	ob_lit(b, kind);
	ob_lit(b, "\":");
}

void ob_attr_str(struct otlp_buf *b, bool *first, const char *key, const char *s, size_t n)
{
	attr_key(b, first, key, "stringValue");
	ob_str(b, s, n);
	ob_lit(b, "}}");
}

void ob_attr_int(struct otlp_buf *b, bool *first, const char *key, int64_t v)
{
	char t[32], *q = t, *end;

	attr_key(b, first, key, "intValue");
	*q++ = '"';
	if (v < 0)
		*q++ = '-';
	end = jw_put_u64(q, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	memcpy(end, "\"}}", 3);
	ob_raw(b, t, (size_t)(end + 3 - t));
}

void ob_attr_double(struct otlp_buf *b, bool *first, const char *key, double v)
{
	attr_key(b, first, key, "doubleValue");
	ob_double(b, v);
	ob_lit(b, "}}");
}

void ob_attr_bool(struct otlp_buf *b, bool *first, const char *key, bool v)
{
	attr_key(b, first, key, "boolValue");
	ob_lit(b, v ? "true}}" : "false}}");
}

void ob_attrs_from_args(struct otlp_buf *b, bool *first, const char *prefix, const char *s, size_t n)
{
	cJSON *o = n ? cJSON_ParseWithLength(s, n) : NULL;
	char key[256];

	if (!n)
		return;
	if (!cJSON_IsObject(o)) {
		ob_attr_str(b, first, prefix, s, n);
		cJSON_Delete(o);
		return;
	}
	for (cJSON *c = o->child; c; c = c->next) {
		double d = c->valuedouble;

		snprintf(key, sizeof(key), "%s.%s", prefix, c->string ? c->string : "");
		if (cJSON_IsString(c)) {
			ob_attr_str(b, first, key, c->valuestring, strlen(c->valuestring));
		} else if (cJSON_IsBool(c)) {
			ob_attr_bool(b, first, key, cJSON_IsTrue(c));
		} else if (cJSON_IsNumber(c) && d == floor(d) && fabs(d) < 9007199254740992.0) {
			ob_attr_int(b, first, key, (int64_t)d); /* exact in a double: an integer */
		} else if (cJSON_IsNumber(c)) {
			ob_attr_double(b, first, key, d);
		} else {
			char *text = cJSON_PrintUnformatted(c);

			if (text)
				ob_attr_str(b, first, key, text, strlen(text));
			free(text);
		}
	}
	cJSON_Delete(o);
}
