// SPDX-License-Identifier: MIT
#include "model/usdt_model.h"
#include "encode/json/chrome_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "encode/json/args_json.h"
#include "ingest/typed_args.h"
#include "lib/categories.h"
#include "ctrace_record.h"
#include "encode/flight_recorder.h"
#include "encode/json/json_check.h"
#include "ingest/record_decode.h"
#include "io/trace_rotation.h"

static void write_iso_time(struct json_writer *w, uint64_t wall_ns)
{
	char buf[64];
	time_t secs = wall_ns / 1000000000ull;
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%09lluZ",
		 (unsigned long long)(wall_ns % 1000000000ull));
	jw_str(w, buf, strlen(buf), NULL);
}

static void write_kv_str(struct json_writer *w, const char *key, const char *v,
			 bool comma)
{
	if (comma)
		jw_lit(w, ",");
	jw_str(w, key, strlen(key), NULL);
	jw_lit(w, ":");
	jw_str(w, v, strlen(v), NULL);
}

static void write_kv_bool(struct json_writer *w, const char *key, bool v)
{
	jw_lit(w, ",");
	jw_str(w, key, strlen(key), NULL);
	jw_lit(w, v ? ":true" : ":false");
}

/* Which BPF programs ran, and what the kernel offered (bpf_load.c). */
static void write_programs(struct json_writer *w, const struct trace_facts *f)
{
	if (!f->program_set)
		return;
	write_kv_str(w, "program_set", f->program_set, true);
	write_kv_bool(w, "program_set_forced", f->program_set_forced);
	write_kv_str(w, "program_set_why", f->program_set_why ? f->program_set_why : "", true);
	write_kv_str(w, "probe_links", f->probe_links, true);
	write_kv_bool(w, "bpf_cookies", f->bpf_cookies);
	write_kv_bool(w, "fast_nop5", f->fast_nop5);
	write_kv_bool(w, "thread_renames_watched", f->renames_told);
	jw_lit(w, ",\"kernel_features\":{");
	for (int i = 0; i < KERNEL_FEATURE_COUNT; i++) {
		const struct kernel_feature *k = &f->kernel_features[i];

		if (i)
			jw_lit(w, ",");
		jw_str(w, k->name, strlen(k->name), NULL);
		jw_lit(w, k->present ? ":true" : ":false");
	}
	jw_lit(w, "}");
}

static void write_kv_u64(struct json_writer *w, const char *key, uint64_t v)
{
	jw_lit(w, ",");
	jw_str(w, key, strlen(key), NULL);
	jw_lit(w, ":");
	jw_u64(w, v);
}

/* The facts shared by "context" and "metadata", without the braces. */
static void write_facts(struct json_writer *w, const struct trace_facts *f)
{
	const struct proc_facts *t = f->target;

	write_kv_str(w, "tracer", "ctrace-bpf", false);
	write_kv_str(w, "tracer_version", f->tracer_version, true);
	write_kv_str(w, "clock", "CLOCK_MONOTONIC", true);
	write_kv_str(w, "ts_unit", "us", true);
	jw_lit(w, ",\"trace_start_wall_time\":");
	write_iso_time(w, f->start_wall_ns);
	write_kv_u64(w, "trace_start_wall_ns", f->start_wall_ns);
	write_kv_u64(w, "trace_start_monotonic_ns", f->start_mono_ns);
	jw_lit(w, ",\"target\":{\"pid\":");
	jw_u64(w, (uint64_t)t->pid);
	write_kv_u64(w, "pid_in_namespace", (uint64_t)t->ns_pid);
	write_kv_str(w, "comm", t->comm, true);
	write_kv_str(w, "exe", t->exe, true);
	write_kv_str(w, "cwd", t->cwd, true);
	jw_lit(w, ",\"cmdline\":[");
	for (size_t off = 0, i = 0; t->cmdline && off < t->cmdline_len; i++) {
		size_t len = strnlen(t->cmdline + off, t->cmdline_len - off);

		if (i)
			jw_lit(w, ",");
		jw_str(w, t->cmdline + off, len, NULL);
		off += len + 1;
	}
	jw_lit(w, "]");
	write_kv_u64(w, "start_boottime_ns", t->start_boottime_ns);
	write_kv_u64(w, "start_monotonic_ns", f->target_start_mono_ns);
	jw_lit(w, ",\"start_wall_time\":");
	write_iso_time(w, f->target_start_wall_ns);
	jw_lit(w, "}");
}

void chrome_trace_begin(struct chrome_trace *tf, struct json_writer *w,
			const struct trace_facts *facts)
{
	tf->w = w;
	tf->first_event = true;
	tf->events = 0;
	tf->frames = NULL; /* --stacks: the session sets them after */
	tf->sf = tf->sf_end = 0;
	tf->cat = 0;
	tf->bind.id = 0;
	tf->writing_open_spans = false;
	tf->rot = NULL;     /* --max-size: the session sets it after */
	tf->obs = NULL;     /* --otlp: the caller sets it after */
	memset(tf->ids, 0, sizeof(tf->ids));
	chrome_trace_restart(tf, facts);
}

void chrome_trace_restart(struct chrome_trace *tf, const struct trace_facts *facts)
{
	struct json_writer *w = tf->w;

	tf->first_event = true;
	tf->events = 0;
	/* A new file: every thread's first event in it misses the cache (trace_rotation_first_in_file()). */
	memset(tf->ids, 0, sizeof(tf->ids));
	nest_ties_init(&tf->ties); /* and a span's children in the file before are not in this one */
	tf->ts.len = 0;
	tf->event_start = w->buf;
	tf->ring = NULL;
	chrome_trace_write_head(w, facts);
}

void chrome_trace_write_head(struct json_writer *w, const struct trace_facts *facts)
{
	jw_lit(w, "{\"context\":{");
	write_facts(w, facts);
	jw_lit(w, "},\n\"traceEvents\":[\n");
}

void chrome_trace_begin_ring(struct chrome_trace *tf, struct json_writer *w,
			     struct flight_recorder *ring)
{
	tf->w = w;
	tf->first_event = false; /* every event after ",\n": a dump may start at any one */
	tf->events = 0;
	tf->frames = NULL;
	tf->sf = tf->sf_end = 0;
	tf->cat = 0;
	tf->bind.id = 0;
	tf->writing_open_spans = false;
	memset(tf->ids, 0, sizeof(tf->ids));
	nest_ties_init(&tf->ties);
	tf->ts.len = 0;
	tf->event_start = w->buf;
	tf->ring = ring;
}

/*
 * "memory": the bound --max-memory set, what each table the traced process
 * can grow was given of it, and how many entries each had to give back.
 */
static void write_memory(struct json_writer *w, const struct trace_stats *s)
{
	uint64_t total = 0;

	if (!s->max_memory)
		return;
	for (unsigned i = 0; i < s->n_bounds; i++)
		total += s->bounds[i]->evicted;
	jw_lit(w, ",\"memory\":{\"max_memory_bytes\":");
	jw_u64(w, s->max_memory);
	write_kv_u64(w, "evicted", total);
	jw_lit(w, ",\"tables\":{");
	for (unsigned i = 0; i < s->n_bounds; i++) {
		const struct table_bound *tb = s->bounds[i];

		if (i)
			jw_lit(w, ",");
		jw_str(w, tb->name, strlen(tb->name), NULL);
		jw_lit(w, ":{\"bound_bytes\":");
		jw_u64(w, tb->limit);
		write_kv_u64(w, "evicted", tb->evicted);
		jw_lit(w, "}");
	}
	jw_lit(w, "}}");
}

/*
 * ,"stackFrames":{"ID":{"name":N,"category":OBJ,"parent":ID},...}: the
 * seed's dictionary, which chrome://tracing draws for an event's "sf".
 */
static void write_stack_frames(struct json_writer *w, const struct stack_frames *t)
{
	if (!t)
		return;
	jw_lit(w, ",\n\"stackFrames\":{");
	for (size_t i = 0; i < t->n; i++) {
		const struct stack_frame *f = &t->v[i];

		jw_lit(w, i ? ",\n\"" : "\"");
		jw_u64(w, i + 1);
		jw_lit(w, "\":{\"name\":");
		jw_str(w, f->name, strlen(f->name), NULL);
		jw_lit(w, ",\"category\":");
		jw_str(w, f->category, strlen(f->category), NULL);
		if (f->parent) {
			jw_lit(w, ",\"parent\":");
			jw_u64(w, f->parent);
		}
		jw_lit(w, "}");
	}
	jw_lit(w, "}");
}

/* ,"stacks":{...}: how they were taken, and what could not be. */
static void write_stack_stats(struct json_writer *w, const struct stack_stats *s)
{
	if (!s)
		return;
	jw_lit(w, ",\"stacks\":{");
	write_kv_str(w, "unwind", s->how == CTRACE_STACK_FP ? "fp" : "dwarf", false);
	if (s->how_why)
		write_kv_str(w, "unwind_reason", s->how_why, true);
	write_kv_u64(w, "depth", s->depth);
	write_kv_u64(w, "stacks", s->stacks);
	write_kv_u64(w, "capture_errors", s->capture_errors);
	write_kv_u64(w, "not_unwound", s->not_unwound);
	write_kv_u64(w, "empty", s->empty);
	write_kv_u64(w, "frames_unsymbolized", s->frames_unsymbolized);
	write_kv_u64(w, "objects_unreadable", s->objects_unreadable);
	write_kv_u64(w, "processes_let_go", s->processes_let_go);
	jw_lit(w, "}");
}

/* ,"flight_recorder":{...}: this dump of --ring's. */
static void write_flight(struct json_writer *w, const struct flight_dump_facts *f)
{
	if (!f)
		return;
	jw_lit(w, ",\"flight_recorder\":{\"ring_bytes\":");
	jw_u64(w, f->ring_bytes);
	write_kv_u64(w, "dump", f->dump);
	write_kv_str(w, "reason", f->reason, true);
	if (f->trigger) {
		jw_lit(w, ",\"trigger\":");
		jw_str(w, f->trigger, f->trigger_len, NULL);
	}
	write_kv_u64(w, "triggers", f->triggers);
	write_kv_u64(w, "events_overwritten", f->events_overwritten);
	write_kv_u64(w, "events_overwritten_total", f->events_overwritten_total);
	write_kv_u64(w, "spans_open_at_dump", f->spans_open);
	write_kv_u64(w, "names_left_out", f->names_left_out);
	write_kv_u64(w, "window_start_monotonic_ns", f->window_start_ns);
	jw_lit(w, "}");
}

void chrome_trace_end(struct chrome_trace *tf, const struct trace_facts *facts,
		      const struct trace_stats *s)
{
	if (tf->rot)
		trace_rotation_at_end(tf->rot, tf); /* the last file's writer is tf->w from here */
	chrome_trace_write_end(tf, tf->w, tf->events, facts, s);
}

void chrome_trace_write_end(struct chrome_trace *tf, struct json_writer *w, uint64_t events,
			    const struct trace_facts *facts, const struct trace_stats *s)
{
	jw_lit(w, "\n]");
	write_stack_frames(w, tf->frames);
	jw_lit(w, ",\n\"metadata\":{");
	write_facts(w, facts);
	/* Known once attached, after "context" was written. */
	write_kv_u64(w, "probes_attached", facts->probes_attached);
	write_kv_u64(w, "objects_with_probes", facts->objects_with_probes);
	write_kv_str(w, "categories", facts->categories ? facts->categories : "", true);
	write_programs(w, facts);
	write_kv_str(w, "stop_reason", s->stop_reason ? s->stop_reason : "", true);
	write_kv_u64(w, "trace_stop_monotonic_ns", s->stop_mono_ns);
	write_kv_u64(w, "events_written", events);
	write_kv_u64(w, "records", s->records);
	write_kv_u64(w, "dropped_events", s->dropped);
	write_kv_u64(w, "bad_records", s->bad_records);
	write_kv_u64(w, "unmatched_span_ends", s->unmatched_ends);
	write_kv_u64(w, "unfinished_spans", s->unfinished_spans);
	write_kv_u64(w, "late_string_reads", s->late_string_reads);
	write_kv_u64(w, "file_string_reads", s->file_string_reads);
	write_kv_u64(w, "literals_by_reference", s->literals_by_reference);
	write_kv_u64(w, "unreadable_strings", s->unreadable_strings);
	write_kv_u64(w, "non_finite_counter_samples", s->non_finite_counter_samples);
	write_kv_u64(w, "records_after_stop", s->records_after_stop);
	write_kv_u64(w, "spans_begun_before_tracing", s->spans_begun_before_tracing);
	write_kv_u64(w, "untraced_processes", s->untraced_processes);
	write_kv_u64(w, "ends_of_evicted_spans", s->ends_of_evicted_spans);
	write_kv_u64(w, "events_of_unknown_category", s->events_of_unknown_category);
	write_memory(w, s);
	write_kv_u64(w, "records_unread_at_stop", s->records_unread_at_stop);
	jw_lit(w, ",\"remote_reads\":{\"made\":");
	jw_u64(w, s->remote_reads);
	write_kv_u64(w, "abandoned", s->remote_reads_abandoned);
	write_kv_u64(w, "refused", s->remote_reads_refused);
	jw_lit(w, "}");
	if (s->flows) {
		jw_lit(w, ",\"flows\":{\"sent\":");
		jw_u64(w, s->flows->sent);
		write_kv_u64(w, "taken_in", s->flows->taken_in);
		write_kv_u64(w, "never_taken_in", s->flows->never_taken_in);
		write_kv_u64(w, "in_never_sent", s->flows->in_never_sent);
		write_kv_u64(w, "outside_span", s->flows->outside_span);
		write_kv_u64(w, "evicted", s->flows->evicted);
		write_kv_u64(w, "out_of_order", s->flows->out_of_order);
		jw_lit(w, "}");
	}
	write_kv_u64(w, "thread_renames", s->thread_renames);
	if (facts->from_capture)
		write_kv_bool(w, "converted_from_capture", true);
	/* nest_ties.h: slices written 1 ns before (or after) the clock's begin, and ties left */
	write_kv_u64(w, "slice_begin_ties_moved", tf->ties.moved);
	write_kv_u64(w, "slice_begin_ties_left", tf->ties.unresolved);
	write_stack_stats(w, s->stacks);
	usdt_model_write_metadata(s->usdt, w);
	if (tf->obs && tf->obs->metadata)
		tf->obs->metadata(tf->obs->ctx, w);
	if (facts->event_path) {
		write_kv_str(w, "event_path", facts->event_path, true);
		if (facts->event_path_why)
			write_kv_str(w, "event_path_reason", facts->event_path_why, true);
		if (facts->death_watch)
			write_kv_str(w, "batch_death_watch", facts->death_watch, true);
		jw_lit(w, ",\"batch\":{\"events\":");
		jw_u64(w, s->batched_events);
		write_kv_u64(w, "threads", s->batch_threads);
		write_kv_u64(w, "lost_events", s->batch_lost);
		write_kv_u64(w, "unwatched_buffers", s->batch_unwatched);
		write_kv_u64(w, "before_tracing", s->batch_before_tracing);
		write_kv_u64(w, "adopted_buffers", s->batch_adopted);
		write_kv_u64(w, "inherited_at_fork", s->batch_inherited_at_fork);
		write_kv_u64(w, "unread_at_stop", s->batch_unread_at_stop);
		/* Early (the budget full) is not out of order unless a later event then came older. */
		write_kv_u64(w, "out_of_order", s->merge_late);
		write_kv_u64(w, "handed_on_early", s->merge_forced);
		jw_lit(w, "}");
	}
	if (tf->rot)
		trace_rotation_metadata(tf->rot, w);
	write_flight(w, s->flight);
	jw_lit(w, "}}\n");
}

static struct ct_ids_text *ids_slot(struct chrome_trace *tf, uint32_t pid, uint32_t tid)
{
	return &tf->ids[(tid ^ pid >> 4) % (sizeof(tf->ids) / sizeof(tf->ids[0]))];
}

/* ","pid":P,"tid":T at q, from the cache of a few threads' (chrome_trace.h); returns the end. */
static char *put_ids(struct chrome_trace *tf, char *q, uint32_t pid, uint32_t tid)
{
	struct ct_ids_text *c = ids_slot(tf, pid, tid);
	char *start = q;

	if (c->len && c->pid == pid && c->tid == tid) {
		memcpy(q, c->s, sizeof(c->s)); /* whole: a constant size copies faster; the end is c->len */
		return q + c->len;
	}
	memcpy(q, "\",\"pid\":", 8);
	q = jw_put_u64(q + 8, pid);
	memcpy(q, ",\"tid\":", 7);
	q = jw_put_u64(q + 7, tid);
	c->pid = pid;
	c->tid = tid;
	c->len = (uint8_t)(q - start); /* at most 8 + 10 + 7 + 10 = 35 */
	memcpy(c->s, start, c->len);
	return q;
}

/*
 * Starts an event: the separator, then {"ph":PH,"pid":P,"tid":T and, when
 * ts_ns is not UINT64_MAX, "ts". Fields follow; te_end closes.
 */
/* The start of te_begin() at q, in room for HEAD_MAX bytes and a phase of at most 8; the end. */
#define HEAD_MAX 128
static char *put_head(struct chrome_trace *tf, char *q, const char *ph, uint32_t pid, uint32_t tid,
		      uint64_t ts_ns)
{
	tf->event_start = q;
	if (!tf->first_event) {
		memcpy(q, ",\n", 2);
		q += 2;
	}
	memcpy(q, "{\"ph\":\"", 7);
	q += 7;
	while (*ph)
		*q++ = *ph++;
	q = put_ids(tf, q, pid, tid);
	if (ts_ns != UINT64_MAX) {
		memcpy(q, ",\"ts\":", 6);
		q = jw_put_ts_us_cached(&tf->ts, q + 6, ts_ns);
	}
	tf->first_event = false;
	tf->events++;
	return q;
}

static void te_begin(struct chrome_trace *tf, const char *ph, uint32_t pid, uint32_t tid,
		     uint64_t ts_ns)
{
	/* --max-size: a new file first, or (a plain file full) an event written nowhere, not counted. */
	bool past_limit = __builtin_expect(tf->rot != NULL, 0) && trace_rotation_before_event(tf->rot, tf);
	struct json_writer *w;
	struct ct_ids_text *c;

	/* Not in the cache: maybe the thread's first event in this file, to come after its names. */
	if (__builtin_expect(tf->rot != NULL, 0) && !past_limit &&
	    !((c = ids_slot(tf, pid, tid))->len && c->pid == pid && c->tid == tid))
		trace_rotation_first_in_file(tf->rot, tf, pid, tid);
	w = tf->w;
	/* Every event starts so: written in place at once where the buffer has room (nearly always). */
	char *q = strlen(ph) <= 8 ? jw_reserve(w, HEAD_MAX) : NULL;

	tf->events -= past_limit; /* counted below */
	if (q) {
		jw_commit(w, put_head(tf, q, ph, pid, tid, ts_ns));
		return;
	}
	/* Counted and marked before a byte is written: the flight recorder's sink may run in the writing. */
	bool first = tf->first_event;

	tf->event_start = w->buf + w->len;
	tf->first_event = false;
	tf->events++;
	jw_lit(w, first ? "{\"ph\":\"" : ",\n{\"ph\":\"");
	jw_lit(w, ph);
	jw_lit(w, "\",\"pid\":");
	jw_u64(w, pid);
	jw_lit(w, ",\"tid\":");
	jw_u64(w, tid);
	if (ts_ns != UINT64_MAX) {
		jw_lit(w, ",\"ts\":");
		jw_ts_us(w, ts_ns);
	}
}

/*
 * Chrome DevTools' trace engine takes a trace holding an event with one of
 * these names for a recording of Chrome itself and drops every other
 * process: a traced program must not be able to blank the trace that way.
 */
static bool reserved_name(const char *s, size_t n)
{
	static const char *const names[] = {
		"TracingStartedInBrowser", "TracingStartedInPage",
		"TracingSessionIdForWorker", "CpuProfile",
	};

	/* Every event's name comes here: most are told apart by their first byte alone. */
	if (n < 10 || (s[0] != 'T' && s[0] != 'C'))
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && !memcmp(s, names[i], n))
			return true;
	return false;
}

/* ,"name":"..."; untrusted bytes; flags CTRACE_STR_* add a visible marker. */
static void te_name(struct chrome_trace *tf, const char *s, size_t n, unsigned flags)
{
	const char *suffix = (flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL;

	if ((flags & (CTRACE_STR_PLAIN | CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED)) == CTRACE_STR_PLAIN &&
	    !reserved_name(s, n)) {
		/* Nothing to escape (batch_path.c checked it once): copied as it is. */
		jw_lit(tf->w, ",\"name\":\"");
		jw_raw(tf->w, s, n);
		jw_raw(tf->w, "\"", 1);
		return;
	}
	jw_lit(tf->w, ",\"name\":");
	if (flags & CTRACE_STR_FAULT)
		jw_str(tf->w, "(unreadable)", 12, NULL);
	else
		jw_str(tf->w, s, n, reserved_name(s, n) ? " (renamed by ctrace)" : suffix);
}

/*
 * Most events of a busy program: a name checked plain once (a batched
 * literal: nothing to escape, not one of reserved_name()'s), the default
 * category, no stack. Such an event's head and name are written at once,
 * in room reserved for them and `extra` bytes more: the same bytes as
 * te_begin() and te_name() write piece by piece, with one room check
 * instead of one a piece. NULL: write it the other way.
 */
static char *fast_head(struct chrome_trace *ct, const char *ph, uint32_t pid, uint32_t tid,
		       uint64_t ts_ns, const struct ct_text *name, size_t extra)
{
	char *q;

	/* --max-size (ct->rot) checks every event in te_begin(): that way only. */
	if ((name->flags & (CTRACE_STR_PLAIN | CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED)) != CTRACE_STR_PLAIN ||
	    ct->cat > CATEGORY_DEFAULT_ID || ct->sf || ct->rot || reserved_name(name->s, name->n) ||
	    !(q = jw_reserve(ct->w, HEAD_MAX + 10 + name->n + extra)))
		return NULL;
	q = put_head(ct, q, ph, pid, tid, ts_ns);
	memcpy(q, ",\"name\":\"", 9);
	memcpy(q + 9, name->s, name->n);
	q += 9 + name->n;
	*q++ = '"';
	return q;
}

/* ,"KEY": with a trusted key; the caller writes the value. */
static void te_key(struct chrome_trace *tf, const char *key)
{
	jw_lit(tf->w, ",\"");
	jw_lit(tf->w, key);
	jw_lit(tf->w, "\":");
}

static void te_end(struct chrome_trace *tf)
{
	if (tf->sf) {
		jw_lit(tf->w, ",\"sf\":");
		jw_u64(tf->w, tf->sf);
		tf->sf = 0;
	}
	jw_lit(tf->w, "}");
}

/*
 * The event's stack as "stack":["innermost", ..., "outermost"], for
 * Perfetto, which does not read stackFrames; after `comma`.
 */
static void te_stack_member(struct chrome_trace *tf, bool comma)
{
	const struct stack_frame *f = stack_frames_get(tf->frames, tf->sf);

	jw_lit(tf->w, comma ? ",\"stack\":[" : "\"stack\":[");
	for (bool first = true; f; f = stack_frames_get(tf->frames, f->parent), first = false) {
		if (!first)
			jw_lit(tf->w, ",");
		jw_str(tf->w, f->name, strlen(f->name), NULL);
	}
	jw_lit(tf->w, "]");
}

static bool has_stack(const struct chrome_trace *tf)
{
	return tf->sf && stack_frames_get(tf->frames, tf->sf);
}

/*
 * --ring: a metadata event is written into the recorder's own writer and
 * kept aside (flight_recorder_name()), not in the ring: every dump names
 * its processes and threads.
 */
struct names_aside {
	struct json_writer *w;
	bool first_event;
	char *event_start;
	uint64_t events;
};

static void names_aside_begin(struct chrome_trace *ct, struct names_aside *a)
{
	*a = (struct names_aside){ ct->w, ct->first_event, ct->event_start, ct->events };
	ct->w = &ct->ring->name_w;
	ct->w->len = 0;
	ct->w->err = 0;
	ct->first_event = true;
}

static void names_aside_end(struct chrome_trace *ct, const struct names_aside *a, unsigned what,
			    uint32_t pid, uint32_t tid)
{
	struct json_writer *nw = ct->w;

	ct->w = a->w;
	ct->first_event = a->first_event;
	ct->event_start = a->event_start;
	ct->events = a->events;
	if (nw->err)
		ct->ring->names_left_out++; /* bigger than its writer: never from names the probe cut */
	else
		flight_recorder_name(ct->ring, what, pid, tid, nw->buf, nw->len);
}

/* A metadata event: {"ph":"M","name":WHAT,"pid","tid","args":{"name":NAME}}; flags: CTRACE_STR_* */
static void te_metadata_name(struct chrome_trace *tf, const char *what, uint32_t pid,
			     uint32_t tid, const char *name, size_t name_len, unsigned flags)
{
	struct names_aside a;

	if (tf->ring)
		names_aside_begin(tf, &a);
	te_begin(tf, "M", pid, tid, UINT64_MAX);
	te_name(tf, what, strlen(what), 0);
	jw_lit(tf->w, ",\"args\":{\"name\":");
	jw_str(tf->w, name, name_len, (flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL);
	jw_lit(tf->w, "}}");
	if (tf->rot)
		trace_rotation_remember(tf->rot, what, pid, tid, name, name_len, flags, 0);
	if (tf->ring)
		names_aside_end(tf, &a, what[0] == 'p' ? 0 : 1, pid, tid);
}

void chrome_trace_process_name(struct chrome_trace *ct, uint32_t pid, const struct ct_text *name)
{
	if (ct->obs && ct->obs->process_name)
		ct->obs->process_name(ct->obs->ctx, pid, name);
	te_metadata_name(ct, "process_name", pid, pid, name->s, name->n, name->flags);
}

void chrome_trace_thread_name(struct chrome_trace *ct, uint32_t pid, uint32_t tid,
			      const struct ct_text *name)
{
	if (ct->obs && ct->obs->thread_name)
		ct->obs->thread_name(ct->obs->ctx, pid, tid, name);
	te_metadata_name(ct, "thread_name", pid, tid, name->s, name->n, name->flags);
}

/* ,"cat":"ctrace","s":"S" (S: 'g', 'p' or 't'), in one copy: on every instant's path. */
#define SCOPE_FIELDS(s) ",\"cat\":\"ctrace\",\"s\":\"" s "\""
#define SCOPE_FIELDS_LEN (sizeof(SCOPE_FIELDS("t")) - 1)
static const char *scope_fields(char scope)
{
	static const char g[] = SCOPE_FIELDS("g"), p[] = SCOPE_FIELDS("p"), t[] = SCOPE_FIELDS("t");

	return scope == 'g' ? g : scope == 'p' ? p : t;
}

static void te_scope_default(struct chrome_trace *ct, char scope)
{
	jw_raw(ct->w, scope_fields(scope), SCOPE_FIELDS_LEN);
}

/* True when the events written next are of a category other than the default. */
static bool other_category(const struct chrome_trace *ct)
{
	return ct->cat > CATEGORY_DEFAULT_ID;
}

/*
 * ,"cat":"NAME: the event's category, without its closing quote. Names
 * are identifiers (usdt_notes.c checks them): nothing to escape.
 */
static void te_cat_open(struct chrome_trace *ct)
{
	jw_lit(ct->w, ",\"cat\":\"");
	jw_lit(ct->w, category_name(ct->cat));
}

static void te_scope(struct chrome_trace *ct, char scope)
{
	if (!other_category(ct)) {
		te_scope_default(ct, scope);
		return;
	}
	te_cat_open(ct);
	jw_lit(ct->w, scope == 'g' ? "\",\"s\":\"g\"" : scope == 'p' ? "\",\"s\":\"p\"" : "\",\"s\":\"t\"");
}

void chrome_trace_notice(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			 const char *name, char scope, const struct ct_arg *args, size_t n_args)
{
	te_begin(ct, "I", pid, tid, ts_ns);
	te_name(ct, name, strlen(name), 0);
	te_scope_default(ct, scope);
	for (size_t i = 0; i < n_args; i++) {
		const struct ct_arg *a = &args[i];

		jw_lit(ct->w, i ? ",\"" : ",\"args\":{\"");
		jw_lit(ct->w, a->key);
		jw_lit(ct->w, "\":");
		switch (a->kind) {
		case CT_ARG_U64: jw_u64(ct->w, a->u); break;
		case CT_ARG_STR: jw_str(ct->w, a->s, a->n, NULL); break;
		case CT_ARG_DOUBLE: jw_double(ct->w, a->d); break;
		}
	}
	if (n_args)
		jw_lit(ct->w, "}");
	te_end(ct);
}

static bool text_empty(const struct ct_text *t)
{
	return !t || (!t->n && !t->flags);
}

/*
 * Typed args (CTRACE_INSTANT_ARGS...), whole (the probe cut nothing and
 * they decode exactly): how many pairs; -1 when they are not.
 */
static int typed_pairs(const struct ct_text *t)
{
	if ((t->flags & (CTRACE_STR_TRUNCATED | CTRACE_STR_FAULT)) || !typed_args_marked(t->s, t->n))
		return -1;
	return typed_args_check(t->s, t->n);
}

/* The args of an event as a cJSON object; NULL when there are none. */
static cJSON *args_of(const struct ct_text *t)
{
	cJSON *o;

	if (text_empty(t))
		return NULL; /* the common case: no cJSON tree to build */
	if (t->flags & CTRACE_STR_FAULT) {
		o = cJSON_CreateObject();
		cJSON_AddTrueToObject(o, "args_unreadable");
		return o;
	}
	if (typed_pairs(t) >= 0)
		o = typed_args_cjson(t->s, t->n);
	else
		o = args_parse(t->s, t->n, t->flags & CTRACE_STR_TRUNCATED);
	if (!o) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return o;
}

/* ,"args":{"stack":[...]}: an event with a stack and no args of its own. */
static void write_stack_only_args(struct chrome_trace *ct)
{
	if (!has_stack(ct))
		return;
	te_key(ct, "args");
	jw_lit(ct->w, "{");
	te_stack_member(ct, false);
	jw_lit(ct->w, "}");
}

/* Writes ,"args":{...} unless the object is empty (and there is no stack); frees it. */
static void write_args(struct chrome_trace *ct, cJSON *o)
{
	if (!o) {
		write_stack_only_args(ct);
		return;
	}
	if (o->child && has_stack(ct)) {
		cJSON *stack = cJSON_AddArrayToObject(o, "stack");

		for (const struct stack_frame *f = stack_frames_get(ct->frames, ct->sf); f && stack;
		     f = stack_frames_get(ct->frames, f->parent))
			cJSON_AddItemToArray(stack, cJSON_CreateString(f->name));
	}
	if (o->child) {
		te_key(ct, "args");
		jw_cjson(ct->w, o);
	} else {
		write_stack_only_args(ct);
	}
	cJSON_Delete(o);
}

/* ,"args":{<the `pairs` typed pairs>[,"stack":[...]]}: written as they are decoded, no cJSON tree. */
static void write_typed_args(struct chrome_trace *ct, const struct ct_text *t, int pairs)
{
	if (pairs == 0) {
		write_stack_only_args(ct);
		return;
	}
	te_key(ct, "args");
	jw_lit(ct->w, "{");
	typed_args_write_members(ct->w, t->s, t->n);
	if (has_stack(ct))
		te_stack_member(ct, true);
	jw_lit(ct->w, "}");
}

/*
 * Writes an event's args text: a clean JSON object goes out as it is (most
 * do); anything else through cJSON, which repairs or wraps it.
 */
static void write_args_text(struct chrome_trace *ct, const struct ct_text *t)
{
	size_t start, len;
	int pairs;

	if (text_empty(t)) {
		write_stack_only_args(ct);
		return;
	}
	pairs = typed_pairs(t);
	if (pairs >= 0) {
		write_typed_args(ct, t, pairs);
		return;
	}
	if (!t->flags && json_plain_object(t->s, t->n, &start, &len)) {
		if (len > 2 && has_stack(ct)) { /* the object without its '}', the stack, '}' */
			te_key(ct, "args");
			jw_raw(ct->w, t->s + start, len - 1);
			te_stack_member(ct, true);
			jw_lit(ct->w, "}");
		} else if (len > 2) { /* not {} */
			te_key(ct, "args");
			jw_raw(ct->w, t->s + start, len);
		} else {
			write_stack_only_args(ct);
		}
		return;
	}
	write_args(ct, args_of(t));
}

/* Moves every member of `from` into `to` (keys may repeat; JSON allows it). */
static cJSON *merge_args(cJSON *to, cJSON *from)
{
	cJSON *item;

	if (!to || !from)
		return to ? to : from;
	while ((item = from->child)) {
		cJSON *same = cJSON_GetObjectItemCaseSensitive(to, item->string);

		cJSON_DetachItemViaPointer(from, item);
		/* The same key and value at both ends (e.g. args_unreadable) once. */
		if (same && cJSON_Compare(same, item, 1)) {
			cJSON_Delete(item);
			continue;
		}
		cJSON_AddItemToObject(to, item->string, item);
	}
	cJSON_Delete(from);
	return to;
}

/* The start of an "X": everything but its args. */
static void complete_head(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			  uint64_t dur_ns, const struct ct_text *name)
{
	static const char dur_key[] = ",\"cat\":\"ctrace\",\"dur\":";
	char *q = ct->bind.id ? NULL : fast_head(ct, "X", pid, tid, ts_ns, name, sizeof(dur_key) + 24);

	if (q) {
		memcpy(q, dur_key, sizeof(dur_key) - 1);
		jw_commit(ct->w, jw_put_ts_us(q + sizeof(dur_key) - 1, dur_ns));
		return;
	}
	te_begin(ct, "X", pid, tid, ts_ns);
	te_name(ct, name->s, name->n, name->flags);
	if (other_category(ct)) {
		te_cat_open(ct);
		jw_lit(ct->w, "\",\"dur\":");
	} else {
		jw_lit(ct->w, ",\"cat\":\"ctrace\",\"dur\":");
	}
	jw_ts_us(ct->w, dur_ns);
	if (ct->bind.id) {
		char hex[32];

		snprintf(hex, sizeof(hex), ",\"bind_id\":\"0x%" PRIx64 "\"", ct->bind.id);
		jw_lit(ct->w, hex);
		if (ct->bind.out)
			jw_lit(ct->w, ",\"flow_out\":true");
		if (ct->bind.in)
			jw_lit(ct->w, ",\"flow_in\":true");
		ct->bind.id = 0;
	}
}

void chrome_trace_bind_next(struct chrome_trace *ct, const struct ct_flow_bind *b)
{
	ct->bind = *b;
}

void chrome_trace_flow_phase(struct chrome_trace *ct, char ph, uint32_t pid, uint32_t tid,
			     uint64_t ts_ns, uint64_t id)
{
	char hex[48];

	te_begin(ct, ph == 's' ? "s" : "f", pid, tid, ts_ns);
	snprintf(hex, sizeof(hex), ",\"id\":\"0x%" PRIx64 "\"", id);
	jw_lit(ct->w, ",\"name\":\"flow\",\"cat\":\"ctrace\"");
	jw_lit(ct->w, hex);
	if (ph != 's')
		jw_lit(ct->w, ",\"bp\":\"e\"");
	te_end(ct);
}

void chrome_trace_sort_index(struct chrome_trace *ct, uint32_t pid, uint32_t tid, bool thread,
			     int64_t n)
{
	char num[32];
	struct names_aside a;

	if (ct->ring)
		names_aside_begin(ct, &a);
	te_begin(ct, "M", pid, tid, UINT64_MAX);
	te_name(ct, thread ? "thread_sort_index" : "process_sort_index", thread ? 17 : 18, 0);
	snprintf(num, sizeof(num), "%" PRId64, n);
	jw_lit(ct->w, ",\"args\":{\"sort_index\":");
	jw_lit(ct->w, num);
	jw_lit(ct->w, "}}");
	if (ct->rot)
		trace_rotation_remember(ct->rot, thread ? "thread_sort_index" : "process_sort_index",
					pid, tid, NULL, 0, 0, n);
	if (ct->ring)
		names_aside_end(ct, &a, thread ? 3 : 2, pid, tid);
}

/* An X's begin as nest_ties.h writes it (open: unfinished): *ts_ns moved, its end kept. */
static void untie(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t *ts_ns, uint64_t *dur_ns,
		  bool open)
{
	uint64_t end = *ts_ns + *dur_ns;
	uint64_t shown = open ? nest_ties_begin_open(&ct->ties, pid, tid, *ts_ns, end) :
				nest_ties_begin(&ct->ties, pid, tid, *ts_ns, end);

	*ts_ns = shown;
	*dur_ns = end - shown;
	ct->last_x_ts = shown;
}

void chrome_trace_complete(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			   uint64_t dur_ns, const struct ct_text *name,
			   const struct ct_text *begin_args, const struct ct_text *end_args)
{
	untie(ct, pid, tid, &ts_ns, &dur_ns, false);
	if (ct->obs && ct->obs->span)
		ct->obs->span(ct->obs->ctx, pid, tid, ts_ns, dur_ns, name, begin_args, end_args, NULL);
	complete_head(ct, pid, tid, ts_ns, dur_ns, name);
	/* Args from one end only (the usual case) need no merging. */
	if (text_empty(end_args))
		write_args_text(ct, begin_args);
	else if (text_empty(begin_args))
		write_args_text(ct, end_args);
	else
		write_args(ct, merge_args(args_of(begin_args), args_of(end_args)));
	te_end(ct);
}

void chrome_trace_unfinished(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			     uint64_t dur_ns, const struct ct_text *name,
			     const struct ct_text *args, const char *why)
{
	cJSON *o = args_of(args);

	untie(ct, pid, tid, &ts_ns, &dur_ns, ct->writing_open_spans);
	if (ct->obs && ct->obs->span)
		ct->obs->span(ct->obs->ctx, pid, tid, ts_ns, dur_ns, name, args, NULL, why);
	if (!o)
		o = cJSON_CreateObject();
	cJSON_AddTrueToObject(o, "unfinished");
	cJSON_AddStringToObject(o, "unfinished_reason", why);
	complete_head(ct, pid, tid, ts_ns, dur_ns, name);
	write_args(ct, o);
	te_end(ct);
}

/* One end of an async pair. */
static void async_end(struct chrome_trace *ct, const char *ph, uint32_t pid, uint32_t tid,
		      uint64_t ts_ns, const struct ct_text *name, const char *id,
		      const struct ct_text *args)
{
	te_begin(ct, ph, pid, tid, ts_ns);
	te_name(ct, name->s, name->n, name->flags);
	if (other_category(ct)) {
		te_cat_open(ct);
		jw_lit(ct->w, ".async\",\"id\":\"");
	} else {
		jw_lit(ct->w, ",\"cat\":\"ctrace.async\",\"id\":\"");
	}
	jw_lit(ct->w, id);
	jw_lit(ct->w, "\"");
	write_args_text(ct, args);
	te_end(ct);
}

void chrome_trace_async(struct chrome_trace *ct, uint32_t pid, const struct ct_text *name,
			uint64_t id, uint32_t begin_tid, uint64_t begin_ns,
			const struct ct_text *begin_args, uint32_t end_tid, uint64_t end_ns,
			const struct ct_text *end_args)
{
	char hex[32];

	if (ct->obs && ct->obs->async_span)
		ct->obs->async_span(ct->obs->ctx, pid, name, begin_tid, begin_ns, begin_args, end_tid,
				    end_ns, end_args);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, id);
	async_end(ct, "b", pid, begin_tid, begin_ns, name, hex, begin_args);
	ct->sf = ct->sf_end;
	ct->sf_end = 0;
	async_end(ct, "e", pid, end_tid, end_ns, name, hex, end_args);
}

/* CTRACE_TRIGGER's instant: process-scoped, its args exactly the marker. */
static bool is_trigger(const struct ct_text *name, char scope, const struct ct_text *args)
{
	(void)name;
	return scope == 'p' && !(args->flags & (CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED)) &&
	       args->n == sizeof(CHROME_TRACE_TRIGGER_ARGS) - 1 &&
	       !memcmp(args->s, CHROME_TRACE_TRIGGER_ARGS, args->n);
}

void chrome_trace_instant(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			  const struct ct_text *name, char scope, const struct ct_text *args)
{
	/*
	 * "I", not "i": Perfetto and catapult read both, Chrome DevTools draws
	 * only "I" (Chromium's own phase letter).
	 */
	char *q;

	if (ct->obs && ct->obs->instant)
		ct->obs->instant(ct->obs->ctx, pid, tid, ts_ns, name, scope, args);
	q = fast_head(ct, "I", pid, tid, ts_ns, name, SCOPE_FIELDS_LEN + 1);
	if (q) {
		memcpy(q, scope_fields(scope), SCOPE_FIELDS_LEN);
		q += SCOPE_FIELDS_LEN;
		if (text_empty(args)) { /* and no stack: the whole event */
			*q++ = '}';
			jw_commit(ct->w, q);
			return;
		}
		jw_commit(ct->w, q);
	} else {
		te_begin(ct, "I", pid, tid, ts_ns);
		te_name(ct, name->s, name->n, name->flags);
		te_scope(ct, scope);
	}
	if (ct->ring && is_trigger(name, scope, args))
		flight_recorder_trigger(ct->ring, name->s, name->flags & CTRACE_STR_FAULT ? 0 : name->n);
	write_args_text(ct, args);
	te_end(ct);
}

void chrome_trace_counter(struct chrome_trace *ct, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			  const struct ct_text *name, double value)
{
	static const char value_key[] = ",\"cat\":\"ctrace\",\"args\":{\"value\":";
	char *q, *end;

	if (ct->obs && ct->obs->counter)
		ct->obs->counter(ct->obs->ctx, pid, tid, ts_ns, name, value);
	q = fast_head(ct, "C", pid, tid, ts_ns, name, sizeof(value_key) + 24);
	if (q) {
		memcpy(q, value_key, sizeof(value_key) - 1);
		q += sizeof(value_key) - 1;
		end = jw_put_whole(q, value); /* most counters */
		if (end) {
			memcpy(end, "}}", 2);
			jw_commit(ct->w, end + 2);
			return;
		}
		jw_commit(ct->w, q);
		jw_double(ct->w, value);
		jw_lit(ct->w, "}");
		te_end(ct);
		return;
	}
	te_begin(ct, "C", pid, tid, ts_ns);
	te_name(ct, name->s, name->n, name->flags);
	if (other_category(ct)) {
		te_cat_open(ct);
		jw_lit(ct->w, "\",\"args\":{\"value\":");
	} else {
		jw_lit(ct->w, ",\"cat\":\"ctrace\",\"args\":{\"value\":");
	}
	jw_double(ct->w, value);
	jw_lit(ct->w, "}");
	te_end(ct);
}

/* The JSON encoder: each typed event as the JSON event(s) it is (chrome_trace.h's functions). */
static void json_event(void *ctx, const struct trace_event *ev)
{
	struct chrome_trace *ct = ctx;

	ct->cat = ev->cat;
	ct->sf = ev->stack;
	switch (ev->kind) {
	case TE_COMPLETE:
		ct->bind = ev->flow;
		if (!ev->unfinished) {
			chrome_trace_complete(ct, ev->pid, ev->tid, ev->ts_ns, ev->dur_ns, &ev->name, &ev->args,
					      &ev->end_args);
			break;
		}
		ct->writing_open_spans = ev->open_at_dump;
		chrome_trace_unfinished(ct, ev->pid, ev->tid, ev->ts_ns, ev->dur_ns, &ev->name, &ev->args,
					ev->unfinished);
		ct->writing_open_spans = false;
		break;
	case TE_ASYNC:
		ct->sf_end = ev->end_stack;
		chrome_trace_async(ct, ev->pid, &ev->name, ev->id, ev->tid, ev->ts_ns, &ev->args, ev->end_tid,
				   ev->end_ns, &ev->end_args);
		break;
	case TE_INSTANT:
		chrome_trace_instant(ct, ev->pid, ev->tid, ev->ts_ns, &ev->name, ev->scope, &ev->args);
		break;
	case TE_NOTICE:
		chrome_trace_notice(ct, ev->pid, ev->tid, ev->ts_ns, ev->name.s, ev->scope, ev->notice_args,
				    ev->n_notice_args);
		break;
	case TE_COUNTER:
		chrome_trace_counter(ct, ev->pid, ev->tid, ev->ts_ns, &ev->name, ev->value);
		break;
	case TE_FLOW_STEP:
		/* At its X's begin as written (nest_ties.h may have moved it by a nanosecond). */
		chrome_trace_flow_phase(ct, ev->flow_out ? 's' : 'f', ev->pid, ev->tid, ct->last_x_ts, ev->id);
		break;
	case TE_PROCESS_NAME:
		chrome_trace_process_name(ct, ev->pid, &ev->name);
		break;
	case TE_THREAD_NAME:
		chrome_trace_thread_name(ct, ev->pid, ev->tid, &ev->name);
		break;
	case TE_SORT_INDEX:
		chrome_trace_sort_index(ct, ev->pid, ev->tid, ev->thread, ev->sort_index);
		break;
	}
}

static void json_end(void *ctx, const struct trace_facts *facts, const struct trace_stats *stats)
{
	chrome_trace_end(ctx, facts, stats);
}

struct trace_encoder chrome_trace_encoder(struct chrome_trace *ct)
{
	/* Begun by chrome_trace_begin() or _begin_ring(), which say where it writes. */
	return (struct trace_encoder){ .event = json_event, .end = json_end, .ctx = ct };
}

/*
 * The args an event has in the JSON, written as ,"args":{...} (or nothing)
 * into w with ct's settings (its frames): what an encoder of another
 * format reads an event's args from, so that they are the JSON's exactly.
 * end: an async pair's end's args rather than its begin's.
 */
void chrome_trace_args_json(struct chrome_trace *ct, struct json_writer *w, const struct trace_event *ev, bool end)
{
	struct json_writer *was = ct->w;

	ct->w = w;
	ct->sf = end ? ev->end_stack : ev->stack;
	switch (ev->kind) {
	case TE_COMPLETE:
		if (ev->unfinished) {
			cJSON *o = args_of(&ev->args);

			if (!o)
				o = cJSON_CreateObject();
			cJSON_AddTrueToObject(o, "unfinished");
			cJSON_AddStringToObject(o, "unfinished_reason", ev->unfinished);
			write_args(ct, o);
		} else if (text_empty(&ev->end_args)) {
			write_args_text(ct, &ev->args);
		} else if (text_empty(&ev->args)) {
			write_args_text(ct, &ev->end_args);
		} else {
			write_args(ct, merge_args(args_of(&ev->args), args_of(&ev->end_args)));
		}
		break;
	case TE_ASYNC:
		write_args_text(ct, end ? &ev->end_args : &ev->args);
		break;
	case TE_INSTANT:
		write_args_text(ct, &ev->args);
		break;
	case TE_NOTICE:
		for (size_t i = 0; i < ev->n_notice_args; i++) {
			const struct ct_arg *a = &ev->notice_args[i];

			jw_lit(w, i ? ",\"" : ",\"args\":{\"");
			jw_lit(w, a->key);
			jw_lit(w, "\":");
			switch (a->kind) {
			case CT_ARG_U64: jw_u64(w, a->u); break;
			case CT_ARG_STR: jw_str(w, a->s, a->n, NULL); break;
			case CT_ARG_DOUBLE: jw_double(w, a->d); break;
			}
		}
		if (ev->n_notice_args)
			jw_lit(w, "}");
		break;
	default:
		break;
	}
	ct->sf = 0;
	ct->w = was;
}

/* A name as the JSON writes it (a JSON string, quotes and escapes included) into w. */
void chrome_trace_name_json(struct json_writer *w, const struct ct_text *name)
{
	if (name->flags & CTRACE_STR_FAULT)
		jw_str(w, "(unreadable)", 12, NULL);
	else
		jw_str(w, name->s, name->n,
		       reserved_name(name->s, name->n) ? " (renamed by ctrace)" :
		       (name->flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL);
}

/* Whether the JSON writes this name as its bytes, as they are (most names: the encoders' fast path). */
bool chrome_trace_name_plain(const struct ct_text *name)
{
	return (name->flags & (CTRACE_STR_PLAIN | CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED)) == CTRACE_STR_PLAIN &&
	       !reserved_name(name->s, name->n);
}

bool chrome_trace_args_plain(const struct ct_text *t, const char **obj, size_t *len)
{
	size_t start;

	if (text_empty(t) || t->flags || typed_pairs(t) >= 0 || !json_plain_object(t->s, t->n, &start, len) ||
	    *len <= 2)
		return false;
	*obj = t->s + start;
	return true;
}
