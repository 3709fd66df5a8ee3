// SPDX-License-Identifier: MIT
/*
 * test_flows - CTRACE_FLOW_OUT / CTRACE_FLOW_IN: tests/programs/flows traced
 * by the real tracer, in both event paths (the default, batched where the
 * kernel allows, and --no-batch). What a user relies on:
 *   - the span around each FLOW_OUT is linked to the span around its
 *     FLOW_IN, across threads and across a fork: the X of each carries the
 *     same bind_id (flow_out / flow_in: Perfetto binds it to that slice),
 *     and an "s"/"f" phase event at its ts, pid and tid, which Chrome
 *     DevTools' trace engine binds to it (its FlowsHandler, read back);
 *   - an id the program uses again once taken in is a new flow each time:
 *     trace ids are never reused (Perfetto keeps the first flow of an id);
 *   - a flow that cannot be drawn (never taken in, never sent, outside any
 *     span) is shown where it happened and counted in metadata.flows.
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

static const char *const no_batch[] = { "--no-batch", NULL };
static const char *const follow[] = { "-f", NULL };
static const char *const follow_no_batch[] = { "-f", "--no-batch", NULL };

static double flows_num(const struct trace_run *r, const char *key)
{
	cJSON *f = cJSON_GetObjectItemCaseSensitive(tr_meta(r), "flows");

	assert_non_null(f);
	return tr_num(f, key);
}

/* The path the run took is the one asked for, and the batched one really batched. */
static void check_path(const struct trace_run *r, bool per_event)
{
	const char *path = tr_str(tr_meta(r), "event_path");
	cJSON *batch = cJSON_GetObjectItemCaseSensitive(tr_meta(r), "batch");

	assert_non_null(path);
	if (per_event)
		assert_string_equal(path, "per_event");
	if (!strcmp(path, "batched"))
		assert_true(tr_num(batch, "events") > 0);
}

/* The flow phase event (ph "s" or "f") of trace id `id`, and its place in the file. */
static cJSON *phase_of(const struct trace_run *r, const char *ph, const char *id, int *index)
{
	cJSON *ev;
	int i = 0, found = -1;
	cJSON *hit = NULL;

	cJSON_ArrayForEach(ev, r->events) {
		if (!strcmp(tr_str(ev, "ph"), ph) && tr_str(ev, "id") && !strcmp(tr_str(ev, "id"), id)) {
			assert_null(hit); /* one per end */
			hit = ev;
			found = i;
		}
		i++;
	}
	if (index)
		*index = found;
	return hit;
}

/* X `x` is one end of a flow: its v2 binding and its phase event agree with it. */
static const char *check_end(const struct trace_run *r, const cJSON *x, bool out, int *index)
{
	const char *id = tr_str(x, "bind_id");
	cJSON *dir = cJSON_GetObjectItemCaseSensitive(x, out ? "flow_out" : "flow_in");
	cJSON *ph;

	assert_non_null(id);
	assert_true(cJSON_IsTrue(dir));
	assert_null(cJSON_GetObjectItemCaseSensitive(x, out ? "flow_in" : "flow_out"));
	ph = phase_of(r, out ? "s" : "f", id, index);
	assert_non_null(ph);
	assert_true(tr_num(ph, "ts") == tr_num(x, "ts"));
	assert_true(tr_num(ph, "pid") == tr_num(x, "pid"));
	assert_true(tr_num(ph, "tid") == tr_num(x, "tid"));
	assert_string_equal(tr_str(ph, "cat"), tr_str(x, "cat"));
	if (!out)
		assert_string_equal(tr_str(ph, "bp"), "e");
	return id;
}

/* DevTools' flow `i` links X `from` to X `to` (each {name, pid, tid, ts}). */
static void check_devtools_flow(cJSON *flow, const cJSON *from, const cJSON *to)
{
	const cJSON *want[2] = { from, to };

	assert_int_equal(cJSON_GetArraySize(flow), 2);
	for (int k = 0; k < 2; k++) {
		cJSON *e = cJSON_GetArrayItem(flow, k);

		assert_string_equal(tr_str(e, "name"), tr_str(want[k], "name"));
		assert_true(tr_num(e, "pid") == tr_num(want[k], "pid"));
		assert_true(tr_num(e, "tid") == tr_num(want[k], "tid"));
		assert_true(fabs(tr_num(e, "ts") - tr_num(want[k], "ts")) < 0.0015);
	}
}

static int by_ts(const void *a, const void *b)
{
	double x = tr_num(*(cJSON *const *)a, "ts"), y = tr_num(*(cJSON *const *)b, "ts");

	return x < y ? -1 : x > y;
}

#define REQUESTS 5

static void handoff(const char *const *tracer_args, bool per_event)
{
	const char *const prog_args[] = { "handoff", "5", NULL };
	struct trace_run r;
	cJSON *accept[REQUESTS + 1], *handle[REQUESTS + 1], *work, *sum, *flows;
	const char *ids[REQUESTS];

	tr_run_ok(&r, "flows", prog_args, tracer_args);
	check_path(&r, per_event);
	assert_int_equal(tr_find_all(&r, "X", "accept", accept, REQUESTS + 1), REQUESTS);
	assert_int_equal(tr_find_all(&r, "X", "handle", handle, REQUESTS + 1), REQUESTS);
	work = tr_find(&r, "X", "work");
	assert_non_null(work);
	qsort(accept, REQUESTS, sizeof(accept[0]), by_ts);
	qsort(handle, REQUESTS, sizeof(handle[0]), by_ts);
	for (int i = 0; i < REQUESTS; i++) {
		int s_at, f_at;

		/* Two threads: the acceptor's spans, the worker's scopes inside its "work". */
		assert_true(tr_num(accept[i], "tid") != tr_num(handle[i], "tid"));
		assert_true(tr_num(handle[i], "tid") == tr_num(work, "tid"));
		tr_assert_inside(handle[i], work);
		ids[i] = check_end(&r, accept[i], true, &s_at);
		assert_string_equal(check_end(&r, handle[i], false, &f_at), ids[i]);
		/*
		 * DevTools reads flow phase events in file order: the start first,
		 * also where the sending span ends (is written) after the other.
		 */
		assert_true(s_at < f_at);
		if (i % 2)
			assert_true(tr_num(accept[i], "ts") + tr_num(accept[i], "dur") >
				    tr_num(handle[i], "ts") + tr_num(handle[i], "dur"));
		/* The program's id 7 every time; the trace's, never twice. */
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ids[j], ids[i]);
	}
	assert_true(flows_num(&r, "sent") == REQUESTS);
	assert_true(flows_num(&r, "taken_in") == REQUESTS);
	assert_true(flows_num(&r, "never_taken_in") == 0);
	assert_true(flows_num(&r, "in_never_sent") == 0);
	assert_true(flows_num(&r, "outside_span") == 0);
	assert_true(flows_num(&r, "evicted") == 0);
	assert_true(flows_num(&r, "out_of_order") == 0);

	sum = tr_checker_summary(r.trace_path);
	flows = cJSON_GetObjectItemCaseSensitive(sum, "flows");
	assert_int_equal(cJSON_GetArraySize(flows), REQUESTS);
	for (int i = 0; i < REQUESTS; i++) {
		cJSON *flow = NULL, *f;

		/* The engine's flows, matched to ours by their start. */
		cJSON_ArrayForEach(f, flows)
			if (fabs(tr_num(cJSON_GetArrayItem(f, 0), "ts") - tr_num(accept[i], "ts")) < 0.0015)
				flow = f;
		assert_non_null(flow);
		check_devtools_flow(flow, accept[i], handle[i]);
	}
	cJSON_Delete(sum);
	tr_free(&r);
}

static void test_handoff_between_threads(void **state)
{
	(void)state;
	handoff(NULL, false);
}

static void test_handoff_between_threads_per_event(void **state)
{
	(void)state;
	handoff(no_batch, true);
}

static void fork_message(const char *const *tracer_args, bool per_event)
{
	const char *const prog_args[] = { "fork", NULL };
	struct trace_run r;
	cJSON *send, *receive, *sum, *flows;
	const char *id;
	int s_at, f_at;

	tr_run_ok(&r, "flows", prog_args, tracer_args);
	check_path(&r, per_event);
	send = tr_find(&r, "X", "send");
	receive = tr_find(&r, "X", "receive");
	assert_non_null(send);
	assert_non_null(receive);
	assert_true(tr_num(send, "pid") == (double)r.pid);
	assert_true(tr_num(receive, "pid") != (double)r.pid); /* the child */
	id = check_end(&r, send, true, &s_at);
	assert_string_equal(check_end(&r, receive, false, &f_at), id);
	assert_true(s_at < f_at);
	assert_true(flows_num(&r, "sent") == 1);
	assert_true(flows_num(&r, "taken_in") == 1);

	sum = tr_checker_summary(r.trace_path);
	flows = cJSON_GetObjectItemCaseSensitive(sum, "flows");
	assert_int_equal(cJSON_GetArraySize(flows), 1);
	check_devtools_flow(cJSON_GetArrayItem(flows, 0), send, receive);
	cJSON_Delete(sum);
	tr_free(&r);
}

static void test_message_to_forked_child(void **state)
{
	(void)state;
	fork_message(follow, false);
}

static void test_message_to_forked_child_per_event(void **state)
{
	(void)state;
	fork_message(follow_no_batch, true);
}

/* The notice `name` about program id `id`, on the main thread; NULL if none. */
static cJSON *notice(const struct trace_run *r, const char *name, double id)
{
	cJSON *found[8];
	size_t n = tr_find_all(r, "I", name, found, 8);

	for (size_t i = 0; i < n; i++) {
		cJSON *a = tr_arg(found[i], "id");

		if (a && cJSON_IsNumber(a) && a->valuedouble == id) {
			assert_true(tr_num(found[i], "tid") == (double)r->main_tid);
			assert_non_null(tr_arg(found[i], "why"));
			return found[i];
		}
	}
	return NULL;
}

static void unmatched(const char *const *tracer_args, bool per_event)
{
	const char *const prog_args[] = { "unmatched", NULL };
	struct trace_run r;
	cJSON *lonely_out, *late_in, *twice_out, *twice_in, *lonely_in, *sum, *flows;

	tr_run_ok(&r, "flows", prog_args, tracer_args);
	check_path(&r, per_event);
	/* Counted: OUTs 1, 3, 4 and 4; INs 3 and 4 taken in; 2 never sent. */
	assert_true(flows_num(&r, "sent") == 4);
	assert_true(flows_num(&r, "taken_in") == 2);
	assert_true(flows_num(&r, "never_taken_in") == 2); /* 1, and the first 4 */
	assert_true(flows_num(&r, "in_never_sent") == 1);  /* 2 */
	assert_true(flows_num(&r, "outside_span") == 1);   /* the OUT of 3 */
	/* Shown, each where it happened. */
	assert_non_null(notice(&r, "ctrace: flow never taken in", 1));
	assert_non_null(notice(&r, "ctrace: flow never taken in", 4));
	assert_non_null(notice(&r, "ctrace: flow in without out", 2));
	assert_non_null(notice(&r, "ctrace: flow outside any span", 3));
	assert_int_equal(tr_count(&r, "I"), 4);

	/* What can be bound is: a start with no end, an end with no start, a flow. */
	lonely_out = tr_find(&r, "X", "lonely-out");
	lonely_in = tr_find(&r, "X", "lonely-in");
	late_in = tr_find(&r, "X", "late-in");
	twice_out = tr_find(&r, "X", "twice-out");
	twice_in = tr_find(&r, "X", "twice-in");
	assert_non_null(lonely_out);
	assert_non_null(lonely_in);
	assert_non_null(late_in);
	assert_non_null(twice_out);
	assert_non_null(twice_in);
	assert_null(tr_str(lonely_in, "bind_id"));
	check_end(&r, lonely_out, true, NULL);
	assert_string_equal(check_end(&r, twice_out, true, NULL), check_end(&r, twice_in, false, NULL));
	sum = tr_checker_summary(r.trace_path);
	flows = cJSON_GetObjectItemCaseSensitive(sum, "flows");
	assert_int_equal(cJSON_GetArraySize(flows), 1);
	check_devtools_flow(cJSON_GetArrayItem(flows, 0), twice_out, twice_in);
	cJSON_Delete(sum);
	tr_free(&r);
}

static void test_unmatched_flows_counted(void **state)
{
	(void)state;
	unmatched(NULL, false);
}

static void test_unmatched_flows_counted_per_event(void **state)
{
	(void)state;
	unmatched(no_batch, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handoff_between_threads),
		cmocka_unit_test(test_handoff_between_threads_per_event),
		cmocka_unit_test(test_message_to_forked_child),
		cmocka_unit_test(test_message_to_forked_child_per_event),
		cmocka_unit_test(test_unmatched_flows_counted),
		cmocka_unit_test(test_unmatched_flows_counted_per_event),
	};

	return cmocka_run_group_tests_name("flows", tests, NULL, NULL);
}
