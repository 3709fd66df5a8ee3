// SPDX-License-Identifier: MIT
/*
 * The TSC clock: a reading maps to CLOCK_MONOTONIC, monotonically, and to
 * the same nanosecond however late it is converted (after any number of
 * updates): what lets nested CTRACE_SCOPEs nest exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <time.h>

#include "ingest/tsc_clock.h"

#define READINGS 400

static uint64_t rdtsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Readings taken while pieces begin every 1 ms (tests: not every second). */
static void test_a_reading_maps_the_same_after_updates(void **state)
{
	static uint64_t tsc[READINGS], first[READINGS];
	struct tsc_clock c;

	(void)state;
	tsc_clock_init(&c);
	c.piece_ns = 1e6;
	for (int i = 0; i < READINGS; i++) {
		tsc[i] = rdtsc();
		first[i] = tsc_clock_to_ns(&c, tsc[i]);
		if (i % 20 == 19) {
			pause_us(1500);
			tsc_clock_update(&c);
		}
	}
	assert_true(c.n >= 10);
	for (int i = 0; i < READINGS; i++) {
		assert_int_equal(tsc_clock_to_ns(&c, tsc[i]), first[i]);
		if (i)
			assert_true(first[i] >= first[i - 1]);
	}
	tsc_clock_free(&c);
}

/* Monotonic across every piece boundary, before the first piece too. */
static void test_monotonic_across_pieces(void **state)
{
	struct tsc_clock c;
	uint64_t prev = 0, lo, hi, step;

	(void)state;
	tsc_clock_init(&c);
	c.piece_ns = 1e6;
	for (int i = 0; i < 20; i++) {
		pause_us(1200);
		tsc_clock_update(&c);
	}
	lo = c.pieces[0].tsc - (c.pieces[0].tsc / 4);
	hi = rdtsc();
	step = (hi - lo) / 100000 + 1;
	for (uint64_t t = lo; t < hi; t += step) {
		uint64_t ns = tsc_clock_to_ns(&c, t);

		assert_true(ns >= prev);
		prev = ns;
	}
	/* Right at each boundary: one tick before is not later. */
	for (size_t i = 1; i < c.n; i++)
		assert_true(tsc_clock_to_ns(&c, c.pieces[i].tsc - 1) <= tsc_clock_to_ns(&c, c.pieces[i].tsc));
	tsc_clock_free(&c);
}

/* Close to CLOCK_MONOTONIC (the clock of every other event). */
static void test_tracks_the_monotonic_clock(void **state)
{
	struct tsc_clock c;

	(void)state;
	tsc_clock_init(&c);
	c.piece_ns = 1e6;
	for (int i = 0; i < 10; i++) {
		uint64_t before = mono_ns(), t = rdtsc(), after = mono_ns(), ns;

		ns = tsc_clock_to_ns(&c, t);
		/* generous: a shared VM's clock reads can stall for a while */
		assert_true(ns + 50000 >= before && ns <= after + 50000);
		pause_us(2000);
		tsc_clock_update(&c);
	}
	tsc_clock_free(&c);
}

/* Hostile readings (a program can send any value): no overflow, no trap. */
static void test_hostile_readings(void **state)
{
	struct tsc_clock c;

	(void)state;
	tsc_clock_init(&c);
	assert_true(tsc_clock_to_ns(&c, 0) <= tsc_clock_to_ns(&c, c.pieces[0].tsc));
	assert_true(tsc_clock_to_ns(&c, UINT64_MAX) >= tsc_clock_to_ns(&c, rdtsc()));
	assert_int_equal(tsc_clock_ticks_to_ns(&c, UINT64_MAX) > 0, 1);
	tsc_clock_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_reading_maps_the_same_after_updates),
		cmocka_unit_test(test_monotonic_across_pieces),
		cmocka_unit_test(test_tracks_the_monotonic_clock),
		cmocka_unit_test(test_hostile_readings),
	};

	return cmocka_run_group_tests_name("tsc_clock", tests, NULL, NULL);
}
