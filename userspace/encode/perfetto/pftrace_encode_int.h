/* SPDX-License-Identifier: MIT */
/*
 * pftrace_encode_int.h - the Perfetto encoder's own state and the pieces
 * its two files share: pftrace_encode.c (packets, interning, events, the
 * frame) and pftrace_tracks.c (track descriptors and the tables of tracks).
 * Not for any other file.
 */
#ifndef CTRACE_PFTRACE_ENCODE_INT_H
#define CTRACE_PFTRACE_ENCODE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "encode/json/chrome_trace.h"
#include "encode/json/json_writer.h"
#include "lib/key_map.h"
#include "encode/json/nest_ties.h"
#include "encode/perfetto/pb_write.h"
#include "encode/perfetto/pftrace.h"
#include "encode/perfetto/pftrace_annot.h"
#include "model/trace_event.h"

#define SEQ_ID 1
#define SEQ_CLEARED 1
#define SEQ_NEEDS_STATE 2
#define CLOCK_ID_REALTIME 1
#define CLOCK_ID_MONOTONIC 3
#define CLOCK_ID_BOOTTIME 6
/* Entries of each interning and track table at most, then it starts again (counted), as pftrace_write.c does. */
#define TABLE_MAX (1u << 18)
#define ASYNC_POOL_MAX 256
#define ASYNC_POOLS_MAX 4096

/* TracePacket, TrackEvent, TrackDescriptor and InternedData fields (perfetto_trace.proto). */
enum { TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
       TP_SEQ_FLAGS = 13, TP_STATE_CLEARED = 41, TP_TS_CLOCK = 58, TP_DEFAULTS = 59, TP_TRACK_DESC = 60,
       TP_FIRST_ON_SEQ = 87 };
enum { TE_F_CATEGORY_IIDS = 3, TE_F_ANNOTATIONS = 4, TE_F_TYPE = 9, TE_F_NAME_IID = 10, TE_F_TRACK = 11,
       TE_F_COUNTER = 30, TE_F_DOUBLE_COUNTER = 44, TE_F_FLOW_IDS = 47, TE_F_TERMINATING_FLOW_IDS = 48 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8 };
enum { ID_CATEGORIES = 1, ID_NAMES = 2, ID_KEYS = 3 };

/*
 * Most events' strings are met again and again: a small table of the
 * latest, by a hash of their ends, answers them before the map (whose hash
 * reads every byte).
 */
#define RECENT_SLOTS 256
#define RECENT_LEN 48

struct interned {
	struct key_map map; /* string -> iid */
	uint64_t next;
	unsigned field;     /* of InternedData */
	uint32_t gen;       /* how many times the map was cleared: iids kept aside are of one */
	struct recent {
		uint64_t iid;   /* 0: empty */
		uint32_t len;
		char s[RECENT_LEN];
	} recent[RECENT_SLOTS];
};

/* Tracks used lately, by pid and tid (and counter's category and name iid): no map lookup. */
#define TRACK_SLOTS 64
struct track_slot {
	uint32_t pid, tid, cat;
	uint64_t name, uuid; /* uuid 0: empty */
};

struct async_pool {
	size_t n;
	uint64_t uuid[ASYNC_POOL_MAX], last_end[ASYNC_POOL_MAX];
};

struct kept_iid {
	uint64_t iid;
	uint32_t gen;
};

struct pftrace_encoder {
	struct json_writer *w;
	struct pb pk, te, idata, desc, sub, frame, isub; /* isub: intern()'s own */
	struct interned names, cats, keys;
	struct key_map tracks;      /* kind, pid, tid[, cat, name] -> uuid */
	struct key_map async_pools; /* pid, name -> struct async_pool * */
	uint64_t next_uuid;
	struct track_slot threads[TRACK_SLOTS], procs[TRACK_SLOTS], counters[TRACK_SLOTS], pools[TRACK_SLOTS];
	struct kept_iid k_pid, k_tid, k_id, c_ctrace, c_async;
	struct nest_ties ties;
	/* The X last written, held until its flow steps are in (its flow ids); its END's time and track. */
	bool x_held;
	uint64_t x_end_ns, x_track;
	/* For args and names as the JSON has them. */
	struct chrome_trace json;
	struct json_writer text;
	struct pftrace_annot annot;
	uint64_t events, last_ts;
	struct pftrace_counts counts;
};

/* The packet in e->pk, with the sequence's id and the strings interned in it, to the writer. */
void pfe_emit(struct pftrace_encoder *e);
/* A string's iid in table t: sent in the next packet's interned_data when new. */
uint64_t pfe_intern(struct pftrace_encoder *e, struct interned *t, const char *s, size_t n);
/* A name as the JSON shows it (marked cut, unreadable or renamed): *n bytes. */
const char *pfe_shown_name(struct pftrace_encoder *e, const struct ct_text *name, size_t *n);
/* A category's name as the JSON writes it. */
const char *pfe_cat_name(unsigned cat);

/* pftrace_tracks.c: each track's uuid, its descriptor emitted the first time. */
void pfe_forget_tracks(struct pftrace_encoder *e);
uint64_t pfe_process_track(struct pftrace_encoder *e, uint32_t pid);
uint64_t pfe_thread_track(struct pftrace_encoder *e, uint32_t pid, uint32_t tid);
uint64_t pfe_counter_track(struct pftrace_encoder *e, uint32_t pid, uint32_t tid, unsigned cat,
			   const struct ct_text *name);
uint64_t pfe_async_track(struct pftrace_encoder *e, uint32_t pid, uint64_t name_iid_, const char *name,
			 size_t name_len, uint64_t begin_ns, uint64_t end_ns);
/* A process's or thread's descriptor again, with a name (not NULL) or a sort index (has_sort). */
void pfe_process_desc(struct pftrace_encoder *e, uint64_t uuid, uint32_t pid, const char *name, size_t name_len,
		      bool has_sort, int32_t sort);
void pfe_thread_desc(struct pftrace_encoder *e, uint64_t uuid, uint64_t parent, uint32_t pid, uint32_t tid,
		     const char *name, size_t name_len, bool has_sort, int32_t sort);

#endif
