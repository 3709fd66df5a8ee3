/* SPDX-License-Identifier: MIT */
/*
 * pftrace.h - Perfetto's native protobuf trace (-o FILE.pftrace, --format
 * perfetto). The tracer writes it from the model's typed events
 * (pftrace_encode.h); this file's stream converts a JSON trace
 * chrome_trace.c wrote into the same packets (pftrace_write.c: the tests'
 * and the fuzzers' cross-check, and the benchmark's figure of what the
 * tracer did before); pftrace_to_json() turns a .pftrace back into the same
 * JSON events (for `report`, and the tests' comparison).
 *
 * The mapping (perfetto_trace.proto has the fields):
 *   "M" process_name / thread_name / *_sort_index: a TrackDescriptor of the
 *       process or thread track with that one fact (name, legacy_sort_index);
 *   "X": SLICE_BEGIN + SLICE_END on the thread's track, args as debug
 *       annotations, flows ("s"/"f" after it) as its flow_ids (out) and
 *       terminating_flow_ids (in);
 *   "b"/"e": a track of the span's own under its process (an async track),
 *       BEGIN and END; which threads began and ended it, and its id, are the
 *       annotations ctrace_tid and ctrace_id;
 *   "I": INSTANT on the thread's track (s "t"), its process's ("p": and
 *       ctrace_tid) or the global track ("g": and ctrace_pid, ctrace_tid);
 *   "C": COUNTER on a counter track per thread, category and name;
 *   "context", "metadata" (drops and every count): instants of category
 *       "ctrace.facts" on the global track, the object as annotations.
 * Names, categories and annotation keys are interned; timestamps are
 * CLOCK_MONOTONIC (the sequence's default clock, with a clock snapshot).
 */
#ifndef CTRACE_PFTRACE_H
#define CTRACE_PFTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The category of the packets that carry "context" and "metadata". */
#define PFTRACE_FACTS_CAT "ctrace.facts"

struct pftrace_counts {
	uint64_t events;        /* JSON events turned into packets */
	uint64_t not_converted; /* lines that were no event this writer knows (also in the metadata) */
	uint64_t sort_indexes_clamped; /* past int32 (Perfetto's legacy_sort_index): the nearest (also in the metadata) */
	uint64_t tables_cleared; /* interning or track tables that reached their bound (also in the metadata) */
	uint64_t packets, bytes;
};

/*
 * The conversion as a stream: the JSON trace's bytes fed as the writer
 * sends them (cut anywhere, even mid-line), the packets of the complete
 * events taken after each feed. What is taken always ends on a packet
 * boundary, so a file the takes are appended to is a valid Perfetto trace
 * after each append. An "X" is held until the line after it (its flows
 * come first); everything else is out by the take after its line's
 * newline. State is bounded (TABLE_MAX in pftrace_write.c).
 */
struct pftrace_stream;

/* A new stream (its first packet, the clock snapshot, already to take); NULL: out of memory. */
struct pftrace_stream *pftrace_stream_new(void);
void pftrace_stream_feed(struct pftrace_stream *s, const char *p, size_t n);
/* The packets made since the last take: *n bytes, valid until the next call on s. */
const void *pftrace_stream_take(struct pftrace_stream *s, size_t *n);
/*
 * The end: the held "X", and the metadata (or, for a JSON cut short, a
 * note saying so) as the last packet, to take. counts (or NULL) gets the counts.
 */
void pftrace_stream_end(struct pftrace_stream *s, struct pftrace_counts *counts);
void pftrace_stream_free(struct pftrace_stream *s);

/*
 * Reads the JSON trace in (chrome_trace.c's layout, one event a line) and
 * writes it as a Perfetto trace to out: 0, or -1 with why said.
 */
int pftrace_from_json(FILE *in, FILE *out, struct pftrace_counts *counts, char *why, size_t why_len);

/*
 * Reads a Perfetto trace pftrace_from_json() wrote and writes the JSON
 * trace it came from (the same events, context and metadata): 0, or -1
 * with why said.
 */
int pftrace_to_json(FILE *in, FILE *out, char *why, size_t why_len);

/* The first bytes of a file are a Perfetto trace's (a TracePacket, field 1). */
bool pftrace_looks_like(const unsigned char *head, size_t n);

/*
 * s as valid UTF-8 (protobuf strings must be; protoc refuses others):
 * s itself when it is, else a malloc()ed copy with U+FFFD for each bad
 * byte, put in *copy (to free; NULL when s was returned).
 */
const char *pftrace_utf8(const char *s, char **copy);

#endif
