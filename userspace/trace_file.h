/* SPDX-License-Identifier: MIT */
/*
 * trace_file.h - the frame of the output document and the common parts of
 * every event:
 *
 *   {"context": {...tracer and target...},
 *    "traceEvents": [ event, event, ... ],
 *    "metadata": {...the same facts, plus what was counted at the end...}}
 *
 * Perfetto reads only traceEvents, systemTraceEvents and metadata, so the
 * facts of "context" (the seed's layout) are repeated in "metadata".
 */
#ifndef CTRACE_TRACE_FILE_H
#define CTRACE_TRACE_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include "json_writer.h"
#include "kernel_features.h"
#include "proc_info.h"
#include "table_bound.h"

/* The bounded tables (table_bound.h) metadata.memory lists, at most. */
#define TRACE_BOUNDS_MAX 12

struct trace_facts {
	const char *tracer_version;
	const struct proc_facts *target;
	uint64_t start_wall_ns;  /* CLOCK_REALTIME at attach */
	uint64_t start_mono_ns;  /* CLOCK_MONOTONIC at the same moment */
	uint64_t target_start_wall_ns; /* when the target started, both ways */
	uint64_t target_start_mono_ns;
	unsigned probes_attached;
	unsigned objects_with_probes;
	/* The BPF programs (bpf_load.c): which set, attached how, and why. */
	const char *program_set;      /* NULL: none loaded (not written) */
	const char *program_set_why;  /* why better ones were not taken */
	bool program_set_forced;      /* by CTRACE_PROGRAM_SET */
	const char *probe_links;      /* "uprobe_multi" or "perf_uprobe" */
	bool bpf_cookies;
	bool fast_nop5;               /* --fast took effect */
	const char *event_path;       /* "batched" or "per_event" (--no-batch); NULL: not written */
	struct kernel_feature kernel_features[KERNEL_FEATURE_COUNT];
};

struct trace_stats {
	uint64_t events_written;   /* entries of traceEvents */
	uint64_t records;          /* ring-buffer records decoded */
	uint64_t dropped;          /* records the ring buffer had no room for */
	uint64_t bad_records;      /* records that failed to decode */
	uint64_t unmatched_ends;   /* CTRACE_SPAN_END without a BEGIN */
	uint64_t unfinished_spans; /* spans still open at the stop */
	uint64_t late_string_reads;/* strings the probe could not read, read from /proc */
	uint64_t file_string_reads;/* the same, the process gone: read from its mapped file */
	uint64_t literals_by_reference; /* literal strings sent as their address only */
	uint64_t unreadable_strings;
	uint64_t non_finite_counter_samples; /* NaN/inf samples left out of their track */
	uint64_t records_after_stop; /* stamped after the stop (during the detach): left out */
	uint64_t spans_begun_before_tracing; /* ENDs of spans never begun in the trace */
	uint64_t untraced_processes; /* left out: the table of traced processes was full */
	uint64_t ends_of_evicted_spans; /* ENDs of spans evicted (written unfinished) before */
	uint64_t max_memory;       /* --max-memory, bytes (0: not written) */
	const struct table_bound *bounds[TRACE_BOUNDS_MAX]; /* the tables it was split into */
	unsigned n_bounds;
	uint64_t records_unread_at_stop; /* left in the ring buffer when the drain ran out of time (in dropped) */
	/* The batched path (userspace/batch_path.c). */
	uint64_t batched_events;   /* events that came in threads' buffers */
	uint64_t batch_threads;    /* buffers seen: one per thread and object */
	uint64_t batch_lost;       /* numbered by a thread, never seen (in dropped) */
	uint64_t batch_before_tracing;    /* left in a buffer by an earlier trace: left out */
	uint64_t batch_inherited_at_fork; /* a child's copy of its parent's events: left out */
	uint64_t merge_forced;     /* handed on before the watermark, for want of memory */
	uint64_t stop_mono_ns;
	const char *stop_reason;
};

struct trace_file {
	struct json_writer *w;
	bool first_event;
	uint64_t events;
};

void trace_file_begin(struct trace_file *tf, struct json_writer *w,
		      const struct trace_facts *facts);
void trace_file_end(struct trace_file *tf, const struct trace_facts *facts,
		    const struct trace_stats *stats);

/*
 * Starts an event: the separator, then {"ph":PH,"pid":P,"tid":T and, when
 * ts_ns is not UINT64_MAX, "ts". Fields follow with te_* calls; te_end closes.
 */
void te_begin(struct trace_file *tf, const char *ph, uint32_t pid, uint32_t tid,
	      uint64_t ts_ns);
/* ,"name":"..."; untrusted bytes; flags CTRACE_STR_* add a visible marker. */
void te_name(struct trace_file *tf, const char *s, size_t n, unsigned flags);
/* ,"KEY": with a trusted key; the caller writes the value. */
void te_key(struct trace_file *tf, const char *key);
void te_end(struct trace_file *tf);

/* A metadata event: {"ph":"M","name":WHAT,"pid","tid","args":{"name":NAME}}; flags: CTRACE_STR_* */
void te_metadata_name(struct trace_file *tf, const char *what, uint32_t pid,
		      uint32_t tid, const char *name, size_t name_len, unsigned flags);

#endif
