// SPDX-License-Identifier: MIT
#include "ingest/event_merge.h"
#include "lib/grow_array.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct merge_item {
	struct ctrace_event ev; /* name and args point into bytes[] */
	uint64_t arrival;       /* ties in time keep their arrival order */
	size_t size;
	struct merge_item *next_free; /* in m->free_items, while not held */
	char bytes[];
};

/*
 * Items with strings of up to SLOT_STRINGS bytes (nearly all) are of one
 * size and kept for reuse once handed on, instead of a malloc() and free()
 * per event: the held ones and the kept ones together never exceed the
 * most held at once, which max_bytes bounds. (Under ASan, freed memory
 * waits in a quarantine: a free per event grew the loader's RSS by tens of
 * MiB under a flood.)
 */
#define SLOT_STRINGS 240
#define SLOT_SIZE (sizeof(struct merge_item) + SLOT_STRINGS)

static struct merge_item *item_alloc(struct event_merge *m, size_t size)
{
	struct merge_item *it;

	if (size > SLOT_SIZE)
		return malloc(size);
	it = m->free_items;
	if (it) {
		m->free_items = it->next_free;
		return it;
	}
	return malloc(SLOT_SIZE);
}

static void item_free(struct event_merge *m, struct merge_item *it)
{
	if (it->size > SLOT_SIZE) {
		free(it);
		return;
	}
	it->next_free = m->free_items;
	m->free_items = it;
}

/*
 * A run's items, back to back in chunks of one size, each an event, its
 * arrival and its strings: no allocation per event, and the merge reads
 * them in the order they were written. A chunk counts whole in the
 * bound (a run holding one event holds its chunk): 16 KiB is one batch's
 * worth of plain instants, so a few hundred threads with events held fill
 * the 8 MiB budget, as their buffers do the process's.
 */
#define CHUNK_BYTES 16384
#define FREE_CHUNKS_KEPT 16

struct merge_chunk {
	struct merge_chunk *next;
	size_t read, write; /* offsets into data[] */
	unsigned char data[CHUNK_BYTES - 3 * sizeof(size_t)];
};

struct run_item {
	struct ctrace_event ev; /* name and args point after it, set when handed on */
	uint64_t arrival;
	uint32_t size;          /* in the chunk, 8-byte aligned */
};

struct merge_run {
	struct merge_chunk *head, *tail; /* read from head, written at tail */
	uint64_t head_ts, head_arrival;  /* the next to go: its key in the heap of runs */
	uint64_t last_ts;                /* the newest held: a later push must not be older */
	size_t pos;                      /* in m->runs while it holds events */
	size_t held;
	bool done;                       /* its source is over: reused once it is empty */
	struct merge_run *next_all;
	struct merge_run *next_free;     /* in m->free_runs */
};

const size_t event_merge_run_bytes = sizeof(struct merge_run);

void event_merge_init(struct event_merge *m, size_t max_bytes,
		      void (*release)(void *ctx, const struct ctrace_event *ev), void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->max_bytes = max_bytes;
	m->release = release;
	m->ctx = ctx;
}

/*
 * Under a flood every event passes through this heap, which then holds
 * tens of thousands: with the time in the heap's own array, not only
 * behind each item's pointer (a cache miss per comparison), an event costs
 * a third less (tests/bench/merge_replay: 1109 -> 715 ns with 100,000 held;
 * 10,000 held: 455-500 -> 555-608, the item first read at the pop). Only
 * a tie reads the items; 16 bytes a slot keep the heap small.
 */
static bool before(const struct merge_slot *a, const struct merge_slot *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->item->arrival < b->item->arrival);
}

static void sift_up(struct event_merge *m, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		struct merge_slot t;

		if (!before(&m->heap[i], &m->heap[parent]))
			break;
		t = m->heap[i];
		m->heap[i] = m->heap[parent];
		m->heap[parent] = t;
		i = parent;
	}
}

static void sift_down(struct event_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, least = i;
		struct merge_slot t;

		if (l < m->n && before(&m->heap[l], &m->heap[least]))
			least = l;
		if (r < m->n && before(&m->heap[r], &m->heap[least]))
			least = r;
		if (least == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[least];
		m->heap[least] = t;
		i = least;
	}
}

/* To the model; an event older than one handed on before is counted (late: out of order in the trace). */
static void hand_over(struct event_merge *m, const struct ctrace_event *ev)
{
	if (ev->ts_ns < m->last_out_ts)
		m->late++;
	else
		m->last_out_ts = ev->ts_ns;
	m->release(m->ctx, ev);
}

static struct merge_item *pop(struct event_merge *m)
{
	struct merge_item *top = m->heap[0].item;

	m->heap[0] = m->heap[--m->n];
	if (m->n)
		sift_down(m, 0);
	m->bytes -= top->size;
	return top;
}

static void hand_on(struct event_merge *m, struct merge_item *it)
{
	hand_over(m, &it->ev);
	item_free(m, it);
}

void event_merge_push(struct event_merge *m, const struct ctrace_event *ev)
{
	size_t size = sizeof(struct merge_item) + ev->name_len + ev->args_len;
	struct merge_item *it;

	/* What it takes in memory: a slot, for most (the bound counts that). */
	if (size < SLOT_SIZE)
		size = SLOT_SIZE;

	if (GROW_ARRAY(m->heap, m->cap, m->n, 1024) < 0) {
		/* No room to hold it: in order as far as it goes. */
		hand_over(m, ev);
		m->forced++;
		return;
	}
	it = item_alloc(m, size);
	if (!it) {
		hand_over(m, ev);
		m->forced++;
		return;
	}
	it->ev = *ev;
	it->size = size;
	it->arrival = m->arrivals++;
	memcpy(it->bytes, ev->name, ev->name_len);
	memcpy(it->bytes + ev->name_len, ev->args, ev->args_len);
	it->ev.name = it->bytes;
	it->ev.args = it->bytes + ev->name_len;
	m->heap[m->n++] = (struct merge_slot){ .ts_ns = ev->ts_ns, .item = it };
	m->bytes += size;
	sift_up(m, m->n - 1);
	/* Bounded: past the budget, the oldest go on now (counted: their order may be off). */
	while (m->max_bytes && m->bytes > m->max_bytes && (m->n || m->n_runs)) {
		event_merge_release(m, event_merge_oldest(m));
		m->forced++;
	}
}

static bool run_before(const struct merge_run *a, const struct merge_run *b)
{
	return a->head_ts < b->head_ts || (a->head_ts == b->head_ts && a->head_arrival < b->head_arrival);
}

static void runs_swap(struct event_merge *m, size_t i, size_t j)
{
	struct merge_run *t = m->runs[i];

	m->runs[i] = m->runs[j];
	m->runs[j] = t;
	m->runs[i]->pos = i;
	m->runs[j]->pos = j;
}

static void runs_sift_up(struct event_merge *m, size_t i)
{
	while (i > 0 && run_before(m->runs[i], m->runs[(i - 1) / 2])) {
		runs_swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void runs_sift_down(struct event_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, least = i;

		if (l < m->n_runs && run_before(m->runs[l], m->runs[least]))
			least = l;
		if (r < m->n_runs && run_before(m->runs[r], m->runs[least]))
			least = r;
		if (least == i)
			return;
		runs_swap(m, i, least);
		i = least;
	}
}

struct merge_run *event_merge_run(struct event_merge *m)
{
	struct merge_run *run = m->free_runs;

	if (run) {
		m->free_runs = run->next_free;
		run->done = false;
		run->last_ts = 0;
		return run;
	}
	run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->next_all = m->all_runs;
	m->all_runs = run;
	return run;
}

/* An empty run whose source is over, kept for the next source. */
static void run_recycle(struct event_merge *m, struct merge_run *run)
{
	run->next_free = m->free_runs;
	m->free_runs = run;
}

void event_merge_run_done(struct event_merge *m, struct merge_run *run)
{
	if (!run)
		return;
	if (run->held)
		run->done = true;
	else
		run_recycle(m, run);
}

static struct merge_chunk *chunk_new(struct event_merge *m)
{
	struct merge_chunk *c = m->free_chunks;

	if (c) {
		m->free_chunks = c->next;
		m->n_free_chunks--;
	} else {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
	}
	c->next = NULL;
	c->read = c->write = 0;
	m->bytes += sizeof(*c);
	return c;
}

static void chunk_done(struct event_merge *m, struct merge_chunk *c)
{
	m->bytes -= sizeof(*c);
	if (m->n_free_chunks >= FREE_CHUNKS_KEPT) {
		free(c);
		return;
	}
	c->next = m->free_chunks;
	m->free_chunks = c;
	m->n_free_chunks++;
}

static struct run_item *run_head(const struct merge_run *run)
{
	return (struct run_item *)(void *)(run->head->data + run->head->read);
}

void event_merge_run_push(struct event_merge *m, struct merge_run *run, const struct ctrace_event *ev)
{
	size_t size = (sizeof(struct run_item) + ev->name_len + ev->args_len + 7) & ~(size_t)7;
	struct merge_chunk *c = run ? run->tail : NULL;
	struct run_item *it;

	if (!run || size > sizeof(c->data) || (run->held && ev->ts_ns < run->last_ts)) {
		event_merge_push(m, ev); /* out of its run's order (or no run): held all the same */
		return;
	}
	if (!c || c->write + size > sizeof(c->data)) {
		struct merge_chunk *n = chunk_new(m);

		if (!n) {
			event_merge_push(m, ev);
			return;
		}
		if (c)
			c->next = n;
		else
			run->head = n;
		run->tail = c = n;
	}
	it = (struct run_item *)(void *)(c->data + c->write);
	it->ev = *ev;
	it->arrival = m->arrivals++;
	it->size = (uint32_t)size;
	memcpy((char *)(it + 1), ev->name, ev->name_len);
	memcpy((char *)(it + 1) + ev->name_len, ev->args, ev->args_len);
	c->write += size;
	run->last_ts = ev->ts_ns;
	if (!run->held++) {
		run->head_ts = ev->ts_ns;
		run->head_arrival = it->arrival;
		if (GROW_ARRAY(m->runs, m->cap_runs, m->n_runs, 64) < 0) {
			/* No room to list it: what it holds goes on now, in its order. */
			run->held = 0;
			hand_over(m, ev);
			m->forced++;
			c->write -= size;
			return;
		}
		run->pos = m->n_runs;
		m->runs[m->n_runs++] = run;
		runs_sift_up(m, run->pos);
	}
	while (m->max_bytes && m->bytes > m->max_bytes && (m->n || m->n_runs)) {
		event_merge_release(m, event_merge_oldest(m));
		m->forced++;
	}
}

/* The first run's head, handed on, and the run's next head put in its place. */
static void run_hand_on(struct event_merge *m)
{
	struct merge_run *run = m->runs[0];
	struct run_item *it = run_head(run);
	struct merge_chunk *c = run->head;

	it->ev.name = (const char *)(it + 1);
	it->ev.args = (const char *)(it + 1) + it->ev.name_len;
	hand_over(m, &it->ev);
	c->read += it->size;
	if (c->read == c->write) {
		run->head = c->next;
		if (!run->head)
			run->tail = NULL;
		chunk_done(m, c);
	}
	if (--run->held) {
		it = run_head(run);
		run->head_ts = it->ev.ts_ns;
		run->head_arrival = it->arrival;
		runs_sift_down(m, 0);
		return;
	}
	m->runs[0] = m->runs[--m->n_runs];
	m->runs[0]->pos = 0;
	if (m->n_runs)
		runs_sift_down(m, 0);
	if (run->done)
		run_recycle(m, run);
}

void event_merge_release(struct event_merge *m, uint64_t watermark)
{
	for (;;) {
		bool ev = m->n && m->heap[0].ts_ns <= watermark;
		bool run = m->n_runs && m->runs[0]->head_ts <= watermark;

		if (ev && run) { /* both: the earlier, by (time, arrival) as one heap would */
			const struct merge_slot *e = &m->heap[0];
			const struct merge_run *r = m->runs[0];

			run = r->head_ts < e->ts_ns ||
			      (r->head_ts == e->ts_ns && r->head_arrival < e->item->arrival);
			ev = !run;
		}
		if (ev)
			hand_on(m, pop(m));
		else if (run)
			run_hand_on(m);
		else
			return;
	}
}

uint64_t event_merge_oldest(const struct event_merge *m)
{
	uint64_t ev = m->n ? m->heap[0].ts_ns : UINT64_MAX;
	uint64_t run = m->n_runs ? m->runs[0]->head_ts : UINT64_MAX;

	return ev < run ? ev : run;
}

void event_merge_free(struct event_merge *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->heap[i].item);
	while (m->free_items) {
		struct merge_item *next = m->free_items->next_free;

		free(m->free_items);
		m->free_items = next;
	}
	free(m->heap);
	while (m->all_runs) {
		struct merge_run *next = m->all_runs->next_all;

		while (m->all_runs->head) {
			struct merge_chunk *c = m->all_runs->head->next;

			free(m->all_runs->head);
			m->all_runs->head = c;
		}
		free(m->all_runs);
		m->all_runs = next;
	}
	while (m->free_chunks) {
		struct merge_chunk *next = m->free_chunks->next;

		free(m->free_chunks);
		m->free_chunks = next;
	}
	free(m->runs);
	memset(m, 0, sizeof(*m));
}
