// SPDX-License-Identifier: MIT
#include "group_run.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

int tr_group_start(struct trace_run *r, const char *program)
{
	if (geteuid() != 0)
		return TR_GROUP_NOT_ROOT;
	return tr_run(r, program, NULL, NULL);
}

void tr_group_need(int status, const struct trace_run *r, const char *what)
{
	if (status == TR_GROUP_NOT_ROOT)
		tr_require_root(); /* fails under CI, else skips */
	if (status < 0)
		fail_msg("%s failed: %s", what, r->error);
}

cJSON *tr_one(const struct trace_run *r, const char *ph, const char *name)
{
	cJSON *v[4];
	size_t n = tr_find_all(r, ph, name, v, 4);

	if (n != 1)
		fail_msg("expected exactly one \"%s\" event named \"%s\", found %zu", ph, name, n);
	return v[0];
}
