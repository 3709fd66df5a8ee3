// SPDX-License-Identifier: MIT
#include "model/trace_model.h"
#include "lib/categories.h"

#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	bool given; /* by CTRACE_THREAD_NAME: /proc's comm does not replace it */
	char s[];
};

/* A process in procs or from_start. */
struct proc_mark {
	struct bound_entry e;
	uint64_t key;
};

struct open_span {
	struct bound_entry e;
	struct pair_key key;
	uint64_t ts_ns;
	uint32_t pid, tid;   /* as shown */
	uint32_t real_tid;
	uint32_t sf; /* --stacks: the begin's */
	unsigned cat;        /* the begin's category: the span's */
	struct ct_text name, args; /* in bytes[]: one allocation a span */
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
static char *text_copy(struct ct_text *t, char *to, const char *s, size_t n, unsigned flags)
{
	if (n)
		memcpy(to, s, n);
	to[n] = '\0';
	*t = (struct ct_text){ to, n, flags };
	return to + n + 1;
}

static bool known_comm(struct trace_model *m, uint32_t tgid, uint32_t tid,
		       char *buf, size_t len);
static void forget_shown_recently(struct trace_model *m);
static void flow_release(void *ctx, void *held, size_t len);

void trace_model_init(struct trace_model *m, struct trace_fanout *out,
		      struct trace_stats *stats)
{
	memset(m, 0, sizeof(*m));
	m->out = out;
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
	trace_flows_init(&m->flows, &(struct flow_output){ flow_release, m });
	m->stats->flows = &m->flows.counts;
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
	trace_model_limit_memory(m, TRACE_MEMORY_DEFAULT, NULL, NULL, NULL);
}

/*
 * The first eviction of a table, shown once where it happened: later ones
 * are only counted (metadata.memory), so the trace does not grow with them.
 */
static void first_eviction(struct table_bound *tb, void *ctx)
{
	struct trace_model *m = ctx;
	const struct ct_arg args[] = {
		CT_CSTR("table", tb->name),
		CT_U64("bound_bytes", tb->limit),
		CT_U64("max_memory", m->stats->max_memory),
		CT_CSTR("rule", tb->rule),
		CT_CSTR("why", "the traced process keeps more than --max-memory allows; every eviction is counted in metadata.memory"),
	};

	trace_model_add_process(m, m->now_tgid);
	trace_emit_notice(m->out, m->now_tgid, m->now_tgid, m->now_ns,
			  "ctrace: memory bound reached", 'g', args, sizeof(args) / sizeof(args[0]));
}

/* Shares of the tables' budget, per mille (the literal cache's last). */
static const struct {
	size_t off;
	unsigned per_mille;
} shares[] = {
	{ offsetof(struct trace_model, b_spans), 250 },
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
#define BATCH_STREAMS_PER_MILLE 75

/* Hooks a table of the session's to the model: its limit, its notice, metadata. */
static void bound_outside(struct trace_model *m, struct table_bound *tb, uint64_t limit)
{
	tb->limit = limit;
	tb->on_first_eviction = first_eviction;
	tb->ctx = m;
	m->stats->bounds[m->stats->n_bounds++] = tb;
}

void trace_model_limit_memory(struct trace_model *m, uint64_t max_memory,
			      struct literal_cache *literals, struct file_maps *files,
			      struct table_bound *batch_streams)
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
	if (batch_streams)
		bound_outside(m, batch_streams, tables / 1000 * BATCH_STREAMS_PER_MILLE);
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
	uint64_t evicted = m->b_procs.evicted;

	if (proc_mark(&m->procs, &m->b_procs, pid))
		return;
	/* resolve()'s caches of threads shown say their process is named: no longer sure. */
	if (m->b_procs.evicted != evicted) {
		forget_shown_recently(m);
		m->last_tgid = m->last_tid = 0;
	}
	/*
	 * The name learned first (trace_model_thread_name()): a process that
	 * exec'd since tracing started is named after its old program first,
	 * then the exec renames it (process_change()).
	 */
	if (!known_comm(m, pid, pid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "process %" PRIu32, pid);
	trace_emit_name(m->out, TE_PROCESS_NAME, pid, pid, &(struct ct_text){ comm, strlen(comm), 0 });
}

/* Remembers the name of a thread (from /proc, or from a fork record). */
static void remember_name(struct trace_model *m, const struct pair_key *key, const char *s,
			  size_t n)
{
	struct thread_name *t = malloc(sizeof(*t) + n + 1), *old;

	if (!t)
		return;
	t->key = *key;
	t->given = false;
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

void trace_model_thread_name(struct trace_model *m, uint32_t tgid, uint32_t tid,
			     const char *name, size_t len)
{
	struct pair_key key = { tgid, tid };
	struct thread_name *known = key_map_get(&m->names, &key, sizeof(key));

	bool shown = key_map_get(&m->threads, &key, sizeof(key)) != NULL;

	if (known && ((strlen(known->s) == len && !memcmp(known->s, name, len)) || known->given ||
		      (m->renames_told && shown))) {
		tb_touch(&m->b_names, &known->e);
		return;
	}
	remember_name(m, &key, name, len);
	/*
	 * Renamed (pthread_setname_np) since the trace named it: name it
	 * again; viewers keep the last name.
	 */
	if (known && shown)
		trace_emit_name(m->out, TE_THREAD_NAME, tgid, tid, &(struct ct_text){ name, len, 0 });
}

bool trace_model_knows_thread(const struct trace_model *m, uint32_t tgid, uint32_t tid)
{
	struct pair_key key = { tgid, tid };

	return key_map_get(&m->names, &key, sizeof(key)) != NULL;
}

bool trace_model_shows_thread_lookup(const struct trace_model *m, uint32_t tgid, uint32_t tid)
{
	struct pair_key key = { tgid, tid };

	return key_map_get(&m->threads, &key, sizeof(key)) != NULL;
}

bool trace_model_shows_process(const struct trace_model *m, uint32_t pid)
{
	uint64_t key = pid;

	return key_map_get(&m->procs, &key, sizeof(key)) != NULL;
}

void trace_model_exec_name(struct trace_model *m, uint32_t pid, const char *name, size_t len)
{
	if (len >= sizeof(m->exec_name))
		len = sizeof(m->exec_name) - 1;
	memcpy(m->exec_name, name, len);
	m->exec_name[len] = '\0';
	m->exec_name_len = len;
	m->exec_pid = pid;
}

/* The name the model was told (trace_model_thread_name(), a fork record), if any. */
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

/* A shown thread was forgotten: trace_model_shows_thread() must not answer from its caches. */
static void forget_shown_recently(struct trace_model *m)
{
	memset(m->shown_recently, 0, sizeof(m->shown_recently));
	m->pseudo_tgid = m->pseudo_tid = 0;
}

/* The tid to show for real thread `tid` of `tgid` in process `pid`. */
static uint32_t shown_tid(struct trace_model *m, uint32_t pid, uint32_t tgid,
			  uint32_t tid)
{
	struct pair_key key = { pid, tid };
	struct shown_thread *t = key_map_get(&m->threads, &key, sizeof(key));
	char comm[CTRACE_NAME_MAX], name[CTRACE_NAME_MAX + 32]; /* a CTRACE_THREAD_NAME's */

	if (t) {
		tb_touch(&m->b_threads, &t->e);
		if (pid == tgid)
			m->shown_recently[tid % 8] = (uint64_t)tgid << 32 | tid;
		return t->tid;
	}
	t = xcalloc(sizeof(*t));
	t->key = key;
	t->tid = pid == tgid ? tid : m->next_pseudo++;
	key_map_put(&m->threads, &t->key, sizeof(t->key), t);
	tb_add(&m->b_threads, &t->e, &t->key, sizeof(t->key),
	       tb_alloc_cost(sizeof(*t)) + tb_slot_cost(sizeof(t->key)));
	while (tb_over(&m->b_threads)) {
		free(tb_evict(&m->b_threads, &m->threads));
		forget_shown_recently(m);
	}
	if (pid == tgid)
		m->shown_recently[tid % 8] = (uint64_t)tgid << 32 | tid;
	if (!known_comm(m, tgid, tid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "thread");
	if (pid == tgid && strcmp(comm, "thread"))
		snprintf(name, sizeof(name), "%s", comm);
	else
		snprintf(name, sizeof(name), "%s (tid %" PRIu32 ")", comm, tid);
	trace_emit_name(m->out, TE_THREAD_NAME, pid, t->tid, &(struct ct_text){ name, strlen(name), 0 });
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
	/*
	 * The common case, the same real thread as last time, or one of the
	 * few shown lately (threads take turns): its process and itself are
	 * named already. Not moved up in the tables' order of use (the last
	 * thread never was): past --max-memory such a thread may be forgotten
	 * while busy, and is named again when it next misses these caches.
	 */
	if (!c && ((tgid == m->last_tgid && tid == m->last_tid) ||
		   m->shown_recently[tid % 8] == ((uint64_t)tgid << 32 | tid))) {
		*tid_out = tid;
		m->last_tgid = tgid;
		m->last_tid = tid;
		return;
	}
	trace_model_add_process(m, tgid);
	*tid_out = shown_tid(m, *pid, tgid, tid);
	if (!c) {
		m->last_tgid = tgid;
		m->last_tid = tid;
	} else {
		m->pseudo_tgid = tgid;
		m->pseudo_tid = tid;
	}
}

static void free_span(struct open_span *s)
{
	free(s);
}

static uint64_t dur_to(const struct open_span *s, uint64_t end_ns)
{
	return end_ns > s->ts_ns ? end_ns - s->ts_ns : 0;
}

static void write_x(struct trace_model *m, uint32_t tgid, uint32_t real_tid, struct trace_event *x);

static void write_unfinished(struct trace_model *m, struct open_span *s,
			     uint64_t stop_ns, const char *why)
{
	struct trace_event x = {
		.kind = TE_COMPLETE, .pid = s->pid, .tid = s->tid, .ts_ns = s->ts_ns,
		.dur_ns = dur_to(s, stop_ns), .name = s->name, .args = s->args, .unfinished = why,
		.stack = s->sf, .cat = s->cat,
	};

	write_x(m, (uint32_t)s->key.a, s->real_tid, &x);
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
	s->sf = ev->sf;
	s->cat = m->cat; /* as trace_model_event() resolved it */
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
	uint32_t pid, tid;
	char addr[32];

	m->stats->unmatched_ends++;
	resolve(m, ev->tgid, ev->tid, 0, &pid, &tid);
	snprintf(addr, sizeof(addr), "0x%" PRIx64, ev->arg[0]);
	trace_emit_notice(m->out, pid, tid, ev->ts_ns, "ctrace: span end without begin", 't',
			  &CT_CSTR("span", addr), 1);
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
	struct ct_text end_args = { ev->args, ev->args_len, ev->args_flags };

	tb_remove(&m->b_spans, &s->e);
	remember_ended(m, &key);
	if (s->real_tid == ev->tid) {
		struct trace_event x = {
			.kind = TE_COMPLETE, .pid = s->pid, .tid = s->tid, .ts_ns = s->ts_ns,
			.dur_ns = dur_to(s, ev->ts_ns), .name = s->name, .args = s->args,
			.end_args = end_args, .stack = s->sf, .cat = s->cat,
		};

		write_x(m, ev->tgid, ev->tid, &x);
	} else {
		/* Ended on another thread: an async pair on the span's process. */
		const struct trace_event a = {
			.kind = TE_ASYNC, .pid = s->pid, .tid = s->tid, .ts_ns = s->ts_ns, .name = s->name,
			.args = s->args, .stack = s->sf, .cat = s->cat, .id = m->next_async_id++,
			.end_tid = shown_tid(m, s->pid, ev->tgid, ev->tid), .end_ns = ev->ts_ns,
			.end_args = end_args, .end_stack = ev->sf,
		};

		trace_emit(m->out, &a);
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
	struct ct_text name = { ev->name, ev->name_len, ev->name_flags };
	struct ct_text args = { ev->args, ev->args_len, ev->args_flags };

	if (ev->kind == CTRACE_KIND_SCOPE_TSC && m->tsc) {
		end = tsc_clock_to_ns(m->tsc, ev->tsc);
		s.ts_ns = tsc_clock_to_ns(m->tsc, ev->arg[3] <= ev->tsc ? ev->tsc - ev->arg[3] : 0);
	} else {
		dur = m->tsc ? tsc_clock_ticks_to_ns(m->tsc, ev->arg[3]) : 0;
		s.ts_ns = dur < ev->ts_ns ? ev->ts_ns - dur : 0;
	}
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &s.pid, &s.tid);
	{
		struct trace_event x = {
			.kind = TE_COMPLETE, .pid = s.pid, .tid = s.tid, .ts_ns = s.ts_ns,
			.dur_ns = dur_to(&s, end), .name = name, .args = args, .stack = ev->sf, .cat = m->cat,
		};

		write_x(m, ev->tgid, ev->tid, &x);
	}
}

static void instant(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t pid, tid;
	char scope;

	switch (ev->arg[2]) {
	case 'g': scope = 'g'; break;
	case 'p': scope = 'p'; break;
	default: scope = 't'; break; /* the format's default, for any other value */
	}
	resolve(m, ev->tgid, ev->tid, ev->arg[0], &pid, &tid);
	trace_emit(m->out, &(struct trace_event){
		.kind = TE_INSTANT, .pid = pid, .tid = tid, .ts_ns = ev->ts_ns, .scope = scope,
		.name = { ev->name, ev->name_len, ev->name_flags },
		.args = { ev->args, ev->args_len, ev->args_flags }, .stack = ev->sf, .cat = m->cat,
	});
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
	const struct ct_arg args[] = {
		CT_STR("counter", ev->name, ev->name_len),
		CT_DOUBLE("value", sample),
		CT_DOUBLE("added", added),
	};

	m->stats->non_finite_counter_samples++;
	/* "added" only for COUNTER_ADD: the sum went wrong, or the sample itself. */
	trace_emit_notice(m->out, pid, tid, ev->ts_ns, "ctrace: counter sample not a number", 't',
			  args, ev->kind == CTRACE_KIND_COUNTER_ADD ? 3 : 2);
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
	trace_emit(m->out, &(struct trace_event){
		.kind = TE_COUNTER, .pid = pid, .tid = tid, .ts_ns = ev->ts_ns,
		.name = { ev->name, ev->name_len, ev->name_flags }, .value = slot->value,
		.stack = ev->sf, .cat = m->cat,
	});
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
		trace_emit_name(m->out, TE_PROCESS_NAME, c->pid, c->pid,
				&(struct ct_text){ ev->name, ev->name_len, ev->name_flags });
	} else {
		snprintf(fallback, sizeof(fallback), "pseudo-process %" PRIu32,
			 c->pid - CTRACE_PSEUDO_BASE);
		trace_emit_name(m->out, TE_PROCESS_NAME, c->pid, c->pid,
				&(struct ct_text){ fallback, strlen(fallback), 0 });
	}
}

/*
 * What the kernel said about a process (fork, exec), as a process-scoped
 * instant, and what it changes: a followed child is a process of the trace,
 * named after its parent until it execs, traced from its first
 * instruction; an exec renames its process (the name the caller gave with
 * trace_model_exec_name(), when /proc still had it).
 */
static void process_change(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t tgid = (uint32_t)ev->arg[0], pid, tid;

	resolve(m, tgid, ev->tid, 0, &pid, &tid);
	if (ev->kind == CTRACE_KIND_FORK) {
		uint32_t child = (uint32_t)ev->arg[1];

		trace_emit_notice(m->out, pid, tid, ev->ts_ns, "ctrace: fork", 'p',
				  &CT_U64("child_pid", ev->arg[1]), 1);
		if (ev->name_len) {
			/* A child may be gone before /proc is read: its comm came with the fork. */
			struct pair_key key = { child, child };

			remember_name(m, &key, ev->name, ev->name_len);
		}
		trace_model_add_process(m, child);
		trace_model_traced_from_start(m, child);
		return;
	}
	trace_emit_notice(m->out, pid, tid, ev->ts_ns, "ctrace: exec", 'p',
			  &CT_STR("path", ev->name, ev->name_len), 1);
	/* The process has a new name now: say it (viewers keep the last). */
	if (m->exec_pid == tgid)
		trace_emit_name(m->out, TE_PROCESS_NAME, tgid, tgid,
				&(struct ct_text){ m->exec_name, m->exec_name_len, 0 });
	m->exec_pid = 0;
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

/*
 * Flows (trace_flows.c pairs them): the ends a span of this thread
 * encloses are bound to its X: the first in the X itself (Perfetto's v2
 * bind_id: one per slice), every one as a TE_FLOW_STEP right after it.
 */
static void emit_x_and_steps(struct trace_model *m, const struct trace_event *x, const struct flow_end *ends,
			     size_t n)
{
	trace_emit(m->out, x);
	for (size_t i = 0; i < n; i++)
		trace_emit(m->out, &(struct trace_event){
			.kind = TE_FLOW_STEP, .pid = x->pid, .tid = x->tid, .ts_ns = x->ts_ns,
			.flow_out = ends[i].out, .id = ends[i].trace_id,
		});
}

/*
 * A span held back (trace_flows.h): its X and its flow ends, with copies of
 * the X's strings, in one block trace_flows keeps and frees.
 */
struct held_x {
	struct trace_event x;
	size_t n;
	struct flow_end ends[];
};

static char *copy_text(struct ct_text *t, char *at)
{
	if (t->n)
		memcpy(at, t->s, t->n);
	t->s = at;
	return at + t->n;
}

static void *hold_x(const struct trace_event *x, const struct flow_end *ends, size_t n, size_t *len)
{
	size_t head = sizeof(struct held_x) + n * sizeof(*ends);
	size_t why = x->unfinished ? strlen(x->unfinished) + 1 : 0;
	struct held_x *h;
	char *p;

	*len = head + x->name.n + x->args.n + x->end_args.n + why;
	h = malloc(*len);
	if (!h) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	h->x = *x;
	h->n = n;
	memcpy(h->ends, ends, n * sizeof(*ends));
	p = copy_text(&h->x.name, (char *)h + head);
	p = copy_text(&h->x.args, p);
	p = copy_text(&h->x.end_args, p);
	if (why) {
		memcpy(p, x->unfinished, why);
		h->x.unfinished = p;
	}
	return h;
}

/* A span's X, with its flows; held back while it took in a flow whose sender's span is not written. */
static void write_x(struct trace_model *m, uint32_t tgid, uint32_t real_tid, struct trace_event *x)
{
	size_t n, len;
	bool hold;
	const struct flow_end *ends = trace_flows_claim(&m->flows, tgid, real_tid, x->ts_ns, &n, &hold);

	if (n)
		x->flow = (struct ct_flow_bind){ ends[0].trace_id, ends[0].out, !ends[0].out };
	if (hold) {
		void *h = hold_x(x, ends, n, &len);

		trace_flows_written(&m->flows, ends, n, h, len);
		return;
	}
	emit_x_and_steps(m, x, ends, n);
	if (n)
		trace_flows_written(&m->flows, ends, n, NULL, 0);
}

static void flow_release(void *ctx, void *held, size_t len)
{
	struct trace_model *m = ctx;
	const struct held_x *h = held;

	(void)len;
	emit_x_and_steps(m, &h->x, h->ends, h->n);
}

/* A flow that will not be drawn, shown where its end was (a thread-scoped instant). */
static void flow_notice(struct trace_model *m, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
			const char *what, uint64_t id, const char *why)
{
	uint32_t pid, shown;
	const struct ct_arg args[] = { CT_U64("id", id), CT_CSTR("why", why) };

	resolve(m, tgid, tid, 0, &pid, &shown);
	trace_emit_notice(m->out, pid, shown, ts_ns, what, 't', args, 2);
}

static void flow_end(struct trace_model *m, const struct ctrace_event *ev)
{
	struct flow_out replaced;

	if (ev->kind == CTRACE_KIND_FLOW_IN) {
		if (!trace_flows_in(&m->flows, ev->tgid, ev->tid, ev->ts_ns, ev->arg[0]))
			flow_notice(m, ev->tgid, ev->tid, ev->ts_ns, "ctrace: flow in without out", ev->arg[0],
				    "no CTRACE_FLOW_OUT of this id was in flight (never sent while traced, or taken in already)");
		return;
	}
	if (trace_flows_out(&m->flows, ev->tgid, ev->tid, ev->ts_ns, ev->arg[0], &replaced))
		flow_notice(m, replaced.tgid, replaced.tid, replaced.ts_ns, "ctrace: flow never taken in",
			    replaced.id, "sent again with the same id before a CTRACE_FLOW_IN took it");
}

static void flow_outside_span(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e)
{
	flow_notice(ctx, tgid, tid, e->ts_ns, "ctrace: flow outside any span", e->id,
		    e->out ? "CTRACE_FLOW_OUT ran in no span of its thread: the flow has no start"
			   : "CTRACE_FLOW_IN ran in no span of its thread: the flow has no end");
}

static void flow_never_taken_in(void *ctx, const struct flow_out *o)
{
	flow_notice(ctx, o->tgid, o->tid, o->ts_ns, "ctrace: flow never taken in", o->id,
		    "no CTRACE_FLOW_IN of this id ran before tracing stopped");
}

/*
 * CTRACE_THREAD_NAME (given: kept over /proc's comm) or the kernel's
 * task_rename (pthread_setname_np, prctl: the new comm, which replaces a
 * given name). A shown thread is named again and the rename shown where it
 * happened; one not shown yet takes the name when it is. A rename names a
 * shown thread even under the name it has: that name may be /proc's, read
 * after the rename (events are modelled late), and the trace then has the
 * same names whenever /proc was read.
 */
static void thread_renamed(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t tgid = ev->kind == CTRACE_KIND_THREAD_RENAME ? (uint32_t)ev->arg[0] : ev->tgid;
	uint32_t tid = ev->kind == CTRACE_KIND_THREAD_RENAME ? (uint32_t)ev->arg[1] : ev->tid;
	struct pair_key key = { tgid, tid };
	struct thread_name *known = key_map_get(&m->names, &key, sizeof(key)), *t;
	bool same = known && strlen(known->s) == ev->name_len && !memcmp(known->s, ev->name, ev->name_len);
	bool shown = key_map_get(&m->threads, &key, sizeof(key)) != NULL;
	uint32_t pid, shown_tid_;

	if (!ev->name_len || ev->name_flags & CTRACE_STR_FAULT || memchr(ev->name, 0, ev->name_len))
		return; /* nothing to name it with (viewers refuse an empty name): it keeps its name */
	/*
	 * A thread given a longer name (CTRACE_THREAD_NAME, --usdt java's
	 * thread__start) that sets its comm to it: the kernel keeps its first
	 * 15 bytes. The same name, not a rename.
	 */
	if (ev->kind == CTRACE_KIND_THREAD_RENAME && known && known->given && ev->name_len == 15 &&
	    strlen(known->s) > 15 && !memcmp(known->s, ev->name, 15))
		return;
	if (ev->kind == CTRACE_KIND_THREAD_RENAME)
		m->stats->thread_renames++;
	else
		trace_model_add_process(m, tgid); /* named after its comm, not the name given to its main thread */
	if (!same)
		remember_name(m, &key, ev->name, ev->name_len);
	t = key_map_get(&m->names, &key, sizeof(key));
	if (t)
		t->given = ev->kind == CTRACE_KIND_THREAD_NAME;
	if (!shown && ev->kind == CTRACE_KIND_THREAD_RENAME)
		return;
	resolve(m, tgid, tid, 0, &pid, &shown_tid_); /* names a thread not shown yet */
	if (shown && (!same || ev->kind == CTRACE_KIND_THREAD_RENAME))
		trace_emit_name(m->out, TE_THREAD_NAME, pid, shown_tid_,
				&(struct ct_text){ ev->name, ev->name_len, ev->name_flags });
	if (shown && ev->kind == CTRACE_KIND_THREAD_RENAME)
		trace_emit_notice(m->out, pid, shown_tid_, ev->ts_ns, "ctrace: thread renamed", 't',
				  &CT_STR("name", ev->name, ev->name_len), 1);
}

/* CTRACE_PROCESS_SORT_INDEX / CTRACE_THREAD_SORT_INDEX: the seed's metadata events. */
static void sort_index(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t pid, tid;
	bool thread = ev->kind == CTRACE_KIND_THREAD_SORT_INDEX;

	resolve(m, ev->tgid, ev->tid, 0, &pid, &tid);
	trace_emit(m->out, &(struct trace_event){
		.kind = TE_SORT_INDEX, .pid = pid, .tid = thread ? tid : pid, .thread = thread,
		.sort_index = (int64_t)ev->arg[0],
	});
}

static void thread_renamed(struct trace_model *m, const struct ctrace_event *ev);

/*
 * A hit of a probe --usdt names: shown on its own thread, which it may
 * name (the JVM's thread__start: the Java thread's whole name, where the
 * kernel's comm keeps 15 bytes), as CTRACE_THREAD_NAME does.
 */
static void usdt_hit(struct trace_model *m, const struct ctrace_event *ev)
{
	struct ctrace_event named;
	uint32_t pid, tid;

	if (!m->usdt) {
		m->stats->bad_records++;
		return;
	}
	resolve(m, ev->tgid, ev->tid, 0, &pid, &tid);
	named = *ev;
	/* sets the stack (--stacks) of what it writes */
	usdt_model_event(m->usdt, m->out, m->cat, pid, tid, ev, &named.name, &named.name_len);
	if (named.name_len) {
		named.kind = CTRACE_KIND_THREAD_NAME;
		named.name_flags = 0;
		thread_renamed(m, &named);
	}
}

void trace_model_event(struct trace_model *m, const struct ctrace_event *ev)
{
	m->now_ns = ev->ts_ns;
	m->now_tgid = ev->tgid;
	/* The site's category, for what this event writes. */
	m->cat = ev->cat;
	/* --usdt's hits are no site's: they have no category to lose. */
	if (!ev->cat && ev->kind != CTRACE_KIND_FORK && ev->kind != CTRACE_KIND_EXEC &&
	    ev->kind != CTRACE_KIND_LINK_MAP && ev->kind != CTRACE_KIND_USDT && category_others_attached()) {
		m->cat = CATEGORY_UNKNOWN_ID;
		m->stats->events_of_unknown_category++;
	}
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
	case CTRACE_KIND_FLOW_OUT:
	case CTRACE_KIND_FLOW_IN: flow_end(m, ev); break;
	case CTRACE_KIND_THREAD_NAME:
	case CTRACE_KIND_THREAD_RENAME: thread_renamed(m, ev); break;
	case CTRACE_KIND_PROCESS_SORT_INDEX:
	case CTRACE_KIND_THREAD_SORT_INDEX: sort_index(m, ev); break;
	case CTRACE_KIND_USDT: usdt_hit(m, ev); break;
	default: m->stats->bad_records++; break;
	}
}

void trace_model_drops(struct trace_model *m, uint32_t pid, uint64_t ts_ns,
		       uint64_t lost, uint64_t total)
{
	const struct ct_arg args[] = {
		CT_U64("dropped", lost),
		CT_U64("dropped_total", total),
		CT_CSTR("why", "the ring buffer was full: raise --buffer-size"),
	};

	trace_model_add_process(m, pid);
	trace_emit_notice(m->out, pid, pid, ts_ns, "ctrace: events dropped", 'g', args,
			  sizeof(args) / sizeof(args[0]));
}

struct open_ctx {
	struct trace_model *m;
	uint64_t now_ns, n;
};

static void write_open_span(const void *key, size_t len, void *value, void *ctx)
{
	struct open_ctx *o = ctx;
	const struct open_span *s = value;

	(void)key;
	(void)len;
	trace_emit(o->m->out, &(struct trace_event){
		.kind = TE_COMPLETE, .pid = s->pid, .tid = s->tid, .ts_ns = s->ts_ns,
		.dur_ns = dur_to(s, o->now_ns), .name = s->name, .args = s->args, .stack = s->sf,
		.cat = s->cat, .unfinished = "open at this flight recorder dump: it goes on",
		.open_at_dump = true, /* summed once, when it ends; placed among X's for good then */
	});
	o->n++;
}

uint64_t trace_model_write_open(struct trace_model *m, uint64_t now_ns)
{
	/*
	 * To the last event modelled, not to now: events reach the model late
	 * (batches, the merge by time), and a span that ended in that lag
	 * must not look longer than what the dump shows around it.
	 */
	struct open_ctx o = { m, m->now_ns && m->now_ns < now_ns ? m->now_ns : now_ns, 0 };
	key_map_each(&m->spans, write_open_span, &o);
	return o.n;
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
	if (m->usdt)
		usdt_model_finish(m->usdt, m->out, m->cat, stop_ns);
	/* After the spans (written unfinished, they claim the flows they enclose). */
	trace_flows_finish(&m->flows, flow_outside_span, flow_never_taken_in, m);
	key_map_each(&m->contexts, free_value, NULL);
	key_map_free(&m->contexts);
	key_map_each(&m->threads, free_value, NULL);
	key_map_free(&m->threads);
	forget_shown_recently(m);
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
