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
#include "encode/json/json_writer.h"
#include "lib/proc_info.h"
#include "encode/json/chrome_trace.h"
#include "encode/flight_recorder.h"
#include "encode/otlp/otlp_export.h"
#include "encode/perfetto/pftrace_encode.h"
#include "io/trace_rotation.h"

struct trace_output {
	const char *path; /* "-": standard output; the current file (rot.path) */
	int fd;
	bool created;     /* a new file: removed if tracing never started */
	uint64_t next_flush_ns;
	struct json_writer w;
	struct chrome_trace tf; /* the JSON encoder */
	struct trace_fanout fan; /* the encoders the model's events go to (trace_event.h) */
	struct trace_facts facts; /* the trace's metadata; the session adds what it attached */
	struct trace_rotation rot; /* --max-size */
	/*
	 * --ring: w is the flight recorder's stage, and the trace is written
	 * as dumps, each a file of its own named after pattern (path is the
	 * next one's, its fd opened at the start for the first).
	 */
	bool ring;
	struct flight_recorder fr;
	const char *pattern;
	char dump_path[4096];
	uint64_t last_dump_ns;  /* CLOCK_MONOTONIC; 0: none yet */
	unsigned dumps_failed;
	/*
	 * Perfetto's format: pf writes the packets into w (pftrace_encode.h);
	 * the JSON kept too with CTRACE_PFTRACE_JSON (json_fd, -1: none),
	 * written by tf into json_w.
	 */
	struct pftrace_encoder *pf;
	int json_fd;
	struct json_writer json_w;
	/* --otlp, -o FILE.otlp.json (NULL: none): told the time with each flush, finished before the end's metadata. */
	struct otlp_export *otlp;
	/*
	 * Launch mode: what becomes of the command when the output fails, said
	 * at the end of the line that says so ("": nothing to add);
	 * failure_said once such a line was printed.
	 */
	char failure_note[160];
	bool failure_said;
};

/*
 * --max-size and --max-files (0: none), and the counts each rotated file's
 * end writes; --ring's bytes (0: off; the path is then the dumps' pattern,
 * flight_dump_path()).
 */
struct output_limits {
	unsigned long long max_size, max_files;
	struct trace_stats *stats;
	uint64_t ring;
	bool perfetto; /* Perfetto's protobuf, written from the model's events (pftrace_encode.h) */
	/* A conversion: the start's times as the capture says them (NULL: now). */
	const struct trace_facts *replay_facts;
};

/*
 * Opens path (with --max-size and %n in it: the first numbered file; with
 * --ring: the first dump's) and begins the trace: 0, or -errno having said
 * why (then output_close).
 */
int output_begin(struct trace_output *out, const char *path, const struct output_limits *limits,
		 const struct proc_facts *target);
/*
 * --ring: opens the next dump's file (before anything is written for it:
 * a dump that cannot be written leaves the recorder as it was): 0, or
 * -errno having said why.
 */
int output_dump_open(struct trace_output *out, uint64_t at_ns);
/*
 * --ring: writes a dump (into the file output_dump_open() opened) of what the recorder holds (why: "SIGUSR1",
 * "CTRACE_TRIGGER", "end"; spans_open: written unfinished just before;
 * now_ns: CLOCK_MONOTONIC), says so unless quiet: 0, or -errno having
 * said why (tracing goes on, the events stay for the next dump).
 */
int output_dump(struct trace_output *out, const struct trace_stats *stats, const char *why,
		uint64_t spans_open, uint64_t now_ns, bool quiet);
/* Every 50 ms at most (now_ns, CLOCK_MONOTONIC): what is written goes out, and on to the disk without waiting. */
void output_flush_every(struct trace_output *out, uint64_t now_ns);
/* What is written goes out and to the disk (while the detach waits: the last fsync has only the end). */
void output_flush_to_disk(struct trace_output *out);
/* Writes the end of the trace: 0, or -errno having said why. Counts stats->events_written. */
int output_end(struct trace_output *out, struct trace_stats *stats);
/* Frees; with remove, a file this run created goes too (tracing never started). */
void output_close(struct trace_output *out, bool remove);

#endif
