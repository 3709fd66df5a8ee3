/* SPDX-License-Identifier: MIT */
/*
 * group_run.h - one traced run shared by a cmocka test group: the group
 * setup traces the program once, and each test checks one part of that
 * trace. For tests linked with cmocka (the checks fail through fail_msg).
 */
#ifndef CTRACE_TEST_GROUP_RUN_H
#define CTRACE_TEST_GROUP_RUN_H

#include <cjson/cJSON.h>
#include "trace_run.h"

/* The group setup's outcome: 0 traced, -1 failed (r->error), 1 not root (nothing run). */
#define TR_GROUP_NOT_ROOT 1

/* Traces `program` (tr_run, no extra arguments) unless not root. */
int tr_group_start(struct trace_run *r, const char *program);
/* First thing in each test: fails (or, not root outside CI, skips) unless the run worked. */
void tr_group_need(int status, const struct trace_run *r, const char *what);
/* The one event ph/name of the trace; fails unless there is exactly one. */
cJSON *tr_one(const struct trace_run *r, const char *ph, const char *name);

#endif
