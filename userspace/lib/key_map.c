// SPDX-License-Identifier: MIT
#include "lib/key_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * FNV-1a over 8-byte words (the keys are ids and addresses: 4, 8, 16 and
 * 24 bytes; names, for counters), the last partial word zero-padded, then
 * a murmur3 finish: a lookup per event (literal copies,
 * spans, counters) hashed byte by byte was a twentieth of the loader's
 * time under a flood of batches.
 */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h ^= w;
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	if (i < len) { /* the 1-7 bytes left as one word: a multiply a byte was most of a short key's hash */
		uint64_t w = 0;

		memcpy(&w, p + i, len - i);
		h ^= w;
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1; /* 0 marks an empty slot */
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return p;
}

void key_map_init(struct key_map *m)
{
	memset(m, 0, sizeof(*m));
}

static const void *slot_key(const struct key_map_slot *s)
{
	return s->key_len > KEY_MAP_INLINE ? s->k.key : s->k.inline_key;
}

void key_map_free(struct key_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash && m->slots[i].key_len > KEY_MAP_INLINE)
			free(m->slots[i].k.key);
	free(m->slots);
	key_map_init(m);
}

void key_map_free_with_values(struct key_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash)
			free(m->slots[i].value);
	key_map_free(m);
}

static size_t find(const struct key_map *m, uint64_t h, const void *key,
		   size_t len)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const struct key_map_slot *s = &m->slots[i];

		if (!s->hash)
			return i;
		if (s->hash == h && s->key_len == len &&
		    memcmp(slot_key(s), key, len) == 0)
			return i;
	}
}

static void grow(struct key_map *m)
{
	struct key_map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slots = xmalloc(m->cap * sizeof(*m->slots));
	memset(m->slots, 0, m->cap * sizeof(*m->slots));
	for (size_t i = 0; i < old.cap; i++) {
		struct key_map_slot *s = &old.slots[i];

		if (s->hash)
			m->slots[find(m, s->hash, slot_key(s), s->key_len)] = *s;
	}
	free(old.slots);
}

void *key_map_get(const struct key_map *m, const void *key, size_t len)
{
	if (!m->count)
		return NULL;
	const struct key_map_slot *s = &m->slots[find(m, hash_bytes(key, len), key, len)];
	return s->hash ? s->value : NULL;
}

void *key_map_put(struct key_map *m, const void *key, size_t len, void *value)
{
	uint64_t h = hash_bytes(key, len);
	struct key_map_slot *s;
	void *old;

	if ((m->count + 1) * 4 > m->cap * 3)
		grow(m);
	s = &m->slots[find(m, h, key, len)];
	if (s->hash) {
		old = s->value;
		s->value = value;
		return old;
	}
	s->hash = h;
	if (len > KEY_MAP_INLINE) {
		s->k.key = xmalloc(len);
		memcpy(s->k.key, key, len);
	} else if (len) {
		memcpy(s->k.inline_key, key, len);
	}
	s->key_len = len;
	s->value = value;
	m->count++;
	return NULL;
}

void *key_map_del(struct key_map *m, const void *key, size_t len)
{
	size_t mask = m->cap - 1, i, j;
	void *value;

	if (!m->count)
		return NULL;
	i = find(m, hash_bytes(key, len), key, len);
	if (!m->slots[i].hash)
		return NULL;
	value = m->slots[i].value;
	if (m->slots[i].key_len > KEY_MAP_INLINE)
		free(m->slots[i].k.key);
	/* Backward-shift the run after i so that lookups need no tombstones. */
	for (j = (i + 1) & mask; m->slots[j].hash; j = (j + 1) & mask) {
		size_t home = m->slots[j].hash & mask;

		/* Move j into the hole at i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	m->count--;
	return value;
}

void key_map_remove_if(struct key_map *m, key_map_take_fn take, void *ctx)
{
	for (size_t i = 0; i < m->cap;) {
		const struct key_map_slot *s = &m->slots[i];

		/* A deletion shifts the entries after it back: the one moved into i is looked at next. */
		if (s->hash && take(slot_key(s), s->key_len, s->value, ctx))
			key_map_del(m, slot_key(s), s->key_len);
		else
			i++;
	}
}

void key_map_each(const struct key_map *m, key_map_visit_fn fn, void *ctx)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash)
			fn(slot_key(&m->slots[i]), m->slots[i].key_len,
			   m->slots[i].value, ctx);
}
