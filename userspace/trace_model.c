// SPDX-License-Identifier: MIT
#include "trace_model.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args_json.h"
#include "json_check.h"
#include "proc_info.h"

struct context {
	uint32_t pid; /* pseudo pid */
};

struct shown_thread {
	uint32_t tid; /* the tid the trace shows */
};

/* A copied string of an event: bytes and their CTRACE_STR_* status. */
struct text {
	char *s;
	size_t n;
	unsigned flags;
};

struct open_span {
	uint64_t ts_ns;
	uint32_t pid, tid;   /* as shown */
	uint32_t real_tid;
	struct text name, args;
};

struct pair_key {
	uint64_t a, b;
};

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return p;
}

static struct text text_copy(const char *s, size_t n, unsigned flags)
{
	struct text t = { xcalloc(n + 1), n, flags };

	if (n)
		memcpy(t.s, s, n);
	return t;
}

static bool thread_comm(struct trace_model *m, uint32_t tgid, uint32_t tid,
			char *buf, size_t len);
static bool known_comm(struct trace_model *m, uint32_t tgid, uint32_t tid,
		       char *buf, size_t len);

void trace_model_init(struct trace_model *m, struct trace_file *tf,
		      struct trace_stats *stats)
{
	memset(m, 0, sizeof(*m));
	m->tf = tf;
	m->stats = stats;
	key_map_init(&m->contexts);
	key_map_init(&m->threads);
	key_map_init(&m->procs);
	key_map_init(&m->counters);
	key_map_init(&m->spans);
	key_map_init(&m->names);
	key_map_init(&m->ended);
	key_map_init(&m->from_start);
	m->next_pseudo = CTRACE_PSEUDO_BASE;
	m->next_async_id = 1; /* DevTools ignores async id 0 */
}

void trace_model_traced_from_start(struct trace_model *m, uint32_t pid)
{
	uint64_t key = pid;

	key_map_put(&m->from_start, &key, sizeof(key), (void *)1);
}

void trace_model_add_process(struct trace_model *m, uint32_t pid)
{
	uint64_t key = pid;
	char comm[64];

	if (key_map_get(&m->procs, &key, sizeof(key)))
		return;
	key_map_put(&m->procs, &key, sizeof(key), (void *)1);
	/*
	 * The name learned when tracing started, before /proc's: a process
	 * that exec'd since is named after its old program first, then the
	 * exec renames it (process_change()).
	 */
	if (!known_comm(m, pid, pid, comm, sizeof(comm)) &&
	    !thread_comm(m, pid, pid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "process %" PRIu32, pid);
	te_metadata_name(m->tf, "process_name", pid, pid, comm, strlen(comm), 0);
}

void trace_model_learn_threads(struct trace_model *m, uint32_t pid)
{
	char path[48], comm[32];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task", pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		struct pair_key key = { pid, strtoull(d->d_name, NULL, 10) };
		char *known;

		if (!key.b || !proc_thread_comm((int)pid, (int)key.b, comm, sizeof(comm)))
			continue;
		known = key_map_get(&m->names, &key, sizeof(key));
		if (known && !strcmp(known, comm))
			continue;
		free(key_map_put(&m->names, &key, sizeof(key), strdup(comm)));
		/*
		 * Renamed (pthread_setname_np) since the trace named it: name it
		 * again; viewers keep the last name.
		 */
		if (known && key_map_get(&m->threads, &key, sizeof(key)))
			te_metadata_name(m->tf, "thread_name", pid, (uint32_t)key.b, comm,
					 strlen(comm), 0);
	}
	closedir(dir);
}

/* The name learned from /proc before (learn_threads, a fork), if any. */
static bool known_comm(struct trace_model *m, uint32_t tgid, uint32_t tid,
		       char *buf, size_t len)
{
	struct pair_key key = { tgid, tid };
	const char *known = key_map_get(&m->names, &key, sizeof(key));

	if (!known)
		return false;
	snprintf(buf, len, "%s", known);
	return true;
}

/* The name of a real thread: from /proc now (it may have been renamed), else the last one seen. */
static bool thread_comm(struct trace_model *m, uint32_t tgid, uint32_t tid,
			char *buf, size_t len)
{
	if (proc_thread_comm((int)tgid, (int)tid, buf, len))
		return true;
	return known_comm(m, tgid, tid, buf, len);
}

/* The tid to show for real thread `tid` of `tgid` in process `pid`. */
static uint32_t shown_tid(struct trace_model *m, uint32_t pid, uint32_t tgid,
			  uint32_t tid)
{
	struct pair_key key = { pid, tid };
	struct shown_thread *t = key_map_get(&m->threads, &key, sizeof(key));
	char comm[32], name[64];

	if (t)
		return t->tid;
	t = xcalloc(sizeof(*t));
	t->tid = pid == tgid ? tid : m->next_pseudo++;
	key_map_put(&m->threads, &key, sizeof(key), t);
	if (!thread_comm(m, tgid, tid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "thread");
	if (pid == tgid && strcmp(comm, "thread"))
		snprintf(name, sizeof(name), "%s", comm);
	else
		snprintf(name, sizeof(name), "%s (tid %" PRIu32 ")", comm, tid);
	te_metadata_name(m->tf, "thread_name", pid, t->tid, name, strlen(name), 0);
	return t->tid;
}

/* Where an event of `marker` from this thread goes: pid and tid to show. */
static void resolve(struct trace_model *m, uint32_t tgid, uint32_t tid,
		    uint64_t marker, uint32_t *pid, uint32_t *tid_out)
{
	struct pair_key key = { tgid, marker };
	struct context *c = marker ? key_map_get(&m->contexts, &key, sizeof(key)) : NULL;

	*pid = c ? c->pid : tgid;
	/* The common case, the same real thread as last time: already named. */
	if (!c && tgid == m->last_tgid && tid == m->last_tid) {
		*tid_out = tid;
		return;
	}
	trace_model_add_process(m, tgid);
	*tid_out = shown_tid(m, *pid, tgid, tid);
	if (!c) {
		m->last_tgid = tgid;
		m->last_tid = tid;
	}
}

/* The args of an event as a cJSON object; NULL when there are none. */
static cJSON *args_of(const char *s, size_t n, unsigned flags)
{
	cJSON *o;

	if (!n && !flags)
		return NULL; /* the common case: no cJSON tree to build */
	if (flags & CTRACE_STR_FAULT) {
		o = cJSON_CreateObject();
		cJSON_AddTrueToObject(o, "args_unreadable");
		return o;
	}
	o = args_parse(s, n, flags & CTRACE_STR_TRUNCATED);
	if (!o) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return o;
}

/* Writes ,"args":{...} unless the object is empty; frees it. */
static void write_args(struct trace_model *m, cJSON *o)
{
	if (!o)
		return;
	if (o->child) {
		te_key(m->tf, "args");
		jw_cjson(m->tf->w, o);
	}
	cJSON_Delete(o);
}

/*
 * Writes an event's args text: a clean JSON object goes out as it is (most
 * do); anything else through cJSON, which repairs or wraps it.
 */
static void write_args_text(struct trace_model *m, const char *s, size_t n,
			    unsigned flags)
{
	size_t start, len;

	if (!n && !flags)
		return;
	if (!flags && json_plain_object(s, n, &start, &len)) {
		if (len > 2) { /* not {} */
			te_key(m->tf, "args");
			jw_raw(m->tf->w, s + start, len);
		}
		return;
	}
	write_args(m, args_of(s, n, flags));
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

static void free_span(struct open_span *s)
{
	free(s->name.s);
	free(s->args.s);
	free(s);
}

/* The start of an "X": everything but its args. */
static void complete_head(struct trace_model *m, const struct open_span *s,
			  uint64_t end_ns)
{
	uint64_t dur = end_ns > s->ts_ns ? end_ns - s->ts_ns : 0;

	te_begin(m->tf, "X", s->pid, s->tid, s->ts_ns);
	te_name(m->tf, s->name.s, s->name.n, s->name.flags);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"dur\":");
	jw_ts_us(m->tf->w, dur);
}

static void write_complete(struct trace_model *m, const struct open_span *s,
			   uint64_t end_ns, cJSON *args)
{
	complete_head(m, s, end_ns);
	write_args(m, args);
	te_end(m->tf);
}

/* An "X" whose args are one event's text (the fast path, no cJSON tree). */
static void write_complete_text(struct trace_model *m, const struct open_span *s,
				uint64_t end_ns, const char *args, size_t n, unsigned flags)
{
	complete_head(m, s, end_ns);
	write_args_text(m, args, n, flags);
	te_end(m->tf);
}

static void write_unfinished(struct trace_model *m, struct open_span *s,
			     uint64_t stop_ns, const char *why)
{
	cJSON *args = args_of(s->args.s, s->args.n, s->args.flags);

	if (!args)
		args = cJSON_CreateObject();
	cJSON_AddTrueToObject(args, "unfinished");
	cJSON_AddStringToObject(args, "unfinished_reason", why);
	write_complete(m, s, stop_ns, args);
	m->stats->unfinished_spans++;
}

static void span_begin(struct trace_model *m, const struct ctrace_event *ev)
{
	struct pair_key key = { ev->tgid, ev->arg[1] };
	struct open_span *s = xcalloc(sizeof(*s)), *old;

	s->ts_ns = ev->ts_ns;
	s->real_tid = ev->tid;
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &s->pid, &s->tid);
	s->name = text_copy(ev->name, ev->name_len, ev->name_flags);
	s->args = text_copy(ev->args, ev->args_len, ev->args_flags);
	key_map_del(&m->ended, &key, sizeof(key));
	old = key_map_put(&m->spans, &key, sizeof(key), s);
	if (old) {
		write_unfinished(m, old, ev->ts_ns, "its span was begun again before it ended");
		free_span(old);
	}
}

static void unmatched_end(struct trace_model *m, const struct ctrace_event *ev)
{
	static const char name[] = "ctrace: span end without begin";
	uint32_t pid, tid;
	char addr[32];

	m->stats->unmatched_ends++;
	resolve(m, ev->tgid, ev->tid, 0, &pid, &tid);
	te_begin(m->tf, "I", pid, tid, ev->ts_ns);
	te_name(m->tf, name, sizeof(name) - 1, 0);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"t\",\"args\":{\"span\":");
	snprintf(addr, sizeof(addr), "0x%" PRIx64, ev->arg[0]);
	jw_str(m->tf->w, addr, strlen(addr), NULL);
	jw_lit(m->tf->w, "}");
	te_end(m->tf);
}

/* Addresses of ended spans kept, at most (a program may use endless heap addresses). */
#define ENDED_SPANS_MAX (1u << 20)

static void remember_ended(struct trace_model *m, const struct pair_key *key)
{
	if (m->ended.count >= ENDED_SPANS_MAX)
		key_map_free(&m->ended); /* forgotten ones count as begun before tracing */
	key_map_put(&m->ended, key, sizeof(*key), (void *)1);
}

/*
 * An END with no open span: if its span was ended before (and not begun
 * since), it is ended twice, a mistake, shown. If this address was never
 * seen, its BEGIN may have run before the tracer came (or the span was
 * never begun: the two cannot be told apart), which is no mistake of the
 * user's: counted in metadata only, unless the process was traced from its
 * first instruction, where it can only be a mistake.
 */
static void end_without_begin(struct trace_model *m, const struct ctrace_event *ev,
			      const struct pair_key *key)
{
	uint64_t tgid = ev->tgid;

	if (!key_map_get(&m->ended, key, sizeof(*key)) &&
	    !key_map_get(&m->from_start, &tgid, sizeof(tgid)))
		m->stats->spans_begun_before_tracing++;
	else
		unmatched_end(m, ev);
	remember_ended(m, key);
}

static void span_end(struct trace_model *m, const struct ctrace_event *ev)
{
	struct pair_key key = { ev->tgid, ev->arg[0] };
	struct open_span *s = key_map_del(&m->spans, &key, sizeof(key));

	if (!s) {
		end_without_begin(m, ev, &key);
		return;
	}
	remember_ended(m, &key);
	if (s->real_tid == ev->tid) {
		/* Args from one end only (the usual case) need no merging. */
		if (!ev->args_len && !ev->args_flags)
			write_complete_text(m, s, ev->ts_ns, s->args.s, s->args.n, s->args.flags);
		else if (!s->args.n && !s->args.flags)
			write_complete_text(m, s, ev->ts_ns, ev->args, ev->args_len, ev->args_flags);
		else
			write_complete(m, s, ev->ts_ns,
				       merge_args(args_of(s->args.s, s->args.n, s->args.flags),
						  args_of(ev->args, ev->args_len, ev->args_flags)));
	} else {
		/* Ended on another thread: an async pair on the span's process. */
		char id[32];
		uint32_t end_tid = shown_tid(m, s->pid, ev->tgid, ev->tid);

		snprintf(id, sizeof(id), "0x%" PRIx64, m->next_async_id++);
		te_begin(m->tf, "b", s->pid, s->tid, s->ts_ns);
		te_name(m->tf, s->name.s, s->name.n, s->name.flags);
		jw_lit(m->tf->w, ",\"cat\":\"ctrace.async\",\"id\":\"");
		jw_lit(m->tf->w, id);
		jw_lit(m->tf->w, "\"");
		write_args_text(m, s->args.s, s->args.n, s->args.flags);
		te_end(m->tf);
		te_begin(m->tf, "e", s->pid, end_tid, ev->ts_ns);
		te_name(m->tf, s->name.s, s->name.n, s->name.flags);
		jw_lit(m->tf->w, ",\"cat\":\"ctrace.async\",\"id\":\"");
		jw_lit(m->tf->w, id);
		jw_lit(m->tf->w, "\"");
		write_args_text(m, ev->args, ev->args_len, ev->args_flags);
		te_end(m->tf);
	}
	free_span(s);
}

/*
 * A CTRACE_SCOPE, from its end. SCOPE_TSC carries the end's TSC: both edges
 * go through the one monotonic TSC mapping, so nested scopes nest exactly.
 * Old-form SCOPE: the end is when the probe ran, the start that minus the
 * ticks (a child can then stick out of its parent by the probe's jitter).
 */
static void scope(struct trace_model *m, const struct ctrace_event *ev)
{
	struct open_span s = { 0 };
	uint64_t end = ev->ts_ns, dur;

	if (ev->kind == CTRACE_KIND_SCOPE_TSC && m->tsc) {
		end = tsc_clock_to_ns(m->tsc, ev->tsc);
		s.ts_ns = tsc_clock_to_ns(m->tsc, ev->arg[3] <= ev->tsc ? ev->tsc - ev->arg[3] : 0);
	} else {
		dur = m->tsc ? tsc_clock_ticks_to_ns(m->tsc, ev->arg[3]) : 0;
		s.ts_ns = dur < ev->ts_ns ? ev->ts_ns - dur : 0;
	}
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &s.pid, &s.tid);
	s.name.s = (char *)ev->name;
	s.name.n = ev->name_len;
	s.name.flags = ev->name_flags;
	write_complete_text(m, &s, end, ev->args, ev->args_len, ev->args_flags);
}

static void instant(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t pid, tid;
	const char *scope;

	switch (ev->arg[2]) {
	case 'g': scope = "g"; break;
	case 'p': scope = "p"; break;
	default: scope = "t"; break; /* the format's default, for any other value */
	}
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &pid, &tid);
	/*
	 * "I", not "i": Perfetto and catapult read both, Chrome DevTools draws
	 * only "I" (Chromium's own phase letter).
	 */
	te_begin(m->tf, "I", pid, tid, ev->ts_ns);
	te_name(m->tf, ev->name, ev->name_len, ev->name_flags);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"");
	jw_lit(m->tf->w, scope);
	jw_lit(m->tf->w, "\"");
	write_args_text(m, ev->args, ev->args_len, ev->args_flags);
	te_end(m->tf);
}

static void jw_double_text(struct json_writer *w, double v)
{
	jw_lit(w, isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
}

/*
 * A sample that is not a finite number is left out of the counter's track
 * (viewers take a track with a string value for a track of strings, and
 * JSON has no NaN), and the counter keeps its last value. What it was is
 * shown where it happened, as an instant on that thread, and counted.
 */
static void non_finite_sample(struct trace_model *m, const struct ctrace_event *ev,
			      uint32_t pid, uint32_t tid, double sample, double added)
{
	static const char name[] = "ctrace: counter sample not a number";

	m->stats->non_finite_counter_samples++;
	te_begin(m->tf, "I", pid, tid, ev->ts_ns);
	te_name(m->tf, name, sizeof(name) - 1, 0);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"t\",\"args\":{\"counter\":");
	jw_str(m->tf->w, ev->name, ev->name_len, NULL);
	jw_lit(m->tf->w, ",\"value\":");
	jw_double_text(m->tf->w, sample);
	if (ev->kind == CTRACE_KIND_COUNTER_ADD) {
		jw_lit(m->tf->w, ",\"added\":");
		if (isfinite(added))
			jw_double(m->tf->w, added);
		else
			jw_double_text(m->tf->w, added);
	}
	jw_lit(m->tf->w, "}");
	te_end(m->tf);
}

static void counter(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t pid, tid;
	double v, sample, *slot;
	size_t klen;
	char key[sizeof(uint32_t) + 1 + CTRACE_NAME_MAX];

	memcpy(&v, &ev->arg[2], sizeof(v));
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &pid, &tid);
	/* Key: context pid, name flags, name bytes. */
	memcpy(key, &pid, sizeof(pid));
	key[sizeof(pid)] = (char)ev->name_flags;
	if (ev->name_len)
		memcpy(key + sizeof(pid) + 1, ev->name, ev->name_len);
	klen = sizeof(pid) + 1 + ev->name_len;
	slot = key_map_get(&m->counters, key, klen);
	sample = ev->kind == CTRACE_KIND_COUNTER_ADD ? (slot ? *slot : 0) + v : v;
	if (!isfinite(sample)) {
		non_finite_sample(m, ev, pid, tid, sample, v);
		return;
	}
	if (!slot) {
		slot = xcalloc(sizeof(*slot));
		key_map_put(&m->counters, key, klen, slot);
	}
	*slot = sample;

	te_begin(m->tf, "C", pid, tid, ev->ts_ns);
	te_name(m->tf, ev->name, ev->name_len, ev->name_flags);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"args\":{\"value\":");
	jw_double(m->tf->w, *slot);
	jw_lit(m->tf->w, "}");
	te_end(m->tf);
}

static void new_pid(struct trace_model *m, const struct ctrace_event *ev)
{
	struct pair_key key = { ev->tgid, ev->arg[0] };
	struct context *c, *old;
	char fallback[48];

	if (!ev->arg[0])
		return; /* NULL is the process itself, always */
	c = xcalloc(sizeof(*c));
	c->pid = m->next_pseudo++;
	old = key_map_put(&m->contexts, &key, sizeof(key), c);
	free(old);
	if (ev->name_len && !(ev->name_flags & CTRACE_STR_FAULT)) {
		te_metadata_name(m->tf, "process_name", c->pid, c->pid, ev->name,
				 ev->name_len, ev->name_flags);
	} else {
		snprintf(fallback, sizeof(fallback), "pseudo-process %" PRIu32,
			 c->pid - CTRACE_PSEUDO_BASE);
		te_metadata_name(m->tf, "process_name", c->pid, c->pid, fallback,
				 strlen(fallback), 0);
	}
}

/* What the kernel said about a process, as a process-scoped instant. */
static void process_change(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t tgid = (uint32_t)ev->arg[0], pid, tid;
	char comm[32];

	resolve(m, tgid, ev->tid, 0, &pid, &tid);
	te_begin(m->tf, "I", pid, tid, ev->ts_ns);
	if (ev->kind == CTRACE_KIND_FORK) {
		te_name(m->tf, "ctrace: fork", 12, 0);
		jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"p\",\"args\":{\"child_pid\":");
		jw_u64(m->tf->w, ev->arg[1]);
		jw_lit(m->tf->w, "}");
		te_end(m->tf);
		if (ev->name_len) {
			/* A child may be gone before /proc is read: its comm came with the fork. */
			struct pair_key child = { ev->arg[1], ev->arg[1] };
			char *comm_copy = calloc(1, ev->name_len + 1);

			if (comm_copy) {
				memcpy(comm_copy, ev->name, ev->name_len);
				free(key_map_put(&m->names, &child, sizeof(child), comm_copy));
			}
		}
		trace_model_add_process(m, (uint32_t)ev->arg[1]);
		trace_model_traced_from_start(m, (uint32_t)ev->arg[1]);
		return;
	}
	te_name(m->tf, "ctrace: exec", 12, 0);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"p\",\"args\":{\"path\":");
	jw_str(m->tf->w, ev->name, ev->name_len, NULL);
	jw_lit(m->tf->w, "}");
	te_end(m->tf);
	/* The process has a new name now: say it (viewers keep the last). */
	if (proc_thread_comm((int)tgid, (int)tgid, comm, sizeof(comm)))
		te_metadata_name(m->tf, "process_name", tgid, tgid, comm, strlen(comm), 0);
}

static void discard(struct trace_model *m, const struct ctrace_event *ev)
{
	struct pair_key key = { ev->tgid, ev->arg[0] };

	free(key_map_del(&m->contexts, &key, sizeof(key)));
}

void trace_model_event(struct trace_model *m, const struct ctrace_event *ev)
{
	switch (ev->kind) {
	case CTRACE_KIND_SPAN_BEGIN: span_begin(m, ev); break;
	case CTRACE_KIND_SPAN_END: span_end(m, ev); break;
	case CTRACE_KIND_INSTANT: instant(m, ev); break;
	case CTRACE_KIND_COUNTER_SET:
	case CTRACE_KIND_COUNTER_ADD: counter(m, ev); break;
	case CTRACE_KIND_NEW_PID: new_pid(m, ev); break;
	case CTRACE_KIND_DISCARD: discard(m, ev); break;
	case CTRACE_KIND_SCOPE:
	case CTRACE_KIND_SCOPE_TSC: scope(m, ev); break;
	case CTRACE_KIND_FORK:
	case CTRACE_KIND_EXEC: process_change(m, ev); break;
	case CTRACE_KIND_LINK_MAP: break; /* the loader's cue to look at the maps: nothing to show */
	default: m->stats->bad_records++; break;
	}
}

void trace_model_drops(struct trace_model *m, uint32_t pid, uint64_t ts_ns,
		       uint64_t lost, uint64_t total)
{
	static const char name[] = "ctrace: events dropped";

	trace_model_add_process(m, pid);
	te_begin(m->tf, "I", pid, pid, ts_ns);
	te_name(m->tf, name, sizeof(name) - 1, 0);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"g\",\"args\":{\"dropped\":");
	jw_u64(m->tf->w, lost);
	jw_lit(m->tf->w, ",\"dropped_total\":");
	jw_u64(m->tf->w, total);
	jw_lit(m->tf->w, ",\"why\":\"the ring buffer was full: raise --buffer-size\"}");
	te_end(m->tf);
}

struct finish_ctx {
	struct trace_model *m;
	uint64_t stop_ns;
};

static void finish_span(const void *key, size_t len, void *value, void *ctx)
{
	struct finish_ctx *f = ctx;

	(void)key;
	(void)len;
	write_unfinished(f->m, value, f->stop_ns, "still open when tracing stopped");
	free_span(value);
}

static void free_value(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	if (value != (void *)1)
		free(value);
}

void trace_model_finish(struct trace_model *m, uint64_t stop_ns)
{
	struct finish_ctx f = { m, stop_ns };

	key_map_each(&m->spans, finish_span, &f);
	key_map_free(&m->spans);
	key_map_each(&m->contexts, free_value, NULL);
	key_map_free(&m->contexts);
	key_map_each(&m->threads, free_value, NULL);
	key_map_free(&m->threads);
	key_map_each(&m->counters, free_value, NULL);
	key_map_free(&m->counters);
	key_map_free(&m->procs);
	key_map_each(&m->names, free_value, NULL);
	key_map_free(&m->names);
	key_map_free(&m->ended);
	key_map_free(&m->from_start);
}
