// SPDX-License-Identifier: MIT
#include "encode/json/nest_ties.h"

#include <stdbool.h>
#include <string.h>

/*
 * A tie moves a begin by 1 ns a level of nesting; a move larger than this
 * is not a tie but X's the program itself made overlap (spans ended out
 * of order): those are written as they are.
 */
#define MOVE_MAX_NS 16

void nest_ties_init(struct nest_ties *t)
{
	memset(t, 0, sizeof(*t));
}

static struct nest_thread *thread_of(struct nest_ties *t, uint32_t pid, uint32_t tid)
{
	struct nest_thread *th = &t->threads[(tid ^ pid * 0x9e3779b1u) % NEST_TIES_THREADS];

	if (th->pid != pid || th->tid != tid) {
		th->pid = pid;
		th->tid = tid;
		th->n = 0;
	}
	return th;
}

/* The i-th latest X kept (0: the latest). */
static struct nest_x *latest(struct nest_thread *th, uint32_t i)
{
	return &th->x[(th->top + NEST_TIES_DEPTH - i) % NEST_TIES_DEPTH];
}

static uint64_t place(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end, bool keep)
{
	struct nest_thread *th = thread_of(t, pid, tid);
	uint64_t first_child = UINT64_MAX, lo = 0, hi = end, shown = begin;
	uint32_t popped = 0;

	/* Its children, written before it (the X's it encloses, latest first): forgotten once it is kept, it stands for them. */
	while (popped < th->n) {
		const struct nest_x *c = latest(th, popped);

		if (c->begin < begin || c->end > end)
			break;
		if (c->shown < first_child)
			first_child = c->shown;
		popped++;
	}
	/* What is left on top: its parent, written first (it encloses this one), or an X before it. */
	if (popped < th->n) {
		const struct nest_x *p = latest(th, popped);

		if (p->begin <= begin && p->end >= end)
			lo = p->shown + 1; /* inside its parent */
		else
			lo = p->end <= begin ? p->end : begin; /* after an X, or one ending inside it: the program's overlap, no tie */
	}
	if (popped)
		hi = first_child ? first_child - 1 : 0;
	/* Begin where the clock says unless that is not strictly between its parent's and its first child's begins. */
	if (shown < lo)
		shown = lo;
	if (shown > hi)
		shown = hi;
	if (shown < lo || (shown > begin ? shown - begin : begin - shown) > MOVE_MAX_NS) {
		if ((popped && first_child <= begin) || (lo > begin && lo <= begin + 1))
			t->unresolved++; /* a tie with no room around it */
		shown = begin;
	} else if (shown != begin) {
		t->moved++;
	}
	if (keep) {
		/* Its children go, it goes on top (over the oldest when all are taken: a parent of all these is rare). */
		th->n -= popped;
		th->top = (th->top + NEST_TIES_DEPTH - popped + 1) % NEST_TIES_DEPTH;
		*latest(th, 0) = (struct nest_x){ begin, shown, end };
		if (th->n < NEST_TIES_DEPTH)
			th->n++;
	}
	return shown;
}

uint64_t nest_ties_begin(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end)
{
	return place(t, pid, tid, begin, end, true);
}

uint64_t nest_ties_begin_open(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end)
{
	return place(t, pid, tid, begin, end, false);
}
