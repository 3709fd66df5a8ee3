/* SPDX-License-Identifier: MIT */
/*
 * pftrace_encode.h - the Perfetto protobuf encoder (-o FILE.pftrace,
 * --format perfetto): the model's typed events (trace_event.h) written as
 * TracePackets the way Perfetto's SDK writes them, one sequence, its
 * incremental state cleared in its first packet: a track descriptor for
 * each process, thread, counter and async track the first time it is
 * used; event names, categories and annotation keys interned (each
 * string's interned_data in the packet that first uses it); TrackEvent
 * SLICE_BEGIN/SLICE_END, INSTANT and COUNTER, flows as flow_ids. No JSON is
 * parsed on an event's way, and none is written, but for the args of an
 * event that has some: they are the JSON's (chrome_trace_args_json()) read
 * into debug annotations, so that both formats say the same.
 *
 * The mapping is pftrace.h's, so that pftrace_read.c (report, the tests)
 * reads either writer's files. Each packet goes to the writer whole (a
 * killed tracer leaves whole packets: jw_packets()). A span and its first
 * child that begin at the same nanosecond are told apart as the JSON does
 * (nest_ties.h): Perfetto closes the slice begun last.
 */
#ifndef CTRACE_PFTRACE_ENCODE_H
#define CTRACE_PFTRACE_ENCODE_H

#include <stdbool.h>
#include <stdint.h>
#include "encode/json/json_writer.h"
#include "encode/perfetto/pftrace.h"
#include "model/trace_event.h"

struct pftrace_encoder;

/* A new encoder writing to w (its bytes: packets; w is the caller's); NULL: out of memory. */
struct pftrace_encoder *pftrace_encoder_new(struct json_writer *w);
/* begin, event and end (the metadata as the last packet) over it; its events counted as the JSON counts them. */
struct trace_encoder pftrace_encoder(struct pftrace_encoder *e);
uint64_t pftrace_encoder_events(const struct pftrace_encoder *e);
void pftrace_encoder_free(struct pftrace_encoder *e);

#endif
