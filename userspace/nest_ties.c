// SPDX-License-Identifier: MIT
#include "nest_ties.h"

#include <stdbool.h>
#include <string.h>

/*
 * A tie moves a begin by 1 ns a level of nesting; a move larger than this
 * is not a tie but X's the program itself made overlap (spans ended out
 * of order): those are written as they are.
 */
#define MOVE_MAX_NS NEST_TIES_DEPTH

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

static void remember(struct nest_thread *th, uint64_t begin, uint64_t shown, uint64_t end)
{
	if (th->n == NEST_TIES_DEPTH) { /* the oldest goes: a parent of all these is rare */
		memmove(th->begin, th->begin + 1, sizeof(th->begin[0]) * (NEST_TIES_DEPTH - 1));
		memmove(th->shown, th->shown + 1, sizeof(th->shown[0]) * (NEST_TIES_DEPTH - 1));
		memmove(th->end, th->end + 1, sizeof(th->end[0]) * (NEST_TIES_DEPTH - 1));
		th->n--;
	}
	th->begin[th->n] = begin;
	th->shown[th->n] = shown;
	th->end[th->n] = end;
	th->n++;
}

static uint64_t place(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end, bool keep)
{
	struct nest_thread *th = thread_of(t, pid, tid);
	uint64_t first_child = UINT64_MAX, lo = 0, hi = end, shown = begin;
	uint32_t n = th->n;
	bool children = false;

	/* Its children, written before it (the X's it encloses, latest first): forgotten once it is kept, it stands for them. */
	while (n && th->begin[n - 1] >= begin && th->end[n - 1] <= end) {
		n--;
		children = true;
		if (th->shown[n] < first_child)
			first_child = th->shown[n];
	}
	/* What is left on top: its parent, written first (it encloses this one), or an X before it. */
	if (n) {
		size_t k = n - 1;

		lo = th->begin[k] <= begin && th->end[k] >= end ? th->shown[k] + 1 : th->end[k];
	}
	if (children)
		hi = first_child ? first_child - 1 : 0;
	/* Begin where the clock says unless that is not strictly between its parent's and its first child's begins. */
	if (shown < lo)
		shown = lo;
	if (shown > hi)
		shown = hi;
	if (shown < lo || (shown > begin ? shown - begin : begin - shown) > MOVE_MAX_NS) {
		if ((children && first_child <= begin) || (lo > begin && lo <= begin + 1))
			t->unresolved++; /* a tie with no room around it */
		shown = begin;
	} else if (shown != begin) {
		t->moved++;
	}
	if (keep) {
		th->n = n;
		remember(th, begin, shown, end);
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
