// SPDX-License-Identifier: MIT
/*
 * test_summary - the summary the tracer prints at its end and `ctrace-bpf
 * report FILE` prints for a trace file: each figure checked against the
 * trace file itself, event by event (spans from its "X" and "b"/"e"
 * events, instants from its "I", counters from its "C"). The percentiles
 * within the histogram's stated error (1/32), the rest exact to the us.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

static struct trace_run r;
static struct tr_cmd c, rep;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	tr_cmd_free(&rep);
	return 0;
}

/* Launch mode: `ctrace-bpf [extra] -o DIR/trace.json -- PROGRAM ARG [ARG2]`, to completion, exit 0, the trace read. */
static void trace_launched2(const char *extra, const char *program, const char *arg, const char *arg2)
{
	char path[300];
	const char *args[8];
	size_t n = 0;

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/trace.json", r.dir);
	if (extra)
		args[n++] = extra;
	args[n++] = "-o";
	args[n++] = r.trace_path;
	args[n++] = "--";
	args[n++] = tr_program_abspath(program, path, sizeof(path));
	args[n++] = arg;
	if (arg)
		args[n++] = arg2;
	args[n] = NULL;
	cli_run_tracer(&c, NULL, NULL, args, TR_TIMEOUT_MS);
	if (c.exit != 0)
		fail_msg("ctrace-bpf -- %s exited %d: %s", program, c.exit, c.err);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
}

static void trace_launched(const char *extra, const char *program, const char *arg)
{
	trace_launched2(extra, program, arg, NULL);
}

/* What the file says of one span name: its durations in ns (as written, us with 3 decimals). */
struct file_span {
	uint64_t count, total_ns, unfinished;
	uint64_t *ns;
};

static uint64_t us_to_ns(double us)
{
	return (uint64_t)llround(us * 1000.0);
}

static void add_duration(struct file_span *f, uint64_t ns)
{
	f->ns = realloc(f->ns, (f->count + 1) * sizeof(*f->ns));
	assert_non_null(f->ns);
	f->ns[f->count++] = ns;
	f->total_ns += ns;
}

/* Every span of that name in the file: its "X" events, and its "b"/"e" pairs (same pid and id). */
static struct file_span file_span(const char *name)
{
	struct file_span f = { 0 };
	cJSON *ev, *b = NULL;

	cJSON_ArrayForEach(ev, r.events) {
		const char *ph = tr_str(ev, "ph"), *n = tr_str(ev, "name");

		if (!ph || !n || strcmp(n, name))
			continue;
		if (!strcmp(ph, "X")) {
			add_duration(&f, us_to_ns(tr_num(ev, "dur")));
			f.unfinished += cJSON_IsTrue(tr_arg(ev, "unfinished"));
		} else if (!strcmp(ph, "b")) {
			b = ev;
		} else if (!strcmp(ph, "e")) {
			assert_non_null(b);
			assert_string_equal(tr_str(b, "id"), tr_str(ev, "id"));
			add_duration(&f, us_to_ns(tr_num(ev, "ts")) - us_to_ns(tr_num(b, "ts")));
			b = NULL;
		}
	}
	return f;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank q-quantile of the file's durations, in ns. */
static uint64_t exact_quantile(struct file_span *f, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)f->count);

	qsort(f->ns, f->count, sizeof(*f->ns), by_value);
	return f->ns[(rank ? rank : 1) - 1];
}

/* ns as the summary prints them: ms to the us, rounded. */
static double as_printed(uint64_t ns)
{
	uint64_t us = ns / 1000 + (ns % 1000 >= 500);

	return (double)us / 1000.0;
}

/* The row of `name` in the section that begins with `section`: the text after the name (NULL: none). */
static const char *row(const char *text, const char *section, const char *name)
{
	const char *s = strstr(text, section), *p;
	char head[200];

	if (!s)
		fail_msg("no \"%s\" in:\n%s", section, text);
	snprintf(head, sizeof(head), "\n  %s ", name);
	/* The section's rows are indented: it ends at the first line that is not. */
	for (p = strchr(s, '\n'); p && p[1] == ' '; p = strchr(p + 1, '\n'))
		if (!strncmp(p, head, strlen(head)))
			return p + strlen(head);
	return NULL;
}

/* A duration as the summary shows it ("162 ns", "12.35 us", "3.457 ms", "1.500 s") in ns, moving *p past it. */
static double duration_ns(const char **p)
{
	double v;
	char unit[4];
	int used;

	if (sscanf(*p, "%lf %3s%n", &v, unit, &used) != 2)
		return NAN;
	*p += used;
	return !strcmp(unit, "ns") ? v : !strcmp(unit, "us") ? v * 1e3 : !strcmp(unit, "ms") ? v * 1e6 :
	       !strcmp(unit, "s") ? v * 1e9 : NAN;
}

/* Within 4 significant digits (the summary's), plus `relative` of the value. */
static bool close_to(double shown_ns, uint64_t exact_ns, double relative)
{
	return fabs(shown_ns - (double)exact_ns) <= (double)exact_ns * (relative + 5e-4) + 0.5;
}

/* The summary's row of span `name` against the file: count, total exact to the us, mean to 4 digits; p50, p99 within 1/32. */
static void assert_span_row(const char *summary, const char *name)
{
	struct file_span f = file_span(name);
	const char *line = row(summary, "Spans by total time", name), *p;
	unsigned long long count;
	double total, mean, q[2];
	int used;

	if (!f.count)
		fail_msg("no span \"%s\" in the trace", name);
	if (!line || sscanf(line, "%llu %lf%n", &count, &total, &used) != 2)
		fail_msg("no row for span \"%s\" in:\n%s", name, summary);
	p = line + used;
	mean = duration_ns(&p);
	q[0] = duration_ns(&p);
	q[1] = duration_ns(&p);
	if (count != f.count || fabs(total - as_printed(f.total_ns)) > 1e-9 || !close_to(mean, f.total_ns / f.count, 0))
		fail_msg("span \"%s\": summary count %llu total %.3f ms mean %.0f ns; the file: %" PRIu64 " spans, %.3f ms, mean %" PRIu64 " ns",
			 name, count, total, mean, f.count, as_printed(f.total_ns), f.total_ns / f.count);
	for (int i = 0; i < 2; i++) {
		uint64_t want = exact_quantile(&f, i ? 0.99 : 0.5);

		if (!close_to(q[i], want, 1.0 / 32))
			fail_msg("span \"%s\": p%d %.0f ns in the summary, %" PRIu64 " ns exactly in the file",
				 name, i ? 99 : 50, q[i], want);
	}
	if (f.unfinished) {
		char note[64];

		snprintf(note, sizeof(note), "(%" PRIu64 " unfinished)", f.unfinished);
		if (!strstr(line, note) || strchr(line, '\n') < strstr(line, note))
			fail_msg("span \"%s\": no \"%s\" on its row:\n%s", name, note, summary);
	}
	free(f.ns);
}

static void assert_instant_row(const char *summary, const char *name)
{
	const char *line = row(summary, "Instants by count", name);
	unsigned long long count;
	size_t want = 0;
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events)
		want += tr_str(ev, "ph") && !strcmp(tr_str(ev, "ph"), "I") && !strcmp(tr_str(ev, "name"), name);
	if (!line || sscanf(line, "%llu", &count) != 1 || count != want)
		fail_msg("instant \"%s\": %zu in the file; summary:\n%s", name, want, summary);
}

/* Samples, last, min, max of a counter against its "C" events in file order. */
static void assert_counter_row(const char *summary, const char *name)
{
	const char *line = row(summary, "Counters by samples", name);
	unsigned long long count;
	double last, min, max, fmin = INFINITY, fmax = -INFINITY, flast = NAN;
	size_t want = 0;
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events) {
		if (!tr_str(ev, "ph") || strcmp(tr_str(ev, "ph"), "C") || strcmp(tr_str(ev, "name"), name))
			continue;
		flast = tr_num(tr_arg(ev, "value") ? cJSON_GetObjectItem(ev, "args") : NULL, "value");
		fmin = fmin < flast ? fmin : flast;
		fmax = fmax > flast ? fmax : flast;
		want++;
	}
	if (!line || sscanf(line, "%llu %lf %lf %lf", &count, &last, &min, &max) != 4 || count != want ||
	    fabs(last - flast) > 1e-5 * fabs(flast) || fabs(min - fmin) > 1e-5 * fabs(fmin) ||
	    fabs(max - fmax) > 1e-5 * fabs(fmax))
		fail_msg("counter \"%s\": %zu samples, last %g, min %g, max %g in the file; summary:\n%s", name, want,
			 flast, fmin, fmax, summary);
}

/* From "Spans by total time" to the end of the "Lost:" line. */
static char *summary_of(const char *text)
{
	const char *s = strstr(text, "Spans by total time");
	const char *lost = s ? strstr(s, "\nLost: ") : NULL;
	const char *end = lost ? strchr(lost + 1, '\n') : NULL;

	if (!end) {
		fail_msg("no summary in:\n%s", text);
		return NULL;
	}
	return strndup(s, (size_t)(end + 1 - s));
}

/*
 * Spans of 20 us to 2 ms, 3 rounds: their count, total and percentiles,
 * a counter and an instant as in the file.
 */
static void test_percentiles_of_spread_spans(void **state)
{
	char *sum;
	struct file_span f;

	(void)state;
	trace_launched(NULL, "spread_spans", "3");
	sum = summary_of(c.err);
	assert_span_row(sum, "spread");
	assert_span_row(sum, "short");
	assert_counter_row(sum, "depth");
	assert_instant_row(sum, "round");
	/* The program's own figures: 300 spans, p50 1 ms and p99 1.98 ms at least (busy-waited). */
	f = file_span("spread");
	assert_int_equal(f.count, 300);
	assert_true(exact_quantile(&f, 0.5) >= 1000000 && exact_quantile(&f, 0.99) >= 1980000);
	free(f.ns);
	assert_true(strstr(sum, "\n  spread ") < strstr(sum, "\n  short "));
	free(sum);
}

/* 3 threads of nested spans, a counter and an instant for 400 ms: every figure as in the file. */
static void test_summary_figures_are_the_files(void **state)
{
	char *sum;

	(void)state;
	trace_launched(NULL, "span_storm", "400");
	sum = summary_of(c.err);
	assert_span_row(sum, "outer");
	assert_span_row(sum, "inner");
	assert_span_row(sum, "before-tracer");
	assert_instant_row(sum, "armed");
	assert_counter_row(sum, "n");
	/* By total time: outer holds inner. */
	assert_true(strstr(sum, "\n  outer ") < strstr(sum, "\n  inner "));
	assert_non_null(strstr(sum, "Lost: 0 events dropped"));
	assert_non_null(strstr(sum, "1 span ends without a begin")); /* the END span_storm never began */
	free(sum);
}

/* report FILE prints the same summary from the file, also gzip-compressed. */
static void test_report_prints_the_same(void **state)
{
	const char *const args[] = { r.trace_path, NULL };
	char gz[320], *traced, *reported;
	const char *const gz_args[] = { gz, NULL };

	(void)state;
	trace_launched(NULL, "span_storm", "300");
	traced = summary_of(c.err);
	cli_run_tracer(&rep, NULL, "report", args, 20000);
	assert_int_equal(rep.exit, 0);
	reported = summary_of(rep.out);
	assert_string_equal(reported, traced);
	free(reported);
	snprintf(gz, sizeof(gz), "%s.gz", r.trace_path);
	assert_int_equal(tr_shell("gzip -k '%s'", r.trace_path), 0);
	cli_run_tracer(&rep, NULL, "report", gz_args, 20000);
	assert_int_equal(rep.exit, 0);
	reported = summary_of(rep.out);
	assert_string_equal(reported, traced);
	free(reported);
	free(traced);
}

/* Every kind of span: nested, cross-thread (b/e), never ended (unfinished); instants, a counter. */
static void test_every_kind_of_event(void **state)
{
	const char *const args[] = { r.trace_path, NULL };
	char *sum;

	(void)state;
	trace_launched(NULL, "every_macro", NULL);
	sum = summary_of(c.err);
	assert_span_row(sum, "outer");
	assert_span_row(sum, "cross-thread");
	assert_span_row(sum, "never-ended");
	assert_instant_row(sum, "inst-g");
	assert_instant_row(sum, "inst-t");
	assert_counter_row(sum, "c");
	assert_non_null(strstr(sum, "1 spans unfinished at the stop"));
	cli_run_tracer(&rep, NULL, "report", args, 20000);
	assert_int_equal(rep.exit, 0);
	assert_non_null(strstr(rep.out, sum));
	free(sum);
}

/* -q: nothing on stderr for a trace that went well; the trace is the same. */
static void test_quiet(void **state)
{
	(void)state;
	trace_launched("-q", "every_macro", NULL);
	assert_string_equal(c.err, "");
	assert_non_null(tr_find(&r, "X", "outer"));
}

/* A trace cut short: what it holds, and that it has no end; not a trace, no file: one line, exit 1. */
static void test_report_of_cut_and_wrong_files(void **state)
{
	char cut[320], bad[320];
	const char *const cut_args[] = { cut, NULL }, *const bad_args[] = { bad, NULL };
	const char *const none_args[] = { "/nonexistent/trace.json", NULL };

	(void)state;
	trace_launched("-q", "span_storm", "200");
	snprintf(cut, sizeof(cut), "%s/cut.json", r.dir);
	/* The first 60% of the file: the cut falls inside traceEvents. */
	assert_int_equal(tr_shell("head -c %zu '%s' > '%s'", r.trace_len * 6 / 10, r.trace_path, cut), 0);
	cli_run_tracer(&rep, NULL, "report", cut_args, 20000);
	assert_int_equal(rep.exit, 0);
	assert_non_null(strstr(rep.out, "Lost: not known"));
	assert_non_null(strstr(rep.out, "has no end"));
	assert_non_null(row(rep.out, "Spans by total time", "outer"));
	/* Repaired by fix: its metadata says so, and the summary too. */
	{
		char fixed[340];
		const char *const fix_args[] = { cut, "-o", fixed, NULL }, *const fixed_args[] = { fixed, NULL };

		snprintf(fixed, sizeof(fixed), "%s/fixed.json", r.dir);
		cli_run_tracer(&rep, NULL, "fix", fix_args, 20000);
		assert_int_equal(rep.exit, 0);
		cli_run_tracer(&rep, NULL, "report", fixed_args, 20000);
		assert_int_equal(rep.exit, 0);
		assert_non_null(strstr(rep.out, "the trace was cut short and repaired (ctrace-bpf fix)"));
		assert_null(strstr(rep.out, "has no end"));
	}

	snprintf(bad, sizeof(bad), "%s/bad.json", r.dir);
	assert_int_equal(tr_shell("echo '{\"traceEvents\":[]}' > '%s'", bad), 0);
	cli_run_tracer(&rep, NULL, "report", bad_args, 20000);
	assert_int_equal(rep.exit, 1);
	cli_assert_one_line(rep.err, "not a trace written by ctrace-bpf");
	cli_run_tracer(&rep, NULL, "report", none_args, 20000);
	assert_int_equal(rep.exit, 1);
	cli_assert_one_line(rep.err, "No such file");
}

/*
 * 1000 span names: the first 256 told apart, the rest added up in one row
 * (the summary's memory stays bounded), its count the file's.
 */
static void test_names_past_the_bound(void **state)
{
	char *sum, line[160], **seen = NULL;
	size_t n_seen = 0, past = 0, total = 0;
	cJSON *ev;

	(void)state;
	trace_launched2(NULL, "spread_spans", "1", "1000");
	sum = summary_of(c.err);
	/* The names in the order the file has their first span. */
	cJSON_ArrayForEach(ev, r.events) {
		const char *name = tr_str(ev, "name");
		size_t i;

		if (!tr_str(ev, "ph") || strcmp(tr_str(ev, "ph"), "X"))
			continue;
		total++;
		for (i = 0; i < n_seen && strcmp(seen[i], name); i++)
			;
		if (i == n_seen) {
			seen = realloc(seen, (n_seen + 1) * sizeof(*seen));
			seen[n_seen++] = strdup(name);
		}
		past += i >= 256;
	}
	assert_int_equal(n_seen, 1002); /* spread, short, name-0..999 */
	snprintf(line, sizeof(line), "Spans by total time: %zu spans, 256+ names\n", total);
	if (!strstr(sum, line))
		fail_msg("no \"%s\" in:\n%s", line, sum);
	snprintf(line, sizeof(line), "\n  (246 more names)\n  (names past the first 256, not told apart: %zu events)\n", past);
	if (!strstr(sum, line))
		fail_msg("no \"%s\" in:\n%s", line, sum);
	for (size_t i = 0; i < n_seen; i++)
		free(seen[i]);
	free(seen);
	free(sum);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_percentiles_of_spread_spans, free_all),
		cmocka_unit_test_teardown(test_summary_figures_are_the_files, free_all),
		cmocka_unit_test_teardown(test_report_prints_the_same, free_all),
		cmocka_unit_test_teardown(test_every_kind_of_event, free_all),
		cmocka_unit_test_teardown(test_names_past_the_bound, free_all),
		cmocka_unit_test_teardown(test_quiet, free_all),
		cmocka_unit_test_teardown(test_report_of_cut_and_wrong_files, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
