/* SPDX-License-Identifier: MIT */
/*
 * capture_write.h - appends records to a capture (capture_format.h). A
 * record is one memcpy into a buffer on the tracer's hot path; full
 * buffers go to a thread of their own that writes them out (a few MiB at a
 * time), so that the ring buffer is read on while the disk takes the last
 * ones. At most CAPTURE_BUFS buffers: when the disk falls that far behind,
 * the reader waits for it (and the kernel side counts what the ring then
 * has no room for).
 *
 * A failed write (a full disk) is kept as `err`: nothing more is written,
 * the session stops on it, and the file ends at the last whole buffer it
 * wrote: buffers hold whole records only, so the capture converts up to
 * there.
 */
#ifndef CTRACE_CAPTURE_WRITE_H
#define CTRACE_CAPTURE_WRITE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture/capture_format.h"

/*
 * 4 MiB: a write a few hundred thousand events (the syscall's cost per
 * event a fraction of a nanosecond); four of them, 16 MiB, the capture's
 * share of the tracer's memory.
 */
#define CAPTURE_BUF_BYTES (4u << 20)
#define CAPTURE_BUFS 4
#define CAPTURE_BLOCK 4096u          /* O_DIRECT's unit: every write is whole blocks */
#define CAPTURE_PUSH_BYTES (256u << 10)

struct capture_buf {
	char *p;
	size_t len;
};

struct capture_writer {
	int fd;
	struct capture_buf bufs[CAPTURE_BUFS];
	struct capture_buf *cur;  /* the one being filled (NULL: none free yet) */
	/* The writer thread's queue: bufs handed over, in order, and the free ones. */
	pthread_t thread;
	bool thread_on;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct capture_buf *queue[CAPTURE_BUFS], *free_bufs[CAPTURE_BUFS];
	unsigned q_head, q_len, n_free;
	bool busy, closing;
	bool direct;      /* O_DIRECT (see capture_open) */
	uint64_t pushed_ns;
	uint64_t push_every_ns; /* a round's few records go out at least this often (capture_push) */
	uint64_t written; /* bytes in the file */
	uint64_t records;
	uint64_t waits;   /* times the reader waited for the disk */
	int err;          /* 0, or the errno of the first failed write: nothing more is written */
};

/* Opens path (created, truncated), writes the header, starts the writer thread: 0 or -errno. */
int capture_open(struct capture_writer *cw, const char *path);
/* The same into a file of no name in directory dir (removed at once where O_TMPFILE is not had). */
int capture_open_temp(struct capture_writer *cw, const char *dir);
/*
 * The buffer being filled goes to the writer thread, without waiting for
 * it, once it holds CAPTURE_PUSH_BYTES or push_every_ns (a second unless
 * set) after the last (each round: a killed tracer loses at most that).
 */
void capture_push(struct capture_writer *cw, uint64_t now_ns);
/* Everything appended so far is in the file: 0 or -errno (kept in err). */
int capture_flush(struct capture_writer *cw);
/* Flushes, stops the thread, closes: 0 or -errno. */
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

	if (to && len) /* (p may be NULL with nothing to copy) */
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
