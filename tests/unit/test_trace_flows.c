// SPDX-License-Identifier: MIT
/*
 * test_trace_flows - the pairing and binding rules of userspace/model/trace_flows.c
 * that the integration tests cannot reach on purpose: an end claimed by the
 * innermost span, a span held until its sender's is written (and a chain
 * of them), the bound on what is held, every end counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "model/trace_flows.h"

/* What the spans wrote: their names, flow steps and released spans, as one log. */
static char out_log[4096];

static void phase(void *ctx, char ph, uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id)
{
	size_t n = strlen(out_log);

	(void)ctx;
	snprintf(out_log + n, sizeof(out_log) - n, "%c%u/%u@%llu#%llx ", ph, pid, tid,
		 (unsigned long long)ts_ns, (unsigned long long)(id - (1ull << 32)));
}

/* The model's held span here is its log text. */
static void release(void *ctx, void *held, size_t len)
{
	size_t n = strlen(out_log);

	(void)ctx;
	snprintf(out_log + n, sizeof(out_log) - n, "[%.*s] ", (int)len, (const char *)held);
}

/* A flow step per end after its X, at the X's begin, as the model emits them. */
static void phases(const struct flow_end *ends, size_t n, uint32_t tid, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		phase(NULL, ends[i].out ? 's' : 'f', 1, tid, b, ends[i].trace_id);
}

static void init(struct trace_flows *f)
{
	out_log[0] = '\0';
	trace_flows_init(f, &(struct flow_output){ release, NULL });
}

/* Writes a span of thread tid from b to e as the model does; json: held as this text. */
static void span(struct trace_flows *f, uint32_t tid, uint64_t b, uint64_t e, const char *name)
{
	size_t n;
	bool hold;
	const struct flow_end *ends = trace_flows_claim(f, 1, tid, b, &n, &hold);

	(void)e;

	if (hold) {
		/* As the model does: the X and its phase events written aside. */
		char saved[sizeof(out_log)];
		char *json;

		memcpy(saved, out_log, sizeof(out_log));
		snprintf(out_log, sizeof(out_log), "%s ", name);
		phases(ends, n, tid, b);
		json = strdup(out_log);
		memcpy(out_log, saved, sizeof(out_log));
		trace_flows_written(f, ends, n, json, strlen(json));
		return;
	}
	{
		size_t len = strlen(out_log);

		snprintf(out_log + len, sizeof(out_log) - len, "%s ", name);
	}
	phases(ends, n, tid, b);
	trace_flows_written(f, ends, n, NULL, 0);
}

static void nothing(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e)
{
	(void)ctx;
	(void)tgid;
	(void)tid;
	(void)e;
}

static void nothing_out(void *ctx, const struct flow_out *o)
{
	(void)ctx;
	(void)o;
}

static void test_innermost_span_claims(void **state)
{
	struct trace_flows f;
	struct flow_out r;

	(void)state;
	init(&f);
	assert_false(trace_flows_out(&f, 1, 10, 150, 7, &r));
	span(&f, 10, 140, 160, "inner");  /* ends first, claims it */
	span(&f, 10, 100, 200, "outer");  /* nothing left for it */
	assert_true(trace_flows_in(&f, 1, 20, 300, 7));
	span(&f, 20, 290, 310, "in");
	assert_string_equal(out_log, "inner s1/10@140#0 outer in f1/20@290#0 ");
	trace_flows_finish(&f, nothing, nothing_out, NULL);
	assert_int_equal(f.counts.sent, 1);
	assert_int_equal(f.counts.taken_in, 1);
}

/* A reply taken in and written before the caller's span: held, then right after it. */
static void test_receiver_held_until_sender(void **state)
{
	struct trace_flows f;
	struct flow_out r;

	(void)state;
	init(&f);
	trace_flows_out(&f, 1, 10, 110, 7, &r);  /* caller: span 100-400 */
	trace_flows_in(&f, 1, 20, 200, 7);       /* server: span 190-210 */
	trace_flows_out(&f, 1, 20, 205, 8, &r);  /* and it calls on: 8 */
	trace_flows_in(&f, 1, 30, 300, 8);       /* a third: span 290-310 */
	span(&f, 20, 190, 210, "server");        /* held: 7's sender not written */
	span(&f, 30, 290, 310, "third");         /* held: 8's sender (server) held */
	assert_string_equal(out_log, "");
	span(&f, 10, 100, 400, "caller");
	/* In the file: the caller, its s; then the server (f of 7, s of 8); then the third. */
	assert_string_equal(out_log, "caller s1/10@100#0 [server f1/20@190#0 s1/20@190#1 ] "
				     "[third f1/30@290#1 ] ");
	trace_flows_finish(&f, nothing, nothing_out, NULL);
	assert_int_equal(f.counts.out_of_order, 0);
}

/* What is held is bounded: past it the oldest is written at once, and counted. */
static void test_held_bytes_bounded(void **state)
{
	struct trace_flows f;
	struct flow_out r;
	size_t held = 0;
	int i;

	(void)state;
	init(&f);
	trace_flows_out(&f, 1, 10, 110, 7, &r);
	trace_flows_in(&f, 1, 20, 200, 7);
	{
		size_t n;
		bool hold;
		const struct flow_end *ends = trace_flows_claim(&f, 1, 20, 190, &n, &hold);
		char *big = malloc(FLOW_HELD_BYTES + 1);

		assert_true(hold);
		memset(big, 'x', FLOW_HELD_BYTES + 1);
		out_log[0] = '\0';
		trace_flows_written(&f, ends, n, big, FLOW_HELD_BYTES + 1);
	}
	for (i = 0; out_log[i] == '[' || out_log[i] == 'x'; i++)
		held++;
	assert_true(held > 1); /* written at once */
	assert_int_equal(f.counts.out_of_order, 1);
	out_log[0] = '\0';
	span(&f, 10, 100, 400, "caller"); /* its s, nothing left to release */
	assert_string_equal(out_log, "caller s1/10@100#0 ");
	trace_flows_finish(&f, nothing, nothing_out, NULL);
}

static int outside_n, never_n;

static void count_outside(void *ctx, uint32_t tgid, uint32_t tid, const struct flow_end *e)
{
	(void)ctx;
	(void)tgid;
	(void)tid;
	(void)e;
	outside_n++;
}

static void count_never(void *ctx, const struct flow_out *o)
{
	(void)ctx;
	assert_true(o->id == 1 || o->id == 4);
	never_n++;
}

/* At the stop: ends no span took, OUTs no IN took; a receiver held for a sender never written. */
static void test_finish_counts_and_releases(void **state)
{
	struct trace_flows f;
	struct flow_out r;

	(void)state;
	init(&f);
	trace_flows_out(&f, 1, 10, 100, 1, &r);       /* never taken in */
	trace_flows_out(&f, 1, 10, 150, 2, &r);       /* outside any span */
	trace_flows_in(&f, 1, 20, 200, 2);
	span(&f, 20, 190, 210, "receiver");           /* held for 2's sender */
	assert_false(trace_flows_in(&f, 1, 20, 220, 3));
	assert_true(trace_flows_out(&f, 1, 10, 230, 4, &r) == false);
	assert_true(trace_flows_out(&f, 1, 10, 240, 4, &r)); /* the first 4 given up */
	assert_int_equal(r.id, 4);
	assert_int_equal(r.ts_ns, 230);
	outside_n = never_n = 0;
	out_log[0] = '\0';
	trace_flows_finish(&f, count_outside, count_never, NULL);
	assert_string_equal(out_log, "[receiver f1/20@190#1 ] ");
	/*
	 * Never taken in: the first 4 (counted when sent again), 1 and the
	 * second 4 (at the stop). Outside any span: 1, 2 and the second 4 (the
	 * first 4 was given up already).
	 */
	assert_int_equal(f.counts.in_never_sent, 1);
	assert_int_equal(f.counts.never_taken_in, 3);
	assert_int_equal(never_n, 2);
	assert_int_equal(f.counts.outside_span, 3);
	assert_int_equal(outside_n, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_innermost_span_claims),
		cmocka_unit_test(test_receiver_held_until_sender),
		cmocka_unit_test(test_held_bytes_bounded),
		cmocka_unit_test(test_finish_counts_and_releases),
	};

	return cmocka_run_group_tests_name("trace_flows", tests, NULL, NULL);
}
