// SPDX-License-Identifier: MIT
#include "group_run.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

/* The group's run, and how its setup went: 0 traced, -1 failed (run->error), 1 not root. */
#define NOT_ROOT 1
static struct trace_run *group;
static int status = -1;
static char what_run[300];

int tr_group_setup(struct trace_run *r, int (*run)(struct trace_run *r), const char *what)
{
	group = r;
	snprintf(what_run, sizeof(what_run), "%s", what);
	status = geteuid() != 0 ? NOT_ROOT : run(r);
	return 0;
}

static const char *traced_program;

static int trace_program(struct trace_run *r)
{
	return tr_run(r, traced_program, NULL, NULL);
}

int tr_group_trace(struct trace_run *r, const char *program)
{
	char what[300];

	traced_program = program;
	snprintf(what, sizeof(what), "tracing %s", program);
	return tr_group_setup(r, trace_program, what);
}

void tr_group_need(void)
{
	if (!group)
		fail_msg("no group setup ran (tr_group_setup)");
	if (status == NOT_ROOT)
		tr_require_root(); /* fails under CI, else skips */
	if (status < 0)
		fail_msg("%s failed: %s", what_run, group->error);
}

int tr_group_teardown(void **state)
{
	(void)state;
	if (group)
		tr_free(group);
	return 0;
}

cJSON *tr_group_one(const char *ph, const char *name)
{
	return tr_one(group, ph, name);
}

cJSON *tr_one(const struct trace_run *r, const char *ph, const char *name)
{
	cJSON *v[4];
	size_t n = tr_find_all(r, ph, name, v, 4);

	if (n != 1)
		fail_msg("expected exactly one \"%s\" event named \"%s\", found %zu", ph, name, n);
	return v[0];
}
