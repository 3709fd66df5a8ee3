/* SPDX-License-Identifier: MIT */
/*
 * trace_behind.h - the trace command's conversion behind its capture.
 *
 * While tracing, the tracer only moves the records, undecoded, into a
 * capture (capture_write.h) in a file of no name next to the output; a
 * process of its own, `ctrace-bpf convert` at SCHED_IDLE, follows that
 * file and writes the trace (capture_replay.c), on idle CPU only: the
 * traced application's CPU is never taken for decoding, the model or the
 * encoders. What it has read is punched out of the file, which so holds
 * only what is still to convert. After the stop the conversion catches
 * up, and the command ends when the trace is whole.
 *
 * The output is opened and checked here, before anything is attached, and
 * handed to the conversion with its lock; Ctrl-C stops the tracing, never
 * the conversion. A tracer killed outright leaves the conversion to finish
 * what the capture holds ("capture cut short").
 */
#ifndef CTRACE_TRACE_BEHIND_H
#define CTRACE_TRACE_BEHIND_H

#include <stdbool.h>
#include <sys/types.h>
#include "capture/capture_write.h"
#include "cli/trace_options.h"

struct trace_behind {
	struct capture_writer cap;
	pid_t converter;   /* 0: not started */
	int alive;         /* the pipe's write end: closed once the capture is whole */
	int out_fd;
	bool created;      /* the output file is new: removed if tracing never starts */
	const char *output;
};

/*
 * Whether a capture takes the options: not --stacks, --usdt, --ring,
 * --otlp or --max-size yet (its format aside: -o FILE.ctrace takes no
 * --format, a conversion picks it by the output's name).
 */
bool trace_capture_takes(const struct trace_options *o);
/*
 * Whether the options' trace is written behind a capture: with
 * CTRACE_CONVERT=behind, unless the options need the model live (not
 * trace_capture_takes(), -o -, a capture kept as the output).
 */
bool trace_behind_wanted(const struct trace_options *o);
/* Opens the output, the capture, starts the conversion: 0, or -errno having said why. */
int trace_behind_start(struct trace_behind *b, const struct trace_options *o);
/*
 * The capture closed (whole): waits for the conversion to end. Its exit
 * code (0: the trace is written), or 1 if it could not be had.
 */
int trace_behind_finish(struct trace_behind *b);
/* Tracing never started: the conversion stopped, a file the output created removed. */
void trace_behind_abandon(struct trace_behind *b);

#endif
