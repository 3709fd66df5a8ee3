/* SPDX-License-Identifier: MIT */
/*
 * group_run.h - one traced run shared by a cmocka test group: the group
 * setup traces the program once, and each test checks one part of that
 * trace. For tests linked with cmocka (the checks fail through fail_msg).
 *
 *   static struct trace_run run;
 *   static int group_setup(void **state) { (void)state; return tr_group_trace(&run, "hostile"); }
 *   static void test_x(void **state) { tr_group_need(); ...tr_group_one("I", "after")... }
 *   return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
 *
 * One group a test binary: the run is remembered here for tr_group_need,
 * tr_group_one and tr_group_teardown.
 */
#ifndef CTRACE_TEST_GROUP_RUN_H
#define CTRACE_TEST_GROUP_RUN_H

#include <cjson/cJSON.h>
#include "trace_run.h"

/*
 * For the group setup: unless not root, fills r through run(r), which
 * returns 0 or -1 with r->error set (`what` names it in failures). Returns
 * 0: a failed run fails each test (tr_group_need), not the group.
 */
int tr_group_setup(struct trace_run *r, int (*run)(struct trace_run *r), const char *what);
/* tr_group_setup of tr_run(r, program, NULL, NULL): "tracing PROGRAM". */
int tr_group_trace(struct trace_run *r, const char *program);
/* First thing in each test: fails (or, not root outside CI, skips) unless the run worked. */
void tr_group_need(void);
/* The group teardown: frees the run. */
int tr_group_teardown(void **state);
/* The one event ph/name of the group's trace; fails unless there is exactly one. */
cJSON *tr_group_one(const char *ph, const char *name);
/* The same in any run. */
cJSON *tr_one(const struct trace_run *r, const char *ph, const char *name);

#endif
