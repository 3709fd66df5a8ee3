/* SPDX-License-Identifier: MIT */
/*
 * batch_path.h - the loader's side of the batched path (usdt/ctrace_batch.h).
 *
 * A thread's events come as copies of its buffer: BATCH records (its own
 * flushes, or the kernel side's copy when it dies or execs) and the
 * loader's own reads of an idle thread's buffer (process_vm_readv, every
 * 100 ms and at the stop). Each buffer is one stream {tgid, tid, buffer}
 * numbered by the thread: an event numbered below what was taken is a
 * duplicate (dropped, counted), a number skipped is an event lost (counted
 * in dropped_events). The events, converted to CLOCK_MONOTONIC
 * (tsc_clock.c) with their literal strings resolved (read_str below),
 * join the per-event records in event_merge.c, which hands them to the
 * model in time order behind the watermark: the time up to which the ring
 * and every live stream are known to be complete.
 */
#ifndef CTRACE_BATCH_PATH_H
#define CTRACE_BATCH_PATH_H

/* The merge holds at most this much before it hands on early (counted); test_flood's bound too. */
#define MERGE_MAX_BYTES (8u << 20)

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ingest/event_merge.h"
#include "lib/key_map.h"
#include "encode/json/chrome_trace.h"
#include "model/table_bound.h"
#include "ingest/tsc_clock.h"

struct batch_path {
	bool on;                      /* --no-batch: off, every record goes straight on */
	struct key_map streams;       /* {tgid, tid, buffer, born} -> struct batch_stream * */
	struct table_bound bound;     /* the streams' share of --max-memory */
	struct key_map forks;         /* child tgid -> CLOCK_MONOTONIC ns of its fork */
	struct key_map anchors;       /* {tgid, dev, inode} -> struct batch_anchor *: each object's list of buffers */
	uint64_t dropped_walked;      /* the kernel side's dropped batches when the lists were last walked */
	/*
	 * Literals of batched events, {tgid, address} -> struct batch_literal *,
	 * read from the mapped file first (the snapshot of file_maps.c: still
	 * right after a dlclose() unmapped them), forgotten when the process's
	 * objects change (dlopen, dlclose, exec) as the BPF side's epochs are.
	 */
	struct key_map literal_copies;
	/*
	 * The copies used last, by a hash of {tgid, address}: a program's
	 * events name a few literals over and over, and a lookup in
	 * literal_copies (hashing the key, probing) per event was a tenth of
	 * the batched path's time. An entry counts only while literal_gen is
	 * what it was when the entry was made: it moves on whenever a copy
	 * is freed.
	 */
	struct batch_literal_hot {
		uint64_t key[2];
		struct batch_literal *l;
		uint64_t gen;
	} literal_hot[256];
	uint64_t literal_gen;
	/*
	 * Reads a string of the process as the per-event path's late reads do
	 * (cmd_trace.c: the process's memory while its objects are as at the
	 * point of the ring being read, else the file of that epoch's
	 * snapshot, else nothing): true with *s and *len set.
	 */
	bool (*read_str)(void *ctx, const struct ctrace_event *ev, int arg, const char **s,
			 size_t *len, bool *truncated, char *buf, size_t max);
	void *read_ctx;
	struct event_merge merge;
	const struct tsc_clock *tsc;
	struct trace_stats *stats;
	const uint64_t *stop_ns;      /* 0 while tracing */
	uint64_t start_ns;            /* the trace's start: older events are an earlier trace's */
	uint64_t ring_ns;             /* per-event records stamped before it are all in */
	uint64_t next_read_ns;        /* the next look at idle buffers */
	size_t read_cursor;           /* where in `streams` this look goes on */
	uint64_t lost;                /* events numbered but never seen: in dropped_events */
	uint64_t unread_at_stop;      /* buffers of live threads the stop could not read (remote_read.h) */
	bool stopping;                /* batch_path_stop() under way */
	bool offline;                 /* a conversion: no process is read, every copy comes from the capture */
	/*
	 * A capture (session_capture.c): each copy the loader reads of a
	 * buffer, and each buffer adopted, handed to these as they come,
	 * undecoded; the streams kept by their headers' numbers alone.
	 */
	void (*copy_out)(void *ctx, uint32_t tgid, uint32_t tid, uint64_t buf, const void *bytes, size_t n,
			 uint64_t read_ns, bool final, bool stopping);
	void (*adopt_out)(void *ctx, uint32_t tgid, uint64_t buf, const void *header, uint64_t now);
	void *copy_ctx;
	uint64_t captured;            /* a capture: hits numbered in the copies taken (the status line's) */
};

void batch_path_init(struct batch_path *bp, bool on, const struct tsc_clock *tsc,
		     struct trace_stats *stats,
		     const uint64_t *stop_ns, uint64_t start_ns,
		     void (*model)(void *ctx, const struct ctrace_event *ev), void *ctx);
/*
 * A buffer the process had before this trace (batch_discover.c), 64 bytes
 * of its header read at `now`: its stream is read from the next look on.
 */
/*
 * The buffers a process had before this trace (usdt/ctrace_batch.h: a
 * thread announces its buffer once, when it takes it): each object's list
 * of them is at `addr` (batch_discover.c), walked now, again when the
 * kernel side dropped batches since the last walk (`batches_dropped`, its
 * count: an announcement may have been one of them), and all of them
 * before the last read at the stop.
 */
bool batch_path_has_anchor(const struct batch_path *bp, uint32_t tgid, uint64_t dev, uint64_t inode);
void batch_path_add_anchor(struct batch_path *bp, uint32_t tgid, uint64_t dev, uint64_t inode, uint64_t addr,
			   uint64_t now);
void batch_path_rediscover(struct batch_path *bp, uint64_t batches_dropped, bool all, uint64_t now);
/*
 * A buffer of the process (the walk's), 64 bytes of its header read at
 * `now`: its stream is read from the next look on.
 */
void batch_path_adopt(struct batch_path *bp, uint32_t tgid, uint64_t buf, const void *header, uint64_t now);
/* A ring record: true if it was a BATCH record (taken here), false for any other. */
bool batch_path_record(struct batch_path *bp, const void *data, size_t size);
/*
 * A BATCH record left unread at the stop (the drain ran out of time): its
 * events not taken before are counted lost. True if it was one.
 */
bool batch_path_count_unread(struct batch_path *bp, const void *data, size_t size);
/* A decoded per-event or process record, its strings resolved: into the merge. */
void batch_path_push(struct batch_path *bp, const struct ctrace_event *ev);
/*
 * The loop's chore: every 100 ms reads idle buffers; then hands on what
 * the watermark passed. ring_drained_at: when the last round that emptied
 * the ring began (0: none yet).
 */
void batch_path_tick(struct batch_path *bp, uint64_t now, uint64_t ring_drained_at);
/*
 * At the stop, before the probes detach: takes what the ring holds, then
 * reads every buffer whole (again while a flush was on its way), so that
 * every event up to the stop is in; what a stream numbers after that is
 * after the stop (the detach may lose it: not counted as lost).
 */
void batch_path_stop(struct batch_path *bp, void (*consume)(void *ctx), void *ctx);
/*
 * At the stop, the probes detached and the ring drained: reads every
 * buffer a last time, counts what the kernel side saw numbered and never
 * arrived (batch_threads_fd: the BPF map), hands everything on.
 */
void batch_path_finish(struct batch_path *bp, int batch_threads_fd);
void batch_path_free(struct batch_path *bp);

/* One entry of the kernel side's table of threads' buffers (count_unseen), as a capture keeps it. */
struct batch_unseen {
	uint64_t pid_tgid, buf, seq_end, inherited;
};
/* The kernel side's table (the BPF map fd) read into *out (malloc'd; as many as memory allowed): its length. */
size_t batch_path_read_unseen(int fd, struct batch_unseen **out);
/* A conversion: a copy the capture's loader read (copy_out), taken as it was then. */
void batch_path_copy(struct batch_path *bp, uint32_t tgid, uint32_t tid, uint64_t buf, const void *bytes,
		     size_t n, uint64_t read_ns, bool final, bool stopping);
/* batch_path_finish() of a conversion: the table's entries from the capture, not from the BPF map. */
void batch_path_finish_with(struct batch_path *bp, const struct batch_unseen *v, size_t n);

#endif
