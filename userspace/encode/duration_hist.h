/* SPDX-License-Identifier: MIT */
/*
 * duration_hist.h - the durations of one span name, for its percentiles,
 * in a fixed 7.8 KB whatever their number: log-linear buckets (16 a power
 * of two, like HdrHistogram's 4 significant bits), each value counted in
 * its bucket. A percentile is its bucket's middle, clamped to the smallest
 * and largest value seen: within 1/32 (3.125%) of the exact value, exact
 * below 16 ns and at the ends (the smallest and largest are kept).
 * HdrHistogram's C library is not in Debian 12 (its Go and Java ones
 * are); this is the 30 lines of it the summary needs.
 */
#ifndef CTRACE_DURATION_HIST_H
#define CTRACE_DURATION_HIST_H

#include <stdint.h>

#define DURATION_HIST_SUB 16 /* buckets per power of two */
/* 0..15 exactly, then 16 for each power of two from 2^4 to 2^63. */
#define DURATION_HIST_BUCKETS (DURATION_HIST_SUB + (64 - 4) * DURATION_HIST_SUB)

struct duration_hist {
	uint64_t count, min, max;
	uint64_t n[DURATION_HIST_BUCKETS];
};

void duration_hist_init(struct duration_hist *h);
void duration_hist_add(struct duration_hist *h, uint64_t ns);
/* The q-quantile (0 < q <= 1, nearest rank) within 1/32 of the exact one; 0 if empty. */
uint64_t duration_hist_quantile(const struct duration_hist *h, double q);

#endif
