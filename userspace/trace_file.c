// SPDX-License-Identifier: MIT
#include "trace_file.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ctrace_record.h"

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

void trace_file_begin(struct trace_file *tf, struct json_writer *w,
		      const struct trace_facts *facts)
{
	tf->w = w;
	tf->first_event = true;
	tf->events = 0;
	jw_lit(w, "{\"context\":{");
	write_facts(w, facts);
	jw_lit(w, "},\n\"traceEvents\":[\n");
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

void trace_file_end(struct trace_file *tf, const struct trace_facts *facts,
		    const struct trace_stats *s)
{
	struct json_writer *w = tf->w;

	jw_lit(w, "\n],\n\"metadata\":{");
	write_facts(w, facts);
	/* Known once attached, after "context" was written. */
	write_kv_u64(w, "probes_attached", facts->probes_attached);
	write_kv_u64(w, "objects_with_probes", facts->objects_with_probes);
	write_programs(w, facts);
	write_kv_str(w, "stop_reason", s->stop_reason ? s->stop_reason : "", true);
	write_kv_u64(w, "trace_stop_monotonic_ns", s->stop_mono_ns);
	write_kv_u64(w, "events_written", tf->events);
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
	write_memory(w, s);
	write_kv_u64(w, "records_unread_at_stop", s->records_unread_at_stop);
	if (facts->event_path) {
		write_kv_str(w, "event_path", facts->event_path, true);
		jw_lit(w, ",\"batch\":{\"events\":");
		jw_u64(w, s->batched_events);
		write_kv_u64(w, "threads", s->batch_threads);
		write_kv_u64(w, "lost_events", s->batch_lost);
		write_kv_u64(w, "before_tracing", s->batch_before_tracing);
		write_kv_u64(w, "inherited_at_fork", s->batch_inherited_at_fork);
		write_kv_u64(w, "out_of_order", s->merge_forced);
		jw_lit(w, "}");
	}
	jw_lit(w, "}}\n");
}

void te_begin(struct trace_file *tf, const char *ph, uint32_t pid, uint32_t tid,
	      uint64_t ts_ns)
{
	struct json_writer *w = tf->w;

	jw_lit(w, tf->first_event ? "{\"ph\":\"" : ",\n{\"ph\":\"");
	tf->first_event = false;
	tf->events++;
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

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && !memcmp(s, names[i], n))
			return true;
	return false;
}

void te_name(struct trace_file *tf, const char *s, size_t n, unsigned flags)
{
	const char *suffix = (flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL;

	jw_lit(tf->w, ",\"name\":");
	if (flags & CTRACE_STR_FAULT)
		jw_str(tf->w, "(unreadable)", 12, NULL);
	else
		jw_str(tf->w, s, n, reserved_name(s, n) ? " (renamed by ctrace)" : suffix);
}

void te_key(struct trace_file *tf, const char *key)
{
	jw_lit(tf->w, ",\"");
	jw_lit(tf->w, key);
	jw_lit(tf->w, "\":");
}

void te_end(struct trace_file *tf)
{
	jw_lit(tf->w, "}");
}

void te_metadata_name(struct trace_file *tf, const char *what, uint32_t pid,
		      uint32_t tid, const char *name, size_t name_len, unsigned flags)
{
	te_begin(tf, "M", pid, tid, UINT64_MAX);
	te_name(tf, what, strlen(what), 0);
	jw_lit(tf->w, ",\"args\":{\"name\":");
	jw_str(tf->w, name, name_len, (flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL);
	jw_lit(tf->w, "}}");
}
