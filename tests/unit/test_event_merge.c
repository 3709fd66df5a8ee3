// SPDX-License-Identifier: MIT
/*
 * The merge's order, what every batched trace relies on: events of many
 * runs (threads' batches, each in time order) and of the heap (per-event
 * records, in any order), pushed in any interleaving, with ties in time,
 * come out behind each watermark exactly as one sort by (time, push
 * order) of everything held would hand them on; with their strings; and
 * within the byte budget, handing on early (counted) only past it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/event_merge.h"

#define RUNS 5
#define EVENTS 20000

struct ref {
	uint64_t ts, order;
	char name[24];
	bool out;
};

static struct ref pushed[EVENTS];
static size_t n_pushed, n_out;
static uint64_t out_order[EVENTS];

/* What the model would see: each event found among those pushed, by its name (unique). */
static void take(void *ctx, const struct ctrace_event *ev)
{
	unsigned long i;
	char name[24];

	(void)ctx;
	assert_true(ev->name_len < sizeof(name));
	memcpy(name, ev->name, ev->name_len);
	name[ev->name_len] = 0;
	assert_int_equal(sscanf(name, "e%lu", &i), 1);
	assert_true(i < n_pushed);
	assert_false(pushed[i].out);
	assert_int_equal(ev->ts_ns, pushed[i].ts);
	assert_int_equal(ev->args_len, 3);
	assert_memory_equal(ev->args, "{x}", 3);
	pushed[i].out = true;
	out_order[n_out++] = i;
}

static int by_time_then_push(const void *a, const void *b)
{
	const struct ref *x = *(const struct ref *const *)a, *y = *(const struct ref *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* What should have come out by now: everything at or before wm, in (time, push) order. */
static void check_released(uint64_t wm, size_t *checked)
{
	static struct ref *expect[EVENTS];
	size_t n = 0;

	for (size_t i = 0; i < n_pushed; i++)
		if (pushed[i].ts <= wm)
			expect[n++] = &pushed[i];
	qsort(expect, n, sizeof(expect[0]), by_time_then_push);
	assert_int_equal(n_out, n);
	for (size_t i = *checked; i < n; i++)
		assert_ptr_equal(&pushed[out_order[i]], expect[i]);
	*checked = n;
}

static void push(struct event_merge *m, struct merge_run *run, uint64_t ts)
{
	struct ctrace_event ev;
	struct ref *r = &pushed[n_pushed];

	memset(&ev, 0, sizeof(ev));
	r->ts = ts;
	r->order = n_pushed;
	snprintf(r->name, sizeof(r->name), "e%zu", n_pushed++);
	ev.kind = 3;
	ev.ts_ns = ts;
	ev.name = r->name;
	ev.name_len = strlen(r->name);
	ev.args = "{x}";
	ev.args_len = 3;
	if (run)
		event_merge_run_push(m, run, &ev);
	else
		event_merge_push(m, &ev);
}

static void test_runs_and_heap_in_one_order(void **state)
{
	struct event_merge m;
	struct merge_run *runs[RUNS];
	uint64_t next[RUNS], wm = 0;
	size_t checked = 0;

	(void)state;
	srand(7);
	n_pushed = n_out = 0;
	memset(pushed, 0, sizeof(pushed));
	event_merge_init(&m, 0, take, NULL);
	for (int i = 0; i < RUNS; i++) {
		runs[i] = event_merge_run(&m);
		assert_non_null(runs[i]);
		next[i] = 1000;
	}
	while (n_pushed < EVENTS) {
		int what = rand() % (RUNS + 2);

		if (what < RUNS) { /* a thread's next event: never earlier than its last, often a tie */
			next[what] += (uint64_t)(rand() % 3) * 5;
			if (next[what] <= wm) /* the watermark: no source sends what is behind it */
				next[what] = wm + 1;
			push(&m, runs[what], next[what]);
		} else if (what == RUNS) { /* a per-event record, anywhere behind the threads */
			push(&m, NULL, wm + 1 + (uint64_t)(rand() % 400));
		} else if (rand() % 8 == 0) {
			wm += (uint64_t)(rand() % 200);
			event_merge_release(&m, wm);
			check_released(wm, &checked);
		}
	}
	event_merge_release(&m, UINT64_MAX);
	check_released(UINT64_MAX, &checked);
	assert_int_equal(n_out, EVENTS);
	assert_int_equal(m.forced, 0);
	event_merge_free(&m);
}

/* Past the budget the oldest go on early, counted; what is held stays within it. */
static void test_budget_hands_on_early(void **state)
{
	struct event_merge m;
	struct merge_run *run;

	(void)state;
	n_pushed = n_out = 0;
	memset(pushed, 0, sizeof(pushed));
	event_merge_init(&m, 256 * 1024, take, NULL);
	run = event_merge_run(&m);
	for (int i = 0; i < EVENTS; i++) {
		push(&m, i % 2 ? run : NULL, 1000 + (uint64_t)i);
		assert_true(m.bytes <= 256 * 1024 + 16384);
	}
	assert_true(m.forced > 0);
	assert_true(n_out > 0);
	event_merge_release(&m, UINT64_MAX);
	assert_int_equal(n_out, EVENTS);
	/* Handed on early, still in order: every push here was later than the one before. */
	for (size_t i = 1; i < n_out; i++)
		assert_true(out_order[i] > out_order[i - 1]);
	/* So none of it is out of order in the trace (the trace's batch.out_of_order). */
	assert_int_equal(m.late, 0);
	event_merge_free(&m);
}

/*
 * An event that comes after a later one was handed on (early, or behind a
 * watermark that was wrong) is out of order in the trace: counted, once.
 */
static void test_late_event_counted(void **state)
{
	struct event_merge m;
	struct merge_run *run;

	(void)state;
	n_pushed = n_out = 0;
	memset(pushed, 0, sizeof(pushed));
	event_merge_init(&m, 0, take, NULL);
	run = event_merge_run(&m);
	push(&m, run, 100);
	push(&m, run, 200);
	event_merge_release(&m, 200);
	assert_int_equal(m.late, 0);
	push(&m, NULL, 150); /* older than what went: late */
	push(&m, NULL, 250);
	event_merge_release(&m, UINT64_MAX);
	assert_int_equal(n_out, 4);
	assert_int_equal(m.late, 1);
	assert_int_equal(m.forced, 0);
	event_merge_free(&m);
}

/* An event older than its run's last (a clock step) is held all the same, and in order. */
static void test_out_of_order_in_a_run(void **state)
{
	struct event_merge m;
	struct merge_run *run;
	size_t checked = 0;

	(void)state;
	n_pushed = n_out = 0;
	memset(pushed, 0, sizeof(pushed));
	event_merge_init(&m, 0, take, NULL);
	run = event_merge_run(&m);
	push(&m, run, 500);
	push(&m, run, 300);
	push(&m, run, 400);
	push(&m, NULL, 350);
	event_merge_release(&m, 450);
	check_released(450, &checked);
	event_merge_release(&m, UINT64_MAX);
	check_released(UINT64_MAX, &checked);
	event_merge_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_and_heap_in_one_order),
		cmocka_unit_test(test_budget_hands_on_early),
		cmocka_unit_test(test_out_of_order_in_a_run),
		cmocka_unit_test(test_late_event_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
