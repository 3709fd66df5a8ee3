/* SPDX-License-Identifier: MIT */
/*
 * tsc_clock.h - turns time stamp counter readings into CLOCK_MONOTONIC
 * nanoseconds, the clock of every other event.
 *
 * CTRACE_SCOPE reads the TSC at its start and at its end (rdtsc: no
 * syscall) and its one probe carries both. Converting both edges with one
 * mapping is what makes a scope nested in another lie within it: the
 * mapping is monotonic, and a reading always maps to the same nanosecond
 * however late it is converted (a parent's start is converted after all
 * its children, possibly long after). So the mapping is piecewise linear:
 * a new piece begins at a sample taken now, continuing the previous piece
 * there (every reading converted so far is older), with a slope that
 * steers it back to the measured clock over the next second; pieces never
 * change once begun. Old-form scopes (ticks only) use the long-run ratio.
 *
 * This assumes an invariant TSC, synchronized across CPUs (constant_tsc,
 * nonstop_tsc), as on every x86-64 machine of the last decade.
 */
#ifndef CTRACE_TSC_CLOCK_H
#define CTRACE_TSC_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* From tsc on: ns + (reading - tsc) * ns_per_tick, until the next piece. */
struct tsc_piece {
	uint64_t tsc, ns;
	double ns_per_tick;
};

struct tsc_clock {
	uint64_t tsc0, ns0;   /* the first sample */
	double ticks_per_ns;  /* the long-run ratio, since the first sample */
	struct tsc_piece *pieces; /* in TSC order; at least one after init */
	size_t n, cap;
	double piece_ns;      /* how long a piece lasts at least (1 s; tests: less) */
};

/* Calibrates over ~10 ms. */
void tsc_clock_init(struct tsc_clock *c);
/* Refines the ratio with a sample taken now; begins a new piece once a second. */
void tsc_clock_update(struct tsc_clock *c);
/* A duration in ticks, by the long-run ratio. */
uint64_t tsc_clock_ticks_to_ns(const struct tsc_clock *c, uint64_t ticks);
/* A TSC reading as CLOCK_MONOTONIC ns: monotonic, the same answer every time. */
uint64_t tsc_clock_to_ns(const struct tsc_clock *c, uint64_t tsc);
void tsc_clock_free(struct tsc_clock *c);

#endif
