/* SPDX-License-Identifier: MIT */
/*
 * tsc_clock.h - turns time stamp counter ticks into nanoseconds.
 *
 * CTRACE_SCOPE reads the TSC at its start (rdtsc: no syscall) and its end
 * probe carries the ticks elapsed; the BPF program stamps the end with
 * CLOCK_MONOTONIC. The loader needs ticks per nanosecond: it measures them
 * against CLOCK_MONOTONIC at start and refines the ratio as the trace runs
 * (the longer the baseline, the smaller the error). This assumes an
 * invariant TSC, synchronized across CPUs (constant_tsc, nonstop_tsc), as on
 * every x86-64 machine of the last decade.
 */
#ifndef CTRACE_TSC_CLOCK_H
#define CTRACE_TSC_CLOCK_H

#include <stdint.h>

struct tsc_clock {
	uint64_t tsc0, ns0;   /* the first sample */
	double ticks_per_ns;
};

/* Calibrates over ~10 ms. */
void tsc_clock_init(struct tsc_clock *c);
/* Refines the ratio with a sample taken now. */
void tsc_clock_update(struct tsc_clock *c);
uint64_t tsc_clock_ticks_to_ns(const struct tsc_clock *c, uint64_t ticks);

#endif
