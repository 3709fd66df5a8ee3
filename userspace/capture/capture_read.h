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
};

/* Opens and checks the header: 0, or -errno having said why in one line (newer version: -EPROTO). */
int capture_reader_open(struct capture_reader *cr, const char *path);
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
