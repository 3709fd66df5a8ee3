// SPDX-License-Identifier: MIT
#include "encode/duration_hist.h"

#include <math.h>
#include <string.h>

void duration_hist_init(struct duration_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < DURATION_HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v); /* 2^e <= v < 2^(e+1), e >= 4 */
	return DURATION_HIST_SUB + (e - 4) * DURATION_HIST_SUB + (unsigned)((v >> (e - 4)) & (DURATION_HIST_SUB - 1));
}

/* The middle of bucket b: at most half its width, 2^(e-5) <= v/32, from any value in it. */
static uint64_t bucket_middle(unsigned b)
{
	unsigned e, sub;

	if (b < DURATION_HIST_SUB)
		return b;
	e = (b - DURATION_HIST_SUB) / DURATION_HIST_SUB + 4;
	sub = (b - DURATION_HIST_SUB) % DURATION_HIST_SUB;
	return ((uint64_t)(DURATION_HIST_SUB + sub) << (e - 4)) + ((1ull << (e - 4)) >> 1);
}

void duration_hist_add(struct duration_hist *h, uint64_t ns)
{
	h->n[bucket_of(ns)]++;
	h->count++;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

uint64_t duration_hist_quantile(const struct duration_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank >= h->count)
		return h->max; /* the ends are known exactly */
	if (rank == 1)
		return h->min;
	for (unsigned b = 0; b < DURATION_HIST_BUCKETS; b++) {
		seen += h->n[b];
		if (seen >= rank) {
			uint64_t v = bucket_middle(b);

			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}
