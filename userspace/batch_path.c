// SPDX-License-Identifier: MIT
#include "batch_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include "batch_split.h"
#include "ctrace_record.h"

/* Every 20 ms: also how far the watermark lags behind an idle thread (what the merge holds). */
#define IDLE_READ_NS (20 * 1000000ull)
/* Idle reads that found a flush on its way before it counts as lost (the ring drained each time). */
#define STUCK_READS 3

struct batch_stream {
	uint32_t tgid, tid;
	uint64_t buf;
	uint64_t next_seq;    /* every event numbered below was taken or counted lost */
	uint64_t complete_ns; /* every event of this stream stamped before it is known */
	bool retired;         /* the thread is gone (or its buffer): it holds nobody back */
	bool inherited;       /* a forked child's copy of its parent's buffer */
	unsigned stuck;
	uint64_t last_ns;     /* the latest event seen (taken or not) */
	bool past_stop;       /* read whole after the stop: what it numbers later is after it */
	struct merge_run *run; /* its events, in their order, in the merge */
};

/*
 * Events numbered and never seen: lost, unless the stream had already
 * passed the stop (a thread's events are in time order), as after the
 * stop while the probes detach (with perf uprobes, a flush may then find
 * its program gone before its semaphore drops).
 */
static void count_gap(struct batch_path *bp, const struct batch_stream *st, uint64_t n)
{
	if (st->past_stop || (*bp->stop_ns && st->last_ns > *bp->stop_ns))
		bp->stats->records_after_stop += n;
	else
		bp->lost += n;
}

struct batch_literal {
	uint32_t tgid;
	size_t len;
	bool truncated;
	bool plain; /* CTRACE_STR_PLAIN */
	char s[];
};

/* Copies kept at most: past it, all are forgotten (read again). */
#define LITERAL_COPIES_MAX 65536

struct stream_key {
	uint32_t tgid, tid;
	uint64_t buf;
};

void batch_path_init(struct batch_path *bp, bool on, const struct tsc_clock *tsc,
		     struct trace_stats *stats,
		     const uint64_t *stop_ns, uint64_t start_ns,
		     void (*model)(void *ctx, const struct ctrace_event *ev), void *ctx)
{
	memset(bp, 0, sizeof(*bp));
	bp->on = on;
	bp->tsc = tsc;
	bp->stats = stats;
	bp->stop_ns = stop_ns;
	bp->start_ns = start_ns;
	key_map_init(&bp->streams);
	key_map_init(&bp->forks);
	key_map_init(&bp->literal_copies);
	bp->literal_gen = 1; /* the hot entries, zeroed, are of none */
	event_merge_init(&bp->merge, MERGE_MAX_BYTES, model, ctx);
}

static struct batch_stream *stream_get(struct batch_path *bp, uint32_t tgid, uint32_t tid,
				       uint64_t buf, bool create)
{
	struct stream_key k = { tgid, tid, buf };
	struct batch_stream *st = key_map_get(&bp->streams, &k, sizeof(k));

	if (st || !create)
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->tgid = tgid;
	st->tid = tid;
	st->buf = buf;
	st->run = event_merge_run(&bp->merge); /* NULL: its events go in the merge's heap */
	key_map_put(&bp->streams, &k, sizeof(k), st);
	bp->stats->batch_threads++;
	return st;
}

/* What one event of a buffer needs before the merge: its time and its literals. */
struct split_ctx {
	struct batch_path *bp;
	struct batch_stream *st;
	uint64_t last_ns;
	uint64_t until; /* no event of a copy is later than the copy */
};

/*
 * Every TSC reading of every thread through the one mapping of
 * tsc_clock.c (as CTRACE_SCOPE's two edges are), so that events keep the
 * order the TSC gives them across threads. Each flush's anchor (the
 * site's TSC at the flush, the probe's clock) is not used: the probe's
 * clock is read 3-14 us after the site's TSC, a delay that varies from
 * flush to flush, so two threads' events a few us apart came out swapped
 * (test_batch: test_two_threads_in_the_order_they_ran).
 */
static uint64_t event_ns(const struct split_ctx *c, uint64_t tsc)
{
	uint64_t ns = tsc_clock_to_ns(c->bp->tsc, tsc);

	return c->until && ns > c->until ? c->until : ns;
}

static void free_literal(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	free(value);
}

struct forget_ctx {
	uint32_t tgid;
	uint64_t (*keys)[2];
	size_t n, cap;
};

static void collect_tgid(const void *key, size_t len, void *value, void *ctx)
{
	struct forget_ctx *f = ctx;
	const struct batch_literal *l = value;

	if (l->tgid != f->tgid || len != sizeof(f->keys[0]) || f->n == f->cap)
		return;
	memcpy(f->keys[f->n++], key, len);
}

/* The process's objects changed: its literal copies may name another's strings now. */
static void forget_literals(struct batch_path *bp, uint32_t tgid)
{
	struct forget_ctx f = { tgid, NULL, 0, bp->literal_copies.count };

	if (!f.cap)
		return;
	bp->literal_gen++;
	f.keys = calloc(f.cap, sizeof(*f.keys));
	if (!f.keys) {
		key_map_each(&bp->literal_copies, free_literal, NULL);
		key_map_free(&bp->literal_copies);
		key_map_init(&bp->literal_copies);
		return;
	}
	key_map_each(&bp->literal_copies, collect_tgid, &f);
	for (size_t i = 0; i < f.n; i++)
		free(key_map_del(&bp->literal_copies, f.keys[i], sizeof(f.keys[i])));
	free(f.keys);
}

static bool plain_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* The copy kept of a literal; NULL if there is no memory for one. */
static struct batch_literal *keep_literal(struct batch_path *bp, const uint64_t key[2], const char *s,
					  size_t n, bool truncated)
{
	struct batch_literal *l = malloc(sizeof(*l) + n);

	if (!l)
		return NULL;
	bp->literal_gen++; /* below, copies may be freed */
	if (bp->literal_copies.count >= LITERAL_COPIES_MAX) {
		key_map_each(&bp->literal_copies, free_literal, NULL);
		key_map_free(&bp->literal_copies);
		key_map_init(&bp->literal_copies);
	}
	l->tgid = (uint32_t)key[0];
	l->len = n;
	l->truncated = truncated;
	l->plain = plain_text(s, n);
	memcpy(l->s, s, n);
	free(key_map_put(&bp->literal_copies, key, 2 * sizeof(uint64_t), l));
	return l;
}

/*
 * A literal by its address: a copy kept since the process's objects last
 * changed, else read as a late string is (batch_path.h: read_str).
 */
static void resolve_literal(struct batch_path *bp, const struct batch_event *e, int arg,
			    const char **s, size_t *len, unsigned *flags, size_t max, char *buf)
{
	uint64_t key[2] = { e->ev.tgid, e->ev.arg[arg] };
	struct batch_literal_hot *hot =
		&bp->literal_hot[((key[1] ^ key[0] << 40) * 0x9e3779b97f4a7c15ull) >> 56];
	struct batch_literal *l;
	const char *str;
	size_t n;
	bool truncated = false;

	bp->stats->literals_by_reference++;
	if (hot->gen == bp->literal_gen && hot->key[0] == key[0] && hot->key[1] == key[1]) {
		l = hot->l;
	} else {
		l = key_map_get(&bp->literal_copies, key, sizeof(key));
		if (l)
			*hot = (struct batch_literal_hot){ { key[0], key[1] }, l, bp->literal_gen };
	}
	if (l) {
		*s = l->s;
		*len = l->len < max ? l->len : max;
		*flags = l->truncated || l->len > max ? CTRACE_STR_TRUNCATED : 0;
		if (l->plain)
			*flags |= CTRACE_STR_PLAIN;
		return;
	}
	if (!bp->read_str || !bp->read_str(bp->read_ctx, &e->ev, arg, &str, &n, &truncated, buf, max)) {
		if (!bp->read_str)
			bp->stats->unreadable_strings++; /* read_str counts its own */
		*s = "";
		*len = 0;
		*flags = CTRACE_STR_FAULT;
		return;
	}
	if (str != buf)
		memcpy(buf, str, n);
	l = keep_literal(bp, key, buf, n, truncated);
	*s = buf;
	*len = n;
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
	if (l && l->plain)
		*flags |= CTRACE_STR_PLAIN;
}

static void on_event(void *ctx, struct batch_event *e)
{
	static char name_buf[CTRACE_NAME_MAX], args_buf[CTRACE_ARGS_MAX];
	struct split_ctx *c = ctx;
	struct batch_path *bp = c->bp;
	uint64_t *fork_ns;

	e->ev.ts_ns = event_ns(c, e->tsc); /* CTRACE_SCOPE: its end (the model converts both edges itself) */
	/* A thread's events are in order (the mapping is monotonic): kept so whatever a hostile TSC says. */
	if (e->ev.ts_ns < c->st->last_ns)
		e->ev.ts_ns = c->st->last_ns;
	if (e->ev.ts_ns > c->last_ns)
		c->last_ns = e->ev.ts_ns;
	c->st->last_ns = e->ev.ts_ns;
	if (e->ev.ts_ns < bp->start_ns) {
		bp->stats->batch_before_tracing++; /* left in the buffer by an earlier trace */
		return;
	}
	if (c->st->inherited && (fork_ns = key_map_get(&bp->forks, &e->ev.tgid, sizeof(e->ev.tgid))) &&
	    e->ev.ts_ns < (uint64_t)(uintptr_t)fork_ns) {
		bp->stats->batch_inherited_at_fork++; /* its parent's, flushed by the parent */
		return;
	}
	if (*bp->stop_ns && e->ev.ts_ns > *bp->stop_ns) {
		bp->stats->records_after_stop++;
		return;
	}
	if (e->literals & BATCH_NAME_LITERAL)
		resolve_literal(bp, e, ctrace_kind_name_arg(e->ev.kind), &e->ev.name, &e->ev.name_len,
				&e->ev.name_flags, CTRACE_NAME_MAX - 1, name_buf);
	if (e->literals & BATCH_ARGS_LITERAL)
		resolve_literal(bp, e, ctrace_kind_args_arg(e->ev.kind), &e->ev.args, &e->ev.args_len,
				&e->ev.args_flags, CTRACE_ARGS_MAX, args_buf);
	bp->stats->batched_events++;
	event_merge_run_push(&bp->merge, c->st->run, &e->ev);
}

/*
 * One copy of a buffer (n bytes from its start). from_ring: a BATCH record
 * (in ring order: an earlier flush of this thread is in or lost); else the
 * loader's read at read_ns.
 */
static bool take_copy(struct batch_path *bp, uint32_t tgid, uint32_t tid, uint64_t buf,
		      const void *bytes, size_t n, bool from_ring, uint64_t read_ns, bool final)
{
	struct batch_header h;
	struct batch_stream *st;
	struct split_ctx c = { bp, NULL, 0, from_ring ? read_ns : 0 };
	int64_t end;

	if (!batch_header_parse(bytes, n, &h)) {
		bp->stats->bad_records++;
		return false;
	}
	st = stream_get(bp, tgid, tid, buf, true);
	if (!st)
		return false;
	if (!st->next_seq && !st->complete_ns) { /* new */
		st->next_seq = h.first_seq;
		st->inherited = h.tid != tid;
		st->complete_ns = read_ns;
	}
	if (h.first_seq > st->next_seq) {
		if (!from_ring && !final && (bp->stopping || ++st->stuck < STUCK_READS))
			return false; /* the flush of the events before may still be on its way */
		count_gap(bp, st, h.first_seq - st->next_seq);
		st->next_seq = h.first_seq;
	}
	st->stuck = 0;
	c.st = st;
	end = batch_split(bytes, n, st->next_seq, tgid, tid, on_event, &c);
	if (end < 0)
		bp->stats->bad_records++;
	else if ((uint64_t)end > st->next_seq)
		st->next_seq = (uint64_t)end;
	if (from_ring && c.last_ns > st->complete_ns)
		st->complete_ns = c.last_ns;
	if (!from_ring && read_ns > st->complete_ns)
		st->complete_ns = read_ns;
	return true;
}

bool batch_path_record_kind(const void *data, size_t size)
{
	struct ctrace_record r;

	if (size < sizeof(r))
		return false;
	memcpy(&r, data, sizeof(r));
	return r.kind == CTRACE_KIND_BATCH;
}

bool batch_path_record(struct batch_path *bp, const void *data, size_t size)
{
	struct ctrace_record r;

	if (size < sizeof(r))
		return false;
	memcpy(&r, data, sizeof(r));
	if (r.kind != CTRACE_KIND_BATCH)
		return false;
	if (r.arg[1] > size - sizeof(r) || r.arg[1] < BATCH_HEADER_BYTES) {
		/* Unreadable for the kernel side: its events are counted lost by number. */
		return true;
	}
	take_copy(bp, r.tgid, r.tid, r.arg[0], (const char *)data + sizeof(r), r.arg[1], true,
		  r.ts_ns, false);
	if (r.arg[2] == CTRACE_BATCH_WHY_SIGNAL || r.arg[2] == CTRACE_BATCH_WHY_EXITING) {
		struct batch_stream *st = stream_get(bp, r.tgid, r.tid, r.arg[0], false);

		if (st)
			st->retired = true; /* its thread is dying: it will not hold the merge back */
	}
	return true;
}

void batch_path_push(struct batch_path *bp, const struct ctrace_event *ev)
{
	if (ev->kind == CTRACE_KIND_FORK) /* the child's copy of its parent's buffer holds older events */
		key_map_put(&bp->forks, &(uint32_t){ (uint32_t)ev->arg[1] }, sizeof(uint32_t),
			    (void *)(uintptr_t)ev->ts_ns);
	/*
	 * What the kernel tells of processes goes on at once, as without
	 * batches: the model names a process from /proc at its exec, which a
	 * short-lived one would have left by the watermark.
	 */
	if (ev->kind == CTRACE_KIND_EXEC || ev->kind == CTRACE_KIND_LINK_MAP)
		forget_literals(bp, (uint32_t)ev->arg[0]);
	if (ev->kind == CTRACE_KIND_FORK || ev->kind == CTRACE_KIND_EXEC || ev->kind == CTRACE_KIND_LINK_MAP)
		bp->merge.release(bp->merge.ctx, ev);
	else
		event_merge_push(&bp->merge, ev);
}

enum read_result { READ_TAKEN, READ_AGAIN, READ_GONE };

/* n bytes at the process's address `at`; true if all came. */
static bool read_remote(uint32_t tgid, void *to, uint64_t at, size_t n)
{
	struct iovec local = { to, n }, remote = { (void *)(uintptr_t)at, n };

	return process_vm_readv((pid_t)tgid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

/*
 * Reads a live stream's buffer from the process. Its first_seq (offset 8)
 * is read before the header that holds it, as a piece of its own: the
 * kernel copies each piece with string instructions, whose loads x86 may
 * do in any order within the piece, so one copy of the header could pair
 * a len read before a flush reset it with the first_seq the flush wrote
 * after it, and the check below would pass a copy holding the last
 * batch's leftover events under the new numbers.
 */
static enum read_result read_stream(struct batch_path *bp, struct batch_stream *st, uint64_t now,
				    bool final)
{
	static unsigned char copy[CTRACE_BATCH_BYTES];
	struct batch_header h;
	uint64_t seq, again;
	struct iovec local[2] = { { &seq, 8 }, { copy, BATCH_HEADER_BYTES } };
	struct iovec remote[2] = { { (void *)(uintptr_t)(st->buf + 8), 8 },
				   { (void *)(uintptr_t)st->buf, BATCH_HEADER_BYTES } };

	if (process_vm_readv((pid_t)st->tgid, local, 2, remote, 2, 0) != 8 + BATCH_HEADER_BYTES) {
		st->retired = true; /* the process, or the buffer (its thread's exit), is gone */
		return READ_GONE;
	}
	memcpy(copy + 8, &seq, 8);
	memcpy(&h.magic, copy, 4);
	memcpy(&h.tid, copy + 4, 4);
	memcpy(&h.len, copy + 16, 4);
	if (h.magic != BATCH_MAGIC || (h.tid != st->tid && !st->inherited) ||
	    h.len > CTRACE_BATCH_BYTES - BATCH_HEADER_BYTES) {
		st->retired = true; /* unmapped and mapped again for something else */
		return READ_GONE;
	}
	if (h.len && !read_remote(st->tgid, copy + BATCH_HEADER_BYTES, st->buf + BATCH_HEADER_BYTES, h.len))
		return READ_AGAIN;
	/* A flush in between moved first_seq on: this copy may mix two batches. */
	if (!read_remote(st->tgid, &again, st->buf + 8, 8) || memcmp(&again, copy + 8, 8))
		return READ_AGAIN;
	return take_copy(bp, st->tgid, st->tid, st->buf, copy, BATCH_HEADER_BYTES + h.len, false, now,
			 final) ? READ_TAKEN : READ_AGAIN;
}

struct each_ctx {
	struct batch_path *bp;
	uint64_t now;
	bool final;
	uint64_t watermark;
	unsigned again; /* streams to read again (bp->stopping) */
};

static void read_one(const void *key, size_t len, void *value, void *ctx)
{
	struct each_ctx *c = ctx;
	struct batch_stream *st = value;

	(void)key;
	(void)len;
	if (st->retired || (c->bp->stopping && st->past_stop))
		return;
	switch (read_stream(c->bp, st, c->now, c->final)) {
	case READ_AGAIN:
		c->again++;
		break;
	case READ_TAKEN:
		if (c->bp->stopping)
			st->past_stop = true;
		break;
	case READ_GONE:
		break;
	}
}

void batch_path_stop(struct batch_path *bp, void (*consume)(void *ctx), void *ctx)
{
	if (!bp->on)
		return;
	bp->stopping = true;
	/* A few tries: under a flood a buffer may be flushed between any consume and its read. */
	for (int tries = 0; tries < 3; tries++) {
		struct each_ctx c = { bp, UINT64_MAX, false, 0, 0 };

		consume(ctx); /* the flushes on their way first: then a buffer's numbers follow on */
		key_map_each(&bp->streams, read_one, &c);
		if (!c.again)
			break;
	}
	bp->stopping = false;
}

static void lowest(const void *key, size_t len, void *value, void *ctx)
{
	struct each_ctx *c = ctx;
	struct batch_stream *st = value;

	(void)key;
	(void)len;
	if (!st->retired && st->complete_ns < c->watermark)
		c->watermark = st->complete_ns;
}

void batch_path_tick(struct batch_path *bp, uint64_t now, uint64_t ring_drained_at)
{
	struct each_ctx c = { bp, now, false, 0, 0 };

	if (!bp->on)
		return;
	if (ring_drained_at > bp->ring_ns)
		bp->ring_ns = ring_drained_at;
	if (now >= bp->next_read_ns) {
		key_map_each(&bp->streams, read_one, &c);
		bp->next_read_ns = now + IDLE_READ_NS;
	}
	c.watermark = bp->ring_ns;
	key_map_each(&bp->streams, lowest, &c);
	event_merge_release(&bp->merge, c.watermark);
}

/*
 * The kernel side's count of each buffer's events against what came
 * (bpf/ctrace.bpf.c: batch_buffers, one entry a thread and buffer).
 */
static void count_unseen(struct batch_path *bp, int fd)
{
	struct {
		uint64_t pid_tgid, buf;
	} key, next;
	struct {
		uint64_t seq_end;
		uint8_t inherited, watched, pad[6];
	} b;
	bool first = true;

	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		uint32_t tgid = next.pid_tgid >> 32;
		struct batch_stream *st;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &b))
			continue;
		st = stream_get(bp, tgid, (uint32_t)key.pid_tgid, key.buf, false);
		if (st && b.seq_end > st->next_seq)
			count_gap(bp, st, b.seq_end - st->next_seq);
		else if (!st && !b.inherited)
			bp->lost += b.seq_end; /* not one of its batches came */
	}
}

void batch_path_finish(struct batch_path *bp, int batch_threads_fd)
{
	struct each_ctx c = { bp, UINT64_MAX, true, 0, 0 };

	if (!bp->on)
		return;
	key_map_each(&bp->streams, read_one, &c);
	if (batch_threads_fd >= 0)
		count_unseen(bp, batch_threads_fd);
	event_merge_release(&bp->merge, UINT64_MAX);
	bp->stats->merge_forced = bp->merge.forced;
	bp->stats->merge_late = bp->merge.late;
}

static void free_stream(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	free(value);
}

void batch_path_free(struct batch_path *bp)
{
	key_map_each(&bp->streams, free_stream, NULL);
	key_map_free(&bp->streams);
	key_map_free(&bp->forks);
	key_map_each(&bp->literal_copies, free_literal, NULL);
	key_map_free(&bp->literal_copies);
	event_merge_free(&bp->merge);
}
