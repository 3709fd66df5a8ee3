/* SPDX-License-Identifier: MIT */
/*
 * stack_frames.h - the trace's stackFrames dictionary: every distinct call
 * chain seen, as a tree of frames {name, category (the object), parent}
 * shared by all the events whose stacks begin the same way from the
 * outermost frame. An event's "sf" names its innermost frame; chrome_trace.c
 * writes the dictionary at the end and, from it, each event's "stack" arg.
 */
#ifndef CTRACE_STACK_FRAMES_H
#define CTRACE_STACK_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include "lib/key_map.h"

struct stack_frame {
	char *name;           /* "fn (file.c:12)", "lib.so+0x1a2b", "0x7f..." */
	const char *category; /* the object's file name; owned by the table */
	uint32_t parent;      /* 0: an outermost frame */
};

struct stack_frames {
	struct stack_frame *v; /* id N is v[N - 1] */
	size_t n, cap;
	struct key_map ids;        /* {parent, category, name} -> id */
	struct key_map categories; /* name -> its one copy */
};

void stack_frames_init(struct stack_frames *t);
void stack_frames_free(struct stack_frames *t);
/* The id of frame name/category under `parent` (0: outermost), added if new. */
uint32_t stack_frames_id(struct stack_frames *t, uint32_t parent, const char *category,
			 const char *name);
static inline const struct stack_frame *stack_frames_get(const struct stack_frames *t, uint32_t id)
{
	return id && id <= t->n ? &t->v[id - 1] : NULL;
}

#endif
