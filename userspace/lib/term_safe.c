// SPDX-License-Identifier: MIT
#include "lib/term_safe.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* "\xHH": what one escaped byte takes, without the NUL. */
#define ESCAPED_LEN 4

/* Code points a terminal acts on or lays out instead of showing. */
static bool is_control_point(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||     /* C1: CSI, OSC, ... in UTF-8 mode */
	       (cp >= 0x202a && cp <= 0x202e) || /* bidi embeddings and overrides */
	       (cp >= 0x2066 && cp <= 0x2069);   /* bidi isolates */
}

size_t term_safe_char_len(const char *s, size_t left)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp, min;
	size_t len;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f && p[0] != '\\';
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0; /* a continuation byte alone, or never valid in UTF-8 */
	if (len > left)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || is_control_point(cp))
		return 0;
	return len;
}

static void escape_byte(char *out, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
}

size_t term_safe_put(FILE *f, const char *s, size_t len)
{
	size_t cols = 0;

	for (size_t i = 0; i < len;) {
		size_t n = term_safe_char_len(s + i, len - i);

		if (n) {
			fwrite(s + i, 1, n, f);
			i += n;
			cols++;
		} else {
			char esc[ESCAPED_LEN];

			escape_byte(esc, (unsigned char)s[i++]);
			fwrite(esc, 1, ESCAPED_LEN, f);
			cols += ESCAPED_LEN;
		}
	}
	return cols;
}

/* The bytes s takes made safe, without its NUL. */
static size_t safe_len(const char *s, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < len;) {
		size_t n = term_safe_char_len(s + i, len - i);

		out += n ? n : ESCAPED_LEN;
		i += n ? n : 1;
	}
	return out;
}

char *term_safe_str(char *buf, size_t size, const char *s)
{
	size_t len = strlen(s), o = 0;
	bool cut = safe_len(s, len) >= size;

	for (size_t i = 0; i < len;) {
		size_t n = term_safe_char_len(s + i, len - i);
		size_t room = n ? n : ESCAPED_LEN;

		if (cut && o + room + 3 >= size) { /* 3: "..." */
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (n)
			memcpy(buf + o, s + i, n);
		else
			escape_byte(buf + o, (unsigned char)s[i]);
		o += room;
		i += n ? n : 1;
	}
	buf[o] = '\0';
	return buf;
}
