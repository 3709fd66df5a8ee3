/* SPDX-License-Identifier: MIT */
/*
 * path_list.h - the "looked in: a, b, c" list of an error message that no
 * probes were found (attach.c for the trace command, cmd_list.c for list):
 * bounded, and saying ", ..." where it stops instead of ending silently.
 */
#ifndef CTRACE_PATH_LIST_H
#define CTRACE_PATH_LIST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether buf's list names path already (an object looked in again: another process, or after an exec). */
static inline bool path_list_has(const char *buf, const char *path)
{
	size_t n = strlen(path);

	for (const char *p = buf; (p = strstr(p, path)); p += n)
		if ((p == buf || (p >= buf + 2 && p[-2] == ',' && p[-1] == ' ')) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Appends ", path" to buf (cap bytes, a string) unless it is there; once one does not fit, ", ..." and then nothing. */
static inline void path_list_add(char *buf, size_t cap, bool *full, const char *path)
{
	size_t len = strlen(buf), n = strlen(path);

	if (*full || path_list_has(buf, path))
		return;
	if (len + n + 8 >= cap) {
		snprintf(buf + len, cap - len, ", ...");
		*full = true;
		return;
	}
	/* Copied, not printed: the room is checked above, which gcc's -Wformat-truncation cannot follow. */
	if (len) {
		memcpy(buf + len, ", ", 2);
		len += 2;
	}
	memcpy(buf + len, path, n + 1);
}

#endif
