// SPDX-License-Identifier: MIT
/*
 * flight_recorder.c - the ring of recent events' texts behind --ring (see
 * flight_recorder.h). Kept as formatted JSON rather than as records: a dump
 * is then a copy, and the loader's one writer of events (chrome_trace.c)
 * stays the only one, with no second path that could disagree with it.
 */
#include "encode/flight_recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encode/json/chrome_trace.h"

struct name_key {
	uint32_t what, pid, tid;
};

/* A name event's text; in a list from the least recently given, the first forgotten past FLIGHT_NAMES_MAX. */
struct flight_name {
	struct flight_name *older, *newer;
	struct name_key key;
	bool pinned; /* one of the first given: kept for good, outside the list */
	size_t len;
	char json[];
};

size_t flight_stage_size(uint64_t size)
{
	uint64_t s = size / 8;

	return s < (16u << 10) ? (16u << 10) : s > (1u << 20) ? (1u << 20) : (size_t)s;
}

static struct flight_chunk *front(struct flight_recorder *fr)
{
	return fr->n_chunks ? &fr->chunks[fr->first] : NULL;
}

static struct flight_chunk *back(struct flight_recorder *fr)
{
	return fr->n_chunks ? &fr->chunks[fr->first + fr->n_chunks - 1] : NULL;
}

/* The oldest chunk goes; its events are counted as overwritten. */
static void pop_front(struct flight_recorder *fr)
{
	struct flight_chunk *c = front(fr);

	fr->head = (fr->head + c->len) % fr->cap;
	fr->used -= c->len;
	fr->overwritten += c->events;
	fr->overwritten_total += c->events;
	fr->first++;
	if (--fr->n_chunks == 0)
		fr->first = fr->head = 0;
}

static void push_chunk(struct flight_recorder *fr, const struct flight_chunk *c)
{
	if (fr->first + fr->n_chunks == fr->cap_chunks) {
		if (fr->first) { /* room at the front: move down */
			memmove(fr->chunks, fr->chunks + fr->first, fr->n_chunks * sizeof(*fr->chunks));
			fr->first = 0;
		} else {
			size_t cap = fr->cap_chunks ? fr->cap_chunks * 2 : 64;
			struct flight_chunk *v = realloc(fr->chunks, cap * sizeof(*v));

			if (!v) {
				fputs("ctrace-bpf: out of memory\n", stderr);
				abort();
			}
			fr->chunks = v;
			fr->cap_chunks = cap;
		}
	}
	fr->chunks[fr->first + fr->n_chunks++] = *c;
}

/* n bytes of events into the ring, the oldest pushed out to make room. */
static void put(struct flight_recorder *fr, const char *p, size_t n, uint64_t events,
		bool mid_start, bool mid_end)
{
	struct flight_chunk c = { 0, n, events, mid_start, mid_end };
	size_t tail, part;

	if (!n)
		return;
	if (n > fr->cap) { /* more than the ring holds (one huge event): it goes at once */
		while (fr->n_chunks)
			pop_front(fr);
		fr->overwritten += events;
		fr->overwritten_total += events;
		return;
	}
	while (fr->cap - fr->used < n)
		pop_front(fr);
	/* A chunk whose start went must go too: no viewer reads half an event. */
	while (front(fr) && front(fr)->mid_start)
		pop_front(fr);
	if (mid_start && (!back(fr) || !back(fr)->mid_end)) {
		fr->overwritten += events;
		fr->overwritten_total += events;
		return;
	}
	tail = (fr->head + fr->used) % fr->cap;
	part = n < fr->cap - tail ? n : fr->cap - tail;
	memcpy(fr->bytes + tail, p, part);
	memcpy(fr->bytes, p + part, n - part);
	c.off = tail;
	fr->used += n;
	push_chunk(fr, &c);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The stage's sink (json_writer.h). Without `all`: the whole events before
 * the latest one begun (ct->event_start) move to the ring, the latest stays.
 * With `all`: every byte, the latest event perhaps unfinished, to be
 * continued by the next chunk.
 */
static size_t take(void *ctx, const char *p, size_t n, int all)
{
	struct flight_recorder *fr = ctx;
	struct chrome_trace *ct = fr->ct;
	bool from_stage = p == ct->w->buf;
	uint64_t events;

	if (!all) {
		size_t at = (size_t)(ct->event_start - p) < n ? (size_t)(ct->event_start - p) : n;

		if (!at)
			return 0;
		events = sub0(ct->events, fr->events_taken + 1); /* the latest stays */
		put(fr, p, at, events, fr->mid_event, false);
		fr->events_taken += events;
		fr->mid_event = false;
		ct->event_start -= at; /* where the writer moves it */
		return at;
	}
	events = sub0(ct->events, fr->events_taken);
	put(fr, p, n, events, fr->mid_event || !from_stage, true);
	fr->events_taken += events;
	fr->mid_event = true;
	if (from_stage)
		ct->event_start = ct->w->buf;
	return n;
}

int flight_recorder_init(struct flight_recorder *fr, uint64_t size, struct json_writer *stage,
			 struct chrome_trace *ct)
{
	memset(fr, 0, sizeof(*fr));
	fr->size = size;
	fr->cap = (size_t)(size - stage->cap);
	fr->bytes = malloc(fr->cap);
	if (!fr->bytes)
		return -ENOMEM;
	if (jw_init(&fr->name_w, -1, 64u << 10) < 0) {
		free(fr->bytes);
		return -ENOMEM;
	}
	fr->ct = ct;
	key_map_init(&fr->names);
	stage->take = take;
	stage->take_ctx = fr;
	return 0;
}

void flight_recorder_free(struct flight_recorder *fr)
{
	key_map_free_with_values(&fr->names);
	jw_free(&fr->name_w);
	free(fr->bytes);
	free(fr->chunks);
	fr->bytes = NULL;
	fr->chunks = NULL;
}

static size_t name_cost(const struct flight_name *n)
{
	return sizeof(*n) + n->len + sizeof(struct key_map_slot);
}

static void unlink_name(struct flight_recorder *fr, struct flight_name *n)
{
	*(n->older ? &n->older->newer : &fr->oldest_name) = n->newer;
	*(n->newer ? &n->newer->older : &fr->newest_name) = n->older;
	fr->names_bytes -= name_cost(n);
}

void flight_recorder_name(struct flight_recorder *fr, unsigned what, uint32_t pid, uint32_t tid,
			  const char *json, size_t len)
{
	struct name_key key = { what, pid, tid };
	struct flight_name *old = key_map_get(&fr->names, &key, sizeof(key)), *n;

	n = malloc(sizeof(*n) + len);
	if (!n) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	n->key = key;
	n->len = len;
	memcpy(n->json, json, len);
	/*
	 * The first names given (the targets' processes and the threads they
	 * started with, which live longest) stay whatever comes after; a new
	 * name takes the place of the old one's.
	 */
	n->pinned = len <= FLIGHT_NAME_PINNED_LEN &&
		    (old ? old->pinned : fr->names_pinned < FLIGHT_NAMES_PINNED);
	if (!old && n->pinned)
		fr->names_pinned++;
	key_map_put(&fr->names, &key, sizeof(key), n);
	if (old && !old->pinned)
		unlink_name(fr, old);
	free(old);
	if (n->pinned)
		return;
	n->older = fr->newest_name;
	n->newer = NULL;
	*(n->older ? &n->older->newer : &fr->oldest_name) = n;
	fr->newest_name = n;
	fr->names_bytes += name_cost(n);
	/* Past the bound, the names given longest ago go: those of threads likely gone. */
	while (fr->names_bytes > FLIGHT_NAMES_MAX && fr->oldest_name != n) {
		struct flight_name *gone = fr->oldest_name;

		key_map_del(&fr->names, &gone->key, sizeof(gone->key));
		unlink_name(fr, gone);
		free(gone);
		fr->names_left_out++;
	}
}

void flight_recorder_trigger(struct flight_recorder *fr, const char *name, size_t len)
{
	/* The first since the last dump names it. */
	if (!fr->triggers) {
		if (len > sizeof(fr->trigger_name))
			len = sizeof(fr->trigger_name);
		memcpy(fr->trigger_name, name, len);
		fr->trigger_name_len = len;
	}
	fr->triggers++;
	fr->triggers_total++;
}

struct write_ctx {
	struct json_writer *out;
	uint64_t count;
};

static void separate(struct write_ctx *wc)
{
	if (wc->count)
		jw_lit(wc->out, ",\n");
}

static void write_name(const void *key, size_t len, void *value, void *ctx)
{
	struct write_ctx *wc = ctx;
	const struct flight_name *n = value;

	(void)key;
	(void)len;
	separate(wc);
	jw_raw(wc->out, n->json, n->len);
	wc->count++;
}

/* Bytes of the stream (each event after ",\n"): the first event written goes without it. */
static void write_stream(struct write_ctx *wc, const char *p, size_t n, bool *separated)
{
	if (!*separated && n >= 2) {
		if (!wc->count) {
			p += 2;
			n -= 2;
		}
		*separated = true;
	}
	jw_raw(wc->out, p, n);
}

uint64_t flight_recorder_write(struct flight_recorder *fr, struct json_writer *out)
{
	struct chrome_trace *ct = fr->ct;
	struct json_writer *stage = ct->w;
	struct write_ctx wc = { out, 0 };
	bool separated = false;
	uint64_t events = 0;
	size_t skip = 0;

	key_map_each(&fr->names, write_name, &wc);
	for (size_t i = 0; i < fr->n_chunks; i++) {
		const struct flight_chunk *c = &fr->chunks[fr->first + i];
		size_t part = c->len < fr->cap - c->off ? c->len : fr->cap - c->off;

		write_stream(&wc, fr->bytes + c->off, part, &separated);
		if (c->len > part)
			jw_raw(out, fr->bytes, c->len - part);
		events += c->events;
	}
	if (fr->mid_event && (!back(fr) || !back(fr)->mid_end)) {
		/* The stage begins inside an event whose start the ring lost: from the latest start on. */
		skip = (size_t)(ct->event_start - stage->buf);
		if (skip > stage->len)
			skip = stage->len;
		fr->overwritten += sub0(ct->events, fr->events_taken + 1);
		fr->overwritten_total += sub0(ct->events, fr->events_taken + 1);
		fr->events_taken = ct->events - 1;
	}
	if (stage->len > skip)
		write_stream(&wc, stage->buf + skip, stage->len - skip, &separated);
	events += sub0(ct->events, fr->events_taken);
	wc.count += events;
	/* Emptied: the next dump has what comes after. */
	fr->head = fr->used = fr->first = fr->n_chunks = 0;
	stage->len = 0;
	ct->event_start = stage->buf;
	fr->events_taken = ct->events;
	fr->mid_event = false;
	return wc.count;
}

void flight_dump_path(const char *pattern, unsigned n, char *buf, size_t len)
{
	const char *pct = strstr(pattern, "%n");
	size_t plen = strlen(pattern);

	if (pct)
		snprintf(buf, len, "%.*s%u%s", (int)(pct - pattern), pattern, n, pct + 2);
	else if (plen > 5 && !strcmp(pattern + plen - 5, ".json"))
		snprintf(buf, len, "%.*s-%u.json", (int)(plen - 5), pattern, n);
	else
		snprintf(buf, len, "%s-%u", pattern, n);
}
