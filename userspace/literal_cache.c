// SPDX-License-Identifier: MIT
#include "literal_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc_info.h"

struct literal {
	size_t len;
	bool truncated;
	char s[];
};

struct literal_key {
	uint64_t tgid, gen, addr;
};

void literal_cache_init(struct literal_cache *c)
{
	memset(c, 0, sizeof(*c));
	key_map_init(&c->strings);
	key_map_init(&c->gens);
	key_map_init(&c->parents);
}

static void free_value(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	free(value);
}

void literal_cache_free(struct literal_cache *c)
{
	key_map_each(&c->strings, free_value, NULL);
	key_map_free(&c->strings);
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
		free(key_map_del(&c->strings, &key, sizeof(key)));
		return;
	}
	if (len)
		memcpy(l->s, s, len);
	l->s[len] = '\0';
	l->len = len;
	l->truncated = truncated;
	/*
	 * A copy replaces what this address held: the BPF side copies a
	 * literal again when another object may have been mapped there since
	 * (its literal epochs), and the references that follow in the ring are
	 * to this copy.
	 */
	free(key_map_put(&c->strings, &key, sizeof(key), l));
}

/* Reads and caches the literal of one process; NULL if unreadable. */
static const struct literal *load(struct literal_cache *c, uint32_t tgid,
				  uint64_t addr, size_t max)
{
	struct literal_key key = { tgid, generation(c, tgid), addr };
	const struct literal *hit = key_map_get(&c->strings, &key, sizeof(key));
	struct literal *l;
	ssize_t n;

	if (hit)
		return hit;
	l = malloc(sizeof(*l) + max + 1);
	if (!l)
		return NULL;
	n = proc_read_str((int)tgid, addr, l->s, max, &l->truncated);
	if (n < 0) {
		free(l);
		return NULL;
	}
	l->len = (size_t)n;
	c->reads++;
	key_map_put(&c->strings, &key, sizeof(key), l);
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

void literal_cache_exec(struct literal_cache *c, uint32_t tgid)
{
	uint64_t key = tgid;

	key_map_put(&c->gens, &key, sizeof(key), (void *)(uintptr_t)(generation(c, tgid) + 1));
	key_map_del(&c->parents, &key, sizeof(key));
}

void literal_cache_fork(struct literal_cache *c, uint32_t parent, uint32_t child)
{
	uint64_t key = child;

	key_map_put(&c->parents, &key, sizeof(key), (void *)(uintptr_t)parent);
}
