/* SPDX-License-Identifier: MIT */
/*
 * capture_write.h - appends records to a capture (capture_format.h): into
 * a buffer, written out whole when it fills and at each flush. A record is
 * one memcpy on the tracer's hot path; a failed write (a full disk) is
 * kept as `err`: the session stops on it, and what was written before is a
 * whole capture (records are written whole or not at all).
 */
#ifndef CTRACE_CAPTURE_WRITE_H
#define CTRACE_CAPTURE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture_format.h"

struct capture_writer {
	int fd;
	char *buf;
	size_t len, cap;
	uint64_t written; /* bytes in the file */
	uint64_t records;
	int err;          /* 0, or the errno of the first failed write: nothing more is written */
};

/* Opens path (created, truncated) and writes the header: 0 or -errno. */
int capture_open(struct capture_writer *cw, const char *path);
/* What the buffer holds goes to the file: 0 or -errno (kept in err). */
int capture_flush(struct capture_writer *cw);
/* Flushes and closes: 0 or -errno. */
int capture_close(struct capture_writer *cw);

/* Room for a record of len payload bytes: where to write them, NULL after an error. */
void *capture_reserve(struct capture_writer *cw, uint32_t type, size_t len);

static inline size_t capture_padded(size_t len)
{
	return (len + 7) & ~(size_t)7;
}

/* A record of one piece. */
static inline void capture_put(struct capture_writer *cw, uint32_t type, const void *p, size_t len)
{
	void *to = capture_reserve(cw, type, len);

	if (to)
		__builtin_memcpy(to, p, len);
}

/* A TLV list (FACTS, END), built in memory before it is put. */
struct capture_tlv {
	char *buf;
	size_t len, cap;
};

void capture_tlv_bytes(struct capture_tlv *t, uint16_t key, const void *p, size_t len);
void capture_tlv_u64(struct capture_tlv *t, uint16_t key, uint64_t v);
void capture_tlv_str(struct capture_tlv *t, uint16_t key, const char *s); /* NULL: not put */
void capture_tlv_put(struct capture_writer *cw, uint32_t type, struct capture_tlv *t); /* and frees */

#endif
