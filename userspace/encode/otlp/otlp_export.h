/* SPDX-License-Identifier: MIT */
/*
 * otlp_export.h - --otlp URL and -o FILE.otlp.json: the trace as
 * OpenTelemetry data, fed by the same calls that write the JSON trace (a
 * trace_observer, chrome_trace.h).
 *
 *   spans     one per "X" (and per async pair: no parent); trace id per
 *             process (host, pid, the process's start), span id a hash of
 *             the process's trace id, the thread, begin, end and name, so
 *             every span has one stable id. The parent is the tightest
 *             span of the same thread that encloses it: spans come at
 *             their end, children before their parent, so a span waits
 *             (per thread) until an enclosing one ends, at most
 *             OTLP_HOLD_NS of trace time, OTLP_PENDING_MAX spans on its
 *             thread or OTLP_WAITING_MAX on all; then it goes out as a root.
 *   instants  an event of the tightest span of their thread enclosing them
 *             (waiting the same way), else a span of no length of their own.
 *   counters  a gauge data point each.
 *   resource  host.name, service.name, process.pid, process.executable.*,
 *             ctrace.process_name: one per traced (or pseudo-) process.
 *
 * Times: the trace's CLOCK_MONOTONIC ns plus CLOCK_REALTIME - CLOCK_MONOTONIC
 * taken once at the start (trace_facts), as OTLP wants unix-epoch ns.
 */
#ifndef CTRACE_OTLP_EXPORT_H
#define CTRACE_OTLP_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/key_map.h"
#include "encode/otlp/otlp_send.h"
#include "encode/trace_observer.h"

struct trace_facts;
struct proc_facts;

#define OTLP_HOLD_NS (5ull * 1000000000ull)
#define OTLP_PENDING_MAX 4096      /* spans, and instants, waiting on one thread */
#define OTLP_WAITING_MAX 65536     /* spans and instants waiting on all threads: the memory it takes */
#define OTLP_BATCH_SPANS 1024      /* a request at most, before it is sent */
#define OTLP_BATCH_BYTES (1u << 20)
#define OTLP_BATCH_NS 1000000000ull /* a request waits this long at most for more */

struct otlp_export {
	struct trace_observer obs;
	struct otlp_sender sender;
	const char *where;      /* the URL, or the file */
	bool to_file;
	bool created;           /* the file is new (removed if tracing never starts) */
	uint64_t wall_minus_mono; /* ns, taken once at the start */
	char host[256];
	const struct proc_facts *target; /* the first target's facts, read at the start */
	struct key_map procs, threads;
	uint64_t now_ns;        /* the latest event's time */
	uint64_t batch_spans, batch_points, batch_start_ns;
	size_t batch_bytes;
	/* Counted as made (sent or dropped: otlp_counts). */
	uint64_t spans, span_events, points;
	uint64_t parents_not_waited; /* spans and instants sent before they waited their time (a bound) */
	uint64_t waiting;            /* spans and instants waiting, on all threads */
	bool finished;
	struct otlp_counts final;
};

/* Opens the file (-o FILE.otlp.json) or takes the URL: 0, or -errno having said why. */
int otlp_export_open(struct otlp_export *x, const char *url, const char *file);
/* Starts the sender; facts gives the clocks' offset. 0, or -errno having said why. */
int otlp_export_start(struct otlp_export *x, const struct trace_facts *facts);
/* From the loop, every 50 ms or so (CLOCK_MONOTONIC): spans done waiting go, a batch old enough goes. */
void otlp_export_tick(struct otlp_export *x, uint64_t now_ns);
/* Everything left goes out (OTLP_DRAIN_MS at most), the sender stops: before the JSON's metadata. */
void otlp_export_finish(struct otlp_export *x);
/* The end's line on stderr: always when something was dropped, else unless quiet. */
void otlp_export_report(const struct otlp_export *x, bool quiet);
/* Frees; remove: the file this run created goes (tracing never started). */
void otlp_export_close(struct otlp_export *x, bool remove);

/* "FILE.otlp.json": -o writes OTLP JSON lines. */
bool otlp_export_path_is_file(const char *path);

#endif
