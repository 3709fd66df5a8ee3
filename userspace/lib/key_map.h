/* SPDX-License-Identifier: MIT */
/*
 * key_map.h - a hash map from short byte-string keys to a pointer.
 *
 * The loader keys its state by small composite keys (tgid + marker, tgid +
 * span address, context pid + counter name). C has no standard hash map
 * (hsearch(3) is one global table with no delete), so this is ours: open
 * addressing, linear probing, tombstone-free deletion by backward shift.
 */
#ifndef CTRACE_KEY_MAP_H
#define CTRACE_KEY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Keys up to this long live in the slot itself: no allocation per insert. */
#define KEY_MAP_INLINE 24

struct key_map_slot {
	uint64_t hash; /* 0 = empty */
	union {
		void *key; /* owned copy, when key_len > KEY_MAP_INLINE */
		unsigned char inline_key[KEY_MAP_INLINE];
	} k;
	size_t key_len;
	void *value;
};

struct key_map {
	struct key_map_slot *slots;
	size_t cap; /* power of two */
	size_t count;
};

void key_map_init(struct key_map *m);
/* Frees the table and the key copies; values are the caller's. */
void key_map_free(struct key_map *m);
/* key_map_free() for a map whose values are each one malloc()ed block. */
void key_map_free_with_values(struct key_map *m);
void *key_map_get(const struct key_map *m, const void *key, size_t len);
/* Inserts or replaces; returns the previous value (or NULL). Aborts on OOM. */
void *key_map_put(struct key_map *m, const void *key, size_t len, void *value);
/* Removes; returns the value that was there (or NULL). */
void *key_map_del(struct key_map *m, const void *key, size_t len);

/* Visits every entry; the callback must not modify the map. */
typedef void (*key_map_visit_fn)(const void *key, size_t len, void *value,
				 void *ctx);
void key_map_each(const struct key_map *m, key_map_visit_fn fn, void *ctx);
/*
 * Takes out every entry for which take() says true (take deals with its
 * value: frees it, or hands it on); take may be called twice for an entry
 * it leaves in, never for one it took.
 */
typedef bool (*key_map_take_fn)(const void *key, size_t len, void *value, void *ctx);
void key_map_remove_if(struct key_map *m, key_map_take_fn take, void *ctx);

#endif
