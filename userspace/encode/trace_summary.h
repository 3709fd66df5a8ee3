/* SPDX-License-Identifier: MIT */
/*
 * trace_summary.h - what a trace holds, in a few lines for the terminal:
 * the span names by total time (count, total, mean, p50, p99), the instant
 * names by count, the counters by samples, and what was lost. Fed while
 * tracing (chrome_trace.c: each span, instant and counter as it is
 * written) or from a trace file (trace_report.c), printed the same way.
 *
 * Bounded whatever the traced program sends: at most SUMMARY_NAMES names
 * of each kind, each cut to SUMMARY_NAME_MAX bytes; the names past that
 * are added up in one "(other names)" row. A span name's durations go into
 * a duration_hist (7.8 KB): 2.1 MB at most for the spans, 0.1 MB for the
 * rest.
 */
#ifndef CTRACE_TRACE_SUMMARY_H
#define CTRACE_TRACE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "encode/duration_hist.h"
#include "lib/key_map.h"

#define SUMMARY_NAMES 256
/* The rows the trace command's summary shows (report: --top). */
#define SUMMARY_TOP_SPANS 10
#define SUMMARY_TOP_OTHERS 5
#define SUMMARY_NAME_MAX 120

struct summary_entry {
	char name[SUMMARY_NAME_MAX + 1]; /* NUL-terminated; may hold NULs of the program's */
	size_t len;
	uint64_t count;
	uint64_t unfinished;       /* spans: of count, written unfinished */
	struct duration_hist *hist; /* spans: the durations (count, min, max too) */
	uint64_t total_ns;         /* spans */
	double last, min, max;     /* counters: the samples */
};

struct summary_kind {
	struct key_map by_name; /* name -> struct summary_entry * */
	/*
	 * The entries found lately, by their name's length and ends: a
	 * program names a few things over and over, and a lookup in by_name
	 * per event (hashing the name) was a seventh of the loader's work.
	 */
	struct summary_entry *recent[32];
	struct summary_entry **v;
	size_t n, cap;
	struct summary_entry other; /* the names past SUMMARY_NAMES, added up */
	uint64_t total;             /* events of this kind */
};

struct trace_summary {
	struct summary_kind spans, instants, counters;
};

/* What the trace lost, for the summary's last line (the trace's metadata). */
struct summary_losses {
	uint64_t dropped;          /* metadata.dropped_events */
	uint64_t unfinished_spans; /* open at the stop */
	uint64_t unmatched_ends;
	uint64_t evicted;          /* metadata.memory.evicted (--max-memory) */
	bool truncated;            /* cut short and repaired (ctrace-bpf fix) */
	bool ring;                 /* a flight recorder's dump (--ring) */
	uint64_t overwritten;      /* its ring overwrote, before it (one dump) or in all (the tracer) */
	bool known;                /* false: the trace had no metadata to say */
};

void trace_summary_init(struct trace_summary *s);
void trace_summary_free(struct trace_summary *s);

void trace_summary_span(struct trace_summary *s, const char *name, size_t len, uint64_t dur_ns,
			bool unfinished);
void trace_summary_instant(struct trace_summary *s, const char *name, size_t len);
void trace_summary_counter(struct trace_summary *s, const char *name, size_t len, double value);

/* The summary as an encoder (trace_event.h): fed every span, instant and counter of the trace. */
struct trace_encoder trace_summary_encoder(struct trace_summary *s);

/*
 * The summary as lines on f: top_spans span names, top_other instant and
 * counter names at most, and the losses.
 */
void trace_summary_print(FILE *f, const struct trace_summary *s, const struct summary_losses *l,
			 size_t top_spans, size_t top_other);

#endif
