/* SPDX-License-Identifier: MIT */
/*
 * record_decode.h - checks one ring-buffer record and gives a typed view of
 * it. The record's bytes were written by our BPF program, but its strings
 * and arguments come from the traced (untrusted) process, and a kernel or
 * BPF object of another version may have written it: every length is checked
 * against the record's size before anything is read.
 */
#ifndef CTRACE_RECORD_DECODE_H
#define CTRACE_RECORD_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "ctrace_record.h"

/*
 * Set by the loader only, never in a record: every byte is printable
 * ASCII other than '"' and '\\', so the JSON writer copies it as it is
 * (a batched literal, checked once when its copy is kept).
 */
#define CTRACE_STR_PLAIN 0x100

struct ctrace_event {
	uint64_t ts_ns;
	uint32_t tgid, tid;
	uint16_t kind; /* enum ctrace_kind */
	uint32_t sf;   /* --stacks: the event's innermost frame in stackFrames; 0: none */
	uint8_t cat;   /* the site's category number (categories.h); 0: not known */
	uint64_t arg[4];
	uint64_t tsc; /* SCOPE_TSC: the TSC at the scope's end */
	const char *name; /* not NUL-terminated; may hold any bytes */
	size_t name_len;
	unsigned name_flags; /* CTRACE_STR_* */
	const char *args;
	size_t args_len;
	unsigned args_flags;
};

/* 0, or -EINVAL for a record that is too short, inconsistent or of an unknown kind. */
int record_decode(const void *data, size_t size, struct ctrace_event *out);
/*
 * The stack part (--stacks, bpf/ctrace_record.h) of a record record_decode()
 * took, and its length in *len; NULL if it has none. Apart from the event,
 * which the merge copies: only stack_trace.c reads it, right away.
 */
const void *record_stack_part(const void *data, size_t size, size_t *len);

/* Which argument of a kind is its name and its args pointer (-1: none). */
int record_name_arg(unsigned kind);
int record_args_arg(unsigned kind);

/* The probe's name for a kind ("span_begin", ...), NULL if unknown. */
const char *record_kind_probe(unsigned kind);

#endif
