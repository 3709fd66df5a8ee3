// SPDX-License-Identifier: MIT
#include "model/table_bound.h"

#include <string.h>

void tb_init(struct table_bound *tb, const char *name, const char *rule, size_t limit)
{
	memset(tb, 0, sizeof(*tb));
	tb->name = name;
	tb->rule = rule;
	tb->limit = limit;
	tb->head.next = tb->head.prev = &tb->head;
}

void tb_count_evicted(struct table_bound *tb, uint64_t n)
{
	bool first = !tb->evicted && n;

	tb->evicted += n;
	if (first && tb->on_first_eviction)
		tb->on_first_eviction(tb, tb->ctx);
}

void *tb_evict(struct table_bound *tb, struct key_map *map)
{
	struct bound_entry *e = tb->head.next;

	if (e == &tb->head)
		return NULL;
	tb_remove(tb, e);
	key_map_del(map, e->key, e->key_len);
	tb_count_evicted(tb, 1);
	return e;
}
