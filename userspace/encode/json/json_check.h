/* SPDX-License-Identifier: MIT */
/*
 * json_check.h - the one strict JSON (RFC 8259) scanner: no tree is built.
 * It serves the args fast path (text that is exactly one clean JSON object
 * goes into the trace unchanged), the repair of cut traces (trace_fix.c:
 * which lines are whole events) and the tests' validator (tests/lib/
 * json_strict.c), each with its own rules below.
 */
#ifndef CTRACE_JSON_CHECK_H
#define CTRACE_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Rules on top of RFC 8259 (json_check.flags). */
#define JSON_CHECK_OBJECT 0x1        /* the value must be an object */
#define JSON_CHECK_NO_CONTROL 0x2    /* no byte below 0x20 anywhere: whitespace is spaces only */
#define JSON_CHECK_NO_SEPARATORS 0x4 /* no raw U+2028/U+2029 (line ends to JavaScript) */
#define JSON_CHECK_NO_SURROGATE_ESCAPES 0x8 /* no \ud800-\udfff escape, even paired
					       (lone ones are always refused) */

struct json_check {
	unsigned flags;   /* JSON_CHECK_* */
	int max_depth;    /* arrays and objects nested at most this deep (the top one is 1) */
	/*
	 * Optional: called for each member of an object once its value has
	 * been read, with the object's depth, its key (unescaped ASCII only,
	 * cut to 31 bytes) and the value's text. A reason (not NULL) fails the
	 * scan with it.
	 */
	const char *(*member)(void *ctx, int depth, const char *key, const char *value,
			      size_t value_len);
	void *ctx;
	char *why;        /* if not NULL: on failure, the offset and the reason */
	size_t why_len;
	size_t start, len; /* out: where the value is, without the whitespace around it */
};

/*
 * True if text[0..n) is exactly one JSON value, surrounded by nothing but
 * whitespace, in valid UTF-8, with no lone surrogate escape, within c's rules.
 */
bool json_check(const char *text, size_t n, struct json_check *c);

/* True if s[0..n) is valid UTF-8 (RFC 3629); else *bad (if not NULL) is the offset. */
bool json_check_utf8(const char *s, size_t n, size_t *bad);

/*
 * The args fast path: true if text[0..len) is one JSON object, surrounded
 * by nothing but whitespace, in valid UTF-8 without raw U+2028/U+2029 or
 * \ud8xx-\udfxx escapes, nested at most 64 deep; then the object is
 * text[*start..+*obj_len).
 */
bool json_plain_object(const char *text, size_t len, size_t *start, size_t *obj_len);

#endif
