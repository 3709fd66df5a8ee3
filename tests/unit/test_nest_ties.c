// SPDX-License-Identifier: MIT
/*
 * test_nest_ties - the begins nest_ties.c writes for X's on one thread, in
 * the order the model writes them (a span when it ends: children first):
 * a parent that begins with its first child is written before it, a level
 * of nesting a nanosecond; a tie with no room (an earlier sibling ends
 * right there) is left and counted; X's that do not tie are untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "encode/json/nest_ties.h"

static struct nest_ties t;

static int setup(void **state)
{
	(void)state;
	nest_ties_init(&t);
	return 0;
}

static uint64_t x(uint32_t tid, uint64_t begin, uint64_t end)
{
	return nest_ties_begin(&t, 1, tid, begin, end);
}

/* child [100, 150] then its parent [100, 200]: the parent begins at 99. */
static void test_parent_tied_with_its_child_begins_before_it(void **state)
{
	(void)state;
	assert_int_equal(x(7, 100, 150), 100);
	assert_int_equal(x(7, 100, 200), 99);
	assert_int_equal(t.moved, 1);
	assert_int_equal(t.unresolved, 0);
}

/* Three levels tied, and the first child of several: 98, 99, 100. */
static void test_three_levels_and_later_siblings(void **state)
{
	(void)state;
	assert_int_equal(x(7, 100, 110), 100); /* grandchild */
	assert_int_equal(x(7, 120, 130), 120); /* its sibling */
	assert_int_equal(x(7, 100, 140), 99);  /* their parent */
	assert_int_equal(x(7, 150, 160), 150); /* the parent's sibling */
	assert_int_equal(x(7, 100, 200), 98);  /* the root */
	assert_int_equal(t.moved, 2);
	assert_int_equal(t.unresolved, 0);
}

/* An X just before ends where the tie is: the parent cannot move; counted. */
static void test_no_room_is_counted(void **state)
{
	(void)state;
	assert_int_equal(x(7, 90, 100), 90);   /* ends at 100 */
	assert_int_equal(x(7, 100, 150), 100); /* the child */
	assert_int_equal(x(7, 100, 200), 100); /* the parent: left at 100 */
	assert_int_equal(t.moved, 0);
	assert_int_equal(t.unresolved, 1);
}

/* A parent written before its child (unfinished at the stop): the child begins 1 ns after it. */
static void test_child_written_after_its_parent(void **state)
{
	(void)state;
	assert_int_equal(x(7, 100, 200), 100);
	assert_int_equal(x(7, 100, 150), 101);
	assert_int_equal(t.moved, 1);
}

/*
 * A span still open, written at each --ring dump and at the stop: placed
 * after its tied child like any parent, the same begin each time (it is
 * not taken for a child of itself as written before).
 */
static void test_open_span_the_same_at_every_dump(void **state)
{
	(void)state;
	assert_int_equal(nest_ties_begin_open(&t, 1, 7, 100, 200), 100);
	assert_int_equal(nest_ties_begin_open(&t, 1, 7, 100, 300), 100);
	assert_int_equal(x(7, 100, 150), 100); /* a child of it, ended */
	assert_int_equal(nest_ties_begin_open(&t, 1, 7, 100, 400), 99);
	assert_int_equal(nest_ties_begin_open(&t, 1, 7, 100, 500), 99);
	assert_int_equal(x(7, 100, 600), 99); /* ended at last */
}

/* No tie: as the clock said, whatever the nesting; other threads apart. */
static void test_no_tie_untouched(void **state)
{
	(void)state;
	assert_int_equal(x(7, 101, 150), 101);
	assert_int_equal(x(8, 100, 300), 100); /* another thread: no child of its own */
	assert_int_equal(x(7, 100, 200), 100);
	assert_int_equal(x(7, 210, 220), 210);
	/* X's that overlap (spans ended out of order): written as they are */
	assert_int_equal(x(7, 300, 400), 300);
	assert_int_equal(x(7, 350, 450), 350);
	assert_int_equal(x(7, 500, 600), 500);
	assert_int_equal(x(7, 590, 700), 590); /* even by a few ns */
	assert_int_equal(t.moved, 0);
	assert_int_equal(t.unresolved, 0);
}

/* Only NEST_TIES_DEPTH X's are kept a thread: the parent of more children may miss its tie, never moves wrongly. */
static void test_many_children(void **state)
{
	uint64_t b;

	(void)state;
	for (int i = 0; i < NEST_TIES_DEPTH - 1; i++)
		assert_int_equal(x(7, 100 + 10 * (uint64_t)i, 105 + 10 * (uint64_t)i), 100 + 10 * (uint64_t)i);
	assert_int_equal(x(7, 100, 1000), 99); /* its first child still remembered */
	/* A request's scope, its first child tied, then a loop of 40 scoped items: still found. */
	assert_int_equal(x(8, 2000, 2005), 2000);
	for (uint64_t i = 0; i < 40; i++)
		assert_int_equal(x(8, 2010 + 10 * i, 2015 + 10 * i), 2010 + 10 * i);
	assert_int_equal(x(8, 2000, 3000), 1999);
	for (int i = 0; i < 3 * NEST_TIES_DEPTH; i++)
		x(9, 100 + 10 * (uint64_t)i, 105 + 10 * (uint64_t)i);
	b = x(9, 100, 5000);
	assert_true(b == 100 || b == 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_parent_tied_with_its_child_begins_before_it, setup),
		cmocka_unit_test_setup(test_three_levels_and_later_siblings, setup),
		cmocka_unit_test_setup(test_no_room_is_counted, setup),
		cmocka_unit_test_setup(test_child_written_after_its_parent, setup),
		cmocka_unit_test_setup(test_open_span_the_same_at_every_dump, setup),
		cmocka_unit_test_setup(test_no_tie_untouched, setup),
		cmocka_unit_test_setup(test_many_children, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
