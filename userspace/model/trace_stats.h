/* SPDX-License-Identifier: MIT */
/*
 * trace_stats.h - what a trace says of itself besides its events: the facts
 * known at the start (trace_facts) and what was counted by the end
 * (trace_stats). The model and the session fill them; each encoder
 * (trace_event.h) writes them in its format's own place.
 */
#ifndef CTRACE_TRACE_STATS_H
#define CTRACE_TRACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attach/kernel_features.h"
#include "lib/proc_info.h"
#include "model/table_bound.h"

struct flow_counts;
struct stack_stats;
struct usdt_model;

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
	const char *categories;       /* --categories as given; NULL: every category */
	/* The BPF programs (bpf_load.c): which set, attached how, and why. */
	const char *program_set;      /* NULL: none loaded (not written) */
	const char *program_set_why;  /* why better ones were not taken */
	bool program_set_forced;      /* by CTRACE_PROGRAM_SET */
	const char *probe_links;      /* "uprobe_multi" or "perf_uprobe" */
	bool bpf_cookies;
	bool fast_nop5;               /* --fast took effect */
	bool renames_told;            /* thread renames from the kernel (task_rename), else /proc's looks */
	bool from_capture;            /* written by a conversion of a capture (convert, or behind one) */
	const char *event_path;       /* "batched" or "per_event" (--no-batch); NULL: not written */
	const char *event_path_why;   /* why per_event, when not asked for (--stacks); NULL: none */
	const char *death_watch;      /* batched: how exits and execs are watched (batch_watch.h) */
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
	uint64_t events_of_unknown_category; /* no BPF cookies to tell it: cat "(unknown)" (categories.h) */
	uint64_t max_memory;       /* --max-memory, bytes (0: not written) */
	const struct table_bound *bounds[TRACE_BOUNDS_MAX]; /* the tables it was split into */
	unsigned n_bounds;
	uint64_t records_unread_at_stop; /* left in the ring buffer when the drain ran out of time (in dropped) */
	/* The reads of processes' memory (remote_read.h): made, abandoned past their deadline, refused. */
	uint64_t remote_reads, remote_reads_abandoned, remote_reads_refused;
	/* The batched path (userspace/ingest/batch_path.c). */
	uint64_t batched_events;   /* events that came in threads' buffers */
	uint64_t batch_threads;    /* buffers seen: one per thread and object */
	uint64_t batch_lost;       /* numbered by a thread, never seen (in dropped) */
	uint64_t batch_unwatched;  /* buffers the kernel side could not copy at their thread's death */
	uint64_t batch_before_tracing;    /* left in a buffer by an earlier trace: left out */
	uint64_t batch_adopted;           /* buffers the process had before this trace, found at attach */
	uint64_t batch_inherited_at_fork; /* a child's copy of its parent's events: left out */
	uint64_t batch_unread_at_stop;    /* live threads' buffers the stop could not read: their last events lost */
	uint64_t merge_forced;     /* handed on before the watermark, for want of memory */
	uint64_t merge_late;       /* handed on after a later event: out of order in the trace */
	uint64_t stop_mono_ns;
	const char *stop_reason;
	const struct flow_counts *flows; /* CTRACE_FLOW_OUT/IN (trace_flows.c); NULL: not written */
	uint64_t thread_renames;   /* renames the kernel told of (task_rename) */
	const struct stack_stats *stacks; /* --stacks (metadata.stacks); NULL: not written */
	const struct usdt_model *usdt;    /* --usdt (metadata.usdt); NULL: not written */
	const struct flight_dump_facts *flight; /* --ring: this dump's (metadata.flight_recorder); NULL: none */
};

/* What metadata.flight_recorder says of one dump (flight_recorder.h). */
struct flight_dump_facts {
	uint64_t ring_bytes;        /* --ring */
	unsigned dump;              /* its number, from 1 */
	const char *reason;         /* "SIGUSR1", "CTRACE_TRIGGER", "end" */
	const char *trigger;        /* the first CTRACE_TRIGGER's name (untrusted), NULL: none */
	size_t trigger_len;
	uint64_t triggers;          /* CTRACE_TRIGGERs since the dump before */
	uint64_t events_overwritten;       /* since the dump before: pushed out of the ring */
	uint64_t events_overwritten_total; /* since tracing began */
	uint64_t spans_open;        /* written unfinished at the dump, to go on in the next */
	uint64_t names_left_out;    /* process and thread names forgotten past FLIGHT_NAMES_MAX */
	uint64_t window_start_ns;   /* the dump before (or the start): what the dump may hold */
};

#endif
