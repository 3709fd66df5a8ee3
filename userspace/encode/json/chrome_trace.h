/* SPDX-License-Identifier: MIT */
/*
 * chrome_trace.h - the JSON encoder: writes the Chrome Trace Event JSON
 * document, its frame, every event and every fragment of one, from the
 * model's typed events (trace_event.h; chrome_trace_encoder()). Nothing
 * else writes trace JSON.
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
#include "encode/json/json_writer.h"
#include "model/trace_event.h"
#include "model/trace_stats.h"
#include "attach/kernel_features.h"
#include "encode/json/nest_ties.h"
#include "lib/proc_info.h"
#include "model/table_bound.h"
#include "model/trace_flows.h"
#include "ingest/stack_frames.h"
#include "ingest/stack_trace.h"
#include "encode/trace_observer.h"

struct usdt_model;
struct trace_rotation;

struct flight_recorder;

struct chrome_trace {
	struct json_writer *w;
	bool first_event;
	uint64_t events;
	/*
	 * --stacks: the frames (NULL: none; the session sets them after
	 * chrome_trace_begin), and the stack of the event being written
	 * (sf_end: an async pair's end): its "sf" and its args.stack.
	 */
	const struct stack_frames *frames;
	uint32_t sf, sf_end;
	/*
	 * The category (categories.h's number; 0 and 1: "ctrace") of the
	 * program's event being written.
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
/* The encoder (trace_event.h) of a begun chrome_trace: its events and its end. */
struct trace_encoder chrome_trace_encoder(struct chrome_trace *ct);
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
 * For encoders of other formats, the JSON's own renderings: an event's args
 * (,"args":{...} or nothing; end: an async pair's end's), a name as a JSON
 * string, and whether a name is written as its bytes as they are.
 */
void chrome_trace_args_json(struct chrome_trace *ct, struct json_writer *w, const struct trace_event *ev, bool end);
void chrome_trace_name_json(struct json_writer *w, const struct ct_text *name);
bool chrome_trace_name_plain(const struct ct_text *name);
/* Args the JSON writes as the program's object text itself (most with args, no stack): that text, *len bytes. */
bool chrome_trace_args_plain(const struct ct_text *t, const char **obj, size_t *len);

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
