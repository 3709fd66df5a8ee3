/* SPDX-License-Identifier: MIT */
/*
 * cli_check.h - what the tests of the command line share: running the
 * tracer to completion, the "one line on stderr" rule of every error a user
 * can cause, and a pid no process has. For tests linked with cmocka (the
 * checks fail through fail_msg).
 */
#ifndef CTRACE_TEST_CLI_CHECK_H
#define CTRACE_TEST_CLI_CHECK_H

#include <stdbool.h>
#include "trace_run.h"

/* tr_run_tracer (res freed first), failing the test if it could not run. */
void cli_run_tracer(struct tr_cmd *res, const char *const *wrapper, const char *command,
		    const char *const *args, int timeout_ms);

/* True if text is exactly one non-empty line (ending in its only newline). */
bool cli_one_line(const char *text);

/* Fails the test unless stderr text err is one line holding `what` (NULL: anything). */
void cli_assert_one_line(const char *err, const char *what);

/* A pid no process has (checked with kill(pid, 0)); fails the test if none is free. */
int cli_free_pid(void);

#endif
