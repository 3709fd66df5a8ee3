/* SPDX-License-Identifier: MIT */
/*
 * table_bound.h - a byte budget for one of the loader's tables that the
 * traced process can grow (open spans, counters, pseudo-processes, ...),
 * with its entries in least-recently-used order, so that the table can
 * give back its oldest entry when a new one would take it over budget.
 *
 * The traced process is untrusted: a million BEGINs without END or a
 * million counter names must not take the host's memory. Each value kept
 * in a bounded table starts with a struct bound_entry (the list links, where
 * its key is, what it costs); the table's owner adds it, touches it when it
 * is used, and, while tb_over(), takes the oldest with tb_evict() and deals
 * with it (an open span is written as unfinished, a counter forgotten ...).
 * Each eviction is counted; the first one of a table calls on_first_eviction
 * (the trace shows it once, as an instant).
 *
 * Costs are what the memory really takes: each allocation rounded up as
 * glibc's malloc does, plus its header, plus the hash-map slots an entry
 * can hold (a table at its largest just grown, and during a grow both the
 * old and the new slot arrays).
 */
#ifndef CTRACE_TABLE_BOUND_H
#define CTRACE_TABLE_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_map.h"

struct bound_entry {
	struct bound_entry *prev, *next;
	const void *key; /* the entry's key in its key_map (inside the value) */
	uint32_t key_len;
	uint32_t cost;   /* bytes counted for it */
};

struct table_bound {
	const char *name;  /* as metadata.memory.tables names it */
	const char *rule;  /* what an eviction does, said in the instant */
	struct bound_entry head; /* head.next: the oldest; head.prev: the newest */
	size_t bytes, limit;
	uint64_t evicted;
	void (*on_first_eviction)(struct table_bound *tb, void *ctx);
	void *ctx;
};

void tb_init(struct table_bound *tb, const char *name, const char *rule, size_t limit);

/* What one allocation of n bytes takes from the heap. */
static inline size_t tb_alloc_cost(size_t n)
{
	return ((n + 8 + 15) & ~(size_t)15) < 32 ? 32 : ((n + 8 + 15) & ~(size_t)15);
}

/* What one entry of a key_map takes beside its value: its slots (and an outside key). */
static inline size_t tb_slot_cost(size_t key_len)
{
	return 4 * sizeof(struct key_map_slot) + (key_len > KEY_MAP_INLINE ? tb_alloc_cost(key_len) : 0);
}

static inline void tb_link_newest(struct table_bound *tb, struct bound_entry *e)
{
	e->prev = tb->head.prev;
	e->next = &tb->head;
	tb->head.prev->next = e;
	tb->head.prev = e;
}

static inline void tb_unlink(struct bound_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

/* A new entry, the newest; `key` must stay valid as long as the entry (keep it in the value). */
static inline void tb_add(struct table_bound *tb, struct bound_entry *e, const void *key,
			  size_t key_len, size_t cost)
{
	e->key = key;
	e->key_len = (uint32_t)key_len;
	e->cost = (uint32_t)cost;
	tb->bytes += cost;
	tb_link_newest(tb, e);
}

/* Used now: the last to be evicted. */
static inline void tb_touch(struct table_bound *tb, struct bound_entry *e)
{
	if (tb->head.prev == e)
		return; /* already the newest: the common case of a busy entry */
	tb_unlink(e);
	tb_link_newest(tb, e);
}

/* Taken out of its table by its owner (ended, replaced, discarded). */
static inline void tb_remove(struct table_bound *tb, struct bound_entry *e)
{
	tb_unlink(e);
	tb->bytes -= e->cost;
}

/* Over budget, with an entry to give back: the newest (just added) is never evicted. */
static inline bool tb_over(const struct table_bound *tb)
{
	return tb->bytes > tb->limit && tb->head.next != tb->head.prev;
}

/*
 * The oldest entry, taken out of the list and of `map` (NULL if the table
 * is empty), counted as evicted; the caller deals with its value.
 */
void *tb_evict(struct table_bound *tb, struct key_map *map);

/* Counts evictions done by the owner itself (a table cleared at once). */
void tb_count_evicted(struct table_bound *tb, uint64_t n);

#endif
