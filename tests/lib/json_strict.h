/* SPDX-License-Identifier: MIT */
/*
 * json_strict.h - an RFC 8259 validator for the tests, independent of cJSON
 * (which accepts "01", "1.", any byte <= 0x20 as whitespace, raw control
 * bytes and invalid UTF-8 in strings): the loader's strict scanner
 * (userspace/encode/json/json_check.c, linked into the tests). No tree is built.
 */
#ifndef CTRACE_TEST_JSON_STRICT_H
#define CTRACE_TEST_JSON_STRICT_H

#include <stdbool.h>
#include <stddef.h>

/* True if s[0..n) is valid UTF-8; else *bad (if not NULL) is the offset. */
bool json_strict_utf8(const char *s, size_t n, size_t *bad);

/*
 * True if s[0..n) is exactly one JSON value (surrounding whitespace allowed),
 * in valid UTF-8, with no escape that decodes to a lone surrogate. On failure
 * why gets the offset and the reason.
 */
bool json_strict_check(const char *s, size_t n, char *why, size_t why_len);

/*
 * json_strict_check, plus: in every object of the top-level "traceEvents"
 * array, "ts" and "dur" are numbers written as plain decimals (no exponent)
 * with at most 3 digits after the point.
 */
bool json_strict_time_fields(const char *s, size_t n, char *why, size_t why_len);

#endif
