// SPDX-License-Identifier: MIT
#include "ingest/batch_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "attach/batch_discover.h"
#include "ingest/batch_split.h"
#include "lib/categories.h"
#include "ctrace_record.h"
#include "ingest/remote_read.h"

/* Every 20 ms: also how far the watermark lags behind an idle thread (what the merge holds). */
#define IDLE_READ_NS (20 * 1000000ull)
/* Buffers read by one round of the loader at most (read_some). */
#define READS_PER_ROUND 1024
/* Idle reads that found a flush on its way before it counts as lost (the ring drained each time). */
#define STUCK_READS 3

/*
 * A stream is one thread's taking of one buffer: a later thread takes
 * over the buffer of one that exited (its tid maybe the old one's,
 * reused), a new image maps its buffer where the old one's was (exec with
 * address randomization off), each with `born` of its own.
 */
struct stream_key {
	uint32_t tgid, tid;
	uint64_t buf, born;
};

struct batch_stream {
	struct bound_entry be; /* in bp->bound, by its key */
	struct stream_key key; /* born: the buffer's header's (0: an older header's, which has none) */
	uint64_t next_seq;    /* every event numbered below was taken or counted lost */
	/*
	 * Of an adopted buffer (batch_path_adopt): the number of its first
	 * event when it was found, below which the loader never read it. A
	 * flush made before that comes later in the ring, with events below
	 * it not yet taken. 0 for the others.
	 */
	uint64_t read_from;
	uint64_t complete_ns; /* every event of this stream stamped before it is known */
	/*
	 * The thread is gone (or its buffer), found so by a read at
	 * retired_ns: it holds nobody back once the ring has been drained past
	 * then, its last copy (the kernel side's at its death, sent before
	 * the read failed) taken.
	 */
	bool retired;
	uint64_t retired_ns;
	bool inherited;       /* a forked child's copy of its parent's buffer */
	unsigned stuck;
	uint64_t last_ns;     /* the latest event seen (taken or not) */
	bool past_stop;       /* read whole after the stop: what it numbers later is after it */
	struct merge_run *run; /* its events, in their order, in the merge */
};

/* What a stream takes: itself, its slots in the map, its run in the merge. */
#define STREAM_COST \
	(tb_alloc_cost(sizeof(struct batch_stream)) + tb_slot_cost(sizeof(struct stream_key)) + \
	 tb_alloc_cost(event_merge_run_bytes))

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
	tb_init(&bp->bound, "batch_streams", "a buffer announced past it is not read: its events are counted dropped",
		SIZE_MAX);
	key_map_init(&bp->forks);
	key_map_init(&bp->anchors);
	key_map_init(&bp->literal_copies);
	bp->literal_gen = 1; /* the hot entries, zeroed, are of none */
	event_merge_init(&bp->merge, MERGE_MAX_BYTES, model, ctx);
}

static struct batch_stream *stream_get(struct batch_path *bp, uint32_t tgid, uint32_t tid,
				       uint64_t buf, uint64_t born, bool create)
{
	struct stream_key k = { tgid, tid, buf, born };
	struct batch_stream *st = key_map_get(&bp->streams, &k, sizeof(k));

	if (st || !create)
		return st;
	/*
	 * A process that announces buffers without end (its own calls of the
	 * flush, forged) must not grow the loader: past the table's share of
	 * --max-memory, a new buffer is not read, its events counted dropped.
	 */
	if (bp->bound.bytes + STREAM_COST > bp->bound.limit) {
		tb_count_evicted(&bp->bound, 1);
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->key = k;
	st->run = event_merge_run(&bp->merge); /* NULL: its events go in the merge's heap */
	key_map_put(&bp->streams, &st->key, sizeof(st->key), st);
	tb_add(&bp->bound, &st->be, &st->key, sizeof(st->key), STREAM_COST);
	bp->stats->batch_threads++;
	return st;
}

/*
 * A stream that can hold nothing more (its thread died or exec()ed, and
 * its last copy is in): forgotten, so that a process whose threads come
 * and go keeps only its live threads' streams. Its events stay in the
 * merge until handed on.
 */
static void stream_end(struct batch_path *bp, struct batch_stream *st)
{
	key_map_del(&bp->streams, &st->key, sizeof(st->key));
	tb_remove(&bp->bound, &st->be);
	event_merge_run_done(&bp->merge, st->run);
	free(st);
}

/*
 * The first number of a stream first seen in this copy: 0 for a buffer its
 * thread took during this trace (every number is this trace's: those
 * before the copy, their flushes dropped, are counted lost), else the
 * copy's first (an older trace's are left out by their time).
 */
static uint64_t first_number(const struct batch_path *bp, const struct batch_header *h)
{
	return h->born && tsc_clock_to_ns(bp->tsc, h->born) >= bp->start_ns ? 0 : h->first_seq;
}

/* What one event of a buffer needs before the merge: its time and its literals. */
struct split_ctx {
	struct batch_path *bp;
	struct batch_stream *st;
	uint64_t last_ns;
	uint64_t until; /* no event of a copy is later than the copy */
	uint64_t taken_from, taken_to; /* numbers taken before, skipped (see read_from) */
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

/* A literal copy of process *ctx: freed. */
static bool take_literal_of(const void *key, size_t len, void *value, void *ctx)
{
	struct batch_literal *l = value;

	(void)key;
	(void)len;
	if (l->tgid != *(const uint32_t *)ctx)
		return false;
	free(l);
	return true;
}

/* The process's objects changed: its literal copies may name another's strings now. */
static void forget_literals(struct batch_path *bp, uint32_t tgid)
{
	if (!bp->literal_copies.count)
		return;
	bp->literal_gen++;
	key_map_remove_if(&bp->literal_copies, take_literal_of, &tgid);
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

/*
 * A batched event's category (batch_split.h): its name, read as a literal
 * is, among the categories whose sites this trace attached; 0 (unknown)
 * for any other string, or none.
 */
static void resolve_category(struct batch_path *bp, struct batch_event *e)
{
	struct batch_event named = *e;
	char buf[CATEGORY_NAME_MAX + 1]; /* a name too long to be one reads as such */
	const char *s;
	size_t len;
	unsigned flags;

	named.ev.arg[0] = e->category;
	resolve_literal(bp, &named, 0, &s, &len, &flags, CATEGORY_NAME_MAX, buf);
	e->ev.cat = flags & (CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED) ? 0 : (uint8_t)category_traced(s, len);
}

static void on_event(void *ctx, struct batch_event *e)
{
	static char name_buf[CTRACE_NAME_MAX], args_buf[CTRACE_ARGS_MAX];
	struct split_ctx *c = ctx;
	struct batch_path *bp = c->bp;
	uint64_t *fork_ns;

	if (e->seq >= c->taken_from && e->seq < c->taken_to)
		return;
	e->ev.ts_ns = event_ns(c, e->tsc); /* CTRACE_SCOPE: its end (the model converts both edges itself) */
	/* A thread's events are in order (the mapping is monotonic): kept so whatever a hostile TSC says. */
	if (e->seq >= c->st->read_from) {
		if (e->ev.ts_ns < c->st->last_ns)
			e->ev.ts_ns = c->st->last_ns;
		c->st->last_ns = e->ev.ts_ns;
	}
	if (e->ev.ts_ns > c->last_ns)
		c->last_ns = e->ev.ts_ns;
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
	if (e->category)
		resolve_category(bp, e);
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
static struct batch_stream *take_copy(struct batch_path *bp, uint32_t tgid, uint32_t tid, uint64_t buf,
				      const void *bytes, size_t n, bool from_ring, uint64_t read_ns, bool final,
				      uint64_t why)
{
	struct batch_header h;
	struct batch_stream *st;
	struct split_ctx c = { bp, NULL, 0, from_ring ? read_ns : 0, 0, 0 };
	uint64_t from;
	int64_t end;

	if (!from_ring && bp->copy_out) /* a capture: the conversion takes this copy where it was read */
		bp->copy_out(bp->copy_ctx, tgid, tid, buf, bytes, n, read_ns, final, bp->stopping);
	if (!batch_header_parse(bytes, n, &h)) {
		bp->stats->bad_records++;
		return NULL;
	}
	st = stream_get(bp, tgid, tid, buf, h.born, false);
	/*
	 * A header with no `born` (an older one): a thread announcing its
	 * buffer starts numbering from 0, whoever had it before.
	 */
	if (st && !h.born && from_ring && why == CTRACE_BATCH_WHY_HELLO)
		stream_end(bp, st);
	st = stream_get(bp, tgid, tid, buf, h.born, true);
	if (!st) {
		if (from_ring)
			bp->lost += h.count; /* a flush's events are its own: counted once */
		return NULL;
	}
	if (!st->next_seq && !st->complete_ns) { /* new */
		st->next_seq = first_number(bp, &h);
		st->inherited = h.tid != tid;
		st->complete_ns = read_ns;
	}
	if (h.first_seq > st->next_seq) {
		if (!from_ring && !final && (bp->stopping || ++st->stuck < STUCK_READS))
			return NULL; /* the flush of the events before may still be on its way */
		count_gap(bp, st, h.first_seq - st->next_seq);
		st->next_seq = h.first_seq;
	}
	st->stuck = 0;
	c.st = st;
	from = st->next_seq;
	/*
	 * A flush from before the buffer was adopted, come after: its events
	 * below read_from were never read here; those from there on were.
	 */
	if (from_ring && h.first_seq < st->read_from) {
		c.taken_from = st->read_from;
		c.taken_to = st->next_seq;
		from = h.first_seq;
		st->read_from = h.first_seq;
	}
	/*
	 * A capture keeps the copy's bytes, not its events: the numbers its
	 * header gives are what the conversion's split will find in it.
	 */
	end = bp->copy_out ? (int64_t)(h.first_seq + h.count) : batch_split(bytes, n, from, tgid, tid, on_event, &c);
	if (bp->copy_out && (uint64_t)end > st->next_seq)
		bp->captured += (uint64_t)end - st->next_seq;
	if (end < 0)
		bp->stats->bad_records++;
	else if ((uint64_t)end > st->next_seq)
		st->next_seq = (uint64_t)end;
	if (from_ring && c.last_ns > st->complete_ns)
		st->complete_ns = c.last_ns;
	if (!from_ring && read_ns > st->complete_ns)
		st->complete_ns = read_ns;
	return st;
}

bool batch_path_record(struct batch_path *bp, const void *data, size_t size)
{
	struct batch_stream *st;
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
	st = take_copy(bp, r.tgid, r.tid, r.arg[0], (const char *)data + sizeof(r), r.arg[1], true,
		       r.ts_ns, false, r.arg[2]);
	/* Its thread dies or execs: this copy was its last. */
	if (st && (r.arg[2] == CTRACE_BATCH_WHY_SIGNAL || r.arg[2] == CTRACE_BATCH_WHY_EXITING ||
		   r.arg[2] == CTRACE_BATCH_WHY_EXEC))
		stream_end(bp, st);
	return true;
}

bool batch_path_count_unread(struct batch_path *bp, const void *data, size_t size)
{
	struct batch_stream *st;
	struct batch_header h;
	struct ctrace_record r;

	if (size < sizeof(r))
		return false;
	memcpy(&r, data, sizeof(r));
	if (r.kind != CTRACE_KIND_BATCH)
		return false;
	if (r.arg[1] > size - sizeof(r) || !batch_header_parse((const char *)data + sizeof(r), r.arg[1], &h))
		return true; /* counted by number at the end, as an unreadable copy is */
	st = stream_get(bp, r.tgid, r.tid, r.arg[0], h.born, false);
	if (!st) {
		bp->lost += h.count;
		return true;
	}
	if (r.arg[3] > st->next_seq) {
		count_gap(bp, st, r.arg[3] - st->next_seq);
		st->next_seq = r.arg[3];
	}
	return true;
}

/* An object's list of buffers in one process (batch_discover.c). */
struct batch_anchor {
	uint32_t tgid;
	uint64_t addr;
};

struct walk_ctx {
	struct batch_path *bp;
	uint32_t tgid;
	uint64_t now;
};

static void adopt_found(void *ctx, uint64_t buf, const unsigned char *header)
{
	struct walk_ctx *w = ctx;

	batch_path_adopt(w->bp, w->tgid, buf, header, w->now);
}

static void walk_anchor(struct batch_path *bp, const struct batch_anchor *a, uint64_t now)
{
	struct walk_ctx w = { bp, a->tgid, now };

	batch_discover((int)a->tgid, a->addr, adopt_found, &w);
}

bool batch_path_has_anchor(const struct batch_path *bp, uint32_t tgid, uint64_t dev, uint64_t inode)
{
	uint64_t key[3] = { tgid, dev, inode };

	return key_map_get(&bp->anchors, key, sizeof(key)) != NULL;
}

void batch_path_add_anchor(struct batch_path *bp, uint32_t tgid, uint64_t dev, uint64_t inode, uint64_t addr,
			   uint64_t now)
{
	uint64_t key[3] = { tgid, dev, inode };
	struct batch_anchor *a = calloc(1, sizeof(*a));

	if (!a)
		return;
	*a = (struct batch_anchor){ tgid, addr };
	free(key_map_put(&bp->anchors, key, sizeof(key), a));
	walk_anchor(bp, a, now);
}

struct rewalk_ctx {
	struct batch_path *bp;
	uint64_t now;
};

static void rewalk(const void *key, size_t len, void *value, void *ctx)
{
	struct rewalk_ctx *c = ctx;

	(void)key;
	(void)len;
	walk_anchor(c->bp, value, c->now);
}

void batch_path_rediscover(struct batch_path *bp, uint64_t batches_dropped, bool all, uint64_t now)
{
	struct rewalk_ctx c = { bp, now };

	if (!bp->on || (!all && batches_dropped == bp->dropped_walked))
		return;
	bp->dropped_walked = batches_dropped;
	key_map_each(&bp->anchors, rewalk, &c);
}

/* An object's list of buffers in process *ctx: freed. */
static bool take_anchor_of(const void *key, size_t len, void *value, void *ctx)
{
	struct batch_anchor *a = value;

	(void)key;
	(void)len;
	if (a->tgid != *(const uint32_t *)ctx)
		return false;
	free(a);
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
	/* A new image: its objects' lists are elsewhere, found when it is attached. */
	if (ev->kind == CTRACE_KIND_EXEC)
		key_map_remove_if(&bp->anchors, take_anchor_of, &(uint32_t){ (uint32_t)ev->arg[0] });
	if (ev->kind == CTRACE_KIND_FORK || ev->kind == CTRACE_KIND_EXEC || ev->kind == CTRACE_KIND_LINK_MAP)
		bp->merge.release(bp->merge.ctx, ev);
	else
		event_merge_push(&bp->merge, ev);
}

void batch_path_adopt(struct batch_path *bp, uint32_t tgid, uint64_t buf, const void *header, uint64_t now)
{
	struct batch_header h;
	struct batch_stream *st;
	bool inherited;
	uint32_t tid;
	char task[64];

	/* The header of a whole buffer: its len may be anything up to the buffer's room. */
	if (!bp->on || !batch_header_parse(header, CTRACE_BATCH_BYTES, &h))
		return;
	/*
	 * A buffer of this process is its thread's, if that thread lives (one
	 * that exited leaves it for the next thread to take, which announces
	 * it). A forked child's copy of its parent's buffer is appended to by
	 * the one thread the child has, the one that forked: its leader.
	 */
	inherited = h.pid != tgid;
	tid = inherited ? tgid : h.tid;
	snprintf(task, sizeof(task), "/proc/%u/task/%u", tgid, tid);
	if (!bp->offline && !inherited && access(task, F_OK) != 0)
		return;
	if (bp->adopt_out)
		bp->adopt_out(bp->copy_ctx, tgid, buf, header, now);
	if (stream_get(bp, tgid, tid, buf, h.born, false))
		return;
	st = stream_get(bp, tgid, tid, buf, h.born, true);
	if (!st)
		return;
	/* Read from the next look on, from its first event: an older trace's are dropped by their time. */
	st->next_seq = first_number(bp, &h);
	st->read_from = st->next_seq;
	st->inherited = inherited;
	st->complete_ns = now;
	bp->stats->batch_adopted++;
}

enum read_result { READ_TAKEN, READ_AGAIN, READ_GONE };

/* n bytes at the process's address `at`; true if all came (remote_read.h: it cannot stall the loop). */
static bool read_remote(uint32_t tgid, void *to, uint64_t at, size_t n)
{
	return remote_read((pid_t)tgid, to, at, n) == (ssize_t)n;
}

/* A read at `now` found the stream gone; the stop's reads (now UINT64_MAX) come after the ring's last drain. */
static void retire(struct batch_stream *st, uint64_t now)
{
	st->retired = true;
	st->retired_ns = now == UINT64_MAX ? 0 : now;
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
	uint64_t seq;
	unsigned char again[BATCH_HEADER_BYTES];
	struct iovec local[2] = { { &seq, 8 }, { copy, BATCH_HEADER_BYTES } };
	struct iovec remote[2] = { { (void *)(uintptr_t)(st->key.buf + 8), 8 },
				   { (void *)(uintptr_t)st->key.buf, BATCH_HEADER_BYTES } };

	if (remote_readv((pid_t)st->key.tgid, local, 2, remote, 2) != 8 + BATCH_HEADER_BYTES) {
		if (errno == ETIMEDOUT || errno == EAGAIN)
			return READ_AGAIN; /* the process lives, its memory stalls reads (remote_read.h) */
		retire(st, now); /* the process, or the buffer (its thread's exit), is gone */
		return READ_GONE;
	}
	memcpy(copy + 8, &seq, 8);
	memcpy(&h.magic, copy, 4);
	memcpy(&h.tid, copy + 4, 4);
	memcpy(&h.len, copy + 16, 4);
	memcpy(&h.born, copy + 48, 8);
	if (h.magic != BATCH_MAGIC || (h.tid != st->key.tid && !st->inherited) || h.born != st->key.born ||
	    h.len > CTRACE_BATCH_BYTES - BATCH_HEADER_BYTES) {
		retire(st, now); /* unmapped and mapped again for something else */
		return READ_GONE;
	}
	if (h.len && !read_remote(st->key.tgid, copy + BATCH_HEADER_BYTES, st->key.buf + BATCH_HEADER_BYTES, h.len))
		return READ_AGAIN;
	/*
	 * A flush in between moved first_seq on, or a thread took the buffer
	 * over (its owner gone): this copy may mix two batches, or two
	 * threads'. A takeover sets first_seq to 0, which it may well have
	 * been, but it changes tid or born before the new thread's first
	 * event, and x86 makes stores seen in their order.
	 */
	if (!read_remote(st->key.tgid, again, st->key.buf, BATCH_HEADER_BYTES) || memcmp(again, copy, 16) ||
	    memcmp(again + 48, copy + 48, 8))
		return READ_AGAIN;
	return take_copy(bp, st->key.tgid, st->key.tid, st->key.buf, copy, BATCH_HEADER_BYTES + h.len, false, now,
			 final, 0) ? READ_TAKEN : READ_AGAIN;
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

/*
 * How long the stop waits, in all, for processes whose reads stall (an
 * abandoned read not yet returned) before it reads them all the same: the
 * read that blocked may have waited on a thread of the process holding its
 * memory map, which a busy machine leaves without a CPU for a while.
 */
#define STOP_STALL_WAIT_NS (2 * 1000000000ull)

struct stall_wait {
	uint64_t until;
};

static void wait_stalled(const void *key, size_t len, void *value, void *ctx)
{
	struct stall_wait *sw = ctx;
	struct batch_stream *st = value;

	(void)key;
	(void)len;
	if (!st->retired)
		remote_read_wait((pid_t)st->key.tgid, sw->until);
}

void batch_path_stop(struct batch_path *bp, void (*consume)(void *ctx), void *ctx)
{
	struct timespec ts;
	struct stall_wait sw;

	if (!bp->on)
		return;
	bp->stopping = true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sw.until = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + STOP_STALL_WAIT_NS;
	key_map_each(&bp->streams, wait_stalled, &sw);
	/* From here to batch_path_finish, the last reads: each buffer is tried whatever another blocked on. */
	remote_read_last_chance(true);
	/*
	 * A few tries: under a flood a buffer may be flushed between any
	 * consume and its read. The last takes what it finds and counts what
	 * is missing before it as lost: once the probes go, the process may
	 * exit and its buffers with it.
	 */
	for (int tries = 0; tries < 3; tries++) {
		struct each_ctx c = { bp, UINT64_MAX, tries == 2, 0, 0 };

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
	if (st->retired && c->bp->ring_ns >= st->retired_ns)
		return;
	if (st->complete_ns < c->watermark)
		c->watermark = st->complete_ns;
}

/*
 * The idle reads of one round: at most READS_PER_ROUND buffers, the next
 * round going on from there, so that a process with a great many buffers
 * (or forged ones) costs each round of the loader a bounded time; a pass
 * over all of them every IDLE_READ_NS at most.
 */
static void read_some(struct batch_path *bp, struct each_ctx *c)
{
	unsigned read = 0;

	while (read < READS_PER_ROUND && bp->read_cursor < bp->streams.cap) {
		const struct key_map_slot *sl = &bp->streams.slots[bp->read_cursor++];
		const struct batch_stream *st = sl->value;

		if (!sl->hash || st->retired)
			continue;
		read_one(sl->k.inline_key, sl->key_len, sl->value, c);
		read++;
	}
	if (bp->read_cursor >= bp->streams.cap) {
		bp->read_cursor = 0;
		bp->next_read_ns = c->now + IDLE_READ_NS;
	}
}

void batch_path_tick(struct batch_path *bp, uint64_t now, uint64_t ring_drained_at)
{
	struct each_ctx c = { bp, now, false, 0, 0 };

	if (!bp->on)
		return;
	if (ring_drained_at > bp->ring_ns)
		bp->ring_ns = ring_drained_at;
	if (now >= bp->next_read_ns && !bp->offline)
		read_some(bp, &c);
	c.watermark = bp->ring_ns;
	key_map_each(&bp->streams, lowest, &c);
	event_merge_release(&bp->merge, c.watermark);
}

/* {tgid, tid, buffer} -> its latest stream: what the kernel side's entries name (they know no `born`). */
static void index_latest(const void *key, size_t len, void *value, void *ctx)
{
	struct key_map *latest = ctx;
	struct batch_stream *st = value, *seen;
	uint64_t k[2] = { (uint64_t)st->key.tgid << 32 | st->key.tid, st->key.buf };

	(void)key;
	(void)len;
	seen = key_map_get(latest, k, sizeof(k));
	if (!seen || seen->key.born < st->key.born)
		key_map_put(latest, k, sizeof(k), st);
}

/*
 * The kernel side's count of each buffer's events against what came
 * (bpf/ctrace.bpf.c: batch_buffers, one entry a thread and buffer; the
 * entry of a buffer whose last copy at its thread's death was sent is
 * gone, as is its stream here).
 */
static void count_unseen_in(struct batch_path *bp, const struct batch_unseen *v, size_t n)
{
	struct key_map latest;

	key_map_init(&latest);
	key_map_each(&bp->streams, index_latest, &latest);
	for (size_t i = 0; i < n; i++) {
		uint64_t key[2] = { v[i].pid_tgid, v[i].buf };
		struct batch_stream *st = key_map_get(&latest, key, sizeof(key));

		if (st && v[i].seq_end > st->next_seq)
			count_gap(bp, st, v[i].seq_end - st->next_seq);
		else if (!st && !v[i].inherited)
			bp->lost += v[i].seq_end; /* not one of its batches came */
	}
	key_map_free(&latest);
}

size_t batch_path_read_unseen(int fd, struct batch_unseen **out)
{
	struct batch_unseen *v = NULL;
	size_t n = 0, cap = 0;
	struct {
		uint64_t pid_tgid, buf;
	} key, next;
	struct {
		uint64_t seq_end;
		uint8_t inherited, watched, pad[6];
	} b;
	bool first = true;

	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &b))
			continue;
		if (n == cap) {
			struct batch_unseen *g = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!g)
				break;
			v = g;
		}
		v[n++] = (struct batch_unseen){ key.pid_tgid, key.buf, b.seq_end, b.inherited };
	}
	*out = v;
	return n;
}

static void count_unseen(struct batch_path *bp, int fd)
{
	struct batch_unseen *v;
	size_t n = batch_path_read_unseen(fd, &v);

	count_unseen_in(bp, v, n);
	free(v);
}

void batch_path_copy(struct batch_path *bp, uint32_t tgid, uint32_t tid, uint64_t buf, const void *bytes,
		     size_t n, uint64_t read_ns, bool final, bool stopping)
{
	bool was = bp->stopping;

	if (!bp->on)
		return;
	bp->stopping = stopping;
	take_copy(bp, tgid, tid, buf, bytes, n, false, read_ns, final, 0);
	bp->stopping = was;
}

void batch_path_finish_with(struct batch_path *bp, const struct batch_unseen *v, size_t n)
{
	if (!bp->on)
		return;
	count_unseen_in(bp, v, n);
	event_merge_release(&bp->merge, UINT64_MAX);
	bp->stats->merge_forced = bp->merge.forced;
	bp->stats->merge_late = bp->merge.late;
}

void batch_path_finish(struct batch_path *bp, int batch_threads_fd)
{
	struct each_ctx c = { bp, UINT64_MAX, true, 0, 0 };

	if (!bp->on)
		return;
	key_map_each(&bp->streams, read_one, &c);
	remote_read_last_chance(false);
	bp->unread_at_stop = c.again;
	if (batch_threads_fd >= 0 && !bp->copy_out)
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
	key_map_free_with_values(&bp->anchors);
	key_map_each(&bp->literal_copies, free_literal, NULL);
	key_map_free(&bp->literal_copies);
	event_merge_free(&bp->merge);
}
