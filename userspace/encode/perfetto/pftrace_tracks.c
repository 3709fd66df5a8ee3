// SPDX-License-Identifier: MIT
/*
 * The Perfetto encoder's tracks (pftrace_encode_int.h): a uuid per process,
 * thread, counter (thread, category, name) and async track, its descriptor
 * emitted the first time, the latest answered from small direct-mapped
 * tables before the map.
 */
#include "encode/perfetto/pftrace_encode_int.h"

#include <stdlib.h>
#include <string.h>

void pfe_forget_tracks(struct pftrace_encoder *e)
{
	memset(e->threads, 0, sizeof(e->threads));
	memset(e->procs, 0, sizeof(e->procs));
	memset(e->counters, 0, sizeof(e->counters));
}

static uint64_t track_get(struct pftrace_encoder *e, const void *key, size_t len, bool *fresh)
{
	void *v = key_map_get(&e->tracks, key, len);

	*fresh = !v;
	if (v)
		return (uint64_t)(uintptr_t)v;
	if (e->tracks.count >= TABLE_MAX) {
		/* A track met again after this gets a new uuid and descriptor (Perfetto joins a thread's by its tid). */
		key_map_free(&e->tracks);
		key_map_init(&e->tracks);
		pfe_forget_tracks(e);
		e->counts.tables_cleared++;
	}
	key_map_put(&e->tracks, key, len, (void *)(uintptr_t)++e->next_uuid);
	return e->next_uuid;
}

/* A process's descriptor: its uuid, pid, and (name: not NULL; sort: has_sort) one fact. */
void pfe_process_desc(struct pftrace_encoder *e, uint64_t uuid, uint32_t pid, const char *name, size_t name_len,
			 bool has_sort, int32_t sort)
{
	e->sub.n = 0;
	pb_u(&e->sub, 1, (uint64_t)(int64_t)(int32_t)pid);
	if (has_sort)
		pb_u(&e->sub, 3, (uint64_t)(int64_t)sort);
	if (name)
		pb_bytes(&e->sub, 6, name, name_len);
	e->desc.n = 0;
	pb_u(&e->desc, TD_UUID, uuid);
	pb_sub(&e->desc, TD_PROCESS, &e->sub);
	pb_sub(&e->pk, TP_TRACK_DESC, &e->desc);
	pfe_emit(e);
}

void pfe_thread_desc(struct pftrace_encoder *e, uint64_t uuid, uint64_t parent, uint32_t pid, uint32_t tid,
			const char *name, size_t name_len, bool has_sort, int32_t sort)
{
	e->sub.n = 0;
	pb_u(&e->sub, 1, (uint64_t)(int64_t)(int32_t)pid);
	pb_u(&e->sub, 2, tid);
	if (has_sort)
		pb_u(&e->sub, 3, (uint64_t)(int64_t)sort);
	if (name)
		pb_bytes(&e->sub, 5, name, name_len);
	e->desc.n = 0;
	pb_u(&e->desc, TD_UUID, uuid);
	pb_u(&e->desc, TD_PARENT, parent);
	pb_sub(&e->desc, TD_THREAD, &e->sub);
	pb_sub(&e->pk, TP_TRACK_DESC, &e->desc);
	pfe_emit(e);
}

static struct track_slot *slot_of(struct track_slot *v, uint32_t pid, uint32_t tid, uint32_t cat, uint64_t name)
{
	return &v[((pid * 0x9e3779b1u) ^ (tid * 0x85ebca6bu) ^ cat ^ (uint32_t)name * 0xc2b2ae35u) % TRACK_SLOTS];
}

uint64_t pfe_process_track(struct pftrace_encoder *e, uint32_t pid)
{
	uint8_t key[5] = { 'p' };
	struct track_slot *c = slot_of(e->procs, pid, 0, 0, 0);
	bool fresh;
	uint64_t uuid;

	if (c->uuid && c->pid == pid)
		return c->uuid;
	memcpy(key + 1, &pid, 4);
	uuid = track_get(e, key, sizeof(key), &fresh);
	if (fresh)
		pfe_process_desc(e, uuid, pid, NULL, 0, false, 0);
	c = slot_of(e->procs, pid, 0, 0, 0); /* a table cleared meanwhile emptied it */
	*c = (struct track_slot){ .pid = pid, .uuid = uuid };
	return uuid;
}

uint64_t pfe_thread_track(struct pftrace_encoder *e, uint32_t pid, uint32_t tid)
{
	uint8_t key[9] = { 't' };
	struct track_slot *c = slot_of(e->threads, pid, tid, 0, 0);
	bool fresh;
	uint64_t uuid, parent;

	if (c->uuid && c->pid == pid && c->tid == tid)
		return c->uuid;
	parent = pfe_process_track(e, pid);
	memcpy(key + 1, &pid, 4);
	memcpy(key + 5, &tid, 4);
	uuid = track_get(e, key, sizeof(key), &fresh);
	if (fresh)
		pfe_thread_desc(e, uuid, parent, pid, tid, NULL, 0, false, 0);
	c = slot_of(e->threads, pid, tid, 0, 0);
	*c = (struct track_slot){ .pid = pid, .tid = tid, .uuid = uuid };
	return uuid;
}

/* A counter track per thread, category and name. */
uint64_t pfe_counter_track(struct pftrace_encoder *e, uint32_t pid, uint32_t tid, unsigned cat,
			      const struct ct_text *name)
{
	uint64_t parent = pfe_thread_track(e, pid, tid), uuid, iid;
	size_t n;
	const char *s = pfe_shown_name(e, name, &n);
	struct track_slot *c;
	bool fresh;

	iid = pfe_intern(e, &e->names, s, n);
	c = slot_of(e->counters, pid, tid, cat, iid);
	if (c->uuid && c->pid == pid && c->tid == tid && c->cat == cat && c->name == iid)
		return c->uuid;

	/* 'c', pid, tid, category, name */
	e->sub.n = 0;
	pb_room(&e->sub, 13 + n);
	e->sub.p[0] = 'c';
	memcpy(e->sub.p + 1, &pid, 4);
	memcpy(e->sub.p + 5, &tid, 4);
	memcpy(e->sub.p + 9, &cat, 4);
	memcpy(e->sub.p + 13, s, n);
	uuid = track_get(e, e->sub.p, 13 + n, &fresh);
	if (fresh) {
		const char *c = pfe_cat_name(cat);
		struct pb cats = { 0 };

		pb_bytes(&cats, 2, c, strlen(c));
		e->desc.n = 0;
		pb_u(&e->desc, TD_UUID, uuid);
		pb_u(&e->desc, TD_PARENT, parent);
		pb_bytes(&e->desc, TD_NAME, s, n);
		pb_sub(&e->desc, TD_COUNTER, &cats);
		free(cats.p);
		pb_sub(&e->pk, TP_TRACK_DESC, &e->desc);
		pfe_emit(e);
	}
	c = slot_of(e->counters, pid, tid, cat, iid);
	*c = (struct track_slot){ .pid = pid, .tid = tid, .cat = cat, .name = iid, .uuid = uuid };
	return uuid;
}

/*
 * A span ended on another thread: a track of its own under its process; a
 * track whose last span ended before this one began takes it (as
 * Perfetto's JSON import does).
 */
uint64_t pfe_async_track(struct pftrace_encoder *e, uint32_t pid, uint64_t name_iid_, const char *name,
			    size_t name_len, uint64_t begin_ns, uint64_t end_ns)
{
	uint8_t key[12];
	struct async_pool *pool;
	uint64_t uuid;

	struct track_slot *c = slot_of(e->pools, pid, 0, 0, name_iid_);

	memcpy(key, &pid, 4);
	memcpy(key + 4, &name_iid_, 8);
	pool = c->uuid && c->pid == pid && c->name == name_iid_ ? (struct async_pool *)(uintptr_t)c->uuid :
								    key_map_get(&e->async_pools, key, sizeof(key));
	if (!pool) {
		if (e->async_pools.count >= ASYNC_POOLS_MAX) {
			key_map_free_with_values(&e->async_pools);
			key_map_init(&e->async_pools);
			memset(e->pools, 0, sizeof(e->pools));
			e->counts.tables_cleared++;
		}
		pool = calloc(1, sizeof(*pool));
		if (!pool)
			abort();
		key_map_put(&e->async_pools, key, sizeof(key), pool);
	}
	/* Kept by its pointer (in uuid): the pools are freed only all at once, the slots with them. */
	*c = (struct track_slot){ .pid = pid, .name = name_iid_, .uuid = (uint64_t)(uintptr_t)pool };
	for (size_t i = 0; i < pool->n; i++)
		if (pool->last_end[i] <= begin_ns) {
			pool->last_end[i] = end_ns;
			return pool->uuid[i];
		}
	uuid = ++e->next_uuid;
	e->desc.n = 0;
	pb_u(&e->desc, TD_UUID, uuid);
	pb_u(&e->desc, TD_PARENT, pfe_process_track(e, pid));
	pb_bytes(&e->desc, TD_NAME, name, name_len);
	pb_sub(&e->pk, TP_TRACK_DESC, &e->desc);
	pfe_emit(e);
	if (pool->n < ASYNC_POOL_MAX) {
		pool->uuid[pool->n] = uuid;
		pool->last_end[pool->n++] = end_ns;
	}
	return uuid;
}
