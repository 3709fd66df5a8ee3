/* SPDX-License-Identifier: MIT */
/*
 * session_output.h - the trace's output file over a session: opened before
 * anything is attached (output_file.c), begun with the facts known at the
 * start, pushed out while tracing so that a killed tracer leaves all but
 * the last moments, and ended with what the stop found.
 */
#ifndef CTRACE_SESSION_OUTPUT_H
#define CTRACE_SESSION_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include "json_writer.h"
#include "proc_info.h"
#include "chrome_trace.h"
#include "trace_rotation.h"

struct trace_output {
	const char *path; /* "-": standard output; the current file (rot.path) */
	int fd;
	bool created;     /* a new file: removed if tracing never started */
	uint64_t next_flush_ns;
	struct json_writer w;
	struct chrome_trace tf;
	struct trace_facts facts; /* the trace's metadata; the session adds what it attached */
	struct trace_rotation rot; /* --max-size */
};

/* --max-size and --max-files (0: none), and the counts each rotated file's end writes. */
struct output_limits {
	unsigned long long max_size, max_files;
	struct trace_stats *stats;
};

/*
 * Opens path (with --max-size and %n in it: the first numbered file) and
 * begins the trace: 0, or -errno having said why (then output_close).
 */
int output_begin(struct trace_output *out, const char *path, const struct output_limits *limits,
		 const struct proc_facts *target);
/* Every 50 ms at most (now_ns, CLOCK_MONOTONIC): what is written goes out, and on to the disk without waiting. */
void output_flush_every(struct trace_output *out, uint64_t now_ns);
/* What is written goes out and to the disk (while the detach waits: the last fsync has only the end). */
void output_flush_to_disk(struct trace_output *out);
/* Writes the end of the trace: 0, or -errno having said why. Counts stats->events_written. */
int output_end(struct trace_output *out, struct trace_stats *stats);
/* Frees; with remove, a file this run created goes too (tracing never started). */
void output_close(struct trace_output *out, bool remove);

#endif
