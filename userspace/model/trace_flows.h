/* SPDX-License-Identifier: MIT */
/*
 * trace_flows.h - pairs CTRACE_FLOW_OUT(id) with the next CTRACE_FLOW_IN(id)
 * and binds each end to the span that encloses it on its thread. Pure, like
 * the model that owns it (trace_model.c): it reads and writes nothing; what
 * it holds back it hands to the model's callbacks.
 *
 * Why the ends wait: a span is written when it ends (an "X" carries its
 * start and duration), and a CTRACE_SCOPE is only known then, so the span
 * around a flow's end is known only once that span is written. Each end
 * waits on its thread until the first span that ends there after it began
 * before it (spans of a thread nest, so the innermost one ends, and claims
 * it, first). An end no span ever claimed is outside any span: known at the
 * stop, after the spans still open were written as unfinished.
 *
 * Why a span may be held back: Chrome DevTools' engine orders the slices
 * of a flow, and so draws its arrow, in the order the slices come in the
 * file, and drops an "f" read before its "s". A span that took a flow in
 * and ends before the span that sent it (a reply received while the caller
 * still waits) is therefore kept, as the model's typed events, until the
 * sender's span is in the file, then written right after it. At most FLOW_HELD_BYTES
 * are kept; past that the oldest is written at once (counted in
 * metadata.flows.out_of_order: DevTools draws that arrow backwards).
 *
 * The trace's ids: each OUT gets a new one, unique in the trace, never the
 * program's (a program may use an id again once its flow was taken in, and
 * Perfetto keeps the first flow of a bind_id only).
 */
#ifndef CTRACE_TRACE_FLOWS_H
#define CTRACE_TRACE_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_map.h"
#include "model/table_bound.h"

/* One end of a flow, waiting for its span. */
struct flow_end {
	uint64_t ts_ns;
	uint64_t id;       /* the program's */
	uint64_t trace_id; /* the trace's */
	bool out;
};

/* What was counted (metadata.flows). */
struct flow_counts {
	uint64_t sent, taken_in;
	uint64_t never_taken_in;   /* an OUT no IN took (at the stop, or sent again first) */
	uint64_t in_never_sent;    /* an IN with no OUT of its id in flight */
	uint64_t outside_span;     /* an end no span of its thread enclosed */
	uint64_t evicted;          /* past the bounds below: given up (counted, never drawn) */
	uint64_t out_of_order;     /* a receiving span written before its sender's (held too long) */
};

/* An OUT in flight: sent, not taken in yet. */
struct flow_out {
	struct bound_entry e;
	uint64_t id; /* the key */
	uint64_t trace_id, ts_ns;
	uint32_t tgid, tid;
};

/* Where a held span goes when its turn comes: back to the model (held: what it gave trace_flows_written()). */
struct flow_output {
	void (*release)(void *ctx, void *held, size_t len);
	void *ctx;
};

struct held_span;

struct trace_flows {
	struct key_map threads; /* {tgid, tid} -> struct flow_thread *: ends waiting for a span */
	struct key_map outs;    /* program id -> struct flow_out * */
	struct key_map links;   /* trace id -> struct flow_link *: a flow whose receiving span is not in the file */
	struct table_bound b_outs;
	size_t waiting;         /* ends waiting, all threads: 0 makes trace_flows_claim() free */
	uint64_t next_trace_id;
	struct flow_end *claimed; /* what the last trace_flows_claim() returned */
	size_t claimed_cap;
	struct held_span *held_oldest, *held_newest; /* spans held back, in the order written */
	size_t held_bytes;
	struct flow_output out;
	struct flow_counts counts;
};

/* Ends waiting on one thread at most, OUTs in flight at most, spans held back at most (bytes). */
#define FLOW_ENDS_PER_THREAD 4096
#define FLOW_OUTS_BYTES (4u << 20)
#define FLOW_HELD_BYTES (8u << 20)

void trace_flows_init(struct trace_flows *f, const struct flow_output *out);
/*
 * CTRACE_FLOW_OUT(id) on this thread at ts_ns. An OUT of the same id still
 * in flight is given up for this one: copied to *replaced (return true),
 * for the caller to show.
 */
bool trace_flows_out(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		     uint64_t id, struct flow_out *replaced);
/* CTRACE_FLOW_IN(id): false when no OUT of that id is in flight (counted). */
bool trace_flows_in(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		    uint64_t id);
/*
 * A span of this thread that began at begin_ns ends now, and is about to be
 * written: the ends it encloses, taken off the waiting list, in time order
 * (valid until the next call); *n of them. *hold: write it aside (it took
 * in a flow whose sender's span is not in the file yet) and hand it to
 * trace_flows_written().
 *
 * Enclosed: waiting (so recorded before this span's end: a thread's
 * events come in its order) and not before its start. Not by comparing
 * with its end's time: a per-event probe is stamped when its BPF program
 * runs, a CTRACE_SCOPE's end by its TSC at the site, and a FLOW_IN right
 * before the end of a short scope can be stamped after it.
 */
const struct flow_end *trace_flows_claim(struct trace_flows *f, uint32_t tgid, uint32_t tid,
					 uint64_t begin_ns, size_t *n, bool *hold);
/*
 * The span with these ends is written: in the file (held NULL), or held as
 * held, len bytes (taken over, malloc()ed; freed after its release). Spans
 * held for the flows it sent are released through out.release, in order.
 */
void trace_flows_written(struct trace_flows *f, const struct flow_end *ends, size_t n,
			 void *held, size_t len);
/*
 * At the stop, once every span was written: each end still waiting (outside
 * any span) and each OUT still in flight (never taken in), counted and
 * handed to the callbacks to show; spans still held are released. Then
 * frees everything.
 */
void trace_flows_finish(struct trace_flows *f,
			void (*outside)(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e),
			void (*never_in)(void *ctx, const struct flow_out *o), void *ctx);

#endif
