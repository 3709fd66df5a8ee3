/* SPDX-License-Identifier: MIT */
/*
 * typed_args_encode.h - writes key/value pairs in the typed args' format
 * (usdt/ctrace_args.h), as CTRACE_INSTANT_ARGS does in the program, for
 * what the loader itself has typed values of (--usdt's hits:
 * usdt_model.c), so that they go out as the program's typed args do
 * (typed_args.c, chrome_trace.c). Bounded: a pair that does not fit whole
 * is left out, and the text stays one typed_args_check() takes.
 */
#ifndef CTRACE_TYPED_ARGS_ENCODE_H
#define CTRACE_TYPED_ARGS_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Twelve numbers with their keys, two strings of a record and a demangled type with room to spare. */
#define TYPED_TEXT_BYTES 8192

struct typed_text {
	char b[TYPED_TEXT_BYTES];
	size_t n;
};

/* Starts an empty text (the magic alone). */
void typed_text_begin(struct typed_text *t);
/* A pair with no value: 'x' (unreadable) or 'n' (a NULL string). Keys: at most 254 bytes. */
void typed_text_flag(struct typed_text *t, char type, const char *key);
/* 'i' (int64) or 'u' (uint64). */
void typed_text_num(struct typed_text *t, char type, const char *key, uint64_t v);
/* A string, marked cut ('S') if `cut` or where the format's 14-bit length or the buffer ends. */
void typed_text_str(struct typed_text *t, const char *key, const char *s, size_t len, bool cut);

#endif
