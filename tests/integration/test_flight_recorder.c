// SPDX-License-Identifier: MIT
/*
 * test_flight_recorder - --ring SIZE under the real tracer, on
 * tests/programs/ring_feed (instants "seq" numbered 0, 1, 2, ... every
 * 100 us inside one span "long") and tests/programs/flood. Each dump is
 * read back event by event; what a user relies on:
 *   - a dump (SIGUSR1, CTRACE_TRIGGER, the end) is a file of its own,
 *     strict JSON that Chrome DevTools' engine loads, naming its process
 *     and thread however long ago the names were given;
 *   - it holds the most recent events, contiguous up to the dump, and no
 *     more than SIZE bytes of them;
 *   - two dumps in a row are disjoint and nothing is lost between them but
 *     what the ring overwrote: exactly metadata.flight_recorder's
 *     events_overwritten;
 *   - a span open at a dump is unfinished in it and whole in the next;
 *   - a trigger fired by the program dumps what led to it;
 *   - the tracer's memory is bounded by SIZE under a flood.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <cmocka.h>
#include "json_strict.h"
#include "trace_run.h"

#define RING "256K"
#define RING_BYTES (256 * 1024)

/* One dump read back: the document, and its "seq" numbers (contiguous: checked). */
struct dump {
	char path[400];
	char *text;
	size_t len;
	cJSON *doc, *events, *fr;
	double first, last; /* the first and last args.n of "seq" */
	double count;       /* "seq" events */
	double last_ts;     /* of the last "seq" */
};

/* The fewest "seq" a dump must hold (the first trigger of a storm comes right away). */
static double min_seq = 100;

static void dump_free(struct dump *d)
{
	cJSON_Delete(d->doc);
	free(d->text);
	memset(d, 0, sizeof(*d));
}

static double fr_num(const struct dump *d, const char *key)
{
	return tr_num(d->fr, key);
}

/* Reads dump n of run r (the tracer wrote DIR/trace-N.json for -o DIR/trace.json). */
static void load_dump(const struct trace_run *r, unsigned n, struct dump *d)
{
	char why[256];
	const char *end = NULL;
	const cJSON *ev;

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s/trace-%u.json", r->dir, n);
	d->text = tr_read_file(d->path, &d->len);
	if (!d->text)
		fail_msg("no dump %s; tracer stderr: %s", d->path, r->tracer_stderr);
	if (!json_strict_check(d->text, d->len, why, sizeof(why)))
		fail_msg("dump %s is not valid JSON: %s", d->path, why);
	d->doc = cJSON_ParseWithOpts(d->text, &end, 1);
	assert_non_null(d->doc);
	d->events = cJSON_GetObjectItemCaseSensitive(d->doc, "traceEvents");
	assert_true(cJSON_IsArray(d->events));
	d->fr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d->doc, "metadata"),
						 "flight_recorder");
	if (!cJSON_IsObject(d->fr))
		fail_msg("dump %s has no metadata.flight_recorder", d->path);
	assert_true(fr_num(d, "dump") == n);
	assert_true(fr_num(d, "ring_bytes") == RING_BYTES);
	/* The same context header as a normal trace. */
	assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(d->doc, "context")));
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(
				   cJSON_GetObjectItemCaseSensitive(d->doc, "context"), "target"),
			   "pid") == r->pid);
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(d->doc, "metadata"), "events_written") ==
		    cJSON_GetArraySize(d->events));
	d->first = d->last = -1;
	cJSON_ArrayForEach(ev, d->events) {
		const cJSON *nv = tr_arg(ev, "n");
		double n_seq;

		if (strcmp(tr_str(ev, "ph"), "I") || strcmp(tr_str(ev, "name"), "seq"))
			continue;
		if (!cJSON_IsNumber(nv))
			fail_msg("%s: a seq without args.n", d->path);
		n_seq = nv->valuedouble;
		if (d->first < 0)
			d->first = n_seq;
		else if (n_seq != d->last + 1)
			fail_msg("%s: seq %g follows %g: a dump keeps a run of the latest events, not pieces",
				 d->path, n_seq, d->last);
		d->last = n_seq;
		d->last_ts = tr_num(ev, "ts");
		d->count++;
	}
	if (d->count < min_seq)
		fail_msg("%s: %g seq events", d->path, d->count);
}

/* The process and the thread of the program are named in the dump (M events). */
static void assert_named(const struct trace_run *r, const struct dump *d)
{
	bool process = false, thread = false;
	const cJSON *ev;

	cJSON_ArrayForEach(ev, d->events) {
		if (strcmp(tr_str(ev, "ph"), "M") || tr_num(ev, "pid") != r->pid)
			continue;
		process |= !strcmp(tr_str(ev, "name"), "process_name") &&
			   !strcmp(tr_str(cJSON_GetObjectItem(ev, "args"), "name"), "ring_feed");
		thread |= !strcmp(tr_str(ev, "name"), "thread_name") && tr_num(ev, "tid") == r->main_tid;
	}
	if (!process || !thread)
		fail_msg("%s does not name its process (%d) and thread (%d)", d->path, process, thread);
}

/* The span "long" of the dump: one X. */
static const cJSON *long_span(const struct dump *d)
{
	const cJSON *ev, *found = NULL;

	cJSON_ArrayForEach(ev, d->events) {
		if (!strcmp(tr_str(ev, "ph"), "X") && !strcmp(tr_str(ev, "name"), "long")) {
			if (found)
				fail_msg("%s: span long written twice", d->path);
			found = ev;
		}
	}
	if (!found)
		fail_msg("%s: no span long", d->path);
	return found;
}

/* Waits until the tracer's stderr has `s`: 0, or -1 after timeout_ms. */
static int wait_stderr(const struct trace_run *r, const char *s, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		char *err = tr_read_file(r->tracer.err_path, NULL);
		bool found = err && strstr(err, s);

		free(err);
		if (found)
			return 0;
		usleep(10000);
	}
	return -1;
}

static void start(struct trace_run *r, const char *const *prog_args,
		  const char *const *tracer_args)
{
	tr_require_root();
	if (tr_init(r) < 0 || tr_start_program(r, "ring_feed", prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_tracer(r, tracer_args) < 0 ||
	    tr_wait_line(r, "armed", 10000) < 0)
		fail_msg("%s", r->error);
}

static void finish(struct trace_run *r)
{
	if (tr_wait(r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r->error);
	if (r->tracer_exit != 0 || r->prog_exit != 0)
		fail_msg("tracer exited %d (%s), ring_feed %d", r->tracer_exit, r->tracer_stderr,
			 r->prog_exit);
}

static void sigusr1(struct trace_run *r, unsigned n)
{
	char line[64];

	snprintf(line, sizeof(line), "trace-%u.json (SIGUSR1)", n);
	assert_int_equal(kill(r->tracer.pid, SIGUSR1), 0);
	if (wait_stderr(r, line, 10000) < 0)
		fail_msg("no dump %u said after SIGUSR1", n);
}

/* Chrome DevTools' engine loads the dump, and keeps the program's instants. */
static void assert_devtools_loads(const struct dump *d)
{
	cJSON *summary = tr_checker_summary(d->path);
	cJSON *instants = cJSON_GetObjectItemCaseSensitive(summary, "instants");

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(summary, "ok")))
		fail_msg("DevTools' engine did not load %s", d->path);
	if (cJSON_GetArraySize(instants) < d->count)
		fail_msg("DevTools' engine kept %d instants of %s, which has %g seq",
			 cJSON_GetArraySize(instants), d->path, d->count);
	cJSON_Delete(summary);
}

/*
 * Two SIGUSR1 then the end: three dumps, each the latest events, disjoint,
 * the gaps between them exactly what the ring overwrote.
 */
static void test_sigusr1_dumps(void **state)
{
	const char *const prog_args[] = { "3", NULL };
	const char *const tracer_args[] = { "--ring", RING, NULL };
	struct trace_run r;
	struct dump d[3];
	struct stat st;

	(void)state;
	start(&r, prog_args, tracer_args);
	usleep(1000000);
	sigusr1(&r, 1);
	usleep(700000);
	sigusr1(&r, 2);
	finish(&r);
	for (unsigned i = 0; i < 3; i++) {
		load_dump(&r, i + 1, &d[i]);
		assert_named(&r, &d[i]);
		assert_string_equal(tr_str(d[i].fr, "reason"), i < 2 ? "SIGUSR1" : "end");
		/* No more than SIZE bytes of events (the frame and names aside). */
		assert_int_equal(stat(d[i].path, &st), 0);
		if (st.st_size > RING_BYTES + 16384)
			fail_msg("%s is %lld bytes for --ring %s", d[i].path, (long long)st.st_size, RING);
		print_message("dump %u: seq %g..%g, %g overwritten before it\n", i + 1, d[i].first,
			      d[i].last, fr_num(&d[i], "events_overwritten"));
	}
	/* The ring was full (1 s of 10 k/s in 256 KiB): the oldest went, counted to the event. */
	assert_true(fr_num(&d[0], "events_overwritten") > 0);
	assert_true(d[0].first == fr_num(&d[0], "events_overwritten"));
	for (int i = 1; i < 3; i++)
		if (d[i].first != d[i - 1].last + 1 + fr_num(&d[i], "events_overwritten"))
			fail_msg("dump %d starts at seq %g, dump %d ended at %g: %g missing, %g counted overwritten",
				 i + 1, d[i].first, i, d[i - 1].last, d[i].first - d[i - 1].last - 1,
				 fr_num(&d[i], "events_overwritten"));
	assert_true(fr_num(&d[2], "events_overwritten_total") ==
		    fr_num(&d[0], "events_overwritten") + fr_num(&d[1], "events_overwritten") +
			    fr_num(&d[2], "events_overwritten"));
	/* The most recent: the last seq of a SIGUSR1 dump is within 250 ms of the dump. */
	for (int i = 0; i < 2; i++) {
		double at_us = tr_num(cJSON_GetObjectItem(d[i].doc, "metadata"), "trace_stop_monotonic_ns") / 1000;

		if (!(at_us - d[i].last_ts < 250000 && at_us >= d[i].last_ts))
			fail_msg("dump %d at %.0f us, its last seq at %.0f us", i + 1, at_us, d[i].last_ts);
	}
	/* The whole run's last seq is in the last dump. */
	if (!strstr(r.prog_stdout, "done last=") ||
	    atof(strstr(r.prog_stdout, "done last=") + 10) != d[2].last)
		fail_msg("ring_feed said %s; the last dump ends at seq %g", r.prog_stdout, d[2].last);
	/* Span long: unfinished in dumps 1 and 2, whole in 3, begun at the same ts. */
	for (int i = 0; i < 3; i++) {
		const cJSON *x = long_span(&d[i]);

		assert_true(tr_num(x, "ts") == tr_num(long_span(&d[0]), "ts"));
		assert_int_equal(cJSON_IsTrue(tr_arg(x, "unfinished")), i < 2);
		assert_true(fr_num(&d[i], "spans_open_at_dump") == (i < 2));
	}
	assert_true(tr_num(long_span(&d[2]), "dur") >= 2.9e6);
	/* `ctrace-bpf report` of a dump says what its ring overwrote. */
	{
		const char *const report_args[] = { d[0].path, NULL };
		struct tr_cmd c = { 0 };
		char want[128];

		snprintf(want, sizeof(want), ", %.0f events overwritten in the flight recorder's ring (--ring)\n",
			 fr_num(&d[0], "events_overwritten"));
		if (tr_run_tracer(&c, NULL, "report", report_args, 10000) < 0 || c.exit != 0 ||
		    !strstr(c.out, want))
			fail_msg("report %s: exit %d, no \"%s\" in: %s", d[0].path, c.exit, want, c.out);
		tr_cmd_free(&c);
	}
	for (int i = 0; i < 3; i++) {
		assert_devtools_loads(&d[i]);
		dump_free(&d[i]);
	}
	tr_free(&r);
}

/* CTRACE_TRIGGER("boom") after seq 5000: a dump of what led to it, then the end's. */
static void trigger_dump(const char *extra)
{
	const char *const prog_args[] = { "2", "5000", NULL };
	const char *const tracer_args[] = { "--ring", RING, extra, NULL };
	const cJSON *ev, *boom = NULL;
	struct trace_run r;
	struct dump d[2];
	char path[400];

	start(&r, prog_args, tracer_args);
	finish(&r);
	if (!strstr(r.prog_stdout, "triggered 5000"))
		fail_msg("ring_feed: %s", r.prog_stdout);
	load_dump(&r, 1, &d[0]);
	load_dump(&r, 2, &d[1]);
	snprintf(path, sizeof(path), "%s/trace-3.json", r.dir);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_string_equal(tr_str(d[0].fr, "reason"), "CTRACE_TRIGGER");
	assert_string_equal(tr_str(d[0].fr, "trigger"), "boom");
	assert_true(fr_num(&d[0], "triggers") == 1);
	assert_string_equal(tr_str(d[1].fr, "reason"), "end");
	assert_named(&r, &d[0]);
	cJSON_ArrayForEach(ev, d[0].events)
		if (!strcmp(tr_str(ev, "name"), "boom"))
			boom = ev;
	if (!boom)
		fail_msg("the trigger's instant is not in its dump");
	assert_string_equal(tr_str(boom, "s"), "p");
	assert_true(cJSON_IsTrue(tr_arg(boom, "ctrace_trigger")));
	/* What led here: the events up to the trigger, as far back as the ring held. */
	print_message("trigger dump: seq %g..%g\n", d[0].first, d[0].last);
	assert_true(d[0].first < 4000 && d[0].last >= 5000);
	assert_true(d[0].first == fr_num(&d[0], "events_overwritten"));
	assert_true(d[1].first == d[0].last + 1 + fr_num(&d[1], "events_overwritten"));
	assert_true(cJSON_IsTrue(tr_arg(long_span(&d[0]), "unfinished")));
	assert_false(cJSON_IsTrue(tr_arg(long_span(&d[1]), "unfinished")));
	assert_devtools_loads(&d[0]);
	dump_free(&d[0]);
	dump_free(&d[1]);
	tr_free(&r);
}

static void test_trigger_dump(void **state)
{
	(void)state;
	trigger_dump(NULL);
}

static void test_trigger_dump_per_event(void **state)
{
	(void)state;
	trigger_dump("--no-batch");
}

/*
 * A program firing CTRACE_TRIGGER after every event (~20 k in 2 s): one
 * dump a second at most, and the dumps' "triggers" add up to every one fired.
 */
static void test_trigger_storm_rate_limited(void **state)
{
	const char *const prog_args[] = { "2", "-1", NULL };
	const char *const tracer_args[] = { "--ring", RING, NULL };
	struct trace_run r;
	struct dump d;
	double triggers = 0, fired;
	const char *why;
	unsigned n;
	char path[400];

	(void)state;
	start(&r, prog_args, tracer_args);
	finish(&r);
	/*
	 * Each trigger's dump holds events; the end's holds what came after
	 * the last trigger's, which may be nothing when that came as the
	 * program ended (seen under the copy_user set with perf uprobes).
	 */
	min_seq = 0;
	fired = atof(strstr(r.prog_stdout, "done last=") + 10) + 1;
	for (n = 1;; n++) {
		snprintf(path, sizeof(path), "%s/trace-%u.json", r.dir, n);
		if (access(path, F_OK))
			break;
		load_dump(&r, n, &d);
		why = tr_str(d.fr, "reason");
		if (!why)
			fail_msg("%s: no metadata.flight_recorder.reason", d.path);
		if (strcmp(why, "end") && d.count < 1)
			fail_msg("%s: a %s dump without a seq event", d.path, why);
		triggers += fr_num(&d, "triggers");
		dump_free(&d);
	}
	print_message("%g triggers fired in 2 s: %u dumps\n", fired, n - 1);
	/* 2 s: at t=0, 1 and maybe 2 (the interval is counted from each dump), and the end. */
	if (n - 1 > 4 || n - 1 < 2)
		fail_msg("%u dumps for 2 s of triggers", n - 1);
	if (triggers != fired)
		fail_msg("the dumps count %g triggers, %g were fired", triggers, fired);
	min_seq = 100;
	tr_free(&r);
}

/*
 * flood (two threads, as fast as they can, 1.5 s) under --ring `size`:
 * the tracer's peak RSS; its one dump (the end's) accounts for every
 * instant emitted: kept, overwritten or dropped.
 */
static long flood_peak(const char *size, double *overwritten)
{
	const char *const prog_args[] = { "1500", NULL };
	const char *const tracer_args[] = { "--ring", size, "-q", NULL };
	unsigned long long emitted = 0, kept = 0, dropped;
	struct trace_run r;
	long peak = -1;
	siginfo_t si;
	cJSON *ev, *meta;

	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "flood", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, tracer_args) < 0)
		fail_msg("%s", r.error);
	for (;;) { /* until it exits (a zombie: its memory is gone) */
		long kib;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)r.tracer.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    si.si_pid == r.tracer.pid)
			break;
		kib = tr_tracer_peak_kib(r.tracer.pid);
		if (kib > peak)
			peak = kib;
		usleep(2000);
	}
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit || r.prog_exit || !strstr(r.prog_stdout, "emitted ") ||
	    sscanf(strstr(r.prog_stdout, "emitted "), "emitted t0=%*u t1=%*u total=%llu", &emitted) != 1)
		fail_msg("tracer exited %d (%s), flood %d: %s", r.tracer_exit, r.tracer_stderr,
			 r.prog_exit, r.prog_stdout);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/trace-1.json", r.dir);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	cJSON_ArrayForEach(ev, r.events)
		kept += !strcmp(tr_str(ev, "name"), "flood");
	meta = tr_meta(&r);
	dropped = (unsigned long long)tr_num(meta, "dropped_events");
	*overwritten = tr_num(cJSON_GetObjectItem(meta, "flight_recorder"), "events_overwritten_total");
	print_message("--ring %s: emitted %llu, kept %llu, overwritten %.0f, dropped %llu; tracer peak RSS %ld KiB\n",
		      size, emitted, kept, *overwritten, dropped, peak);
	/*
	 * Nothing lost silently: every instant emitted is kept, overwritten
	 * or dropped. The overwritten count also holds the tracer's own
	 * notices ("ctrace: events dropped"), a few a round: hence >=.
	 */
	if (kept + (unsigned long long)*overwritten + dropped < emitted)
		fail_msg("kept %llu + overwritten %.0f + dropped %llu < emitted %llu", kept,
			 *overwritten, dropped, emitted);
	tr_free(&r);
	return peak;
}

/* Under a flood, --ring 1M keeps the tracer far below --ring 64M, which does use its ring. */
static void test_memory_bounded(void **state)
{
	double over_small, over_big;
	long small = flood_peak("1M", &over_small), big = flood_peak("64M", &over_big);

	(void)state;
	if (over_small <= 0)
		fail_msg("--ring 1M overwrote nothing: the flood did not fill it");
#ifdef __SANITIZE_ADDRESS__
	print_message("(ASan build: peak RSS %ld and %ld KiB, checked by the plain build)\n", small, big);
#else
	/* The 64M ring filled (more than its 63 MiB written): it took ~63 MiB more, and no more than that. */
	if (over_big > 0 && !(big - small > 40 * 1024 && big - small < 72 * 1024))
		fail_msg("peak RSS %ld KiB with --ring 1M, %ld KiB with --ring 64M", small, big);
	if (over_big <= 0 && big - small > 72 * 1024)
		fail_msg("peak RSS %ld KiB with --ring 1M, %ld KiB with --ring 64M", small, big);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigusr1_dumps),
		cmocka_unit_test(test_trigger_dump),
		cmocka_unit_test(test_trigger_dump_per_event),
		cmocka_unit_test(test_trigger_storm_rate_limited),
		cmocka_unit_test(test_memory_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
