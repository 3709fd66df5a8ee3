/* SPDX-License-Identifier: MIT */
/*
 * term_safe.h - text the traced process controls (process, thread, file,
 * probe and event names, its command line) made safe to print on a
 * terminal. Such text reaches the operator's screen in our messages, the
 * summary, `report` and `list`; raw, an ESC sequence in a thread name could
 * clear the screen, retitle the window or write a line of its own.
 *
 * Kept as they are: printable ASCII and valid UTF-8 but for the code
 * points below. Written as \xHH, byte by byte: the C0 controls (ESC, CR, BS,
 * newline, tab...), DEL, the C1 controls U+0080..U+009F, the bidirectional
 * embeddings, overrides and isolates (they reorder what a line shows),
 * bytes that are not valid UTF-8, and the backslash itself, so that the
 * escaped text reads back unambiguously. Not for the trace files: each
 * format escapes its strings its own way.
 */
#ifndef CTRACE_TERM_SAFE_H
#define CTRACE_TERM_SAFE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The bytes of the character at s (left > 0 bytes remain) when a terminal
 * may be given it as it is: 1 to 4; 0 when its first byte must be escaped.
 */
size_t term_safe_char_len(const char *s, size_t left);

/*
 * Writes s[0..len) to f made safe. Returns the columns it takes (a
 * character one, an escaped byte four), for tables that pad.
 */
size_t term_safe_put(FILE *f, const char *s, size_t len);

/*
 * s (a string) made safe into buf, NUL-terminated; cut between characters
 * and ended with "..." when it does not fit in size bytes (at least 4).
 * Returns buf.
 */
char *term_safe_str(char *buf, size_t size, const char *s);

/* Room for a whole path with every byte escaped. */
#define TERM_SAFE_SIZE (4 * PATH_MAX + 4)
struct term_safe_text {
	char bytes[TERM_SAFE_SIZE];
};

/*
 * text made safe, in a buffer that lives until the end of the enclosing block:
 * for a printf argument, fprintf(stderr, "... %s ...", TERM_SAFE(name)).
 */
#define TERM_SAFE(text) term_safe_str((struct term_safe_text){ "" }.bytes, TERM_SAFE_SIZE, (text))

#endif
