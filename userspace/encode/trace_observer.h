/* SPDX-License-Identifier: MIT */
/*
 * trace_observer.h - a second consumer of what the trace writes: the
 * events chrome_trace.c is handed (spans, instants, counters, names) go to
 * it too, as typed values, before they become JSON. An exporter to another
 * format (otlp_export.c) is one; the JSON writer does not know which.
 *
 * Every hook may be NULL. Texts are the program's bytes (ct_text's flags:
 * CTRACE_STR_FAULT says there are none), valid only during the call.
 * Times are CLOCK_MONOTONIC ns, as in the trace.
 */
#ifndef CTRACE_TRACE_OBSERVER_H
#define CTRACE_TRACE_OBSERVER_H

#include <stdbool.h>
#include <stdint.h>

struct ct_text;
struct json_writer;

struct trace_observer {
	void *ctx;
	/* A span on one thread (an "X"); why: NULL, or why it is unfinished. */
	void (*span)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
		     const struct ct_text *name, const struct ct_text *begin_args,
		     const struct ct_text *end_args, const char *why);
	/* A span that ended on another thread (a "b"/"e" pair). */
	void (*async_span)(void *ctx, uint32_t pid, const struct ct_text *name,
			   uint32_t begin_tid, uint64_t begin_ns, const struct ct_text *begin_args,
			   uint32_t end_tid, uint64_t end_ns, const struct ct_text *end_args);
	void (*instant)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			const struct ct_text *name, char scope, const struct ct_text *args);
	void (*counter)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			const struct ct_text *name, double value);
	void (*process_name)(void *ctx, uint32_t pid, const struct ct_text *name);
	void (*thread_name)(void *ctx, uint32_t pid, uint32_t tid, const struct ct_text *name);
	/* Members of the trace's "metadata" of its own, each written ",\"key\":value". */
	void (*metadata)(void *ctx, struct json_writer *w);
};

#endif
