/* SPDX-License-Identifier: MIT */
/*
 * test_grow_array.c - the one growing-array helper (userspace/lib/grow_array.h)
 * that the loader's lists use: every element appended is kept, room is made
 * only when the array is full, a size that would overflow is refused with
 * the array left as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/grow_array.h"

/* 1000 appends: each value kept, the capacity doubling from `first`. */
static void test_appends_keep_every_element(void **state)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		assert_int_equal(GROW_ARRAY(v, cap, n, 16), 0);
		assert_true(n < cap);
		v[n++] = i * 7;
	}
	assert_int_equal(cap, 1024); /* 16 doubled six times */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i], i * 7);
	free(v);
}

/* With room left, nothing moves. */
static void test_no_realloc_while_room(void **state)
{
	int *v = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY(v, cap, 0, 8), 0);
	before = v;
	for (size_t n = 1; n < 8; n++) {
		assert_int_equal(GROW_ARRAY(v, cap, n, 8), 0);
		assert_ptr_equal(v, before);
		assert_int_equal(cap, 8);
	}
	free(v);
}

/* A capacity whose bytes would not fit in size_t: -ENOMEM, array unchanged. */
static void test_overflow_refused(void **state)
{
	struct big { char bytes[1 << 20]; } *v = NULL;
	void *p = malloc(1);
	size_t cap = SIZE_MAX / sizeof(*v) / 2 + 1;

	(void)state;
	v = p;
	assert_int_equal(GROW_ARRAY(v, cap, cap, 16), -ENOMEM);
	assert_ptr_equal(v, p);
	assert_int_equal(cap, SIZE_MAX / sizeof(*v) / 2 + 1);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends_keep_every_element),
		cmocka_unit_test(test_no_realloc_while_room),
		cmocka_unit_test(test_overflow_refused),
	};

	return cmocka_run_group_tests_name("grow_array", tests, NULL, NULL);
}
