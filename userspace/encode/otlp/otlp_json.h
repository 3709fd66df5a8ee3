/* SPDX-License-Identifier: MIT */
/*
 * otlp_json.h - the pieces of OTLP's JSON encoding (opentelemetry-proto's
 * JSON mapping, as OTLP/HTTP takes it): a growing text buffer, strings
 * (always valid UTF-8: the program's bytes are untrusted), 64-bit integers
 * and nanosecond times as decimal strings, ids as lowercase hex, and
 * attributes as {"key":K,"value":{"stringValue"|"intValue"|"doubleValue"|
 * "boolValue":V}}.
 */
#ifndef CTRACE_OTLP_JSON_H
#define CTRACE_OTLP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct otlp_buf {
	char *p;
	size_t n, cap;
};

void ob_raw(struct otlp_buf *b, const char *s, size_t n);
/* Inline: a literal's length is known at compile time. */
static inline void ob_lit(struct otlp_buf *b, const char *s)
{
	ob_raw(b, s, strlen(s));
}
/* A JSON string of s[0..n): ill-formed UTF-8 becomes U+FFFD, controls \u00XX. */
void ob_str(struct otlp_buf *b, const char *s, size_t n);
void ob_u64_str(struct otlp_buf *b, uint64_t v); /* "123": int64/fixed64 fields */
void ob_double(struct otlp_buf *b, double v);     /* finite */
void ob_hex(struct otlp_buf *b, const uint8_t *id, size_t n); /* "0af7..." */
void ob_free(struct otlp_buf *b);

/* Attributes, each preceded by a comma unless *first. */
void ob_attr_str(struct otlp_buf *b, bool *first, const char *key, const char *s, size_t n);
void ob_attr_int(struct otlp_buf *b, bool *first, const char *key, int64_t v);
void ob_attr_double(struct otlp_buf *b, bool *first, const char *key, double v);
void ob_attr_bool(struct otlp_buf *b, bool *first, const char *key, bool v);
/*
 * The members of a JSON object text (a span's or instant's args) as
 * attributes "PREFIX.KEY": strings, integers, doubles, booleans as such;
 * arrays, objects and null as their JSON text. Text that is not an object
 * becomes one attribute "PREFIX" holding it.
 */
void ob_attrs_from_args(struct otlp_buf *b, bool *first, const char *prefix, const char *s, size_t n);

#endif
