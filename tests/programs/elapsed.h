/* SPDX-License-Identifier: MIT */
/*
 * elapsed.h - the test programs' clock: time since a CLOCK_MONOTONIC start,
 * and sleeping a few milliseconds (the durations their tests check).
 */
#ifndef CTRACE_TEST_PROGRAM_ELAPSED_H
#define CTRACE_TEST_PROGRAM_ELAPSED_H

#include <time.h>

/* Milliseconds since t0 (clock_gettime(CLOCK_MONOTONIC)). */
static inline long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Microseconds since t0. */
static inline long us_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000000 + (now.tv_nsec - t0->tv_nsec) / 1000;
}

/* Sleeps ms milliseconds (nanosleep; an interruption cuts it short). */
static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#endif
