// SPDX-License-Identifier: MIT
#include "trace_model.h"

#include <dirent.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args_json.h"
#include "json_check.h"
#include "proc_info.h"

struct pair_key {
	uint64_t a, b;
};

/* Each value of a bounded table starts with its bound_entry and keeps its key. */
struct context {
	struct bound_entry e;
	struct pair_key key;
	uint32_t pid; /* pseudo pid */
};

struct shown_thread {
	struct bound_entry e;
	struct pair_key key;
	uint32_t tid; /* the tid the trace shows */
};

struct counter {
	struct bound_entry e;
	double value;
	size_t key_len;
	char key[]; /* context pid, name flags, name bytes */
};

struct thread_name {
	struct bound_entry e;
	struct pair_key key;
	char s[];
};

/* A process in procs or from_start. */
struct proc_mark {
	struct bound_entry e;
	uint64_t key;
};

/* A copied string of an event: bytes and their CTRACE_STR_* status. */
struct text {
	char *s;
	size_t n;
	unsigned flags;
};

struct open_span {
	struct bound_entry e;
	struct pair_key key;
	uint64_t ts_ns;
	uint32_t pid, tid;   /* as shown */
	uint32_t real_tid;
	struct text name, args; /* in bytes[]: one allocation a span */
	char bytes[];
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

/* Copies an event's string to `to`, NUL-terminated; returns the place after it. */
static char *text_copy(struct text *t, char *to, const char *s, size_t n, unsigned flags)
{
	if (n)
		memcpy(to, s, n);
	to[n] = '\0';
	*t = (struct text){ to, n, flags };
	return to + n + 1;
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
	tb_init(&m->b_spans, "open_spans",
		"the oldest open span is written as unfinished (unfinished_reason says so) and forgotten; its END, if it comes, is counted in metadata.ends_of_evicted_spans", 0);
	tb_init(&m->b_counters, "counters",
		"the counter updated least recently is forgotten: a later COUNTER_ADD to it starts again from 0", 0);
	tb_init(&m->b_contexts, "pseudo_processes",
		"the marker used least recently (NEW_PID without DISCARD) is discarded: its later events go to the real process", 0);
	tb_init(&m->b_threads, "threads",
		"the thread that sent an event least recently is forgotten: named again if it comes back (in a pseudo-process, with a new pseudo tid)", 0);
	tb_init(&m->b_names, "thread_names",
		"the name learned least recently is forgotten: such a thread is named from /proc, if it is still there", 0);
	tb_init(&m->b_procs, "processes",
		"the process seen least recently is forgotten: named again if it comes back", 0);
	tb_init(&m->b_from_start, "traced_from_start",
		"the oldest process is forgotten: an END without BEGIN in it is then counted as begun before tracing", 0);
	tb_init(&m->b_ended, "ended_spans",
		"every remembered END is forgotten at once: an END after one of them is then counted as begun before tracing", 0);
	trace_model_limit_memory(m, TRACE_MEMORY_DEFAULT, NULL, NULL);
}

/*
 * The first eviction of a table, shown once where it happened: later ones
 * are only counted (metadata.memory), so the trace does not grow with them.
 */
static void first_eviction(struct table_bound *tb, void *ctx)
{
	static const char name[] = "ctrace: memory bound reached";
	struct trace_model *m = ctx;

	trace_model_add_process(m, m->now_tgid);
	te_begin(m->tf, "I", m->now_tgid, m->now_tgid, m->now_ns);
	te_name(m->tf, name, sizeof(name) - 1, 0);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"s\":\"g\",\"args\":{\"table\":");
	jw_str(m->tf->w, tb->name, strlen(tb->name), NULL);
	jw_lit(m->tf->w, ",\"bound_bytes\":");
	jw_u64(m->tf->w, tb->limit);
	jw_lit(m->tf->w, ",\"max_memory\":");
	jw_u64(m->tf->w, m->stats->max_memory);
	jw_lit(m->tf->w, ",\"rule\":");
	jw_str(m->tf->w, tb->rule, strlen(tb->rule), NULL);
	jw_lit(m->tf->w, ",\"why\":\"the traced process keeps more than --max-memory allows; every eviction is counted in metadata.memory\"}");
	te_end(m->tf);
}

/* Shares of the tables' budget, per mille (the literal cache's last). */
static const struct {
	size_t off;
	unsigned per_mille;
} shares[] = {
	{ offsetof(struct trace_model, b_spans), 325 },
	{ offsetof(struct trace_model, b_counters), 150 },
	{ offsetof(struct trace_model, b_contexts), 100 },
	{ offsetof(struct trace_model, b_threads), 100 },
	{ offsetof(struct trace_model, b_names), 50 },
	{ offsetof(struct trace_model, b_procs), 25 },
	{ offsetof(struct trace_model, b_from_start), 25 },
	{ offsetof(struct trace_model, b_ended), 50 },
};
/* and the session's tables: */
#define LITERALS_PER_MILLE 125
#define FILE_MAPS_PER_MILLE 50

/* Hooks a table of the session's to the model: its limit, its notice, metadata. */
static void bound_outside(struct trace_model *m, struct table_bound *tb, uint64_t limit)
{
	tb->limit = limit;
	tb->on_first_eviction = first_eviction;
	tb->ctx = m;
	m->stats->bounds[m->stats->n_bounds++] = tb;
}

void trace_model_limit_memory(struct trace_model *m, uint64_t max_memory,
			      struct literal_cache *literals, struct file_maps *files)
{
	uint64_t tables = max_memory > TRACE_MEMORY_RESERVE ? max_memory - TRACE_MEMORY_RESERVE : 0;

	m->stats->max_memory = max_memory;
	m->stats->n_bounds = 0;
	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
		struct table_bound *tb = (struct table_bound *)((char *)m + shares[i].off);

		tb->limit = tables / 1000 * shares[i].per_mille;
		tb->on_first_eviction = first_eviction;
		tb->ctx = m;
		m->stats->bounds[m->stats->n_bounds++] = tb;
	}
	if (literals)
		bound_outside(m, &literals->bound, tables / 1000 * LITERALS_PER_MILLE);
	if (files)
		bound_outside(m, &files->bound, tables / 1000 * FILE_MAPS_PER_MILLE);
}

/* A process in a set of processes (procs, from_start); true if it was there. */
static bool proc_mark(struct key_map *map, struct table_bound *tb,
		      uint32_t pid)
{
	uint64_t key = pid;
	struct proc_mark *p = key_map_get(map, &key, sizeof(key));

	if (p) {
		tb_touch(tb, &p->e);
		return true;
	}
	p = xcalloc(sizeof(*p));
	p->key = key;
	key_map_put(map, &p->key, sizeof(p->key), p);
	tb_add(tb, &p->e, &p->key, sizeof(p->key), tb_alloc_cost(sizeof(*p)) + tb_slot_cost(sizeof(key)));
	while (tb_over(tb))
		free(tb_evict(tb, map));
	return false;
}

void trace_model_traced_from_start(struct trace_model *m, uint32_t pid)
{
	proc_mark(&m->from_start, &m->b_from_start, pid);
}

void trace_model_add_process(struct trace_model *m, uint32_t pid)
{
	char comm[64];

	if (proc_mark(&m->procs, &m->b_procs, pid))
		return;
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

/* Remembers the name of a thread (from /proc, or from a fork record). */
static void remember_name(struct trace_model *m, const struct pair_key *key, const char *s,
			  size_t n)
{
	struct thread_name *t = malloc(sizeof(*t) + n + 1), *old;

	if (!t)
		return;
	t->key = *key;
	memcpy(t->s, s, n);
	t->s[n] = '\0';
	old = key_map_put(&m->names, &t->key, sizeof(t->key), t);
	if (old) {
		tb_remove(&m->b_names, &old->e);
		free(old);
	}
	tb_add(&m->b_names, &t->e, &t->key, sizeof(t->key),
	       tb_alloc_cost(sizeof(*t) + n + 1) + tb_slot_cost(sizeof(t->key)));
	while (tb_over(&m->b_names))
		free(tb_evict(&m->b_names, &m->names));
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
		struct thread_name *known;

		if (!key.b || !proc_thread_comm((int)pid, (int)key.b, comm, sizeof(comm)))
			continue;
		known = key_map_get(&m->names, &key, sizeof(key));
		if (known && !strcmp(known->s, comm)) {
			tb_touch(&m->b_names, &known->e);
			continue;
		}
		remember_name(m, &key, comm, strlen(comm));
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
	const struct thread_name *known = key_map_get(&m->names, &key, sizeof(key));

	if (!known)
		return false;
	snprintf(buf, len, "%s", known->s);
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

	if (t) {
		tb_touch(&m->b_threads, &t->e);
		return t->tid;
	}
	t = xcalloc(sizeof(*t));
	t->key = key;
	t->tid = pid == tgid ? tid : m->next_pseudo++;
	key_map_put(&m->threads, &t->key, sizeof(t->key), t);
	tb_add(&m->b_threads, &t->e, &t->key, sizeof(t->key),
	       tb_alloc_cost(sizeof(*t)) + tb_slot_cost(sizeof(t->key)));
	while (tb_over(&m->b_threads))
		free(tb_evict(&m->b_threads, &m->threads));
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

	if (c)
		tb_touch(&m->b_contexts, &c->e);
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

static void remember_evicted(struct trace_model *m, const struct pair_key *key);

static void span_begin(struct trace_model *m, const struct ctrace_event *ev)
{
	size_t size = sizeof(struct open_span) + ev->name_len + 1 + ev->args_len + 1;
	struct open_span *s = malloc(size), *old;

	if (!s) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	s->key = (struct pair_key){ ev->tgid, ev->arg[1] };
	s->ts_ns = ev->ts_ns;
	s->real_tid = ev->tid;
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &s->pid, &s->tid);
	text_copy(&s->args, text_copy(&s->name, s->bytes, ev->name, ev->name_len, ev->name_flags),
		  ev->args, ev->args_len, ev->args_flags);
	key_map_del(&m->ended, &s->key, sizeof(s->key));
	old = key_map_put(&m->spans, &s->key, sizeof(s->key), s);
	if (old) {
		tb_remove(&m->b_spans, &old->e);
		write_unfinished(m, old, ev->ts_ns, "its span was begun again before it ended");
		free_span(old);
	}
	tb_add(&m->b_spans, &s->e, &s->key, sizeof(s->key),
	       tb_alloc_cost(size) + tb_slot_cost(sizeof(s->key)));
	/*
	 * Over budget: the oldest open span is the likeliest to have lost its
	 * END (a leak in the program); it is written now, as unfinished.
	 */
	while (tb_over(&m->b_spans)) {
		old = tb_evict(&m->b_spans, &m->spans);
		write_unfinished(m, old, ev->ts_ns,
				 "evicted: more spans open than --max-memory allows, this one the oldest");
		remember_evicted(m, &old->key);
		free_span(old);
	}
}

/*
 * Addresses of ended spans, for telling an END twice from one whose BEGIN
 * came before the tracer: (void *)1 ended, (void *)2 evicted while open. A
 * program may use endless heap addresses: at its bound, the table is
 * emptied at once (no per-entry order to keep: this is on every END's path).
 */
#define ENDED_SPAN ((void *)1)
#define EVICTED_SPAN ((void *)2)

static void remember_as(struct trace_model *m, const struct pair_key *key, void *what)
{
	if (m->ended.count * tb_slot_cost(sizeof(*key)) >= m->b_ended.limit && m->ended.count) {
		tb_count_evicted(&m->b_ended, m->ended.count);
		key_map_free(&m->ended);
	}
	key_map_put(&m->ended, key, sizeof(*key), what);
}

static void remember_ended(struct trace_model *m, const struct pair_key *key)
{
	remember_as(m, key, ENDED_SPAN);
}

static void remember_evicted(struct trace_model *m, const struct pair_key *key)
{
	remember_as(m, key, EVICTED_SPAN);
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
	void *was = key_map_get(&m->ended, key, sizeof(*key));

	if (was == EVICTED_SPAN)
		m->stats->ends_of_evicted_spans++; /* written unfinished at its eviction */
	else if (!was && !key_map_get(&m->from_start, &tgid, sizeof(tgid)))
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
	tb_remove(&m->b_spans, &s->e);
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
	double v, sample;
	struct counter *slot;
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
	sample = ev->kind == CTRACE_KIND_COUNTER_ADD ? (slot ? slot->value : 0) + v : v;
	if (!isfinite(sample)) {
		non_finite_sample(m, ev, pid, tid, sample, v);
		return;
	}
	if (slot) {
		tb_touch(&m->b_counters, &slot->e);
	} else {
		slot = xcalloc(sizeof(*slot) + klen);
		memcpy(slot->key, key, klen);
		slot->key_len = klen;
		key_map_put(&m->counters, slot->key, klen, slot);
		tb_add(&m->b_counters, &slot->e, slot->key, klen,
		       tb_alloc_cost(sizeof(*slot) + klen) + tb_slot_cost(klen));
		while (tb_over(&m->b_counters))
			free(tb_evict(&m->b_counters, &m->counters));
	}
	slot->value = sample;

	te_begin(m->tf, "C", pid, tid, ev->ts_ns);
	te_name(m->tf, ev->name, ev->name_len, ev->name_flags);
	jw_lit(m->tf->w, ",\"cat\":\"ctrace\",\"args\":{\"value\":");
	jw_double(m->tf->w, slot->value);
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
	c->key = key;
	c->pid = m->next_pseudo++;
	old = key_map_put(&m->contexts, &c->key, sizeof(c->key), c);
	if (old) {
		tb_remove(&m->b_contexts, &old->e);
		free(old);
	}
	tb_add(&m->b_contexts, &c->e, &c->key, sizeof(c->key),
	       tb_alloc_cost(sizeof(*c)) + tb_slot_cost(sizeof(c->key)));
	while (tb_over(&m->b_contexts))
		free(tb_evict(&m->b_contexts, &m->contexts));
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

			remember_name(m, &child, ev->name, ev->name_len);
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
	struct context *c = key_map_del(&m->contexts, &key, sizeof(key));

	if (c) {
		tb_remove(&m->b_contexts, &c->e);
		free(c);
	}
}

void trace_model_event(struct trace_model *m, const struct ctrace_event *ev)
{
	m->now_ns = ev->ts_ns;
	m->now_tgid = ev->tgid;
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
	key_map_each(&m->procs, free_value, NULL);
	key_map_free(&m->procs);
	key_map_each(&m->names, free_value, NULL);
	key_map_free(&m->names);
	key_map_free(&m->ended);
	key_map_each(&m->from_start, free_value, NULL);
	key_map_free(&m->from_start);
	/* Emptied, their counts kept for metadata (written after this). */
	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
		struct table_bound *tb = (struct table_bound *)((char *)m + shares[i].off);

		tb->head.next = tb->head.prev = &tb->head;
		tb->bytes = 0;
	}
}
