// SPDX-License-Identifier: MIT
#include "ingest/literal_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/proc_info.h"

struct literal_key {
	uint64_t tgid, gen, addr;
};

struct literal {
	struct bound_entry e;
	struct literal_key key;
	size_t len;
	bool truncated;
	char s[];
};

/* Until the model says (trace_model_limit_memory()). */
#define LITERALS_DEFAULT_LIMIT (16u << 20)

void literal_cache_init(struct literal_cache *c)
{
	memset(c, 0, sizeof(*c));
	key_map_init(&c->strings);
	key_map_init(&c->gens);
	key_map_init(&c->parents);
	tb_init(&c->bound, "literals",
		"the literal used least recently is forgotten (all at once when the processes' entries pass an eighth of the budget): read again from the process when referred to (unreadable if it is gone)",
		LITERALS_DEFAULT_LIMIT);
}

/* A new literal in the table, its place taken from the least recently used ones. */
static void keep(struct literal_cache *c, struct literal *l, size_t alloc)
{
	struct literal *old = key_map_put(&c->strings, &l->key, sizeof(l->key), l);

	if (old) {
		tb_remove(&c->bound, &old->e);
		free(old);
	}
	tb_add(&c->bound, &l->e, &l->key, sizeof(l->key),
	       tb_alloc_cost(alloc) + tb_slot_cost(sizeof(l->key)));
	/*
	 * Never the two newest: an event's name may be the one before its
	 * args, and its pointer is still in use.
	 */
	while (tb_over(&c->bound) && c->bound.head.next->next != &l->e)
		free(tb_evict(&c->bound, &c->strings));
}


void literal_cache_free(struct literal_cache *c)
{
	key_map_free_with_values(&c->strings);
	key_map_free(&c->gens);
	key_map_free(&c->parents);
}

static uint64_t generation(const struct literal_cache *c, uint32_t tgid)
{
	uint64_t key = tgid;

	return (uint64_t)(uintptr_t)key_map_get(&c->gens, &key, sizeof(key));
}

void literal_cache_put(struct literal_cache *c, uint32_t tgid, uint64_t addr,
		       const char *s, size_t len, bool truncated)
{
	struct literal_key key = { tgid, generation(c, tgid), addr };
	struct literal *l = malloc(sizeof(*l) + len + 1);

	if (!l) {
		/* The old one must not stand in for it: a read from the process is better. */
		struct literal *old = key_map_del(&c->strings, &key, sizeof(key));

		if (old) {
			tb_remove(&c->bound, &old->e);
			free(old);
		}
		return;
	}
	if (len)
		memcpy(l->s, s, len);
	l->s[len] = '\0';
	l->len = len;
	l->truncated = truncated;
	l->key = key;
	/*
	 * A copy replaces what this address held: the BPF side copies a
	 * literal again when another object may have been mapped there since
	 * (its literal epochs), and the references that follow in the ring are
	 * to this copy.
	 */
	keep(c, l, sizeof(*l) + len + 1);
}

/* Reads and caches the literal of one process; NULL if unreadable. */
static const struct literal *load(struct literal_cache *c, uint32_t tgid,
				  uint64_t addr, size_t max)
{
	struct literal_key key = { tgid, generation(c, tgid), addr };
	struct literal *hit = key_map_get(&c->strings, &key, sizeof(key));
	struct literal *l;
	ssize_t n;

	if (hit) {
		tb_touch(&c->bound, &hit->e);
		return hit;
	}
	l = malloc(sizeof(*l) + max + 1);
	if (!l)
		return NULL;
	n = proc_read_str((int)tgid, addr, l->s, max, &l->truncated);
	if (n < 0) {
		free(l);
		return NULL;
	}
	l->len = (size_t)n;
	l->key = key;
	c->reads++;
	keep(c, l, sizeof(*l) + max + 1);
	return l;
}

bool literal_cache_get(struct literal_cache *c, uint32_t tgid, uint64_t addr,
		       size_t max, const char **s, size_t *len, bool *truncated)
{
	const struct literal *hit = load(c, tgid, addr, max);

	/*
	 * A forked child that is already gone: its parent (or grandparent...)
	 * runs the same image, with the same literal at the same address.
	 */
	for (int up = 0; !hit && up < 8; up++) {
		uint64_t child = tgid;
		void *parent = key_map_get(&c->parents, &child, sizeof(child));

		if (!parent)
			break;
		tgid = (uint32_t)(uintptr_t)parent;
		hit = load(c, tgid, addr, max);
	}
	if (!hit)
		return false;
	*s = hit->s;
	*len = hit->len < max ? hit->len : max;
	*truncated = hit->truncated || hit->len > max;
	return true;
}

/*
 * The per-process entries (generations, parents) grow with the processes
 * a followed program forks and execs. Past an eighth of the budget, the
 * whole cache is emptied at once: generations can restart at 0 only when
 * no literal of an older one is left, and every literal is then read again
 * from its process (a process gone meanwhile: unreadable, counted).
 */
static void bound_processes(struct literal_cache *c)
{
	size_t n = c->gens.count + c->parents.count;

	if (n * tb_slot_cost(sizeof(uint64_t)) <= c->bound.limit / 8)
		return;
	tb_count_evicted(&c->bound, c->strings.count ? c->strings.count : 1);
	key_map_free_with_values(&c->strings);
	key_map_free(&c->gens);
	key_map_free(&c->parents);
	c->bound.head.next = c->bound.head.prev = &c->bound.head;
	c->bound.bytes = 0;
}

void literal_cache_exec(struct literal_cache *c, uint32_t tgid)
{
	uint64_t key = tgid;

	bound_processes(c);
	key_map_put(&c->gens, &key, sizeof(key), (void *)(uintptr_t)(generation(c, tgid) + 1));
	key_map_del(&c->parents, &key, sizeof(key));
}

void literal_cache_fork(struct literal_cache *c, uint32_t parent, uint32_t child)
{
	uint64_t key = child;

	bound_processes(c);
	key_map_put(&c->parents, &key, sizeof(key), (void *)(uintptr_t)parent);
}
