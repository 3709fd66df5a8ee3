/* SPDX-License-Identifier: MIT */
/*
 * capture_read.h - reads a capture (capture_format.h) record by record.
 * Nothing in the file is trusted: a length past CAPTURE_RECORD_MAX or past
 * the file's end ends the reading (`cut` says where and why), and a
 * version newer than this reader's is refused before any record.
 */
#ifndef CTRACE_CAPTURE_READ_H
#define CTRACE_CAPTURE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "capture/capture_format.h"

struct capture_reader {
	FILE *f;
	const char *path;
	uint32_t version;
	unsigned char *buf;   /* the current record's payload */
	size_t cap;
	uint64_t offset;      /* of the next record */
	uint64_t records;
	char cut[160];        /* "": read to its end; else what ended the reading early */
	/*
	 * Following a capture still being written (the trace command's
	 * conversion behind it): the read end of a pipe whose write end the
	 * tracer holds; -1 once it closed (the tracer done, or gone), or when
	 * not following.
	 */
	int writer_alive;
	bool following;
	uint64_t punched;     /* following: bytes read and given back to the file system */
	/* Following: called before each wait for the writer (the conversion writes out what it has). */
	void (*idle)(void *ctx);
	void *idle_ctx;
};

/* Opens and checks the header: 0, or -errno having said why in one line (newer version: -EPROTO). */
int capture_reader_open(struct capture_reader *cr, const char *path);
/*
 * The same, of a capture the tracer is still writing (opened read-write:
 * what was read is punched out of the file, so that it holds only what is
 * still to convert). At its end the reader waits for more while
 * writer_alive (a pipe's read end, taken over) is open.
 */
int capture_reader_open_following(struct capture_reader *cr, const char *path, int writer_alive);
/* The next record: 1 with *type, *p, *len set; 0 at the end (cut short: cr->cut says so). */
int capture_reader_next(struct capture_reader *cr, uint32_t *type, const unsigned char **p, size_t *len);
void capture_reader_close(struct capture_reader *cr);

/* Walks a TLV list: 1 with *key, *p, *len set, 0 at its end (or a malformed entry). */
struct capture_tlv_iter {
	const unsigned char *p;
	size_t left;
};
int capture_tlv_next(struct capture_tlv_iter *it, uint16_t *key, const unsigned char **p, size_t *len);
/* A TLV value as a u64 (0 when it is not 8 bytes). */
uint64_t capture_tlv_as_u64(const unsigned char *p, size_t len);

#endif
