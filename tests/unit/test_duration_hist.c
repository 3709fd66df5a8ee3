// SPDX-License-Identifier: MIT
/*
 * test_duration_hist - the summary's percentiles (userspace/encode/duration_hist.c):
 * within 1/32 of the exact nearest-rank value for durations from 0 ns to
 * 2^63, exact below 16 ns, never outside the smallest and largest seen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "encode/duration_hist.h"

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t exact(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999999);

	return sorted[(rank ? rank : 1) - 1];
}

static void check(uint64_t *v, size_t n)
{
	static const double qs[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 1.0 };
	struct duration_hist h;

	duration_hist_init(&h);
	for (size_t i = 0; i < n; i++)
		duration_hist_add(&h, v[i]);
	qsort(v, n, sizeof(*v), by_value);
	assert_int_equal(h.count, n);
	assert_int_equal(h.min, v[0]);
	assert_int_equal(h.max, v[n - 1]);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = exact(v, n, qs[i]), got = duration_hist_quantile(&h, qs[i]);
		uint64_t err = got > want ? got - want : want - got;

		if (err > want / 32)
			fail_msg("q %g: %llu, exactly %llu (error %llu > 1/32)", qs[i], (unsigned long long)got,
				 (unsigned long long)want, (unsigned long long)err);
		assert_true(got >= v[0] && got <= v[n - 1]);
	}
}

/* Values spread over every power of two, 20 draws of 10,000. */
static void test_within_a_32nd(void **state)
{
	static uint64_t v[10000];

	(void)state;
	srand(14);
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < 10000; i++) {
			unsigned bits = (unsigned)rand() % 63;
			uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand() ^ ((uint64_t)rand() << 62);

			v[i] = bits ? r >> (63 - bits) : 0;
		}
		check(v, 10000);
	}
}

/* Below 16 ns each value has its own bucket. */
static void test_small_values_exact(void **state)
{
	uint64_t v[16];
	struct duration_hist h;

	(void)state;
	duration_hist_init(&h);
	for (uint64_t i = 0; i < 16; i++)
		duration_hist_add(&h, v[i] = i);
	for (int i = 1; i <= 16; i++)
		assert_int_equal(duration_hist_quantile(&h, i / 16.0), (uint64_t)(i - 1));
}

/* One value, and the extremes of uint64_t. */
static void test_one_and_extremes(void **state)
{
	struct duration_hist h;

	(void)state;
	duration_hist_init(&h);
	assert_int_equal(duration_hist_quantile(&h, 0.5), 0);
	duration_hist_add(&h, 1234567);
	assert_int_equal(duration_hist_quantile(&h, 0.5), 1234567);
	assert_int_equal(duration_hist_quantile(&h, 0.99), 1234567);
	duration_hist_add(&h, UINT64_MAX);
	assert_int_equal(duration_hist_quantile(&h, 1.0), UINT64_MAX);
	assert_int_equal(duration_hist_quantile(&h, 0.5), 1234567);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_a_32nd),
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_one_and_extremes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
