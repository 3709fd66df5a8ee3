/* SPDX-License-Identifier: MIT */
/*
 * flight_recorder.h - --ring SIZE: the most recent events, kept in memory
 * as the JSON texts chrome_trace.c writes, and written out as a complete
 * trace file (a dump) on demand; tracing goes on after a dump and the next
 * one holds what came after.
 *
 * The events' texts come from the chrome_trace's writer (json_writer.h)
 * through its sink: when the writer's buffer (the stage) is full, the whole
 * events in it move to the ring as one chunk. The ring is a circular byte
 * store; a chunk that does not fit pushes the oldest out, whole, and their
 * events are counted (metadata.flight_recorder.events_overwritten). Stage
 * and ring together are SIZE bytes.
 *
 * Metadata events (process_name, thread_name, the sort indexes) do not go
 * in the ring: they are kept aside, the last one for each process and
 * thread, so that every dump names what it shows, however long ago the
 * names were given.
 */
#ifndef CTRACE_FLIGHT_RECORDER_H
#define CTRACE_FLIGHT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "encode/json/json_writer.h"
#include "lib/key_map.h"

struct chrome_trace;
struct flight_name;

/* The names kept aside take at most this much; past it, the oldest given are forgotten, counted. */
#define FLIGHT_NAMES_MAX (4u << 20)
/* The first names given, if no longer than this, are kept for good, outside that bound. */
#define FLIGHT_NAMES_PINNED 1024
#define FLIGHT_NAME_PINNED_LEN 512
/* CTRACE_TRIGGER dumps at most this often; triggers in between wait for it (and are counted). */
#define FLIGHT_TRIGGER_INTERVAL_NS 1000000000ull

struct flight_chunk {
	size_t off, len;  /* in the ring's bytes (may wrap) */
	uint64_t events;  /* that start in it */
	bool mid_start;   /* begins inside an event (its start is in the chunk before) */
	bool mid_end;     /* ends inside one */
};

struct flight_recorder {
	uint64_t size;          /* --ring: stage and ring together */
	char *bytes;            /* the ring */
	size_t cap, head, used; /* bytes: oldest at head, `used` of them */
	struct flight_chunk *chunks; /* oldest first from `first` */
	size_t first, n_chunks, cap_chunks;
	struct chrome_trace *ct; /* whose writer's sink this is */
	uint64_t events_taken;  /* events of the ct whose start is in the ring */
	bool mid_event;         /* the next bytes taken continue an event */

	/* Counted since the last dump, and in all. */
	uint64_t overwritten, overwritten_total;

	struct key_map names;   /* {what, pid, tid} -> struct flight_name * */
	struct flight_name *oldest_name, *newest_name; /* by when given */
	size_t names_bytes;     /* of the list's, not the pinned */
	unsigned names_pinned;
	uint64_t names_left_out; /* forgotten, the oldest first, past FLIGHT_NAMES_MAX */
	struct json_writer name_w; /* a name event is formatted here */

	/* CTRACE_TRIGGER: seen since the last dump. */
	uint64_t triggers, triggers_total;
	char trigger_name[128];
	size_t trigger_name_len;
	unsigned dumps;         /* written so far */
};

/* The stage's size for a ring of `size` bytes: 1/8 of it, 16 KiB to 1 MiB. */
size_t flight_stage_size(uint64_t size);

/*
 * Begins a recorder of `size` bytes (stage included) behind stage, the
 * writer ct writes into (jw_init()ed with fd -1 and flight_stage_size()):
 * 0 or -ENOMEM.
 */
int flight_recorder_init(struct flight_recorder *fr, uint64_t size, struct json_writer *stage,
			 struct chrome_trace *ct);
void flight_recorder_free(struct flight_recorder *fr);

/*
 * A metadata event's text (what: 0 process_name, 1 thread_name, 2
 * process_sort_index, 3 thread_sort_index), whole, without a separator:
 * kept as the last of its kind for pid and tid.
 */
void flight_recorder_name(struct flight_recorder *fr, unsigned what, uint32_t pid, uint32_t tid,
			  const char *json, size_t len);

/* A CTRACE_TRIGGER instant named name (untrusted bytes) was written. */
void flight_recorder_trigger(struct flight_recorder *fr, const char *name, size_t len);

/*
 * The dump's traceEvents: the names kept aside, then the ring's events
 * and the stage's, oldest first, comma-separated (no separator before
 * the first); the count of events written. The ring and the stage are
 * emptied, and the counts since the last dump start again (read them
 * before).
 */
uint64_t flight_recorder_write(struct flight_recorder *fr, struct json_writer *out);

/* The file of dump n: %n in pattern replaced by n, else -n before a final .json, else -n after. */
void flight_dump_path(const char *pattern, unsigned n, char *buf, size_t len);

#endif
