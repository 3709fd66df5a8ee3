// SPDX-License-Identifier: MIT
#include "model/trace_flows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct thread_key {
	uint32_t tgid, tid;
};

/* The ends of one thread waiting for a span, in the order they came (time order). */
struct flow_thread {
	struct thread_key key;
	struct flow_end *v;
	size_t n, cap;
};

/*
 * A flow from its OUT until both its spans are in the file: whether the
 * sender's is (its 's' with it), whether the receiver's is, and the
 * receiver's span held back for it, if any.
 */
struct flow_link {
	uint64_t trace_id; /* the key */
	bool s_in_file, in_written;
	struct held_span *waiter;
};

/* A span held back: the model's copy of it, what it waits for, its ends (for what waits for it). */
struct held_span {
	struct held_span *next;
	void *held;
	size_t len;
	size_t waits;       /* flows whose 's' is not in the file yet */
	bool released;
	size_t n;
	struct flow_end ends[];
};

static void *must(void *p)
{
	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return p;
}

void trace_flows_init(struct trace_flows *f, const struct flow_output *out)
{
	memset(f, 0, sizeof(*f));
	f->out = *out;
	key_map_init(&f->threads);
	key_map_init(&f->outs);
	key_map_init(&f->links);
	tb_init(&f->b_outs, "flows_in_flight",
		"the OUT sent longest ago is given up (counted in metadata.flows.evicted)", FLOW_OUTS_BYTES);
	/*
	 * Above any async span id of the model (those count from 1) and above
	 * what Perfetto numbers v1 flows with (from 0, 32 bits), so that no id
	 * of ours meets another in a viewer.
	 */
	f->next_trace_id = 1ull << 32;
}

static struct flow_thread *thread_of(struct trace_flows *f, uint32_t tgid, uint32_t tid)
{
	struct thread_key key = { tgid, tid };
	struct flow_thread *t = key_map_get(&f->threads, &key, sizeof(key));

	if (!t) {
		t = must(calloc(1, sizeof(*t)));
		t->key = key;
		key_map_put(&f->threads, &t->key, sizeof(t->key), t);
	}
	return t;
}

static void wait_for_span(struct trace_flows *f, uint32_t tgid, uint32_t tid, const struct flow_end *e)
{
	struct flow_thread *t = thread_of(f, tgid, tid);

	if (t->n == FLOW_ENDS_PER_THREAD) {
		/* The oldest first: the likeliest to be outside any span. */
		memmove(t->v, t->v + 1, (t->n - 1) * sizeof(*t->v));
		t->n--;
		f->waiting--;
		f->counts.evicted++;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->v = must(realloc(t->v, t->cap * sizeof(*t->v)));
	}
	t->v[t->n++] = *e;
	f->waiting++;
}

bool trace_flows_out(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		     uint64_t id, struct flow_out *replaced)
{
	struct flow_out *o = must(calloc(1, sizeof(*o))), *old;
	bool was = false;

	o->id = id;
	o->trace_id = f->next_trace_id++;
	o->ts_ns = ts_ns;
	o->tgid = tgid;
	o->tid = tid;
	old = key_map_put(&f->outs, &o->id, sizeof(o->id), o);
	if (old) {
		/* Sent again before anyone took it in: the first one never was. */
		tb_remove(&f->b_outs, &old->e);
		free(key_map_del(&f->links, &old->trace_id, sizeof(old->trace_id)));
		f->counts.never_taken_in++;
		*replaced = *old;
		free(old);
		was = true;
	}
	tb_add(&f->b_outs, &o->e, &o->id, sizeof(o->id),
	       tb_alloc_cost(sizeof(*o)) + tb_slot_cost(sizeof(o->id)));
	while (tb_over(&f->b_outs)) {
		struct flow_out *gone = tb_evict(&f->b_outs, &f->outs);

		free(key_map_del(&f->links, &gone->trace_id, sizeof(gone->trace_id)));
		free(gone);
		f->counts.evicted++;
	}
	{
		struct flow_link *l = must(calloc(1, sizeof(*l)));

		l->trace_id = o->trace_id;
		key_map_put(&f->links, &l->trace_id, sizeof(l->trace_id), l);
	}
	f->counts.sent++;
	wait_for_span(f, tgid, tid, &(struct flow_end){ ts_ns, id, o->trace_id, true });
	return was;
}

bool trace_flows_in(struct trace_flows *f, uint32_t tgid, uint32_t tid, uint64_t ts_ns,
		    uint64_t id)
{
	struct flow_out *o = key_map_del(&f->outs, &id, sizeof(id));

	if (!o) {
		f->counts.in_never_sent++;
		return false;
	}
	tb_remove(&f->b_outs, &o->e);
	f->counts.taken_in++;
	wait_for_span(f, tgid, tid, &(struct flow_end){ ts_ns, id, o->trace_id, false });
	free(o);
	return true;
}

const struct flow_end *trace_flows_claim(struct trace_flows *f, uint32_t tgid, uint32_t tid,
					 uint64_t begin_ns, size_t *n, bool *hold)
{
	struct thread_key key = { tgid, tid };
	struct flow_thread *t;
	size_t kept = 0;

	*n = 0;
	*hold = false;
	if (!f->waiting)
		return NULL; /* the common case: a program without flows */
	t = key_map_get(&f->threads, &key, sizeof(key));
	if (!t || !t->n)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		struct flow_link *l;

		if (t->v[i].ts_ns < begin_ns) {
			t->v[kept++] = t->v[i];
			continue;
		}
		f->waiting--;
		/* Given up since (sent again, evicted): counted then, nothing to bind. */
		l = key_map_get(&f->links, &t->v[i].trace_id, sizeof(t->v[i].trace_id));
		if (!l)
			continue;
		if (!t->v[i].out && !l->s_in_file)
			*hold = true;
		if (*n == f->claimed_cap) {
			f->claimed_cap = f->claimed_cap ? f->claimed_cap * 2 : 8;
			f->claimed = must(realloc(f->claimed, f->claimed_cap * sizeof(*f->claimed)));
		}
		f->claimed[(*n)++] = t->v[i];
	}
	t->n = kept;
	return f->claimed;
}

static void link_done(struct trace_flows *f, struct flow_link *l)
{
	if (l->s_in_file && l->in_written)
		free(key_map_del(&f->links, &l->trace_id, sizeof(l->trace_id)));
}

static void release(struct trace_flows *f, struct held_span *h);

/* A span with these ends is in the file now: what waited for its flows may follow. */
static void in_file(struct trace_flows *f, const struct flow_end *ends, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct flow_link *l = key_map_get(&f->links, &ends[i].trace_id, sizeof(ends[i].trace_id));

		if (!l)
			continue;
		if (!ends[i].out) {
			l->in_written = true;
			l->waiter = NULL;
		} else if (!l->s_in_file) {
			struct held_span *h = l->waiter;

			l->s_in_file = true;
			l->waiter = NULL;
			/* Before the release: writing the receiver frees the link. */
			link_done(f, l);
			if (h && --h->waits == 0)
				release(f, h);
			continue;
		}
		link_done(f, l);
	}
}

/* Writes a held span (its turn, or no room to keep it), then what waited for it. */
static void release(struct trace_flows *f, struct held_span *h)
{
	if (h->released)
		return;
	h->released = true;
	f->out.release(f->out.ctx, h->held, h->len);
	f->held_bytes -= h->len;
	free(h->held);
	h->held = NULL;
	in_file(f, h->ends, h->n);
}

/* Frees the released spans at the head of the queue. */
static void drop_released(struct trace_flows *f)
{
	while (f->held_oldest && f->held_oldest->released) {
		struct held_span *h = f->held_oldest;

		f->held_oldest = h->next;
		if (!f->held_oldest)
			f->held_newest = NULL;
		free(h);
	}
}

void trace_flows_written(struct trace_flows *f, const struct flow_end *ends, size_t n,
			 void *held, size_t len)
{
	struct held_span *h;

	if (!held) {
		in_file(f, ends, n);
		drop_released(f);
		return;
	}
	h = must(calloc(1, sizeof(*h) + n * sizeof(*ends)));
	h->held = held;
	h->len = len;
	h->n = n;
	memcpy(h->ends, ends, n * sizeof(*ends));
	for (size_t i = 0; i < n; i++) {
		struct flow_link *l = key_map_get(&f->links, &ends[i].trace_id, sizeof(ends[i].trace_id));

		if (!ends[i].out && l && !l->s_in_file) {
			l->waiter = h;
			h->waits++;
		}
	}
	if (f->held_newest)
		f->held_newest->next = h;
	else
		f->held_oldest = h;
	f->held_newest = h;
	f->held_bytes += len;
	if (!h->waits)
		release(f, h); /* cannot be: claimed as held; kept safe */
	/* No room to keep more: the oldest goes now, its arrow drawn backwards by DevTools. */
	while (f->held_bytes > FLOW_HELD_BYTES && f->held_oldest) {
		drop_released(f);
		if (!f->held_oldest)
			break;
		f->counts.out_of_order++;
		release(f, f->held_oldest);
	}
	drop_released(f);
}

static void free_link(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	free(value);
}

struct finish_ctx {
	struct trace_flows *f;
	void (*outside)(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e);
	void (*never_in)(void *ctx, const struct flow_out *o);
	void *ctx;
};

static void finish_thread(const void *key, size_t len, void *value, void *ctx)
{
	struct finish_ctx *c = ctx;
	struct flow_thread *t = value;

	(void)key;
	(void)len;
	for (size_t i = 0; i < t->n; i++) {
		if (!key_map_get(&c->f->links, &t->v[i].trace_id, sizeof(t->v[i].trace_id)))
			continue; /* given up (sent again, evicted): counted then */
		c->f->counts.outside_span++;
		c->outside(c->ctx, t->key.tgid, t->key.tid, &t->v[i]);
	}
	free(t->v);
	free(t);
}

static void finish_out(const void *key, size_t len, void *value, void *ctx)
{
	struct finish_ctx *c = ctx;

	(void)key;
	(void)len;
	c->f->counts.never_taken_in++;
	c->never_in(c->ctx, value);
	free(value);
}

void trace_flows_finish(struct trace_flows *f,
			void (*outside)(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e),
			void (*never_in)(void *ctx, const struct flow_out *o), void *ctx)
{
	struct finish_ctx c = { f, outside, never_in, ctx };

	/* Spans still held wait for senders never written (outside any span): now, in order. */
	for (struct held_span *h = f->held_oldest; h; h = h->next)
		release(f, h);
	drop_released(f);
	key_map_each(&f->threads, finish_thread, &c);
	key_map_free(&f->threads);
	key_map_each(&f->outs, finish_out, &c);
	key_map_free(&f->outs);
	key_map_each(&f->links, free_link, NULL);
	key_map_free(&f->links);
	f->b_outs.head.next = f->b_outs.head.prev = &f->b_outs.head;
	f->b_outs.bytes = 0;
	f->waiting = 0;
	free(f->claimed);
	f->claimed = NULL;
	f->claimed_cap = 0;
}
