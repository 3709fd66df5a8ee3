// SPDX-License-Identifier: MIT
/* readelf_notes.c - see readelf_notes.h. */
#include "readelf_notes.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

size_t readelf_notes(const char *path, struct readelf_note *v, size_t max)
{
	char cmd[PATH_MAX + 32], line[512];
	size_t n = 0;
	FILE *p;
	const char *s;

	snprintf(cmd, sizeof(cmd), "readelf -nW '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	memset(v, 0, max * sizeof(*v));
	/* With -W, "Provider:" shares a line with the note's owner. */
	while (fgets(line, sizeof(line), p)) {
		if (n >= max)
			continue;
		if ((s = strstr(line, "Provider: ")))
			sscanf(s, "Provider: %79s", v[n].provider);
		else if ((s = strstr(line, "Name: ")))
			sscanf(s, "Name: %79s", v[n].name);
		else if ((s = strstr(line, "Location: ")))
			sscanf(s, "Location: %llx, Base: %llx, Semaphore: %llx",
			       &v[n].loc, &v[n].base, &v[n].sema);
		else if ((s = strstr(line, "Arguments:"))) {
			s += strlen("Arguments:");
			s += *s == ' ';
			snprintf(v[n].args, sizeof(v[n].args), "%s", s);
			v[n].args[strcspn(v[n].args, "\n")] = '\0';
			n++; /* the last line of a note */
		}
	}
	assert_int_equal(pclose(p), 0);
	return n;
}
