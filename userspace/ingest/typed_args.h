/* SPDX-License-Identifier: MIT */
/*
 * typed_args.h - the typed args of CTRACE_INSTANT_ARGS and its kin, as
 * they come in an event's args text (usdt/ctrace_args.h: the format), back
 * into key/value pairs with their types, and out as JSON.
 *
 * The text is untrusted: the traced process may send anything that starts
 * with the magic. A text is used only if it decodes exactly (every pair
 * whole, nothing after the last); anything else is not typed args, and the
 * caller keeps it as it keeps any text that is not JSON, {"raw": ...}.
 */
#ifndef CTRACE_TYPED_ARGS_H
#define CTRACE_TYPED_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "encode/json/json_writer.h"

/* True if the text starts with the typed args' magic (it may still be malformed). */
bool typed_args_marked(const char *s, size_t n);

/*
 * The pairs' count if the text decodes exactly, else -1. What the writers
 * below need first: they never write half an object.
 */
int typed_args_check(const char *s, size_t n);

/*
 * The members of a checked text, "key":value,... without the braces;
 * the number written.
 */
int typed_args_write_members(struct json_writer *w, const char *s, size_t n);

/* A checked text as a new cJSON object (free with cJSON_Delete); NULL when out of memory. */
cJSON *typed_args_cjson(const char *s, size_t n);

#endif /* CTRACE_TYPED_ARGS_H */
