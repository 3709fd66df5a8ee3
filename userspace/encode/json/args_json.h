/* SPDX-License-Identifier: MIT */
/*
 * args_json.h - an event's untrusted `args` text as a JSON object.
 *
 * The traced process may send anything: valid JSON, garbage, invalid UTF-8,
 * deep nesting. The trace must stay valid JSON whatever it sends, so the text
 * is parsed with cJSON (never copied into the output as is) and re-printed;
 * text that is not a JSON object is kept as a string, {"raw": "..."}.
 */
#ifndef CTRACE_ARGS_JSON_H
#define CTRACE_ARGS_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "encode/json/json_writer.h"

/* Key of the object that holds text which is not a JSON object. */
#define ARGS_RAW_KEY "raw"

/*
 * A new cJSON object (free with cJSON_Delete); NULL only when out of memory.
 *   truncated         -> {"raw": "<text>…[truncated]"}, never parsed (the
 *                        cut text is not the JSON the program meant to send)
 *   len == 0          -> {}
 *   a JSON object     -> that object (invalid UTF-8 repaired first; trailing
 *                        garbage, lone surrogate escapes and nesting deeper
 *                        than CJSON_NESTING_LIMIT make it "anything else")
 *   anything else     -> {"raw": "<text, UTF-8 repaired>"}
 */
cJSON *args_parse(const char *text, size_t len, bool truncated);

/*
 * obj as compact JSON, always valid JSON and valid UTF-8 (whatever strings
 * the tree holds). Writes {} when obj is NULL or memory runs out: args are
 * always objects in our output, and a lost args object is better than a
 * broken trace. obj must hold no cJSON_Raw items (cJSON prints those as
 * they are) but integers' digits (typed_args_cjson()); args_parse() never
 * makes any.
 */
void jw_cjson(struct json_writer *w, const cJSON *obj);

/*
 * A NUL-terminated malloc'd copy of src[0..len) with every invalid UTF-8
 * sequence and every NUL byte replaced by U+FFFD (EF BF BD); *out_len (if
 * not NULL) gets its length. NULL when out of memory.
 */
char *utf8_repair(const char *src, size_t len, size_t *out_len);

#endif /* CTRACE_ARGS_JSON_H */
