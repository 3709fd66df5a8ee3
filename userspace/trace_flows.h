/* SPDX-License-Identifier: MIT */
/*
 * trace_flows.h - pairs CTRACE_FLOW_OUT(id) with the next CTRACE_FLOW_IN(id)
 * and binds each end to the span that encloses it on its thread. Pure, like
 * the model that owns it (trace_model.c): it reads and writes nothing.
 *
 * Why the ends wait: a span is written when it ends (an "X" carries its
 * start and duration), and a CTRACE_SCOPE is only known then, so the span
 * around a flow's end is known only once that span is written. Each end
 * waits on its thread until the first span written there contains it in
 * time (spans of a thread nest, so the innermost one ends, and claims it,
 * first). An end no span ever claimed is outside any span: known at the
 * stop, after the spans still open were written as unfinished.
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
#include "key_map.h"
#include "table_bound.h"

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
};

/* An OUT in flight: sent, not taken in yet. */
struct flow_out {
	struct bound_entry e;
	uint64_t id; /* the key */
	uint64_t trace_id, ts_ns;
	uint32_t tgid, tid;
};

struct trace_flows {
	struct key_map threads; /* {tgid, tid} -> struct flow_thread *: ends waiting for a span */
	struct key_map outs;    /* program id -> struct flow_out * */
	struct key_map links;   /* trace id -> struct flow_link *: a flow whose 'f' is not written yet */
	struct table_bound b_outs;
	size_t waiting;         /* ends waiting, all threads: 0 makes trace_flows_claim() free */
	uint64_t next_trace_id;
	struct flow_end *claimed; /* what the last trace_flows_claim() returned */
	size_t claimed_cap;
	struct flow_counts counts;
};

/* Ends waiting on one thread at most, and OUTs in flight at most (bytes). */
#define FLOW_ENDS_PER_THREAD 4096
#define FLOW_OUTS_BYTES (4u << 20)

void trace_flows_init(struct trace_flows *f);
/*
 * CTRACE_FLOW_OUT(id) on this thread at ts_ns. An OUT of the same id still
 * in flight is given up for this one: copied to *replaced (return true),
 * for the caller to show; so is one evicted for room.
 */
bool trace_flows_out(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		     uint64_t id, struct flow_out *replaced);
/* CTRACE_FLOW_IN(id): false when no OUT of that id is in flight (counted). */
bool trace_flows_in(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		    uint64_t id);
/*
 * A span of this thread from begin_ns to end_ns is written: the ends it
 * encloses, taken off the waiting list, in time order (valid until the
 * next call); *n of them.
 */
const struct flow_end *trace_flows_claim(struct trace_flows *f, uint32_t tgid, uint32_t tid,
					 uint64_t begin_ns, uint64_t end_ns, size_t *n);
/*
 * The claimed ends are bound to the span written at x_ts_ns, shown as
 * pid/tid: each as a flow phase event ('s' for an OUT, 'f' for an IN, at
 * the span's ts, for Chrome DevTools, which binds them to the span by ts,
 * pid, tid and cat, and reads them in file order), handed to `phase`. An
 * 'f' whose 's' is not written yet (its span ends later) waits for it.
 */
void trace_flows_bind(struct trace_flows *f, const struct flow_end *ends, size_t n,
		      uint32_t pid, uint32_t tid, uint64_t x_ts_ns,
		      void (*phase)(void *ctx, char ph, uint32_t pid, uint32_t tid, uint64_t ts_ns,
				    uint64_t trace_id),
		      void *ctx);
/*
 * At the stop, once every span was written: each end still waiting (outside
 * any span) and each OUT still in flight (never taken in), counted and
 * handed to the callbacks to show; then frees everything.
 */
void trace_flows_finish(struct trace_flows *f,
			void (*outside)(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e),
			void (*never_in)(void *ctx, const struct flow_out *o), void *ctx);

#endif
