/* SPDX-License-Identifier: MIT */
/*
 * stack_trace.h - --stacks in the loader: from the stack part of an event's
 * record (bpf/ctrace_record.h) to the id of its innermost frame in the
 * trace's stackFrames (the event's "sf"). FP records carry the pcs the
 * kernel walked; DWARF records are unwound first (stack_unwind.c). Each pc
 * is symbolized once per object (by build-id) and address
 * (stack_symbols.c). What could not be done is counted (metadata.stacks).
 */
#ifndef CTRACE_STACK_TRACE_H
#define CTRACE_STACK_TRACE_H

#include <stdint.h>
#include "lib/key_map.h"
#include "ingest/record_decode.h"
#include "ingest/stack_frames.h"
#include "ingest/stack_unwind.h"

struct stack_stats {
	unsigned how;             /* CTRACE_STACK_FP or _DWARF; 0: no --stacks */
	const char *how_why;      /* why that way */
	unsigned depth;
	uint64_t stacks;          /* events that carried one */
	uint64_t capture_errors;  /* the BPF program could not take it (bad stack pointer, ...) */
	uint64_t not_unwound;     /* DWARF: the unwind stopped at an error before the stack's end */
	uint64_t empty;           /* no frame at all came out */
	uint64_t bad;             /* a stack part inconsistent with its record */
	uint64_t frames_unsymbolized; /* frames written as an address: in no object, or no symbol */
	uint64_t objects_unreadable;  /* objects libdwfl could not open (stack_unwind.h) */
	uint64_t processes_let_go;    /* Dwfls freed for want of room (STACK_UNWIND_PROCS_MAX) */
};

struct stack_trace {
	struct stack_stats stats;
	struct stack_frames frames;
	struct stack_unwind unwind;
	struct key_map syms; /* {object's build-id, address, return?} -> struct cached_symbols * */
	struct key_map chains; /* {tgid, pcs} -> sf: a stack seen before costs one lookup */
};

void stack_trace_init(struct stack_trace *t, unsigned how, unsigned depth, const char *why);
void stack_trace_free(struct stack_trace *t);
/* The event's stack (its record's stack part, record_stack_part()) as a stackFrames id (0: none). */
uint32_t stack_trace_event(struct stack_trace *t, const struct ctrace_event *ev, const void *part,
			   size_t len);

#endif
