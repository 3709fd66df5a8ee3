/* SPDX-License-Identifier: MIT */
/*
 * chrome_trace.h - writes the Chrome Trace Event JSON document: its frame,
 * every event and every fragment of one. The model (trace_model.c) hands it
 * typed values; nothing else writes trace JSON.
 *
 *   {"context": {...tracer and target...},
 *    "traceEvents": [ event, event, ... ],
 *    "metadata": {...the same facts, plus what was counted at the end...}}
 *
 * Perfetto reads only traceEvents, systemTraceEvents and metadata, so the
 * facts of "context" (the seed's layout) are repeated in "metadata".
 */
#ifndef CTRACE_CHROME_TRACE_H
#define CTRACE_CHROME_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "json_writer.h"
#include "kernel_features.h"
#include "nest_ties.h"
#include "proc_info.h"
#include "table_bound.h"
#include "trace_flows.h"
#include "stack_frames.h"
#include "stack_trace.h"
#include "trace_observer.h"

struct usdt_model;
struct trace_rotation;

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
	/* The batched path (userspace/batch_path.c). */
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

/* A flow's binding to the next "X" (Perfetto's v2 flows): bind_id and which ways. */
struct ct_flow_bind {
	uint64_t id; /* 0: none */
	bool out, in;
};

struct trace_summary;
struct flight_recorder;

struct chrome_trace {
	struct json_writer *w;
	/* The end-of-trace summary (trace_summary.h) fed with every span, instant and counter written; NULL: none. */
	struct trace_summary *summary;
	bool first_event;
	uint64_t events;
	/*
	 * --stacks: the frames (NULL: none; the session sets them after
	 * chrome_trace_begin), and the stack of the next event written, set
	 * by the model just before (sf_end: an async pair's end), taken by
	 * that event: its "sf" and its args.stack.
	 */
	const struct stack_frames *frames;
	uint32_t sf, sf_end;
	/*
	 * The category (categories.h's number; 0 and 1: "ctrace") of the
	 * program's events written next: the model sets it (trace_model.c).
	 * ctrace's own notices are always "ctrace".
	 */
	unsigned cat;
	struct ct_flow_bind bind; /* for the next X only (chrome_trace_bind_next()) */
	/*
	 * ","pid":P,"tid":T as written last for a few threads (by tid), so
	 * that most events copy it instead of formatting two numbers.
	 */
	struct ct_ids_text {
		uint32_t pid, tid;
		uint8_t len; /* 0: empty */
		char s[39];
	} ids[16];
	struct jw_ts_cache ts; /* each event's "ts" (json_writer.h) */
	/* --max-size (trace_rotation.h), or NULL: checked before each event. */
	struct trace_rotation *rot;
	/* Events written aside (chrome_trace_capture_begin()): the file's writer meanwhile. */
	struct json_writer *file_w, aside;
	bool aside_ready, file_first_event;
	char *file_event_start;
	/*
	 * Where in w's buffer the latest event began (its separator): the
	 * flight recorder moves whole events only. A pointer, not an offset:
	 * one store an event, on the hot path. With --ring (ring not
	 * NULL) w is its stage, the names go aside, and triggers are told.
	 */
	char *event_start;
	struct flight_recorder *ring;
	/* Told of every span, instant, counter and name written, and asked for metadata (NULL: none). */
	const struct trace_observer *obs;
	/* Each thread's last X's: a parent that begins with its first child is written 1 ns before it. */
	struct nest_ties ties;
	uint64_t last_x_ts; /* the begin the last X was written with (its flow phases go there) */
	/*
	 * Spans still open written at a --ring dump (trace_model_write_open):
	 * placed among the X's written, not remembered (written again later).
	 * Unfinished X's at the stop are remembered as any X.
	 */
	bool writing_open_spans;
};

/* The JSON text of CTRACE_TRIGGER's args (include/ctrace.h). */
#define CHROME_TRACE_TRIGGER_ARGS "{\"ctrace_trigger\":true}"

void chrome_trace_begin(struct chrome_trace *ct, struct json_writer *w,
			const struct trace_facts *facts);
void chrome_trace_end(struct chrome_trace *ct, const struct trace_facts *facts,
		      const struct trace_stats *stats);
/* A new file's head after chrome_trace_end() (rotation): the context and an empty event list so far. */
void chrome_trace_restart(struct chrome_trace *ct, const struct trace_facts *facts);

/*
 * --ring: events go to ring's stage w, with no frame around them (each
 * dump writes its own): chrome_trace_begin()'s other half.
 */
void chrome_trace_begin_ring(struct chrome_trace *ct, struct json_writer *w,
			     struct flight_recorder *ring);
/* A dump's frame, into a writer of its own: the head, and the end with `events` counted. */
void chrome_trace_write_head(struct json_writer *w, const struct trace_facts *facts);
void chrome_trace_write_end(struct chrome_trace *ct, struct json_writer *w, uint64_t events,
			    const struct trace_facts *facts, const struct trace_stats *stats);

/* A string of the traced program's: untrusted bytes and their CTRACE_STR_* flags. */
struct ct_text {
	const char *s;
	size_t n;
	unsigned flags;
};

/*
 * An argument of one of ctrace's own notices ("ctrace: ..." instants):
 * a trusted key and a value of one of three kinds.
 */
enum ct_arg_kind { CT_ARG_U64, CT_ARG_STR, CT_ARG_DOUBLE };
struct ct_arg {
	const char *key;
	enum ct_arg_kind kind;
	uint64_t u;
	double d;         /* non-finite: written as the strings "NaN", "Infinity" */
	const char *s;    /* untrusted bytes are fine */
	size_t n;
};
#define CT_U64(k, v) ((struct ct_arg){ .key = (k), .kind = CT_ARG_U64, .u = (v) })
#define CT_STR(k, p, len) ((struct ct_arg){ .key = (k), .kind = CT_ARG_STR, .s = (p), .n = (len) })
#define CT_CSTR(k, p) CT_STR(k, p, strlen(p))
#define CT_DOUBLE(k, v) ((struct ct_arg){ .key = (k), .kind = CT_ARG_DOUBLE, .d = (v) })

/*
 * A notice of ctrace's: an "I" named `name`, cat "ctrace", scope `scope`
 * ('g', 'p' or 't'), args {key: value, ...} in the order given.
 */
void chrome_trace_notice(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			 const char *name, char scope, const struct ct_arg *args, size_t n_args);

/* CTRACE_INSTANT: an "I" with scope 'g', 'p' or 't' and the program's args text. */
void chrome_trace_instant(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			  const struct ct_text *name, char scope, const struct ct_text *args);

/*
 * A span on one thread: an "X". Its args are the begin's and the end's
 * texts (either may be empty), merged into one object when both have some.
 */
void chrome_trace_complete(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			   uint64_t dur_ns, const struct ct_text *name,
			   const struct ct_text *begin_args, const struct ct_text *end_args);

/* A span that did not end (the stop, an eviction): an "X", args.unfinished and why. */
void chrome_trace_unfinished(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			     uint64_t dur_ns, const struct ct_text *name,
			     const struct ct_text *args, const char *why);

/* A span ended on another thread: a "b"/"e" pair, cat "ctrace.async", id "0x<id>". */
void chrome_trace_async(struct chrome_trace *ct, uint32_t pid, const struct ct_text *name,
			uint64_t id, uint32_t begin_tid, uint64_t begin_ns,
			const struct ct_text *begin_args, uint32_t end_tid, uint64_t end_ns,
			const struct ct_text *end_args);

/*
 * Flows. The next "X" written (chrome_trace_complete(), _unfinished())
 * carries "bind_id" and "flow_out"/"flow_in": Perfetto binds the flow to
 * that very slice. A flow phase event ("s" out, "f" in, with "bp":"e", cat
 * "ctrace", name "flow"), written right after its X at the X's ts, pid and
 * tid, is what Chrome DevTools binds (by those four); Perfetto binds it to
 * the slice open there, the same one.
 */
void chrome_trace_bind_next(struct chrome_trace *ct, const struct ct_flow_bind *b);
void chrome_trace_flow_phase(struct chrome_trace *ct, char ph, uint32_t pid, uint32_t tid,
			     uint64_t ts_ns, uint64_t id);

/*
 * Events written aside, for the model to put in the file later (a span
 * that took in a flow whose sender's span is not written yet: see
 * trace_flows.h). Between begin and end every event goes into memory;
 * end returns it (malloc()ed, *len bytes; NULL if it did not fit in
 * CHROME_TRACE_ASIDE_MAX, more than a span and its 4096 flow phase events
 * can take). chrome_trace_release() writes such bytes as the next events.
 */
#define CHROME_TRACE_ASIDE_MAX (1u << 20)
void chrome_trace_capture_begin(struct chrome_trace *ct);
char *chrome_trace_capture_end(struct chrome_trace *ct, size_t *len);
void chrome_trace_release(struct chrome_trace *ct, const char *json, size_t len);

/* "M" process_sort_index of pid, or thread_sort_index of tid in pid: args {"sort_index": n}. */
void chrome_trace_sort_index(struct chrome_trace *ct, uint32_t pid, uint32_t tid, bool thread,
			     int64_t n);

/* A counter sample: a "C", args {"value": v}; v is finite. */
void chrome_trace_counter(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			  const struct ct_text *name, double value);

/* Metadata: "process_name" of pid, "thread_name" of tid in pid. */
void chrome_trace_process_name(struct chrome_trace *ct, uint32_t pid, const struct ct_text *name);
void chrome_trace_thread_name(struct chrome_trace *ct, uint32_t pid, uint32_t tid,
			      const struct ct_text *name);

#endif
