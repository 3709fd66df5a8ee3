/* SPDX-License-Identifier: MIT */
/*
 * usdt_model.h - what the hits of --usdt's probes (usdt_spec.h) become in
 * the trace: an instant per hit of an instant's probe; a span ("X") per
 * begin and end of a span's probes on one thread, nested pairs nested. The
 * arguments are written with their types: the record's values and strings
 * are put in the typed args' format (usdt/ctrace_args.h), so that they go
 * out as CTRACE_INSTANT_ARGS's do (typed_args.c): as typed events (trace_event.h).
 *
 * What cannot be paired is counted, in metadata.usdt: an end with no begin
 * (its begin came before the attach), a begin still open at the stop
 * (written unfinished, as ctrace's own spans are).
 */
#ifndef CTRACE_USDT_MODEL_H
#define CTRACE_USDT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_map.h"
#include "ingest/record_decode.h"
#include "attach/usdt_spec.h"

struct json_writer;
struct trace_fanout;

/* Open spans at most (all threads): a target that only begins cannot grow the loader past it. */
#define USDT_OPEN_MAX 65536
#define USDT_DEPTH_MAX 1024

struct usdt_spec_counts {
	uint64_t hits;               /* records of its probes */
	uint64_t spans;              /* pairs written */
	uint64_t ends_without_begin; /* their begin was before the attach, or never fired */
	uint64_t unfinished;         /* open at the stop */
	uint64_t begins_not_kept;    /* past USDT_DEPTH_MAX or USDT_OPEN_MAX: counted, not shown */
	uint64_t begins_not_ended;   /* an end of an outer begin came first (its own end never fired) */
};

struct usdt_model {
	const struct usdt_specs *specs;
	struct key_map stacks; /* {tgid, tid, spec} -> struct usdt_stack * */
	size_t open;           /* spans open, all stacks */
	struct usdt_spec_counts spec[USDT_SPECS_MAX];
	uint64_t unknown_records;     /* a cookie no probe of ours has */
	uint64_t unreadable_values;   /* arguments libbpf could not read */
	uint64_t unreadable_strings;  /* strings the probe could not read (shown "(unreadable)") */
	uint64_t cut_strings;         /* longer than CTRACE_USDT_STR_MAX */
	uint64_t strings_without_room; /* the record was full */
	/* Said at the finish (stderr and metadata): a begin probe that does not fire for every call. */
	char warning[400];
	unsigned cat; /* the category of the events written now (the model's, trace_model.c) */
};

void usdt_model_init(struct usdt_model *um, const struct usdt_specs *specs);
/*
 * One USDT record, shown on thread `tid` of process `pid` (resolved by the
 * model). When its spec names the thread it fired on (,thread=ARGn: the
 * JVM's thread__start), that name in *name (into the record's bytes), else
 * *name_len 0.
 */
void usdt_model_event(struct usdt_model *um, const struct trace_fanout *out, unsigned cat, uint32_t pid, uint32_t tid,
		      const struct ctrace_event *ev, const char **name, size_t *name_len);
/* Writes the spans still open (unfinished, ending at stop_ns), says what is wrong, frees. */
void usdt_model_finish(struct usdt_model *um, const struct trace_fanout *out, unsigned cat, uint64_t stop_ns);
/* ,"usdt":{...} of metadata. */
void usdt_model_write_metadata(const struct usdt_model *um, struct json_writer *w);

#endif
