// SPDX-License-Identifier: MIT
#include "encode/otlp/otlp_export.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "encode/json/chrome_trace.h"
#include "cli/commands.h"
#include "encode/json/json_writer.h"
#include "lib/proc_info.h"
#include "encode/otlp/otlp_json.h"
#include "io/output_file.h"
#include "model/trace_model.h"

struct otlp_proc {
	uint64_t key; /* pid */
	uint32_t pid;
	uint8_t trace_id[16];
	char name[64];
	char exe[PATH_MAX];   /* "" unknown (a pseudo-process, gone, no /proc) */
	struct otlp_buf spans, metrics; /* this batch's, without their brackets */
	uint64_t n_spans, n_points;
};

struct pend_instant {
	uint64_t ts;
	char scope;
	struct ct_text name, args; /* in bytes[] */
	char bytes[];
};

struct pend_span {
	uint64_t b, e;
	uint64_t id;
	uint32_t tid, end_tid; /* end_tid: an async span's (0: none) */
	const char *why;       /* unfinished: why (a string of the model's that lives on) */
	struct ct_text name, args, end_args; /* in bytes[] */
	struct pend_instant **events;
	size_t n_events;
	char bytes[];
};

struct otlp_thread {
	uint64_t key; /* pid << 32 | tid */
	char name[96];
	struct pend_span **spans;     /* waiting for a parent, in end order */
	size_t n, cap;
	struct pend_instant **inst;   /* waiting for an enclosing span, in time order */
	size_t ni, capi;
	/*
	 * Written unfinished (the stop, an eviction): in no order of nesting,
	 * so they take and give parents only at the end (nest_leftovers()).
	 */
	struct pend_span **open;
	size_t no, capo;
};

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return p;
}

static void *xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	if (*cap < need)
		*cap = need;
	p = realloc(p, *cap * elem);
	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return p;
}

/* FNV-1a, then splitmix64's finalizer: ids that differ in every bit for near inputs. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void put_be64(uint8_t *to, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		to[i] = (uint8_t)v;
}

static bool is_pseudo(uint32_t pid)
{
	return pid >= CTRACE_PSEUDO_BASE;
}

/* The process's start (clock ticks since boot, /proc/PID/stat field 22); 0 if unknown. */
static uint64_t proc_start_ticks(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

static void read_exe(struct otlp_proc *p)
{
	char path[64];
	ssize_t n;

	p->exe[0] = '\0';
	if (is_pseudo(p->pid))
		return;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", p->pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	p->exe[n > 0 ? n : 0] = '\0';
}

static struct otlp_proc *proc_of(struct otlp_export *x, uint32_t pid)
{
	uint64_t key = pid, start;
	struct otlp_proc *p = key_map_get(&x->procs, &key, sizeof(key));
	uint64_t h;

	if (p)
		return p;
	p = xmalloc(sizeof(*p));
	p->pid = pid;
	snprintf(p->name, sizeof(p->name), "process %" PRIu32, pid);
	read_exe(p);
	/* A process's trace: the same for every tracer that attaches to it (a pseudo-process: this run's). */
	start = is_pseudo(pid) ? x->wall_minus_mono : proc_start_ticks(pid);
	/* The first target, read at the start: its events may come after it is gone (batches). */
	if (x->target && (int)pid == x->target->pid) {
		if (!*p->exe)
			snprintf(p->exe, sizeof(p->exe), "%s", x->target->exe);
		if (*x->target->comm)
			snprintf(p->name, sizeof(p->name), "%s", x->target->comm);
		if (!start)
			start = x->target->start_boottime_ns / 10000000ull; /* as /proc's ticks (USER_HZ 100) */
	}
	h = hash_bytes(0xcbf29ce484222325ull, x->host, strlen(x->host));
	h = hash_bytes(h, &key, sizeof(key));
	h = hash_bytes(h, &start, sizeof(start));
	put_be64(p->trace_id, mix(h));
	put_be64(p->trace_id + 8, mix(h ^ 0x9e3779b97f4a7c15ull));
	p->key = key;
	key_map_put(&x->procs, &p->key, sizeof(key), p);
	return p;
}

static struct otlp_thread *thread_of(struct otlp_export *x, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct otlp_thread *t = key_map_get(&x->threads, &key, sizeof(key));

	if (t)
		return t;
	t = xmalloc(sizeof(*t));
	t->key = key;
	snprintf(t->name, sizeof(t->name), "thread %" PRIu32, tid);
	key_map_put(&x->threads, &t->key, sizeof(key), t);
	return t;
}

/* A name as the JSON trace writes it: the program's bytes, or "(unreadable)". */
static void name_of(const struct ct_text *t, const char **s, size_t *n)
{
	bool fault = t->flags & CTRACE_STR_FAULT;

	*s = fault ? "(unreadable)" : t->s;
	*n = fault ? 12 : t->n;
}

static char *copy_text(struct ct_text *to, char *at, const struct ct_text *from)
{
	size_t n = from && from->s && !(from->flags & CTRACE_STR_FAULT) ? from->n : 0;

	if (n)
		memcpy(at, from->s, n);
	at[n] = '\0';
	*to = (struct ct_text){ at, n, from ? from->flags : 0 };
	return at + n + 1;
}

static size_t text_len(const struct ct_text *t)
{
	return t && t->s ? t->n : 0;
}

static void free_span(struct pend_span *s)
{
	for (size_t i = 0; i < s->n_events; i++)
		free(s->events[i]);
	free(s->events);
	free(s);
}

static void flush_batch(struct otlp_export *x);

static void unix_ns(struct otlp_buf *b, const struct otlp_export *x, uint64_t mono)
{
	ob_u64_str(b, mono + x->wall_minus_mono);
}

static void event_json(struct otlp_export *x, struct otlp_buf *b, const struct pend_instant *i)
{
	bool first = true;
	const char *s;
	size_t n;
	char scope[2] = { i->scope, 0 };

	name_of(&i->name, &s, &n);
	ob_lit(b, "{\"timeUnixNano\":");
	unix_ns(b, x, i->ts);
	ob_lit(b, ",\"name\":");
	ob_str(b, s, n);
	ob_lit(b, ",\"attributes\":[");
	ob_attr_str(b, &first, "ctrace.scope", scope, 1);
	ob_attrs_from_args(b, &first, "args", i->args.s, i->args.n);
	ob_lit(b, "]}");
}

/* One span into its process's batch; parent 0: a root. */
static void emit(struct otlp_export *x, uint32_t pid, const struct pend_span *s, uint64_t parent,
		 const struct otlp_thread *t)
{
	struct otlp_proc *p = proc_of(x, pid);
	struct otlp_buf *b = &p->spans;
	uint8_t id[8];
	bool first = true;
	const char *name;
	size_t n, before = b->n;

	name_of(&s->name, &name, &n);
	if (p->n_spans)
		ob_lit(b, ",");
	ob_lit(b, "{\"traceId\":");
	ob_hex(b, p->trace_id, 16);
	put_be64(id, s->id);
	ob_lit(b, ",\"spanId\":");
	ob_hex(b, id, 8);
	if (parent) {
		put_be64(id, parent);
		ob_lit(b, ",\"parentSpanId\":");
		ob_hex(b, id, 8);
	}
	ob_lit(b, ",\"name\":");
	ob_str(b, name, n);
	ob_lit(b, ",\"kind\":1,\"startTimeUnixNano\":"); /* SPAN_KIND_INTERNAL */
	unix_ns(b, x, s->b);
	ob_lit(b, ",\"endTimeUnixNano\":");
	unix_ns(b, x, s->e);
	ob_lit(b, ",\"attributes\":[");
	ob_attr_int(b, &first, "thread.id", s->tid);
	if (t)
		ob_attr_str(b, &first, "thread.name", t->name, strlen(t->name));
	if (s->end_tid)
		ob_attr_int(b, &first, "ctrace.end_thread.id", s->end_tid);
	if (s->why) {
		ob_attr_bool(b, &first, "ctrace.unfinished", true);
		ob_attr_str(b, &first, "ctrace.unfinished_reason", s->why, strlen(s->why));
	}
	ob_attrs_from_args(b, &first, "args", s->args.s, s->args.n);
	ob_attrs_from_args(b, &first, "args", s->end_args.s, s->end_args.n);
	ob_lit(b, "]");
	if (s->n_events) {
		ob_lit(b, ",\"events\":[");
		for (size_t i = 0; i < s->n_events; i++) {
			if (i)
				ob_lit(b, ",");
			event_json(x, b, s->events[i]);
		}
		ob_lit(b, "]");
	}
	ob_lit(b, "}");
	p->n_spans++;
	x->spans++;
	x->span_events += s->n_events;
	x->batch_spans++;
	x->batch_bytes += b->n - before;
	if (x->batch_spans >= OTLP_BATCH_SPANS || x->batch_bytes >= OTLP_BATCH_BYTES)
		flush_batch(x);
}

static uint64_t span_id(const struct otlp_export *x, uint32_t pid, uint32_t tid, uint64_t b,
			uint64_t e, const struct ct_text *name)
{
	const struct otlp_proc *p = proc_of((struct otlp_export *)x, pid);
	uint64_t h = hash_bytes(0xcbf29ce484222325ull, p->trace_id, 16);
	const char *s;
	size_t n;

	name_of(name, &s, &n);
	h = hash_bytes(h, &tid, sizeof(tid));
	h = hash_bytes(h, &b, sizeof(b));
	h = hash_bytes(h, &e, sizeof(e));
	h = hash_bytes(h, s, n);
	h = mix(h);
	return h ? h : 1; /* all zeros is "no id" in OTLP */
}

static struct pend_span *new_span(struct otlp_export *x, uint32_t pid, uint32_t tid, uint64_t b,
				  uint64_t e, const struct ct_text *name, const struct ct_text *args,
				  const struct ct_text *end_args)
{
	struct pend_span *s = xmalloc(sizeof(*s) + text_len(name) + text_len(args) + text_len(end_args) + 3);
	char *at = s->bytes;

	s->b = b;
	s->e = e;
	s->tid = tid;
	at = copy_text(&s->name, at, name);
	at = copy_text(&s->args, at, args);
	copy_text(&s->end_args, at, end_args);
	s->id = span_id(x, pid, tid, b, e, &s->name);
	return s;
}

/* The k oldest waiting spans of t go as roots (one move of the rest: k at once). */
static void release_spans(struct otlp_export *x, struct otlp_thread *t, size_t k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k; i++) {
		emit(x, (uint32_t)(t->key >> 32), t->spans[i], 0, t);
		free_span(t->spans[i]);
	}
	memmove(t->spans, t->spans + k, (t->n - k) * sizeof(*t->spans));
	t->n -= k;
	x->waiting -= k;
}

/*
 * The k oldest waiting instants of t, with no span of their thread around
 * them: each a span of no length, the instant its event.
 */
static void release_instants(struct otlp_export *x, struct otlp_thread *t, size_t k)
{
	uint32_t pid = (uint32_t)(t->key >> 32);

	if (!k)
		return;
	for (size_t i = 0; i < k; i++) {
		struct pend_instant *in = t->inst[i];
		struct pend_span *s = new_span(x, pid, (uint32_t)t->key, in->ts, in->ts, &in->name, &in->args, NULL);

		s->events = xmalloc(sizeof(*s->events));
		s->events[0] = in;
		s->n_events = 1;
		emit(x, pid, s, 0, t);
		free_span(s);
	}
	memmove(t->inst, t->inst + k, (t->ni - k) * sizeof(*t->inst));
	t->ni -= k;
	x->waiting -= k;
}

/* Past a bound, this many go at once: moving the rest once for each would cost O(bound) a span. */
#define OTLP_RELEASE_BATCH 256

static size_t release_count(size_t waiting_here)
{
	return waiting_here < OTLP_RELEASE_BATCH ? waiting_here : OTLP_RELEASE_BATCH;
}

static void on_span(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
		    const struct ct_text *name, const struct ct_text *begin_args,
		    const struct ct_text *end_args, const char *why)
{
	struct otlp_export *x = ctx;
	struct otlp_thread *t = thread_of(x, pid, tid);
	struct pend_span *s = new_span(x, pid, tid, ts_ns, ts_ns + dur_ns, name, begin_args, end_args);
	size_t k = 0;

	s->why = why;
	if (ts_ns + dur_ns > x->now_ns)
		x->now_ns = ts_ns + dur_ns;
	if (why) {
		t->open = xgrow(t->open, &t->capo, t->no + 1, sizeof(*t->open));
		t->open[t->no++] = s;
		x->waiting++;
		return;
	}
	/*
	 * Its instants: the tightest span around an instant ends first. They
	 * wait in time order, so the ones inside are at the back: the look
	 * stops at the first one before it began (a span a hit, on the hot path).
	 */
	while (k < t->ni && t->inst[t->ni - 1 - k]->ts >= s->b)
		k++;
	for (size_t i = t->ni - k, keep = i; i < t->ni; i++) {
		struct pend_instant *in = t->inst[i];

		if (in->ts <= s->e) {
			s->events = xgrow(s->events, &(size_t){ s->n_events }, s->n_events + 1, sizeof(*s->events));
			s->events[s->n_events++] = in;
			x->waiting--;
		} else {
			t->inst[keep++] = in;
		}
		if (i + 1 == t->ni)
			t->ni = keep;
	}
	/*
	 * Its children: waiting spans of this thread inside it (their own
	 * children have theirs). Those waiting are siblings, in end order, so
	 * also in begin order: the ones inside are at the back.
	 */
	while (t->n && t->spans[t->n - 1]->b >= s->b && t->spans[t->n - 1]->e <= s->e) {
		struct pend_span *c = t->spans[--t->n];

		x->waiting--;
		emit(x, pid, c, s->id, t);
		free_span(c);
	}
	t->spans = xgrow(t->spans, &t->cap, t->n + 1, sizeof(*t->spans));
	t->spans[t->n++] = s;
	x->waiting++;
	if (t->n > OTLP_PENDING_MAX || x->waiting > OTLP_WAITING_MAX) {
		size_t k = release_count(t->n);

		x->parents_not_waited += k;
		release_spans(x, t, k);
	}
}

static void on_async(void *ctx, uint32_t pid, const struct ct_text *name, uint32_t begin_tid,
		     uint64_t begin_ns, const struct ct_text *begin_args, uint32_t end_tid,
		     uint64_t end_ns, const struct ct_text *end_args)
{
	struct otlp_export *x = ctx;
	struct pend_span *s = new_span(x, pid, begin_tid, begin_ns, end_ns > begin_ns ? end_ns : begin_ns,
				       name, begin_args, end_args);

	/* Begun on one thread, ended on another: no one thread's nesting holds it, a root. */
	s->end_tid = end_tid;
	emit(x, pid, s, 0, thread_of(x, pid, begin_tid));
	free_span(s);
}

static void on_instant(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		       const struct ct_text *name, char scope, const struct ct_text *args)
{
	struct otlp_export *x = ctx;
	struct otlp_thread *t = thread_of(x, pid, tid);
	struct pend_instant *in = xmalloc(sizeof(*in) + text_len(name) + text_len(args) + 2);

	in->ts = ts_ns;
	in->scope = scope;
	copy_text(&in->args, copy_text(&in->name, in->bytes, name), args);
	if (ts_ns > x->now_ns)
		x->now_ns = ts_ns;
	t->inst = xgrow(t->inst, &t->capi, t->ni + 1, sizeof(*t->inst));
	t->inst[t->ni++] = in;
	x->waiting++;
	if (t->ni > OTLP_PENDING_MAX || x->waiting > OTLP_WAITING_MAX) {
		size_t k = release_count(t->ni);

		x->parents_not_waited += k;
		release_instants(x, t, k);
	}
}

static void on_counter(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		       const struct ct_text *name, double value)
{
	struct otlp_export *x = ctx;
	struct otlp_proc *p = proc_of(x, pid);
	struct otlp_buf *b = &p->metrics;
	bool first = true;
	const char *s;
	size_t n, before = b->n;

	name_of(name, &s, &n);
	if (p->n_points)
		ob_lit(b, ",");
	ob_lit(b, "{\"name\":");
	ob_str(b, s, n);
	ob_lit(b, ",\"gauge\":{\"dataPoints\":[{\"timeUnixNano\":");
	unix_ns(b, x, ts_ns);
	ob_lit(b, ",\"asDouble\":");
	ob_double(b, value);
	ob_lit(b, ",\"attributes\":[");
	ob_attr_int(b, &first, "thread.id", tid);
	ob_lit(b, "]}]}}");
	p->n_points++;
	x->points++;
	x->batch_points++;
	x->batch_bytes += b->n - before;
	if (ts_ns > x->now_ns)
		x->now_ns = ts_ns;
	if (x->batch_bytes >= OTLP_BATCH_BYTES)
		flush_batch(x);
}

static void on_process_name(void *ctx, uint32_t pid, const struct ct_text *name)
{
	struct otlp_export *x = ctx;
	struct otlp_proc *p = proc_of(x, pid);
	const char *s;
	size_t n;

	name_of(name, &s, &n);
	/* "process N": the model did not know its name; the one known (the target's) stays. */
	if (strncmp(s, "process ", 8) || strncmp(p->name, "process ", 8) == 0)
		snprintf(p->name, sizeof(p->name), "%.*s", (int)n, s);
	if (!is_pseudo(pid) && (int)pid != (x->target ? x->target->pid : 0))
		read_exe(p); /* named again after an exec: a new program */
}

static void on_thread_name(void *ctx, uint32_t pid, uint32_t tid, const struct ct_text *name)
{
	struct otlp_thread *t = thread_of(ctx, pid, tid);
	const char *s;
	size_t n;

	name_of(name, &s, &n);
	snprintf(t->name, sizeof(t->name), "%.*s", (int)n, s);
}

static void on_metadata(void *ctx, struct json_writer *w)
{
	struct otlp_export *x = ctx;
	struct otlp_counts live;
	const struct otlp_counts *c = &x->final;

	/* A file of --max-size's rotation ends before the export does: what is known so far. */
	if (!x->finished) {
		otlp_sender_counts(&x->sender, &live);
		c = &live;
	}
	jw_lit(w, ",\"otlp\":{\"endpoint\":");
	jw_str(w, x->where, strlen(x->where), NULL);
	jw_lit(w, ",\"encoding\":\"json\",\"clock\":\"unix ns = CLOCK_MONOTONIC ns + monotonic_to_unix_ns, taken once at the start\",\"monotonic_to_unix_ns\":");
	jw_u64(w, x->wall_minus_mono);
	jw_lit(w, ",\"spans\":");
	jw_u64(w, x->spans);
	jw_lit(w, ",\"span_events\":");
	jw_u64(w, x->span_events);
	jw_lit(w, ",\"data_points\":");
	jw_u64(w, x->points);
	jw_lit(w, ",\"parents_not_waited_for\":");
	jw_u64(w, x->parents_not_waited);
	jw_lit(w, ",\"requests_sent\":");
	jw_u64(w, c->requests_sent);
	jw_lit(w, ",\"requests_dropped\":");
	jw_u64(w, c->requests_dropped);
	jw_lit(w, ",\"requests_dropped_queue_full\":");
	jw_u64(w, c->dropped_queue_full);
	jw_lit(w, ",\"retries\":");
	jw_u64(w, c->retries);
	jw_lit(w, ",\"spans_dropped\":");
	jw_u64(w, c->spans_dropped);
	jw_lit(w, ",\"data_points_dropped\":");
	jw_u64(w, c->points_dropped);
	jw_lit(w, ",\"bytes_sent\":");
	jw_u64(w, c->bytes_sent);
	jw_lit(w, ",\"last_error\":");
	jw_str(w, c->last_error, strlen(c->last_error), NULL);
	jw_lit(w, "}");
}

/*
 * The length of exe's path without the " (deleted)" the kernel adds to
 * /proc/PID/exe once the file is gone (a program rebuilt or upgraded
 * while it runs): the service is still the program it was.
 */
static size_t exe_path_len(const char *exe)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(exe), cut = sizeof(deleted) - 1;

	return len > cut && !strcmp(exe + len - cut, deleted) ? len - cut : len;
}

/* The resource of a process: who made these spans. */
static void resource_json(const struct otlp_export *x, struct otlp_buf *b, const struct otlp_proc *p)
{
	bool first = true;
	size_t exe_len = exe_path_len(p->exe);
	const char *exe_name = strrchr(p->exe, '/') ? strrchr(p->exe, '/') + 1 : p->exe;
	size_t name_len = exe_len - (size_t)(exe_name - p->exe);

	ob_lit(b, "{\"resource\":{\"attributes\":[");
	if (name_len)
		ob_attr_str(b, &first, "service.name", exe_name, name_len);
	else
		ob_attr_str(b, &first, "service.name", p->name, strlen(p->name));
	ob_attr_str(b, &first, "host.name", x->host, strlen(x->host));
	if (is_pseudo(p->pid))
		ob_attr_int(b, &first, "ctrace.pseudo_process", p->pid - CTRACE_PSEUDO_BASE);
	else
		ob_attr_int(b, &first, "process.pid", p->pid);
	ob_attr_str(b, &first, "ctrace.process_name", p->name, strlen(p->name));
	if (*p->exe) {
		ob_attr_str(b, &first, "process.executable.name", exe_name, name_len);
		ob_attr_str(b, &first, "process.executable.path", p->exe, exe_len);
	}
	ob_lit(b, "]},");
}

static void scope_json(struct otlp_buf *b)
{
	ob_lit(b, "{\"scope\":{\"name\":\"ctrace-bpf\",\"version\":\"" CTRACE_BPF_VERSION "\"},");
}

struct flush_ctx {
	struct otlp_export *x;
	struct otlp_buf body;
	bool metrics, any;
};

static void add_proc(const void *key, size_t len, void *value, void *ctx)
{
	struct flush_ctx *f = ctx;
	struct otlp_proc *p = value;
	struct otlp_buf *part = f->metrics ? &p->metrics : &p->spans;

	(void)key;
	(void)len;
	if (!(f->metrics ? p->n_points : p->n_spans))
		return;
	if (f->any)
		ob_lit(&f->body, ",");
	f->any = true;
	resource_json(f->x, &f->body, p);
	ob_lit(&f->body, f->metrics ? "\"scopeMetrics\":[" : "\"scopeSpans\":[");
	scope_json(&f->body);
	ob_lit(&f->body, f->metrics ? "\"metrics\":[" : "\"spans\":[");
	ob_raw(&f->body, part->p, part->n);
	ob_lit(&f->body, "]}]}");
	part->n = 0;
	if (f->metrics)
		p->n_points = 0;
	else
		p->n_spans = 0;
}

/* This batch as an ExportTraceServiceRequest and an ExportMetricsServiceRequest, to the sender. */
static void flush_batch(struct otlp_export *x)
{
	for (int m = 0; m < 2; m++) {
		struct flush_ctx f = { x, { 0 }, m == 1, false };
		uint64_t items = m ? x->batch_points : x->batch_spans;

		if (!items)
			continue;
		ob_lit(&f.body, m ? "{\"resourceMetrics\":[" : "{\"resourceSpans\":[");
		key_map_each(&x->procs, add_proc, &f);
		ob_lit(&f.body, "]}");
		otlp_sender_push(&x->sender, m ? OTLP_METRICS : OTLP_TRACES, f.body.p, f.body.n, items);
	}
	x->batch_spans = x->batch_points = 0;
	x->batch_bytes = 0;
	x->batch_start_ns = 0;
}

struct tick_ctx {
	struct otlp_export *x;
	uint64_t now;
	bool all;
};

static void release_waiting(const void *key, size_t len, void *value, void *ctx)
{
	struct tick_ctx *tc = ctx;
	struct otlp_thread *t = value;

	(void)key;
	(void)len;
	size_t k = 0;

	/* In end (time) order: the first still young ends the look. */
	while (k < t->n && (tc->all || t->spans[k]->e + OTLP_HOLD_NS < tc->now))
		k++;
	release_spans(tc->x, t, k);
	for (k = 0; k < t->ni && (tc->all || t->inst[k]->ts + OTLP_HOLD_NS < tc->now);)
		k++;
	release_instants(tc->x, t, k);
	for (size_t i = 0; i < t->no;) {
		if (!tc->all && t->open[i]->e + OTLP_HOLD_NS >= tc->now) {
			i++;
			continue;
		}
		emit(tc->x, (uint32_t)(t->key >> 32), t->open[i], 0, t);
		free_span(t->open[i]);
		memmove(t->open + i, t->open + i + 1, (t->no - i - 1) * sizeof(*t->open));
		t->no--;
		tc->x->waiting--;
	}
}

void otlp_export_tick(struct otlp_export *x, uint64_t now_ns)
{
	struct tick_ctx tc = { x, now_ns, false };

	if (x->finished)
		return;
	key_map_each(&x->threads, release_waiting, &tc);
	if (!x->batch_spans && !x->batch_points)
		return;
	if (!x->batch_start_ns)
		x->batch_start_ns = now_ns;
	else if (now_ns - x->batch_start_ns >= OTLP_BATCH_NS)
		flush_batch(x);
}

/* A span or an instant, for the nesting at the end. */
struct nest_item {
	uint64_t b, e;
	size_t order;             /* as written: of equal spans, the later encloses */
	struct pend_span *s;      /* a span, or */
	struct pend_instant *in;  /* an instant (b = e = its time) */
	struct pend_span *parent;
};

/* By begin; then the longer first (the one around); same edges: spans first, the later written first. */
static int nest_cmp(const void *pa, const void *pb)
{
	const struct nest_item *a = pa, *b = pb;

	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->e != b->e)
		return a->e > b->e ? -1 : 1;
	if (!a->s != !b->s)
		return a->s ? -1 : 1;
	return a->order > b->order ? -1 : a->order < b->order;
}

/*
 * At the end the spans still open are written unfinished, in no order of
 * nesting: every span and instant still waiting on the thread takes the
 * tightest waiting span around it. Sorted by begin (the one around first),
 * a sweep with a stack of the spans still open at that point finds it:
 * O(n log n), for up to OTLP_PENDING_MAX of each.
 */
static void nest_leftovers(const void *key, size_t len, void *value, void *ctx)
{
	struct otlp_export *x = ctx;
	struct otlp_thread *t = value;
	uint32_t pid = (uint32_t)(t->key >> 32);
	size_t n_items = t->n + t->no + t->ni, depth = 0, kept = 0;
	struct nest_item *items, **stack;

	(void)key;
	(void)len;
	if (!n_items)
		return;
	items = xmalloc(n_items * sizeof(*items));
	stack = xmalloc(n_items * sizeof(*stack));
	n_items = 0;
	for (size_t i = 0; i < t->n; i++)
		items[n_items++] = (struct nest_item){ t->spans[i]->b, t->spans[i]->e, i, t->spans[i], NULL, NULL };
	for (size_t i = 0; i < t->no; i++) /* written after the finished ones */
		items[n_items++] = (struct nest_item){ t->open[i]->b, t->open[i]->e, t->n + i, t->open[i], NULL, NULL };
	for (size_t i = 0; i < t->ni; i++)
		items[n_items++] = (struct nest_item){ t->inst[i]->ts, t->inst[i]->ts, 0, NULL, t->inst[i], NULL };
	qsort(items, n_items, sizeof(*items), nest_cmp);
	for (size_t i = 0; i < n_items; i++) {
		struct nest_item *it = &items[i];

		/* Those ended before this one ends hold neither it nor anything after it. */
		while (depth && stack[depth - 1]->s->e < it->e)
			depth--;
		it->parent = depth ? stack[depth - 1]->s : NULL;
		if (it->s)
			stack[depth++] = it;
	}
	/* The instants first: a span goes out with its events. Those with none around wait (release_waiting). */
	for (size_t i = 0; i < n_items; i++) {
		struct pend_span *p = items[i].parent;

		if (items[i].s)
			continue;
		if (!p) {
			t->inst[kept++] = items[i].in;
			continue;
		}
		p->events = xgrow(p->events, &(size_t){ p->n_events }, p->n_events + 1, sizeof(*p->events));
		p->events[p->n_events++] = items[i].in;
	}
	t->ni = kept;
	for (size_t i = 0; i < n_items; i++)
		if (items[i].s)
			emit(x, pid, items[i].s, items[i].parent ? items[i].parent->id : 0, t);
	for (size_t i = 0; i < n_items; i++)
		if (items[i].s)
			free_span(items[i].s);
	t->n = t->no = 0;
	free(items);
	free(stack);
}

void otlp_export_finish(struct otlp_export *x)
{
	struct tick_ctx tc = { x, 0, true };

	if (x->finished)
		return;
	key_map_each(&x->threads, nest_leftovers, x);
	key_map_each(&x->threads, release_waiting, &tc);
	flush_batch(x);
	otlp_sender_stop(&x->sender);
	otlp_sender_counts(&x->sender, &x->final);
	x->finished = true;
}

void otlp_export_report(const struct otlp_export *x, bool quiet)
{
	const struct otlp_counts *c = &x->final;

	if (c->requests_dropped) {
		fprintf(stderr, "ctrace-bpf: otlp: %llu of %llu requests to %s dropped (%llu spans, %llu data points): %s; the JSON trace holds them (metadata.otlp counts them)\n",
			(unsigned long long)c->requests_dropped,
			(unsigned long long)(c->requests_sent + c->requests_dropped), x->where,
			(unsigned long long)c->spans_dropped, (unsigned long long)c->points_dropped,
			*c->last_error ? c->last_error : "unknown");
		return;
	}
	if (!quiet)
		fprintf(stderr, "ctrace-bpf: otlp: %llu spans (%llu span events) and %llu data points %s %s in %llu requests, %llu retried\n",
			(unsigned long long)c->spans_sent, (unsigned long long)x->span_events,
			(unsigned long long)c->points_sent, x->to_file ? "written to" : "sent to", x->where,
			(unsigned long long)c->requests_sent, (unsigned long long)c->retries);
}

bool otlp_export_path_is_file(const char *path)
{
	static const char suffix[] = ".otlp.json";
	size_t n = path ? strlen(path) : 0;

	return n >= sizeof(suffix) && !strcmp(path + n - (sizeof(suffix) - 1), suffix);
}

int otlp_export_open(struct otlp_export *x, const char *url, const char *file)
{
	memset(x, 0, sizeof(*x));
	key_map_init(&x->procs);
	key_map_init(&x->threads);
	x->to_file = file != NULL;
	x->where = file ? file : url;
	return 0;
}

int otlp_export_start(struct otlp_export *x, const struct trace_facts *facts)
{
	int fd = -1;

	if (x->to_file) {
		/* Opened as the trace is: never through a link, never over another user's file. */
		fd = output_open(x->where, &x->created);
		if (fd < 0)
			return fd;
	}
	if (gethostname(x->host, sizeof(x->host) - 1) != 0)
		snprintf(x->host, sizeof(x->host), "localhost");
	/* Once: the trace's CLOCK_MONOTONIC times become unix-epoch times by this offset. */
	x->wall_minus_mono = facts->start_wall_ns - facts->start_mono_ns;
	x->target = facts->target;
	x->obs = (struct trace_observer){
		.ctx = x,
		.span = on_span,
		.async_span = on_async,
		.instant = on_instant,
		.counter = on_counter,
		.process_name = on_process_name,
		.thread_name = on_thread_name,
		.metadata = on_metadata,
	};
	return otlp_sender_start(&x->sender, x->to_file ? NULL : x->where, fd, x->to_file ? x->where : NULL);
}

static void free_thread(const void *key, size_t len, void *value, void *ctx)
{
	struct otlp_thread *t = value;

	(void)key;
	(void)len;
	(void)ctx;
	for (size_t i = 0; i < t->n; i++)
		free_span(t->spans[i]);
	for (size_t i = 0; i < t->ni; i++)
		free(t->inst[i]);
	for (size_t i = 0; i < t->no; i++)
		free_span(t->open[i]);
	free(t->spans);
	free(t->inst);
	free(t->open);
	free(t);
}

static void free_proc(const void *key, size_t len, void *value, void *ctx)
{
	struct otlp_proc *p = value;

	(void)key;
	(void)len;
	(void)ctx;
	ob_free(&p->spans);
	ob_free(&p->metrics);
	free(p);
}

void otlp_export_close(struct otlp_export *x, bool remove)
{
	otlp_sender_stop(&x->sender);
	key_map_each(&x->threads, free_thread, NULL);
	key_map_free(&x->threads);
	key_map_each(&x->procs, free_proc, NULL);
	key_map_free(&x->procs);
	if (remove && x->created)
		unlink(x->where);
}
