/* SPDX-License-Identifier: MIT */
/*
 * event_merge.h - puts decoded events back in time order before the model
 * sees them.
 *
 * With the batched path (usdt/ctrace_batch.h) a thread's events reach the
 * loader in batches, late and in another order than other threads' (a span
 * begun on one thread may arrive after its end on another). Every event
 * (per-event records too) is held here, its strings copied, and handed on
 * in time order once the watermark passes it: the time up to which every
 * source (the ring buffer, each thread's buffer) is known to be complete
 * (userspace/ingest/batch_path.c computes it).
 *
 * A thread's batched events are already in time order: each stream puts
 * them in a run of its own (a queue, its items back to back in chunks)
 * and the merge compares only the runs' heads, a heap of a few runs, not
 * of every event held. The per-event records, whose order across CPUs is
 * the ring's, go in one heap of events as before. Both hand on by (time,
 * arrival): the same order as one heap of everything.
 */
#ifndef CTRACE_EVENT_MERGE_H
#define CTRACE_EVENT_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include "ingest/record_decode.h"

struct merge_item;
struct merge_run;
struct merge_chunk;

/* The heap holds each item's time next to it: a comparison reads no item but on a tie. */
struct merge_slot {
	uint64_t ts_ns;
	struct merge_item *item;
};

struct event_merge {
	struct merge_slot *heap;  /* a binary min-heap by (ts_ns, arrival) */
	size_t n, cap;
	uint64_t arrivals;        /* ties in time keep their arrival order */
	size_t bytes;             /* held: what the cap below bounds */
	size_t max_bytes;         /* past it, the oldest go out before the watermark */
	uint64_t forced;          /* events handed on early for want of room */
	uint64_t late;            /* events handed on after a later one (out of order in the trace) */
	uint64_t last_out_ts;     /* the latest time handed on */
	void (*release)(void *ctx, const struct ctrace_event *ev);
	void *ctx;
	struct merge_item *free_items; /* handed on, kept for reuse (event_merge.c) */
	struct merge_run **runs;  /* a binary min-heap of the runs holding events, by their heads */
	size_t n_runs, cap_runs;
	struct merge_run *all_runs;    /* every run, to free them */
	struct merge_run *free_runs;   /* emptied runs whose source is over, for new sources */
	struct merge_chunk *free_chunks; /* emptied, kept for reuse (a few) */
	size_t n_free_chunks;
};

void event_merge_init(struct event_merge *m, size_t max_bytes,
		      void (*release)(void *ctx, const struct ctrace_event *ev), void *ctx);
/* Holds a copy of ev (and of its strings). */
void event_merge_push(struct event_merge *m, const struct ctrace_event *ev);
/* What one run takes (its events' chunks aside). */
extern const size_t event_merge_run_bytes;
/* A run for one source whose events come in time order (freed with the merge). */
struct merge_run *event_merge_run(struct event_merge *m);
/* Its source is over: once what it holds is handed on, the run serves another source. */
void event_merge_run_done(struct event_merge *m, struct merge_run *run);
/*
 * Holds a copy of ev (and of its strings) in its run: ev no earlier than
 * the run's last (else it goes in the heap of events, in order all the same).
 */
void event_merge_run_push(struct event_merge *m, struct merge_run *run, const struct ctrace_event *ev);
/* Hands on, in time order, every event stamped at or before `watermark`. */
void event_merge_release(struct event_merge *m, uint64_t watermark);
/* The time of the oldest event held, UINT64_MAX if none. */
uint64_t event_merge_oldest(const struct event_merge *m);
void event_merge_free(struct event_merge *m);

#endif
