/* SPDX-License-Identifier: MIT */
/*
 * trace_model.h - turns decoded probe events into typed trace events
 * (trace_event.h): contexts (markers -> pseudo-processes), thread and
 * process names, counter values per context, span pairing and IDs. Pure:
 * it reads nothing (the facts of processes, such as thread names, are
 * pushed in by the caller, read by proc_info.c) and writes no format: it
 * hands each event to the encoders' fan-out. The letters below are the
 * JSON encoder's (chrome_trace.c) for each typed event.
 *
 * What each probe becomes:
 *   span_begin + span_end, same thread  -> "X" on that thread (a flame chart)
 *   span_begin + span_end, two threads  -> "b"/"e" pair, cat "ctrace.async",
 *                                          a unique "id"
 *   span still open at the stop        -> "X" to the stop, args.unfinished
 *   span_end with no begin             -> "I" "ctrace: span end without begin",
 *                                          or, for a span that may have been
 *                                          begun before the tracer came,
 *                                          counted only (see span_end())
 *   scope (CTRACE_SCOPE's end)         -> "X" on its thread, its start from
 *                                          the TSC ticks it carries
 *   instant                            -> "I" with "s": "g", "p" or "t"
 *   counter_set / counter_add          -> "C", args {"value": v}, no "id"
 *   new_pid                            -> a pseudo-process, "process_name"
 *   discard                            -> forgets the marker
 *   (fork of a followed process)       -> "I" "ctrace: fork" in the parent
 *   (exec of a traced process)         -> "I" "ctrace: exec" and its new name
 *
 * Pseudo-process ids start at CTRACE_PSEUDO_BASE (2^30): above any real pid
 * (the kernel's limit is 2^22) and below 2^31, so every viewer keeps them.
 * Threads inside a pseudo-process get pseudo tids from the same range, named
 * "comm (tid N)": a real tid shown in two processes would make Perfetto end
 * and restart the thread each time the process changed.
 */
#ifndef CTRACE_TRACE_MODEL_H
#define CTRACE_TRACE_MODEL_H

#include "ingest/file_maps.h"
#include "lib/key_map.h"
#include "ingest/literal_cache.h"
#include "ingest/record_decode.h"
#include "model/table_bound.h"
#include "model/trace_event.h"
#include "model/trace_stats.h"
#include "model/trace_flows.h"
#include "ingest/tsc_clock.h"
#include "model/usdt_model.h"

#define CTRACE_PSEUDO_BASE 0x40000000u

/*
 * --max-memory: the tracer's resident memory at most, the ring buffer (-b)
 * aside. RESERVE is what the tracer takes whatever the target does (libbpf
 * and the kernel's BTF, the output buffer, the code); the rest is split
 * between the tables the target can grow (trace_model_limit_memory()).
 */
#define TRACE_MEMORY_DEFAULT (128ull << 20)
#define TRACE_MEMORY_RESERVE (24ull << 20)
#define TRACE_MEMORY_MIN (32ull << 20)

struct trace_model {
	struct trace_fanout *out; /* every event goes to each of its encoders */
	struct trace_stats *stats;
	unsigned cat; /* the category (categories.h) of the event being modelled */
	struct key_map contexts; /* {tgid, marker} -> struct context * */
	struct key_map threads;  /* {shown pid, real tid} -> struct shown_thread * */
	struct key_map procs;    /* {real pid} -> (void *)1 once named */
	struct key_map counters; /* {context pid, name} -> double * */
	struct key_map spans;    /* {tgid, span address} -> struct open_span * */
	struct key_map names;    /* {tgid, tid} -> thread name (malloc'd) the caller told */
	struct key_map ended;    /* {tgid, span address} -> (void *)1: ended, not begun since */
	struct key_map from_start; /* {tgid} -> (void *)1: traced since its image started */
	const struct tsc_clock *tsc; /* for CTRACE_SCOPE; NULL: scopes have no start */
	uint32_t next_pseudo;
	uint32_t last_tgid, last_tid; /* the real thread named last (0: none) */
	/*
	 * The real thread of the last event shown in a pseudo-process: seen,
	 * though not shown in its own process. Without it each event of a
	 * thread that only ever sends to a pseudo-process would have its name
	 * read from /proc again (a flood of them outran the ring). Emptied
	 * with shown_recently.
	 */
	uint32_t pseudo_tgid, pseudo_tid;
	/*
	 * Real threads shown in their own process, {tgid, tid} by tid's low
	 * bits, for trace_model_shows_thread(), asked before each event: the
	 * few threads of a busy process take no lookup. Emptied when a thread
	 * is forgotten.
	 */
	uint64_t shown_recently[8];
	uint64_t next_async_id;
	uint64_t now_ns;   /* the time of the event being modelled (for eviction notices) */
	uint32_t now_tgid; /* and its process */
	uint32_t exec_pid; /* the process trace_model_exec_name() named (0: none) */
	size_t exec_name_len;
	char exec_name[32];
	/* The bounds of the tables above (trace_model_limit_memory()). */
	struct table_bound b_spans, b_counters, b_contexts, b_threads, b_names, b_procs,
		b_from_start, b_ended;
	struct trace_flows flows; /* CTRACE_FLOW_OUT/IN, bound to their spans */
	struct usdt_model *usdt;  /* --usdt's probes (usdt_model.h); NULL: none asked for */
	/*
	 * The kernel tells every rename (task_rename records): /proc's looks
	 * then only name threads the model has no name for, so that a rename
	 * is shown once, by its record, whenever /proc is looked at.
	 */
	bool renames_told;
};

void trace_model_init(struct trace_model *m, struct trace_fanout *out,
		      struct trace_stats *stats);
/*
 * Splits max_memory (bytes, the ring buffer aside) between the tables the
 * traced process can grow: the model's and, when given, the literal
 * cache's, the file maps' and the batched path's streams (batch_path.h);
 * their evictions are shown in the trace and counted in metadata.
 * Without this call the model keeps to TRACE_MEMORY_DEFAULT.
 */
void trace_model_limit_memory(struct trace_model *m, uint64_t max_memory,
			      struct literal_cache *literals, struct file_maps *files,
			      struct table_bound *batch_streams);
/*
 * Facts about processes, pushed in by the caller (process_facts.c reads
 * them through proc_info.c) before the events that need them.
 *
 * Thread `tid` of process `tgid` is named `name` now. Said of every thread
 * of a target every 100 ms or so (events are decoded in batches, and a
 * thread may be gone by the time its first event is, taking its name in
 * /proc with it) and before the first event of a thread not shown yet. A
 * thread shown under another name is named again (it was renamed), unless
 * renames_told: its rename record names it.
 */
void trace_model_thread_name(struct trace_model *m, uint32_t tgid, uint32_t tid,
			     const char *name, size_t len);
/*
 * After its exec, process `pid` is named `name`: said right before the
 * exec record is given to trace_model_event(), which renames the process.
 */
void trace_model_exec_name(struct trace_model *m, uint32_t pid, const char *name, size_t len);
/* What the model has: a name for the thread; the thread, or the process, shown in the trace. */
bool trace_model_knows_thread(const struct trace_model *m, uint32_t tgid, uint32_t tid);
bool trace_model_shows_thread_lookup(const struct trace_model *m, uint32_t tgid, uint32_t tid);
/* Inline: asked before every event, and most often of the thread of the last one. */
static inline bool trace_model_shows_thread(const struct trace_model *m, uint32_t tgid,
					    uint32_t tid)
{
	if ((tgid == m->last_tgid && tid == m->last_tid) ||
	    (tgid == m->pseudo_tgid && tid == m->pseudo_tid))
		return true;
	if (m->shown_recently[tid % 8] == ((uint64_t)tgid << 32 | tid))
		return true;
	return trace_model_shows_thread_lookup(m, tgid, tid);
}
bool trace_model_shows_process(const struct trace_model *m, uint32_t pid);
/*
 * Process `pid` is traced from its first instruction (launch mode): none
 * of its spans can have begun before the tracer came. Followed children
 * are so too (the fork record says). A new image after an exec is not: its
 * probes are attached a moment after it started.
 */
void trace_model_traced_from_start(struct trace_model *m, uint32_t pid);
/*
 * Names a real process in the trace (process_name metadata) once, with the
 * name of its main thread the model was told, else "process PID".
 */
void trace_model_add_process(struct trace_model *m, uint32_t pid);
void trace_model_event(struct trace_model *m, const struct ctrace_event *ev);
/*
 * Says in the trace, where it happened, that the ring buffer lost `lost`
 * records (a global instant "ctrace: events dropped" on the process).
 */
void trace_model_drops(struct trace_model *m, uint32_t pid, uint64_t ts_ns,
		       uint64_t lost, uint64_t total);
/*
 * --ring's dump: every span open now written as unfinished (to the last
 * event modelled, at most now_ns),
 * without its flows, and kept open: it ends in a later dump. The count.
 */
uint64_t trace_model_write_open(struct trace_model *m, uint64_t now_ns);
/* Closes every open span at stop_ns (marked unfinished) and frees all. */
void trace_model_finish(struct trace_model *m, uint64_t stop_ns);

#endif
