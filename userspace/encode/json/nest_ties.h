/* SPDX-License-Identifier: MIT */
/*
 * nest_ties.h - a span and its first child that begin at the same
 * nanosecond, told apart for the viewers.
 *
 * An "X" is written when its span ends, so a child's comes before its
 * parent's. Viewers order a thread's slices by their begin and, on a tie,
 * by their place in the file (chrome://tracing says so; Perfetto's sort
 * keeps the file's order, and a .pftrace's slice ends close the latest
 * begun): a parent written after a child that began at the same time is
 * read as begun inside it, and drawn overlapping it or, in a .pftrace,
 * given the child's end. Ties are not rare: on AMD hosts the TSC moves in
 * 10 ns steps, and a CTRACE_SCOPE opened first thing in a function whose
 * caller just opened one shares its start 1.3% of the time (255 of 20000
 * measured here).
 *
 * So an X that encloses X's already written on its thread, the first of
 * which begins where it does, is written beginning 1 ns before that one
 * (its end unchanged): a nanosecond below what the clock can tell apart.
 * A child written after its parent (spans unfinished at the stop) begins
 * 1 ns after the parent instead. Where neither fits (an earlier sibling
 * ends right there) the tie is left and counted.
 */
#ifndef CTRACE_NEST_TIES_H
#define CTRACE_NEST_TIES_H

#include <stdint.h>

/*
 * X's remembered a thread: a parent with more direct children than this
 * may find its tie forgotten (a request's scope with a loop of scoped
 * items in it has as many children as items).
 */
#define NEST_TIES_DEPTH 64
/* Threads remembered (by pid and tid, one slot each: a thread taking another's slot starts afresh). */
#define NEST_TIES_THREADS 64

struct nest_ties {
	struct nest_thread {
		uint32_t pid, tid;
		uint32_t n, top; /* kept, and where the latest is: a ring, the oldest overwritten */
		struct nest_x {
			uint64_t begin; /* as the program's clock said */
			uint64_t shown; /* as written */
			uint64_t end;
		} x[NEST_TIES_DEPTH];
	} threads[NEST_TIES_THREADS];
	uint64_t moved;      /* X's written 1 ns off their clock's begin */
	uint64_t unresolved; /* ties left as they were */
};

void nest_ties_init(struct nest_ties *t);

/*
 * An X [begin, end] of thread (pid, tid), about to be written: the begin
 * to write (end stays).
 */
uint64_t nest_ties_begin(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end);

/*
 * The same for a span still open at a --ring dump: placed among the X's
 * written, not remembered, so that each dump writes it with the same
 * begin (it is no child of itself as dumped before).
 */
uint64_t nest_ties_begin_open(struct nest_ties *t, uint32_t pid, uint32_t tid, uint64_t begin, uint64_t end);

#endif
