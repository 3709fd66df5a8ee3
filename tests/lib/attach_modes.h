/* SPDX-License-Identifier: MIT */
/*
 * attach_modes.h - what the tests of the ways to attach (test_launch,
 * test_libraries, test_processes, test_container, test_exec, test_edges,
 * test_follow_*, test_late_names, test_exe_running_pool) share on top of
 * trace_run.h: starting the tracer with any command line, reading
 * the "key=N" lines test programs print, and finding events by process.
 * For tests linked with cmocka (the checks fail through fail_msg).
 */
#ifndef CTRACE_TEST_ATTACH_MODES_H
#define CTRACE_TEST_ATTACH_MODES_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "target_check.h"
#include "trace_run.h"

/* CLOCK_MONOTONIC in seconds. */
double am_now(void);

/* Sleeps ms milliseconds. */
void am_sleep_ms(int ms);

/*
 * Starts `$CTRACE_BPF -o r->trace_path ARGS...` as r->tracer (stdout and
 * stderr to r->dir/tracer.out and .err). Fails the test if it cannot.
 */
void am_start_tracer(struct trace_run *r, const char *const *args);

/* Waits for the tracer to exit (killing it after timeout_ms: a failure). */
void am_wait_tracer(struct trace_run *r, int timeout_ms);

/* Waits for the tracer, requires exit 0, and loads the trace. */
void am_finish(struct trace_run *r, int timeout_ms);

/* What am_field returns when there is no such line or key. */
#define AM_NONE LONG_MIN

/*
 * The number after "KEY=" on the first line of text that starts with prefix
 * (prefix "" = any line that has KEY=); AM_NONE if there is none.
 */
long am_field(const char *text, const char *prefix, const char *key);

/* Like am_field, but fails the test when the line or the key is missing. */
long am_need_field(const char *text, const char *prefix, const char *key);

/* True if text has a line that starts with prefix. */
bool am_has_line(const char *text, const char *prefix);

/* A program's stdout file, read now (caller frees; "" if unreadable). */
char *am_read_out(const struct tr_child *c);

/* Polls c's stdout until a line starts with prefix; fails after timeout_ms. */
void am_wait_out_line(const struct tr_child *c, const char *prefix, int timeout_ms);

/* ---- events --------------------------------------------------------------- */

/* Events with this ph (NULL: any), name (NULL: any) and pid (NAN: any). */
size_t am_find(const struct trace_run *r, const char *ph, const char *name, double pid,
	       cJSON **out, size_t max);

/* How many am_find would find. */
size_t am_count(const struct trace_run *r, const char *ph, const char *name, double pid);

/* The one event ph/name of process pid; fails unless there is exactly one. */
cJSON *am_one(const struct trace_run *r, const char *ph, const char *name, double pid);

/* The name in the last process_name metadata of pid (viewers keep the last), or NULL. */
const char *am_process_name(const struct trace_run *r, double pid);

/* args.key of ev as a string, "" if absent. */
const char *am_arg_str(const cJSON *ev, const char *key);

/* args.key of ev as a number, NAN if absent. */
double am_arg_num(const cJSON *ev, const char *key);

/* context.target (or metadata.target with which = "metadata"). */
cJSON *am_target(const struct trace_run *r, const char *which);

/* metadata.stop_reason, "(none)" if absent. */
const char *am_stop_reason(const struct trace_run *r);

/* ---- files ---------------------------------------------------------------- */

/* buf = dir/name; fails the test if it does not fit. */
char *am_path(char *buf, size_t len, const char *dir, const char *name);

/* Copies src to dst with mode (fails the test on error). */
void am_copy_file(const char *src, const char *dst, mode_t mode);

#endif
