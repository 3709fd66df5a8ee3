/* SPDX-License-Identifier: MIT */
/*
 * batch_split.h - one copy of a thread's event buffer (usdt/ctrace_batch.h:
 * a 64-byte header, then events back to back) -> the events it holds, in
 * the decoded form every other event has (record_decode.h). The bytes come
 * from the traced process: every size is checked before it is read.
 */
#ifndef CTRACE_BATCH_SPLIT_H
#define CTRACE_BATCH_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ingest/record_decode.h"

#define BATCH_HEADER_BYTES 64
#define BATCH_MAGIC 0x43544231u

/* Event flags (usdt/ctrace_batch.h's CTRACE__BF_*). */
#define BATCH_NAME_LITERAL 0x1
#define BATCH_ARGS_LITERAL 0x2
#define BATCH_NAME_INLINE 0x4
#define BATCH_ARGS_INLINE 0x8
#define BATCH_SMALL2 0x10 /* argument 2 is the event's byte 11 */
#define BATCH_CATEGORY 0x20 /* a word after the arguments: the address of its category's name */

struct batch_header {
	uint32_t magic;
	uint32_t tid;        /* the thread that allocated the buffer */
	uint64_t first_seq;  /* the thread's number of the first event */
	uint32_t len;        /* bytes of events after the header */
	uint32_t count;
	uint32_t pid;        /* the process that allocated it (a forked child has its parent's copy) */
	uint64_t born;       /* the TSC when its thread took it; 0 from a header before it was kept */
};

/* The header of a buffer copy of n bytes: false if it is not one (or len does not fit). */
bool batch_header_parse(const void *bytes, size_t n, struct batch_header *h);

/*
 * One event of a buffer: the decoded event (ts_ns not set: the caller
 * converts tsc), with its name and args either inline (pointing into the
 * buffer, flags 0 or CTRACE_STR_TRUNCATED) or literals, given by address
 * in arg[] and flagged in *literals (BATCH_NAME_LITERAL, BATCH_ARGS_LITERAL).
 */
struct batch_event {
	uint64_t seq;
	uint64_t tsc;        /* the event's TSC (CTRACE_SCOPE: its end) */
	unsigned literals;
	/*
	 * A site of another category than the default: the address of its
	 * category's name in the process (ev.cat is then 0 until the caller
	 * reads the name); 0: the default category's event (ev.cat says so).
	 */
	uint64_t category;
	struct ctrace_event ev;
};

typedef void (*batch_event_fn)(void *ctx, struct batch_event *e);

/*
 * Calls fn for each event of the buffer copy `bytes` (n bytes, header
 * included) numbered `from` or later, stamped with tgid and tid. Returns
 * the number after the last event it holds (first_seq + its events), or
 * -1 when the bytes are malformed (the events before the fault were given).
 */
int64_t batch_split(const void *bytes, size_t n, uint64_t from, uint32_t tgid, uint32_t tid,
		    batch_event_fn fn, void *ctx);

#endif
