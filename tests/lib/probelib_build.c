// SPDX-License-Identifier: MIT
/* probelib_build.c - see probelib_build.h. */
#include "probelib_build.h"

#include <stdio.h>
#include "trace_run.h"

int probelib_build(const char *dir, const char *name, const char *opt, char *path,
		   size_t path_len, char *why, size_t why_len)
{
	char def[64];
	const char *argv[] = { "cc", "-shared", "-fPIC", opt, "-Iinclude", def,
			       PROBELIB_SRC, "-o", path, NULL };
	struct tr_cmd c;
	int ok;

	snprintf(def, sizeof(def), "-DPROBELIB_NAME=\"%s\"", name);
	snprintf(path, path_len, "%s/lib%s.so", dir, name);
	if (tr_cmd_run(&c, argv, 60000) < 0) {
		snprintf(why, why_len, "cannot run cc");
		return -1;
	}
	ok = c.exit == 0;
	if (!ok)
		snprintf(why, why_len, "cc for %s exited %d:\n%s", path, c.exit, c.err);
	tr_cmd_free(&c);
	return ok ? 0 : -1;
}
