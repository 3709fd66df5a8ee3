// SPDX-License-Identifier: MIT
#include "tsc_clock.h"

#include <time.h>

static uint64_t rdtsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* One (tsc, ns) pair: the TSC read on both sides of the clock, averaged. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	struct timespec ts;
	uint64_t a, b;

	a = rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	b = rdtsc();
	*tsc = a + (b - a) / 2;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tsc_clock_init(struct tsc_clock *c)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	sample(&c->tsc0, &c->ns0);
	c->ticks_per_ns = 1.0;
	nanosleep(&pause, NULL);
	tsc_clock_update(c);
}

void tsc_clock_update(struct tsc_clock *c)
{
	uint64_t tsc, ns;

	sample(&tsc, &ns);
	if (ns > c->ns0 && tsc > c->tsc0)
		c->ticks_per_ns = (double)(tsc - c->tsc0) / (double)(ns - c->ns0);
}

uint64_t tsc_clock_ticks_to_ns(const struct tsc_clock *c, uint64_t ticks)
{
	double ns = (double)ticks / c->ticks_per_ns;

	return ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX; /* hostile ticks: no UB */
}
