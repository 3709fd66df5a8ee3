/* SPDX-License-Identifier: MIT */
/*
 * pb_write.h - protobuf's wire format, written by hand into growing byte
 * buffers: varints, fixed64, strings and sub-messages (built in a buffer
 * of their own, then copied in after their length). What the Perfetto
 * encoder (pftrace_encode.c) writes every packet with: no descriptor
 * tables, no allocation per field.
 */
#ifndef CTRACE_PB_WRITE_H
#define CTRACE_PB_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pb {
	uint8_t *p;
	size_t n, cap;
};

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

static inline void pb_room(struct pb *b, size_t n)
{
	if (b->cap - b->n >= n)
		return;
	b->cap = (b->n + n) * 2 + 64;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
}

static inline void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t *q;

	pb_room(b, 10);
	q = b->p + b->n;
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	b->n = (size_t)(q - b->p);
}

static inline void pb_key(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* uint32/uint64/bool/enum, and int32/int64 (negative: ten bytes, as protobuf says). */
static inline void pb_u(struct pb *b, unsigned field, uint64_t v)
{
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_fixed64(struct pb *b, unsigned field, uint64_t v)
{
	pb_key(b, field, PB_FIXED64);
	pb_room(b, 8);
	memcpy(b->p + b->n, &v, 8); /* little-endian hosts (x86-64, arm64) */
	b->n += 8;
}

static inline void pb_double(struct pb *b, unsigned field, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	pb_fixed64(b, field, v);
}

static inline void pb_bytes(struct pb *b, unsigned field, const void *s, size_t n)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, n);
	pb_room(b, n);
	if (n)
		memcpy(b->p + b->n, s, n);
	b->n += n;
}

static inline void pb_sub(struct pb *b, unsigned field, const struct pb *sub)
{
	pb_bytes(b, field, sub->p, sub->n);
}

#endif
