/* SPDX-License-Identifier: MIT */
/*
 * trace_event.h - the one typed model of a trace and the encoders behind it.
 *
 * The model (trace_model.c, usdt_model.c) turns decoded probe events into
 * typed trace events and hands each to a fan-out, which hands it to every
 * encoder the user asked for: JSON (chrome_trace.c), Perfetto's protobuf
 * (pftrace_encode.c), the end's summary (trace_summary.c), a test's
 * recording (tests/unit/trace_record.h). No encoder's fields are the
 * model's business, and no encoder reads another's output: what a format
 * needs of its own (the JSON's 1 ns nest_ties shift, its flow phase events'
 * place, Perfetto's interning and tracks) stays inside its encoder.
 *
 * An event's strings are valid only during the call: an encoder that keeps
 * one copies it.
 */
#ifndef CTRACE_TRACE_EVENT_H
#define CTRACE_TRACE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct trace_facts;
struct trace_stats;

/* A string of the traced program's: untrusted bytes and their CTRACE_STR_* flags (16 bytes: in every event). */
struct ct_text {
	const char *s;
	uint32_t n;
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

/* A span's first flow (Perfetto's v2 flows: one bind_id a slice): its trace id and which ways. */
struct ct_flow_bind {
	uint64_t id; /* 0: none */
	bool out, in;
};

enum trace_event_kind {
	/*
	 * A span begun and ended on one thread: ts_ns, dur_ns, name, args (the
	 * begin's) and end_args, stack (the begin's). unfinished: why it did
	 * not end (the stop, an eviction; NULL: it ended); open_at_dump: a
	 * span still open, written for a --ring dump, that goes on (and ends
	 * in a later one). flow: its first flow; every one of its flows
	 * follows it at once as a TE_FLOW_STEP.
	 */
	TE_COMPLETE,
	/*
	 * A span begun on one thread (tid, ts_ns, args, stack) and ended on
	 * another of its process (end_tid, end_ns, end_args, end_stack): an
	 * async pair, id unique in the trace.
	 */
	TE_ASYNC,
	/* The program's instant: scope 'g' (global), 'p' (process) or 't' (thread), args. */
	TE_INSTANT,
	/* One of ctrace's own instants ("ctrace: ..."): name trusted, category "ctrace", notice_args. */
	TE_NOTICE,
	/* A counter's value now (finite). */
	TE_COUNTER,
	/* A flow end of the TE_COMPLETE just before: flow_out ('s': sent) or taken in ('f'), id. */
	TE_FLOW_STEP,
	/* Names: of process pid, of thread tid in pid (name). */
	TE_PROCESS_NAME,
	TE_THREAD_NAME,
	/* sort_index of process pid, or (thread) of thread tid in pid. */
	TE_SORT_INDEX,
};

/*
 * Small (120 bytes), built on every event's way: what only one kind has
 * shares its room with the others' (read a member of the event's own kind
 * only).
 */
struct trace_event {
	enum trace_event_kind kind;
	char scope;          /* TE_INSTANT, TE_NOTICE */
	bool flow_out;       /* TE_FLOW_STEP */
	bool thread;         /* TE_SORT_INDEX */
	bool open_at_dump;   /* TE_COMPLETE */
	unsigned cat;        /* categories.h's id (0 and 1: "ctrace") */
	uint32_t pid, tid;
	uint32_t stack;      /* --stacks: the stack's id in the frames (stack_frames.h); 0: none */
	uint64_t ts_ns, dur_ns;
	uint64_t id;         /* TE_ASYNC: the pair's; TE_FLOW_STEP: the flow's trace id */
	struct ct_text name;
	struct ct_text args, end_args; /* end_args: TE_COMPLETE, TE_ASYNC */
	union {
		struct {                     /* TE_COMPLETE */
			const char *unfinished;
			struct ct_flow_bind flow;
		};
		struct {                     /* TE_ASYNC */
			uint32_t end_tid, end_stack;
			uint64_t end_ns;
		};
		struct {                     /* TE_NOTICE */
			const struct ct_arg *notice_args;
			size_t n_notice_args;
		};
		double value;                /* TE_COUNTER */
		int64_t sort_index;          /* TE_SORT_INDEX */
	};
};

/*
 * An encoder: begun with the facts known at the start, handed every event,
 * ended with what was counted. restart: a new file of the same trace (a
 * rotation, a flight recorder's dump) starts now: the encoder declares
 * again, before the next event, every name and track that file needs.
 * A NULL member is a step the encoder has nothing to do for.
 */
struct trace_encoder {
	void (*begin)(void *ctx, const struct trace_facts *facts);
	void (*event)(void *ctx, const struct trace_event *ev);
	void (*restart)(void *ctx, const struct trace_facts *facts);
	void (*end)(void *ctx, const struct trace_facts *facts, const struct trace_stats *stats);
	void *ctx;
};

/* The encoders the user asked for, each handed every event in turn. */
#define TRACE_ENCODERS_MAX 4
struct trace_fanout {
	struct trace_encoder enc[TRACE_ENCODERS_MAX];
	unsigned n;
};

static inline void trace_fanout_init(struct trace_fanout *f)
{
	f->n = 0;
}

/* 0, or -1 when TRACE_ENCODERS_MAX are there already. */
static inline int trace_fanout_add(struct trace_fanout *f, struct trace_encoder e)
{
	if (f->n == TRACE_ENCODERS_MAX)
		return -1;
	f->enc[f->n++] = e;
	return 0;
}

static inline void trace_emit(const struct trace_fanout *f, const struct trace_event *ev)
{
	for (unsigned i = 0; i < f->n; i++)
		f->enc[i].event(f->enc[i].ctx, ev);
}

static inline void trace_fanout_begin(const struct trace_fanout *f, const struct trace_facts *facts)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->enc[i].begin)
			f->enc[i].begin(f->enc[i].ctx, facts);
}

static inline void trace_fanout_end(const struct trace_fanout *f, const struct trace_facts *facts,
				    const struct trace_stats *stats)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->enc[i].end)
			f->enc[i].end(f->enc[i].ctx, facts, stats);
}

/* One of ctrace's notices (TE_NOTICE), to every encoder. */
static inline void trace_emit_notice(const struct trace_fanout *f, uint32_t pid, uint32_t tid, uint64_t ts_ns,
				     const char *name, char scope, const struct ct_arg *args, size_t n_args)
{
	const struct trace_event ev = {
		.kind = TE_NOTICE, .pid = pid, .tid = tid, .ts_ns = ts_ns, .scope = scope,
		.name = { name, (uint32_t)strlen(name), 0 }, .notice_args = args, .n_notice_args = n_args,
	};

	trace_emit(f, &ev);
}

/* A process's (TE_PROCESS_NAME) or thread's (TE_THREAD_NAME) name, to every encoder. */
static inline void trace_emit_name(const struct trace_fanout *f, enum trace_event_kind kind, uint32_t pid,
				   uint32_t tid, const struct ct_text *name)
{
	const struct trace_event ev = { .kind = kind, .pid = pid, .tid = tid, .name = *name };

	trace_emit(f, &ev);
}

#endif
