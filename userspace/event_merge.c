// SPDX-License-Identifier: MIT
#include "event_merge.h"
#include "grow_array.h"

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
	m->release(m->ctx, &it->ev);
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
		m->release(m->ctx, ev);
		m->forced++;
		return;
	}
	it = item_alloc(m, size);
	if (!it) {
		m->release(m->ctx, ev);
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
	while (m->max_bytes && m->bytes > m->max_bytes && m->n) {
		hand_on(m, pop(m));
		m->forced++;
	}
}

void event_merge_release(struct event_merge *m, uint64_t watermark)
{
	while (m->n && m->heap[0].ts_ns <= watermark)
		hand_on(m, pop(m));
}

uint64_t event_merge_oldest(const struct event_merge *m)
{
	return m->n ? m->heap[0].ts_ns : UINT64_MAX;
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
	memset(m, 0, sizeof(*m));
}
