// SPDX-License-Identifier: MIT
/*
 * test_scope_nesting - a CTRACE_SCOPE nested in another must lie within it
 * in the trace (ts and ts+dur), or Perfetto and DevTools draw the child
 * beside its parent instead of under it. tests/programs/nested_scopes nests
 * them as tightly as code can (a child starting and ending right at its
 * parent's edges, eight deep, and a server-like request loop); traced by the
 * real tracer, with int3 and with --fast, every parent/child pair is
 * checked, and every scope must be there exactly once.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

/* As in tests/programs/nested_scopes.c. */
#define REQUESTS 200
#define DEPTH 8
#define ITEMS 3
#define MAX_EVENTS (REQUESTS * (2 * DEPTH + 3 + 2 * ITEMS) + 16)

/*
 * The format has nanosecond resolution (3 decimals of a microsecond); the
 * sums below are done in doubles, so allow less than half a nanosecond.
 */
#define SLACK_US 0.0004

struct slot {
	const cJSON *ev;
	int seen;
};

struct scopes {
	struct slot level[REQUESTS][DEPTH], head[REQUESTS][DEPTH];
	struct slot request[REQUESTS], parse[REQUESTS], respond[REQUESTS];
	struct slot item[REQUESTS][ITEMS], lookup[REQUESTS][ITEMS];
	int unknown;
};

static int arg_int(const cJSON *ev, const char *key)
{
	const cJSON *a = tr_arg(ev, key);

	return cJSON_IsNumber(a) ? a->valueint : -1;
}

static void put(struct slot *s, const cJSON *ev)
{
	s->ev = ev;
	s->seen++;
}

static void sort_event(struct scopes *sc, const cJSON *ev)
{
	const char *name = tr_str(ev, "name");
	int req = arg_int(ev, "req"), depth = arg_int(ev, "depth"), item = arg_int(ev, "item");

	if (!name || req < 0 || req >= REQUESTS) {
		sc->unknown++;
	} else if (!strcmp(name, "level") && depth >= 0 && depth < DEPTH) {
		put(&sc->level[req][depth], ev);
	} else if (!strcmp(name, "head") && depth >= 0 && depth < DEPTH) {
		put(&sc->head[req][depth], ev);
	} else if (!strcmp(name, "request")) {
		put(&sc->request[req], ev);
	} else if (!strcmp(name, "parse")) {
		put(&sc->parse[req], ev);
	} else if (!strcmp(name, "respond")) {
		put(&sc->respond[req], ev);
	} else if (!strcmp(name, "item") && item >= 0 && item < ITEMS) {
		put(&sc->item[req][item], ev);
	} else if (!strcmp(name, "lookup") && item >= 0 && item < ITEMS) {
		put(&sc->lookup[req][item], ev);
	} else {
		sc->unknown++;
	}
}

static int missing(const struct slot *s, size_t n, const char *what)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].seen != 1) {
			if (!bad)
				print_message("%s #%zu seen %d times\n", what, i, s[i].seen);
			bad++;
		}
	return bad;
}

struct nesting {
	int pairs, outside;
};

static void check_inside(struct nesting *n, const struct slot *child, const struct slot *parent)
{
	double cs = tr_num(child->ev, "ts"), ce = cs + tr_num(child->ev, "dur");
	double ps = tr_num(parent->ev, "ts"), pe = ps + tr_num(parent->ev, "dur");

	n->pairs++;
	if (cs >= ps - SLACK_US && ce <= pe + SLACK_US)
		return;
	if (n->outside++ < 5)
		print_message("req %d: %s [%.3f, %.3f] not within %s [%.3f, %.3f] (start %+.3f us, end %+.3f us)\n",
			      arg_int(child->ev, "req"), tr_str(child->ev, "name"), cs, ce,
			      tr_str(parent->ev, "name"), ps, pe, cs - ps, pe - ce);
}

struct x_span {
	long long begin, end; /* ns */
	size_t place;         /* in the file */
};

static int by_begin_then_place(const void *a, const void *b)
{
	const struct x_span *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/*
 * The X's of one thread as a viewer reads them: in order of their begin,
 * ties in the file's order (chrome://tracing says so; Perfetto's sort
 * keeps the file's order), each slice opened inside the ones still open.
 * Returns how many end after the slice they were opened in (drawn
 * overlapping it, or on a track of their own). Within-ness alone
 * (check_inside) lets a child that begins at its parent's very nanosecond
 * pass, though its X is written first: that is read as the parent inside
 * the child.
 */
static int improperly_nested(cJSON *const *xs, size_t count)
{
	struct x_span *v = calloc(count, sizeof(*v));
	long long *open = calloc(count, sizeof(*open));
	size_t n_open = 0;
	int bad = 0;

	assert_non_null(v);
	assert_non_null(open);
	for (size_t i = 0; i < count; i++) {
		v[i].begin = llround(tr_num(xs[i], "ts") * 1000);
		v[i].end = v[i].begin + llround(tr_num(xs[i], "dur") * 1000);
		v[i].place = i;
	}
	qsort(v, count, sizeof(*v), by_begin_then_place);
	for (size_t i = 0; i < count; i++) {
		while (n_open && open[n_open - 1] <= v[i].begin)
			n_open--;
		if (n_open && v[i].end > open[n_open - 1] && bad++ < 5)
			print_message("%s at %lld ns (%lld ns long) read as begun inside a slice that ends %lld ns before it\n",
				      tr_str(xs[v[i].place], "name"), v[i].begin, v[i].end - v[i].begin,
				      v[i].end - open[n_open - 1]);
		open[n_open++] = v[i].end;
	}
	free(v);
	free(open);
	return bad;
}

static void nested_exactly(const char *const *tracer_args)
{
	static cJSON *xs[MAX_EVENTS];
	struct scopes *sc = calloc(1, sizeof(*sc));
	struct nesting n = { 0, 0 };
	struct trace_run r;
	size_t count;
	int bad = 0;

	tr_require_root();
	assert_non_null(sc);
	tr_run_ok(&r, "nested_scopes", NULL, tracer_args);

	count = tr_find_all(&r, "X", NULL, xs, MAX_EVENTS);
	for (size_t i = 0; i < count; i++) {
		if (tr_num(xs[i], "tid") != (double)r.main_tid)
			fail_msg("scope %s on tid %.0f, not the main thread", tr_str(xs[i], "name"),
				 tr_num(xs[i], "tid"));
		sort_event(sc, xs[i]);
	}
	assert_int_equal(sc->unknown, 0);
	bad += missing(&sc->level[0][0], REQUESTS * DEPTH, "level");
	bad += missing(&sc->head[0][0], REQUESTS * DEPTH, "head");
	bad += missing(sc->request, REQUESTS, "request");
	bad += missing(sc->parse, REQUESTS, "parse");
	bad += missing(sc->respond, REQUESTS, "respond");
	bad += missing(&sc->item[0][0], REQUESTS * ITEMS, "item");
	bad += missing(&sc->lookup[0][0], REQUESTS * ITEMS, "lookup");
	if (bad)
		fail_msg("%d scopes missing or repeated (of %zu X events)", bad, count);

	for (int q = 0; q < REQUESTS; q++) {
		for (int d = 0; d < DEPTH; d++) {
			check_inside(&n, &sc->head[q][d], &sc->level[q][d]);
			if (d + 1 < DEPTH)
				check_inside(&n, &sc->level[q][d + 1], &sc->head[q][d]);
		}
		check_inside(&n, &sc->parse[q], &sc->request[q]);
		check_inside(&n, &sc->respond[q], &sc->request[q]);
		for (int i = 0; i < ITEMS; i++) {
			check_inside(&n, &sc->item[q][i], &sc->request[q]);
			check_inside(&n, &sc->lookup[q][i], &sc->item[q][i]);
		}
	}
	if (n.outside)
		fail_msg("%d of %d child scopes not within their parent (%.0f%%)", n.outside, n.pairs,
			 100.0 * n.outside / n.pairs);
	bad = improperly_nested(xs, count);
	if (bad)
		fail_msg("%d of %zu scopes improperly nested as viewers order them (begin, then place in the file)",
			 bad, count);
	free(sc);
	tr_free(&r);
}

static void test_nested_scopes_int3(void **state)
{
	(void)state;
	nested_exactly(NULL);
}

static void test_nested_scopes_fast(void **state)
{
	static const char *const fast[] = { "--fast", NULL };

	(void)state;
	/* The nop5 path itself: this program never forks (see trace_options.c). */
	setenv("CTRACE_FAST_DESPITE_FORK", "1", 1);
	nested_exactly(fast);
	unsetenv("CTRACE_FAST_DESPITE_FORK");
}

/*
 * A program built with a header before 0.2 (probe "scope", ticks only) is
 * traced as before: its scopes are there, as long as they lasted, nested
 * (here with milliseconds between edges: that form is only as exact as the
 * probe's entry jitter).
 */
static void test_old_header_scopes_still_traced(void **state)
{
	struct trace_run r;
	cJSON *outer, *inner[4];
	size_t n;

	(void)state;
	tr_run_ok(&r, "old_scope", NULL, NULL);
	outer = tr_find(&r, "X", "old outer");
	assert_non_null(outer);
	n = tr_find_all(&r, "X", "old inner", inner, 4);
	assert_int_equal(n, 2);
	assert_true(tr_num(outer, "dur") >= 7000.0);
	for (size_t i = 0; i < n; i++) {
		double dur = tr_num(inner[i], "dur");

		assert_true(dur >= 2000.0 && dur < 2000.0 * 20);
		tr_assert_inside(inner[i], outer);
	}
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_scopes_int3),
		cmocka_unit_test(test_nested_scopes_fast),
		cmocka_unit_test(test_old_header_scopes_still_traced),
	};

	return cmocka_run_group_tests_name("scope_nesting", tests, NULL, NULL);
}
