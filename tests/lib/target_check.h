/* SPDX-License-Identifier: MIT */
/*
 * target_check.h - what the fault and privilege tests need besides
 * trace_run.h: whether a traced process still carries a probe, and small
 * helpers around the tracer's output files.
 */
#ifndef CTRACE_TEST_TARGET_CHECK_H
#define CTRACE_TEST_TARGET_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "trace_run.h"

/*
 * Bytes of the process's executable file mappings that differ from the
 * files they map, -1 if it cannot tell (why set). An attached uprobe shows
 * as an int3 or, once the kernel optimized it, a call to its trampoline;
 * 0 means no uprobe is left in the process's code, whoever put it there.
 */
long tc_code_diff(pid_t pid, char *why, size_t why_len);

/* True if the program's stdout has a complete line starting with prefix. */
bool tc_printed(const struct trace_run *r, const char *prefix);

/* Number of complete lines in a file that start with prefix. */
size_t tc_count_lines(const char *path, const char *prefix);

/* Polls a file until it holds `needle` (true) or timeout_ms passes. */
bool tc_wait_file_has(const char *path, const char *needle, int timeout_ms);

/* `$CTRACE_BPF fix ARGS...` to completion (tr_run_tracer: res freed first). */
int tc_run_fix(struct tr_cmd *res, const char *const *args);

/*
 * Starts `faulty ARGS` (tests/programs/faulty.c) and the tracer with extra
 * args, and waits until the target sees itself traced ("armed"). Fails the
 * test on error; skips (or fails under CI) when not root.
 */
void tc_start_faulty(struct trace_run *r, const char *const *prog_args,
		     const char *const *tracer_args);

/*
 * The target after the tracer went: it saw CTRACE_ENABLED() turn false, no
 * uprobe is left in its code, it still runs, and it ends as it would have
 * untraced (exit 0). Fails the test otherwise.
 */
void tc_assert_unharmed(struct trace_run *r);

/* Events of phase ph named name in a loaded trace. */
size_t tc_count(const struct trace_run *r, const char *ph, const char *name);

#endif
