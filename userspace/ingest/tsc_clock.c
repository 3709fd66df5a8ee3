// SPDX-License-Identifier: MIT
#include "lib/grow_array.h"
#include "ingest/tsc_clock.h"

#include <stdlib.h>
#include <time.h>

/* How fast a piece may steer toward the clock (1 ms a second). */
#define MAX_STEER 1e-3

static uint64_t rdtsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* One (tsc, ns) pair: the TSC read on both sides of the clock, averaged. */
/*
 * A reading of both clocks at one moment: the pair whose two TSC readings
 * are closest of a few tries (a try the scheduler or the hypervisor
 * interrupted is off by as long as the interruption: in a VM, tens of us,
 * which over the first 10 ms calibration made the ratio off by 1e-3).
 */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 7; i++) {
		struct timespec ts;
		uint64_t a, b;

		a = rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	}
}

static void refine_ratio(struct tsc_clock *c, uint64_t tsc, uint64_t ns)
{
	if (ns > c->ns0 && tsc > c->tsc0)
		c->ticks_per_ns = (double)(tsc - c->tsc0) / (double)(ns - c->ns0);
}

/* A piece from (tsc, at) whose line meets the measured clock a second later. */
static void begin_piece(struct tsc_clock *c, uint64_t tsc, uint64_t at, uint64_t measured)
{
	double steer = ((double)measured - (double)at) / c->piece_ns;
	struct tsc_piece *p;

	if (GROW_ARRAY(c->pieces, c->cap, c->n, 64) < 0)
		return; /* the last piece goes on: still monotonic, only less exact */
	if (steer > MAX_STEER)
		steer = MAX_STEER;
	if (steer < -MAX_STEER)
		steer = -MAX_STEER;
	p = &c->pieces[c->n++];
	p->tsc = tsc;
	p->ns = at;
	p->ns_per_tick = (1.0 + steer) / c->ticks_per_ns;
}

void tsc_clock_init(struct tsc_clock *c)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	uint64_t tsc, ns;

	c->pieces = NULL;
	c->n = c->cap = 0;
	c->piece_ns = 1e9;
	sample(&c->tsc0, &c->ns0);
	c->ticks_per_ns = 1.0;
	nanosleep(&pause, NULL);
	sample(&tsc, &ns);
	refine_ratio(c, tsc, ns);
	begin_piece(c, tsc, ns, ns);
}

void tsc_clock_update(struct tsc_clock *c)
{
	uint64_t tsc, ns;

	sample(&tsc, &ns);
	refine_ratio(c, tsc, ns);
	if (c->n && tsc > c->pieces[c->n - 1].tsc &&
	    (double)(tsc - c->pieces[c->n - 1].tsc) / c->ticks_per_ns >= c->piece_ns)
		begin_piece(c, tsc, tsc_clock_to_ns(c, tsc), ns);
	else if (!c->n)
		begin_piece(c, tsc, ns, ns);
}

uint64_t tsc_clock_ticks_to_ns(const struct tsc_clock *c, uint64_t ticks)
{
	double ns = (double)ticks / c->ticks_per_ns;

	return ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX; /* hostile ticks: no UB */
}

uint64_t tsc_clock_to_ns(const struct tsc_clock *c, uint64_t tsc)
{
	const struct tsc_piece *p;
	size_t lo = 0, hi;
	double d;

	if (!c->n)
		return 0;
	/* The last piece whose start is at or before tsc (most readings: the last). */
	hi = c->n;
	if (tsc >= c->pieces[c->n - 1].tsc)
		lo = c->n - 1;
	else
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->pieces[mid].tsc <= tsc)
				lo = mid;
			else
				hi = mid;
		}
	p = &c->pieces[lo];
	if (tsc >= p->tsc) {
		d = (double)(tsc - p->tsc) * p->ns_per_tick;
		return d < 1.8e19 - (double)p->ns ? p->ns + (uint64_t)d : UINT64_MAX;
	}
	/* Before the first piece: its line, backwards (down to 0). */
	d = (double)(p->tsc - tsc) * p->ns_per_tick;
	return d < (double)p->ns ? p->ns - (uint64_t)d : 0;
}

void tsc_clock_free(struct tsc_clock *c)
{
	free(c->pieces);
	c->pieces = NULL;
	c->n = c->cap = 0;
	c->piece_ns = 1e9;
}
