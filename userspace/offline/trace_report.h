/* SPDX-License-Identifier: MIT */
/*
 * trace_report.h - reads a trace file into a trace_summary: the one
 * `ctrace-bpf report FILE` prints. Plain JSON or gzip, both through zlib
 * (gzread reads a plain file as it is).
 *
 * It relies on the layout chrome_trace.c writes (trace_fix.h: one event a
 * line, the metadata on the last line), so memory does not grow with the
 * file: one line at a time (at most TRACE_FIX_LINE_MAX), the summary's
 * bounded tables, and the async spans begun and not yet ended (the writer
 * puts a "b" right before its "e"; at most REPORT_OPEN_ASYNC_MAX wait).
 */
#ifndef CTRACE_TRACE_REPORT_H
#define CTRACE_TRACE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "encode/trace_summary.h"

#define REPORT_OPEN_ASYNC_MAX 65536

struct trace_report {
	struct trace_summary summary;
	struct summary_losses losses; /* from the metadata (losses.known: there was one) */
	uint64_t events;          /* lines of traceEvents read as events */
	uint64_t damaged_lines;   /* lines in traceEvents that are no JSON object, or too long */
	uint64_t async_unpaired;  /* "b" without its "e", or "e" without its "b" */
	uint64_t timed_events;    /* of events, those with a time ("M" have none) */
	double first_ts_us, last_ts_us; /* their span of time */
	char why[200];            /* on failure: what is wrong with the file */
};

/* Reads path into r (to free with trace_report_free()): 0, or -1 with r->why said. */
int trace_report_read(const char *path, struct trace_report *r);
void trace_report_free(struct trace_report *r);

#endif
