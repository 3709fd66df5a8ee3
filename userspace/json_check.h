/* SPDX-License-Identifier: MIT */
/*
 * json_check.h - the fast path for an event's args: text that is exactly
 * one clean JSON object goes into the trace unchanged (see json_check.c).
 */
#ifndef CTRACE_JSON_CHECK_H
#define CTRACE_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True if text[0..len) is one JSON object (RFC 8259), surrounded by nothing
 * but whitespace, in valid UTF-8 without raw U+2028/U+2029 or \ud8xx-\udfxx
 * escapes, nested at most 64 deep; then the object is text[*start..+*obj_len).
 */
bool json_plain_object(const char *text, size_t len, size_t *start, size_t *obj_len);

#endif
