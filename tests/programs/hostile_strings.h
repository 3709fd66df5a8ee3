/* SPDX-License-Identifier: MIT */
/*
 * hostile_strings.h - the two oversized inputs hostile.c and hostile_kinds.c
 * send: a name of BIG bytes, and args nested DEEP levels. Built before the
 * tracer comes: the whole string must be there when a probe reads it.
 */
#ifndef CTRACE_TEST_PROGRAM_HOSTILE_STRINGS_H
#define CTRACE_TEST_PROGRAM_HOSTILE_STRINGS_H

#include <stdlib.h>
#include <string.h>

#define BIG (1024 * 1024)
#define DEEP 100000

/* BIG times c, NUL-terminated (malloc'd; NULL if out of memory). */
static inline char *big_string(char c)
{
	char *s = malloc(BIG + 1);

	if (s) {
		memset(s, c, BIG);
		s[BIG] = '\0';
	}
	return s;
}

/* DEEP times open then DEEP times close, NUL-terminated (malloc'd, or NULL). */
static inline char *deep_nesting(char open, char close)
{
	char *s = malloc(2 * DEEP + 1);

	if (s) {
		memset(s, open, DEEP);
		memset(s + DEEP, close, DEEP);
		s[2 * DEEP] = '\0';
	}
	return s;
}

#endif
