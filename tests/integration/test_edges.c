// SPDX-License-Identifier: MIT
/*
 * test_edges - the two edges of a trace, with the real tracer, real BPF and
 * tests/programs/span_storm (spans back to back on three threads while the
 * tracer comes and goes, and one span begun before it came), traced with
 * -p PID -d 1:
 *
 *   - the stop: nothing stamped after it is in the trace, and the detach
 *     (whose probes go one kind after the other) makes no pairing
 *     diagnostics ("span end without begin", "begun again");
 *   - the attach: the END of a span begun before the tracer came is no
 *     user mistake: counted in metadata, not shown; in launch mode nothing
 *     began untraced, and such an END is the mistake it is, shown;
 *   - -d counts from when tracing started (every probe attached), not from
 *     the command's start.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"
#include "group_run.h"

static struct trace_run run;

/* span_storm for 3 s, traced with -d 1. */
static int storm_run(struct trace_run *r)
{
	const char *const prog_args[] = { "3000", NULL };
	const char *const tracer_args[] = { "-d", "1", NULL };

	return tr_run(r, "span_storm", prog_args, tracer_args);
}

static int group_setup(void **state)
{
	(void)state;
	return tr_group_setup(&run, storm_run, "tracing span_storm");
}

static void need_run(void)
{
	tr_group_need();
	assert_int_equal(run.prog_exit, 0);
}

static double stop_us(void)
{
	return tr_meta_num(&run, "trace_stop_monotonic_ns") / 1000.0;
}

/* Every event ends by the stop; the stop made no diagnostics. */
static void test_nothing_after_the_stop(void **state)
{
	double stop;
	size_t outers = 0;
	cJSON *ev;

	(void)state;
	need_run();
	/* A lost BEGIN would make a diagnostic of its own (drops are shown anyway). */
	assert_true(tr_meta_num(&run, "dropped_events") == 0);
	stop = stop_us();
	cJSON_ArrayForEach(ev, run.events) {
		cJSON *ts = cJSON_GetObjectItem(ev, "ts");
		const char *name = tr_str(ev, "name") ? tr_str(ev, "name") : "";
		const char *why = tr_str(cJSON_GetObjectItem(ev, "args"), "unfinished_reason");
		double end;

		if (!cJSON_IsNumber(ts))
			continue; /* metadata events */
		end = ts->valuedouble + (cJSON_IsNumber(cJSON_GetObjectItem(ev, "dur")) ?
						 tr_num(ev, "dur") : 0);
		if (end > stop + 0.001)
			fail_msg("\"%s\" %s ends %.3f ms after the stop", name, tr_str(ev, "ph"),
				 (end - stop) / 1000);
		if (!strcmp(name, "ctrace: span end without begin"))
			fail_msg("a \"span end without begin\" at %.3f ms before the stop",
				 (stop - ts->valuedouble) / 1000);
		if (why && strstr(why, "begun again"))
			fail_msg("\"%s\" was begun again, %.3f ms before the stop", name,
				 (stop - ts->valuedouble) / 1000);
		outers += !strcmp(name, "outer");
	}
	if (outers < 100)
		fail_msg("only %zu spans \"outer\": the storm did not run", outers);
	assert_true(tr_meta_num(&run, "unmatched_span_ends") == 0);
}

/* The END of "before-tracer", begun untraced: counted, not shown. */
static void test_span_begun_before_tracing(void **state)
{
	(void)state;
	need_run();
	assert_non_null(tr_find(&run, "I", "armed"));
	assert_null(tr_find(&run, "I", "ctrace: span end without begin"));
	assert_null(tr_find(&run, "X", "before-tracer"));
	if (tr_meta_num(&run, "spans_begun_before_tracing") < 1)
		fail_msg("metadata.spans_begun_before_tracing is %.0f, not at least 1",
			 tr_meta_num(&run, "spans_begun_before_tracing"));
}

/* -d 1: one second of tracing from the moment the probes rose. */
static void test_duration_counts_from_attach(void **state)
{
	cJSON *armed;
	double traced;

	(void)state;
	need_run();
	armed = tr_find(&run, "I", "armed");
	assert_non_null(armed);
	traced = (stop_us() - tr_num(armed, "ts")) / 1e6;
	print_message("      -d 1 traced %.3f s after the probes rose\n", traced);
	/* The probes rise at the end of the attach; the program sees it a moment later. */
	if (traced < 0.99 || traced > 1.2)
		fail_msg("-d 1 traced %.3f s after the probes rose, not 1 s", traced);
	assert_string_equal(tr_str(tr_meta(&run), "stop_reason"), "duration elapsed");
}

/*
 * Launch mode: "before-tracer" is traced (a plain X), and the END of a span
 * never begun can only be a mistake: shown and counted as one.
 */
static void test_launched_mistake_shown(void **state)
{
	struct trace_run lr;
	char prog[300];
	cJSON *m;

	(void)state;
	tr_require_root();
	if (tr_init(&lr) < 0)
		fail_msg("%s", lr.error);
	{
		const char *const args[] = { "--", tr_program_path("span_storm", prog, sizeof(prog)),
					     "100", NULL };

		am_start_tracer(&lr, args);
	}
	am_finish(&lr, TR_TIMEOUT_MS);
	assert_int_equal(lr.tracer_exit, 0);
	assert_non_null(tr_find(&lr, "X", "before-tracer"));
	assert_non_null(tr_find(&lr, "I", "ctrace: span end without begin"));
	m = tr_meta(&lr);
	assert_true(tr_num(m, "unmatched_span_ends") == 1);
	assert_true(tr_num(m, "spans_begun_before_tracing") == 0);
	tr_free(&lr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_after_the_stop),
		cmocka_unit_test(test_span_begun_before_tracing),
		cmocka_unit_test(test_duration_counts_from_attach),
		cmocka_unit_test(test_launched_mistake_shown),
	};

	return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
}
