/* SPDX-License-Identifier: MIT */
/*
 * trace_fix.h - repairs a trace that was cut short (the tracer was killed,
 * the disk filled up) so that viewers open it. Used by `ctrace-bpf fix`.
 *
 * It relies on the layout chrome_trace.c writes, one event per line:
 *
 *   {"context":{...},                  <- line 1
 *   "traceEvents":[                    <- line 2
 *   {event},                           <- one complete JSON object per line
 *   {event}
 *   ],
 *   "metadata":{...}}
 *
 * A cut can fall anywhere: mid-line, mid-UTF-8 sequence, mid-escape. Every
 * line that is one complete, strictly valid JSON object is kept as it is
 * (bytes unchanged), the partial tail is dropped, and the document is closed
 * with a metadata object of its own that says what happened:
 *
 *   ],
 *   "metadata":{<context's members>,"stop_reason":"...","truncated":true,
 *               "events_recovered":N,"damaged_lines_dropped":D,
 *               "bytes_dropped":B}}     (B: every input byte not kept as it was)
 *
 * Work is one line at a time: memory does not grow with the file.
 */
#ifndef CTRACE_TRACE_FIX_H
#define CTRACE_TRACE_FIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How every trace we write begins; a file without it is not ours. */
#define TRACE_FIX_SIGNATURE "{\"context\":{\"tracer\":\"ctrace-bpf\""

/* A line longer than this cannot be ours: it is skipped as damaged. */
#define TRACE_FIX_LINE_MAX (16u << 20)

enum trace_fix_status {
	TRACE_FIX_REPAIRED,    /* the repaired trace was written to out_fd */
	TRACE_FIX_COMPLETE,    /* the input is a complete trace: nothing to do
				  (what was written to out_fd is to be discarded) */
	TRACE_FIX_NOT_OURS,    /* not a ctrace-bpf trace, or too short to hold
				  anything; why says which */
	TRACE_FIX_READ_ERROR,  /* err is the errno */
	TRACE_FIX_WRITE_ERROR, /* err is the errno */
};

struct trace_fix_result {
	enum trace_fix_status status;
	uint64_t events;        /* event lines kept */
	uint64_t damaged_lines; /* lines before the tail that were no complete event */
	uint64_t bytes_dropped; /* input bytes not kept as they were: the cut tail, damaged lines,
				   the old closing and all after it */
	bool context_kept;      /* the "context" object was complete */
	bool tail_cut;          /* the input ended inside the event list */
	int err;
	char why[160];
};

/*
 * Reads a trace from `in` and writes the repaired document to out_fd.
 * Returns res->status.
 */
enum trace_fix_status trace_fix(FILE *in, int out_fd, struct trace_fix_result *res);
/* The same, the repaired document written gzip-compressed with gzip_out. */
enum trace_fix_status trace_fix_to(FILE *in, int out_fd, bool gzip_out, struct trace_fix_result *res);

/*
 * True if s[0..n) is exactly one JSON object, in strict RFC 8259 form
 * (json_check.c) and with no raw byte below 0x20, nested at most 1000 deep.
 */
bool trace_fix_line_is_object(const char *s, size_t n);

#endif
