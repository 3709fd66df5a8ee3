/* SPDX-License-Identifier: MIT */
/*
 * trace_run.h - the integration tests' harness: runs a test program from
 * build/tests/programs under the real tracer (build/ctrace-bpf), or under any
 * other command, and hands back everything that came out of it.
 *
 *   struct trace_run r;
 *   if (tr_run(&r, "every_macro", NULL, NULL) < 0) fail_msg("%s", r.error);
 *   cJSON *x = tr_find(&r, "X", "outer");
 *   ...
 *   tr_free(&r);
 *
 * The flow of tr_run (each step is also callable on its own):
 *   1. fork/exec the program, stdout and stderr to temp files;
 *   2. wait until its stdout has a line starting "ready" (programs print it
 *      before they wait for a tracer) and read pid=, main_tid=, worker_tid=;
 *   3. start `$CTRACE_BPF -p PID -o DIR/trace.json [extra args]`;
 *   4. wait for both (TR_TIMEOUT_MS in all: then both are killed and the run
 *      fails);
 *   5. read the trace and parse it strictly (one JSON value, nothing after).
 *
 * Every path is relative to the repository root: tests run from there.
 * Temp files live in one mkdtemp() directory, removed by tr_free() unless
 * CTRACE_TEST_KEEP is set in the environment (then its path is printed).
 */
#ifndef CTRACE_TEST_TRACE_RUN_H
#define CTRACE_TEST_TRACE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

/* Defaults; `make integration-test` sets CTRACE_BPF and CTRACE_TEST_PROGRAMS
 * (another build directory, e.g. build-asan, has its own). */
#define TR_TRACER_DEFAULT "build/ctrace-bpf"
#define TR_PROGRAMS_DEFAULT "build/tests/programs"
#define TR_CHECKER "tests/devtools/check-trace.mjs"
/* Hard limit for one whole run (program + tracer). */
#define TR_TIMEOUT_MS 30000

/* A child process with its output captured to files. */
struct tr_child {
	pid_t pid;          /* 0 once reaped (or never started) */
	int status;         /* wait status once reaped */
	bool reaped;
	char out_path[300]; /* its stdout */
	char err_path[300]; /* its stderr */
};

struct trace_run {
	char dir[256];        /* the temp directory */
	char program[256];    /* path of the test program */
	struct tr_child prog, tracer;

	/* From the program's "ready" line (0 when absent). */
	long pid, main_tid, worker_tid;

	/* Filled once the children are reaped (tr_wait). */
	int prog_exit;        /* exit code, 128+signal if killed, -1 not reaped */
	char *prog_stdout;
	int tracer_exit;      /* same convention */
	char *tracer_stderr;
	char *tracer_stdout;
	double tracer_seconds; /* from tracer start to its exit */

	/* The trace (tr_load_trace). */
	char trace_path[300];
	char *trace_text;
	size_t trace_len;
	cJSON *trace;         /* the whole document */
	cJSON *events;        /* its traceEvents array (borrowed from trace) */

	char error[1024];     /* why a step failed (for fail_msg) */
};

/* The whole flow; prog_args / tracer_args: NULL-terminated extra argv or NULL. */
int tr_run(struct trace_run *r, const char *program,
	   const char *const *prog_args, const char *const *tracer_args);

/* tr_run for a test: needs root (tr_require_root); fails the test unless the
 * run worked and both the program and the tracer exited 0. */
void tr_run_ok(struct trace_run *r, const char *program, const char *const *prog_args,
	       const char *const *tracer_args);

/* The same flow with another tool as the tracer (see tr_start_command); no
 * trace file is read. 0 once both exited (whatever their exit codes). */
int tr_run_command(struct trace_run *r, const char *program,
		   const char *const *prog_args, const char *const *argv);

/* The steps. Each returns 0, or -1 with r->error set. */
int tr_init(struct trace_run *r);
int tr_start_program(struct trace_run *r, const char *program,
		     const char *const *prog_args);
/* Waits until the program's stdout has a line starting with `prefix`. */
int tr_wait_line(struct trace_run *r, const char *prefix, int timeout_ms);
int tr_start_tracer(struct trace_run *r, const char *const *tracer_args);
/*
 * Starts another tool in the tracer's place (e.g. bpftrace): in each argument
 * "{PID}" becomes the program's pid, "{EXE}" its absolute path and
 * "{TRACE}" the run's trace file (r->trace_path).
 */
int tr_start_command(struct trace_run *r, const char *const *argv);
/* Reaps both children, killing whatever is still running at the deadline. */
int tr_wait(struct trace_run *r, int timeout_ms);
int tr_wait_tracer(struct trace_run *r, int timeout_ms);
int tr_load_trace(struct trace_run *r);
void tr_free(struct trace_run *r);

/* The tracer's path; the path of test program `name` (into buf). */
const char *tr_tracer(void);
const char *tr_program_path(const char *name, char *buf, size_t len);
/* The absolute path (realpath) of test program `name` into buf, for a command
 * line or an exe to compare with; fails the test if it does not exist. */
const char *tr_program_abspath(const char *name, char *buf, size_t len);

/* Generic: fork/exec argv with stdout/stderr captured into dir. */
int tr_spawn(struct tr_child *c, const char *dir, const char *tag,
	     const char *const *argv);
/* Reaps c within timeout_ms; if it is still running then, SIGKILLs it and
 * returns -1. */
int tr_reap(struct tr_child *c, int timeout_ms);
/* Exit code of a reaped child (128+signal if it was killed). */
int tr_exit_code(const struct tr_child *c);

/*
 * VmHWM (peak RSS) of a running tracer (process pid) in KiB; -1 before its
 * exec (the forked child still holds the test's memory) and once it has
 * exited.
 */
long tr_tracer_peak_kib(pid_t pid);
/* One command, run to completion: exit code (or -1 on timeout), output. */
struct tr_cmd {
	int exit;
	char *out, *err;
	double seconds;
};
int tr_cmd_run(struct tr_cmd *res, const char *const *argv, int timeout_ms);
void tr_cmd_free(struct tr_cmd *res);
/*
 * `[WRAPPER...] $CTRACE_BPF [COMMAND] ARGS...` run to completion (tr_cmd_run):
 * wrapper (e.g. setpriv and its options) and args NULL-terminated or NULL,
 * command e.g. "fix" or "list" (NULL: none). res is freed first: zeroed, or
 * from an earlier run. -1 if it could not run or has too many arguments.
 */
int tr_run_tracer(struct tr_cmd *res, const char *const *wrapper, const char *command,
		  const char *const *args, int timeout_ms);

/* Reading the trace. */
cJSON *tr_find(const struct trace_run *r, const char *ph, const char *name);
cJSON *tr_find_pid(const struct trace_run *r, const char *ph, const char *name,
		   double pid);
/* All matches (name NULL: any), in file order; returns how many (<= max). */
size_t tr_find_all(const struct trace_run *r, const char *ph, const char *name,
		   cJSON **out, size_t max);
/* "M" event `what` (process_name, thread_name) for pid/tid; NULL if none. */
cJSON *tr_find_meta(const struct trace_run *r, const char *what, double pid,
		    double tid);
/* Member `key` of obj as a number (NAN if absent or not a number). */
double tr_num(const cJSON *obj, const char *key);
/* Member `key` of obj as a string (NULL if absent or not a string). */
const char *tr_str(const cJSON *obj, const char *key);
/* args.KEY of an event (NULL if absent). */
cJSON *tr_arg(const cJSON *ev, const char *key);
/* The trace's "metadata" object (NULL if absent); one number of it (NAN if absent). */
cJSON *tr_meta(const struct trace_run *r);
double tr_meta_num(const struct trace_run *r, const char *key);
/* Number of events with this ph (NULL: all). */
size_t tr_count(const struct trace_run *r, const char *ph);
/* The values (args.value) of counter `name` in process pid, in order of ts,
 * at most max of them (of at most 32 found); returns how many it found. */
size_t tr_counter_values(const struct trace_run *r, const char *name, double pid,
			 double *out, size_t max);
/* Fails the test unless X event inner lies within X event outer (ts, dur). */
void tr_assert_inside(const cJSON *inner, const cJSON *outer);

/* True if s[0..n) is valid UTF-8 (RFC 3629: no overlongs, no surrogates). */
bool tr_valid_utf8(const char *s, size_t n);
/* Checks that every "ts" and "dur" in the text is a plain decimal number with
 * at most 3 decimals; on failure puts the offending excerpt in why. */
bool tr_check_time_fields(const char *text, char *why, size_t why_len);
/* Reads a whole file (NUL-terminated; a gzip file decompressed); NULL on error. */
char *tr_read_file(const char *path, size_t *len);
/* system() of a printf-formatted shell command (at most 2047 bytes). */
__attribute__((format(printf, 1, 2))) int tr_shell(const char *fmt, ...);

/*
 * Privileges: BPF tests need root. Without it, under CI=true this fails the
 * test; otherwise it skips it with a message. Call first in each BPF test.
 */
void tr_require_root(void);
/*
 * How the trace command writes the trace in the runs that follow
 * (CTRACE_CONVERT: "live", "behind"): returns what the environment said
 * (malloc'd, or NULL), for tr_convert_end to put back.
 */
char *tr_convert_begin(const char *how);
void tr_convert_end(char *was);
/* tr_start_tracer with CTRACE_CONVERT=how for that tracer only. */
int tr_start_tracer_converting(struct trace_run *r, const char *const *tracer_args, const char *how);
/* Whether the trace command writes behind a capture now (CTRACE_CONVERT, else its default). */
bool tr_converts_behind(void);
bool tr_in_ci(void);
/* A tool the test needs (e.g. "bpftrace") must be in PATH: else fails under
 * CI, skips otherwise. */
void tr_require_command(const char *cmd);

/*
 * The DevTools checker: returns its JSON summary of the file (caller frees),
 * or NULL with why set (checker missing, node missing, engine rejected it).
 */
bool tr_checker_available(char *why, size_t why_len);
cJSON *tr_checker_run(const char *trace_path, char *why, size_t why_len);
/* tr_checker_run for a test: if the checker is missing, fails under CI and
 * skips otherwise; fails if it rejects the file. */
cJSON *tr_checker_summary(const char *trace_path);

#endif
