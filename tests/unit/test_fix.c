// SPDX-License-Identifier: MIT
/*
 * trace_fix: a real trace (written by trace_model/chrome_trace, with multi-byte
 * UTF-8, escapes, args and every event kind) is cut at every byte offset; each
 * repair must be strict JSON (RFC 8259, tests/lib/json_strict) and hold exactly
 * the events that were complete before the cut, unchanged. Where each event
 * ends is found with cJSON's own end pointer, not with the line layout the
 * repair relies on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "json_strict.h"
#include "encode/json/json_writer.h"
#include "encode/json/chrome_trace.h"
#include "offline/trace_fix.h"
#include "model/trace_model.h"

/* The trace every test cuts: text, parsed events, where each one ends. */
static char *trace;
static size_t trace_len;
static cJSON *doc, *events, *context;
static size_t *event_end; /* offset just after event i's closing brace */
static size_t n_events, context_end;

static struct ctrace_event mk(uint16_t kind, uint64_t ts, uint32_t tid)
{
	struct ctrace_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.ts_ns = ts;
	e.tgid = (uint32_t)getpid();
	e.tid = tid;
	return e;
}

static void named(struct ctrace_event *e, const char *name, const char *args)
{
	e->name = name;
	e->name_len = name ? strlen(name) : 0;
	e->args = args;
	e->args_len = args ? strlen(args) : 0;
}

/* Reads fd from its start into a NUL-terminated buffer. */
static char *slurp(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)size + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	buf[size] = '\0';
	*len = (size_t)size;
	return buf;
}

/* Writes the trace through the loader's own model and writer. */
static void make_trace(void)
{
	uint32_t pid = (uint32_t)getpid(), other = pid + 1;
	struct json_writer w;
	struct chrome_trace tf;
	struct trace_fanout fan;
	struct trace_stats stats = { 0 };
	struct trace_model m;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct ctrace_event e;
	double nan_bits = __builtin_nan("");
	int fd = memfd_create("trace", 0);

	assert_true(fd >= 0);
	assert_int_equal(jw_init(&w, fd, 64), 0); /* small buffer: many flushes */
	assert_int_equal(proc_facts_read((int)pid, &target), 0);
	facts.tracer_version = "test";
	facts.target = &target;
	facts.start_mono_ns = 1000;
	chrome_trace_begin(&tf, &w, &facts);
	trace_fanout_init(&fan);
	trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	trace_model_init(&m, &fan, &stats);
	trace_model_add_process(&m, pid);

	e = mk(CTRACE_KIND_SPAN_BEGIN, 2000, pid);
	e.arg[1] = 0x10;
	named(&e, "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x8e\x89", "{\"k\":\"\xe2\x82\xac\",\"n\":[1,2.5,-3e2]}");
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_INSTANT, 2100, pid);
	e.arg[2] = 'g';
	named(&e, "quote\" back\\ ctl \x01\x1f \xff end", "{\"q\":\"a\\\"b\\\\c\\u00e9\"}");
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_INSTANT, 2200, other); /* another thread: a thread_name too */
	named(&e, "xxxxxxxxxxxxxxxx", "not json");
	e.name_flags = CTRACE_STR_TRUNCATED;
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_COUNTER_SET, 2300, pid);
	memcpy(&e.arg[2], &nan_bits, sizeof(nan_bits));
	named(&e, "nan", NULL);
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_COUNTER_ADD, 2400, pid);
	e.arg[2] = 0x3ff8000000000000ull; /* 1.5 */
	named(&e, "bytes", NULL);
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_SPAN_BEGIN, 2500, pid);
	e.arg[1] = 0x20;
	named(&e, "crosses threads", NULL);
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_SPAN_END, 2600, other); /* async pair */
	e.arg[0] = 0x20;
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_SPAN_END, 2700, pid);
	e.arg[0] = 0x10;
	named(&e, NULL, "{\"end\":true}");
	trace_model_event(&m, &e);
	e = mk(CTRACE_KIND_SPAN_BEGIN, 2800, pid); /* unfinished at the stop */
	e.arg[1] = 0x30;
	named(&e, "open", NULL);
	trace_model_event(&m, &e);
	trace_model_drops(&m, pid, 2900, 3, 3);

	trace_model_finish(&m, 3000);
	stats.stop_mono_ns = 3000;
	stats.stop_reason = "test";
	chrome_trace_end(&tf, &facts, &stats);
	assert_int_equal(jw_flush(&w), 0);
	jw_free(&w);
	proc_facts_free(&target);
	trace = slurp(fd, &trace_len);
	close(fd);
}

/* Where each event ends, by cJSON's end pointer (no line layout assumed). */
static void find_ends(void)
{
	const char *p = strstr(trace, "\"traceEvents\":[") + strlen("\"traceEvents\":["), *end;
	cJSON *v;

	v = cJSON_ParseWithOpts(trace + strlen("{\"context\":"), &end, 0);
	assert_non_null(v);
	cJSON_Delete(v);
	context_end = (size_t)(end - trace);
	event_end = calloc((size_t)cJSON_GetArraySize(events), sizeof(*event_end));
	for (;;) {
		p += strspn(p, " \n,");
		if (*p == ']')
			break;
		v = cJSON_ParseWithOpts(p, &end, 0);
		assert_non_null(v);
		cJSON_Delete(v);
		event_end[n_events++] = (size_t)(end - trace);
		p = end;
	}
	assert_int_equal(n_events, cJSON_GetArraySize(events));
}

static int group_setup(void **state)
{
	(void)state;
	make_trace();
	doc = cJSON_ParseWithOpts(trace, NULL, 1);
	if (!doc)
		return -1;
	events = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	context = cJSON_GetObjectItemCaseSensitive(doc, "context");
	find_ends();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	cJSON_Delete(doc);
	free(trace);
	free(event_end);
	return 0;
}

/* trace_fix over text[0..len): the status, and the output in *out. */
static enum trace_fix_status fix_text(const char *text, size_t len, char **out,
				      size_t *out_len, struct trace_fix_result *res)
{
	int in_fd = memfd_create("in", 0), out_fd = memfd_create("out", 0);
	FILE *in;

	assert_true(in_fd >= 0 && out_fd >= 0);
	assert_int_equal(write(in_fd, text, len), (ssize_t)len);
	lseek(in_fd, 0, SEEK_SET);
	in = fdopen(in_fd, "r");
	assert_non_null(in);
	trace_fix(in, out_fd, res);
	fclose(in);
	*out = slurp(out_fd, out_len);
	close(out_fd);
	return res->status;
}

static void test_the_trace_is_realistic(void **state)
{
	(void)state;
	/* every phase the model writes is there, and the cut loop has work */
	assert_true(n_events >= 10);
	assert_non_null(strstr(trace, "\"ph\":\"X\""));
	assert_non_null(strstr(trace, "\"ph\":\"b\""));
	assert_non_null(strstr(trace, "\"ph\":\"C\""));
	assert_non_null(strstr(trace, "\"ph\":\"M\""));
	assert_non_null(strstr(trace, "\\\""));             /* an escape to cut in */
	assert_non_null(strstr(trace, "\xf0\x9f\x8e\x89")); /* a 4-byte sequence */
	assert_non_null(strstr(trace, JW_TRUNC_SUFFIX));
}

static void check_repaired(size_t cut, const char *out, size_t out_len,
			   const struct trace_fix_result *res)
{
	char why[256];
	cJSON *fixed, *evs, *meta, *ctx;
	size_t want = 0;

	while (want < n_events && event_end[want] <= cut)
		want++;
	if (!json_strict_check(out, out_len, why, sizeof(why)))
		fail_msg("cut at %zu: the repair is not strict JSON: %s\n%s", cut, why, out);
	fixed = cJSON_ParseWithOpts(out, NULL, 1);
	assert_non_null(fixed);
	evs = cJSON_GetObjectItemCaseSensitive(fixed, "traceEvents");
	meta = cJSON_GetObjectItemCaseSensitive(fixed, "metadata");
	ctx = cJSON_GetObjectItemCaseSensitive(fixed, "context");
	if ((size_t)cJSON_GetArraySize(evs) != want)
		fail_msg("cut at %zu: %d events kept, %zu were complete", cut,
			 cJSON_GetArraySize(evs), want);
	for (size_t i = 0; i < want; i++)
		if (!cJSON_Compare(cJSON_GetArrayItem(evs, (int)i), cJSON_GetArrayItem(events, (int)i), 1))
			fail_msg("cut at %zu: event %zu changed", cut, i);
	assert_int_equal(res->events, want);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(meta, "truncated")));
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(meta, "events_recovered")->valuedouble, want);
	/* the context survives exactly when it was complete */
	if (cut >= context_end) {
		assert_true(res->context_kept);
		assert_true(cJSON_Compare(ctx, context, 1));
		assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(meta, "target"),
					  cJSON_GetObjectItemCaseSensitive(context, "target"), 1));
	} else {
		assert_false(res->context_kept);
		assert_null(ctx);
	}
	cJSON_Delete(fixed);
}

/* The heart of it: every possible cut. */
static void test_every_cut(void **state)
{
	const size_t sig = strlen(TRACE_FIX_SIGNATURE);
	size_t repaired = 0;

	(void)state;
	for (size_t cut = 0; cut <= trace_len; cut++) {
		struct trace_fix_result res;
		char *out;
		size_t out_len;
		enum trace_fix_status st = fix_text(trace, cut, &out, &out_len, &res);

		if (cut < sig) {
			/* too short to be told from anything else: nothing to keep */
			if (st != TRACE_FIX_NOT_OURS)
				fail_msg("cut at %zu: status %d", cut, st);
			assert_true(strlen(res.why) > 0);
		} else if (cut >= trace_len - 1) {
			/* everything but the final newline is there: complete */
			if (st != TRACE_FIX_COMPLETE)
				fail_msg("cut at %zu of %zu: status %d, want complete", cut, trace_len, st);
		} else {
			if (st != TRACE_FIX_REPAIRED)
				fail_msg("cut at %zu: status %d (%s)", cut, st, res.why);
			check_repaired(cut, out, out_len, &res);
			repaired++;
		}
		free(out);
	}
	assert_true(repaired > trace_len / 2);
	print_message("%zu cuts of a %zu-byte trace with %zu events, %zu repaired\n", trace_len + 1, trace_len, n_events, repaired);
}

/* The repair of a repair changes nothing: it is complete. */
static void test_repaired_is_complete(void **state)
{
	struct trace_fix_result res;
	char *out, *again;
	size_t out_len, again_len;

	(void)state;
	assert_int_equal(fix_text(trace, event_end[n_events / 2] + 3, &out, &out_len, &res),
			 TRACE_FIX_REPAIRED);
	assert_int_equal(fix_text(out, out_len, &again, &again_len, &res), TRACE_FIX_COMPLETE);
	free(out);
	free(again);
}

static void test_not_ours(void **state)
{
	static const char *const inputs[] = {
		"{\"traceEvents\":[{\"ph\":\"I\"}]}",
		"hello\n",
		"\xff\xfe{\"context\"",
		"{\"context\":{\"tracer\":\"perfetto\"},\n\"traceEvents\":[\n",
		"\n\n{\"context\":{\"tracer\":\"ctrace-bpf\"", /* found by fuzz_fix */
	};
	struct trace_fix_result res;
	char *out, *text;
	size_t out_len;

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		assert_int_equal(fix_text(inputs[i], strlen(inputs[i]), &out, &out_len, &res),
				 TRACE_FIX_NOT_OURS);
		assert_non_null(strstr(res.why, "not a ctrace-bpf trace"));
		free(out);
	}
	/* our first line, then something else */
	text = strdup(trace);
	memcpy(strchr(text, '\n') + 1, "\"otherEvents\":[", 15);
	assert_int_equal(fix_text(text, trace_len, &out, &out_len, &res), TRACE_FIX_NOT_OURS);
	free(out);
	free(text);
}

/*
 * A line whose one flaw is an escape cJSON lets through (\u with bad hex
 * digits) is damaged too: kept, it would make the repair invalid JSON.
 */
static void test_bad_escape_line_dropped(void **state)
{
	struct trace_fix_result res;
	char *text = malloc(trace_len + 6), *out, why[256];
	const char *name = strstr(trace + event_end[3], "\"name\":\"");
	size_t out_len, at;

	(void)state;
	/* event 4's name gets \uZZZZ at its start; nothing else changes */
	assert_non_null(name);
	at = (size_t)(name - trace) + 8;
	assert_true(at < event_end[4]);
	memcpy(text, trace, at);
	memcpy(text + at, "\\uZZZZ", 6);
	memcpy(text + at + 6, trace + at, trace_len - at);
	assert_int_equal(fix_text(text, trace_len + 6, &out, &out_len, &res), TRACE_FIX_REPAIRED);
	if (!json_strict_check(out, out_len, why, sizeof(why)))
		fail_msg("the repair is not strict JSON: %s", why);
	assert_int_equal(res.events, n_events - 1);
	assert_int_equal(res.damaged_lines, 1);
	free(out);
	free(text);
}

/* A damaged line in the middle (not a cut) is dropped; all others are kept. */
static void test_damaged_middle_line(void **state)
{
	struct trace_fix_result res;
	char *text = strdup(trace), *out, why[256];
	size_t out_len, at = event_end[4] - 1; /* the closing brace of event 4 */
	cJSON *fixed;

	(void)state;
	text[at] = 'x';
	assert_int_equal(fix_text(text, trace_len, &out, &out_len, &res), TRACE_FIX_REPAIRED);
	assert_true(json_strict_check(out, out_len, why, sizeof(why)));
	assert_int_equal(res.events, n_events - 1);
	assert_int_equal(res.damaged_lines, 1);
	assert_false(res.tail_cut);
	fixed = cJSON_Parse(out);
	assert_true(cJSON_Compare(cJSON_GetArrayItem(cJSON_GetObjectItem(fixed, "traceEvents"), 4),
				  cJSON_GetArrayItem(events, 5), 1));
	cJSON_Delete(fixed);
	free(out);
	free(text);
}

/*
 * "Complete" means valid as it stands: every line may be a whole event and
 * the file still be broken by a missing or an extra separator. Such a file
 * is repaired (all its events kept), not left alone.
 */
static void test_complete_means_valid(void **state)
{
	struct trace_fix_result res;
	char *text = malloc(trace_len + 2), *out, why[256];
	size_t out_len, comma = event_end[3], last = event_end[n_events - 1];

	(void)state;
	/* no comma after event 3 */
	assert_int_equal(trace[comma], ',');
	memcpy(text, trace, comma);
	memcpy(text + comma, trace + comma + 1, trace_len - comma);
	assert_int_equal(fix_text(text, trace_len - 1, &out, &out_len, &res), TRACE_FIX_REPAIRED);
	assert_true(json_strict_check(out, out_len, why, sizeof(why)));
	assert_int_equal(res.events, n_events);
	free(out);
	/* a comma after the last event */
	memcpy(text, trace, last);
	text[last] = ',';
	memcpy(text + last + 1, trace + last, trace_len - last);
	assert_int_equal(fix_text(text, trace_len + 1, &out, &out_len, &res), TRACE_FIX_REPAIRED);
	assert_true(json_strict_check(out, out_len, why, sizeof(why)));
	assert_int_equal(res.events, n_events);
	free(out);
	free(text);
}

static void test_write_error(void **state)
{
	int in_fd = memfd_create("in", 0), full = open("/dev/full", O_WRONLY);
	struct trace_fix_result res;
	FILE *in;

	(void)state;
	if (full < 0)
		skip();
	assert_int_equal(write(in_fd, trace, trace_len / 2), (ssize_t)(trace_len / 2));
	lseek(in_fd, 0, SEEK_SET);
	in = fdopen(in_fd, "r");
	assert_int_equal(trace_fix(in, full, &res), TRACE_FIX_WRITE_ERROR);
	assert_int_equal(res.err, ENOSPC);
	fclose(in);
	close(full);
}

/* cJSON's lenient forms are refused: a kept line must be strict JSON. */
/*
 * bytes_dropped says how much of the input the repair removed, whatever the
 * tail is: a cut, a megabyte of garbage after the events (with and without
 * line breaks), garbage after a complete end: the input's bytes up to the
 * last kept event are kept as they are; all the rest is removed (the old
 * closing included, which the repair writes anew).
 */
static void test_bytes_dropped_is_what_was_removed(void **state)
{
	enum { GARBAGE = 1 << 20 };
	struct trace_fix_result res;
	size_t events_end = event_end[n_events - 1] + 1; /* after the last event's newline */
	char *text = malloc(trace_len + GARBAGE + 1), *out;
	size_t out_len;

	(void)state;
	assert_non_null(text);
	for (int variant = 0; variant < 4; variant++) {
		size_t keep = variant < 2 ? events_end : trace_len, len = keep + GARBAGE;

		memcpy(text, trace, keep);
		for (size_t i = keep; i < len; i++)
			text[i] = (variant & 1) && i % 97 == 0 ? '\n' : 'g';
		assert_int_equal(fix_text(text, len, &out, &out_len, &res), TRACE_FIX_REPAIRED);
		assert_int_equal(res.events, n_events);
		/* every byte up to the last event's newline is kept as it was; the rest is removed */
		if (res.bytes_dropped != len - events_end)
			fail_msg("variant %d: %zu input bytes, %zu kept, but bytes_dropped says %llu, not %zu",
				 variant, len, events_end, (unsigned long long)res.bytes_dropped, len - events_end);
		assert_true(out_len > events_end);
		free(out);
	}
	free(text);
}

static void test_line_check_is_strict(void **state)
{
	static const char *const bad[] = {
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{\"a\":1e}",
		"{\"a\":-}", "{\"a\":\"\x01\"}", "{\"a\":\"\xc3\"}", "{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\x\"}", "{\"a\":1} ", "{\"a\":1}}",
		"{\t\"a\":1}", "{\"a\":1", "[1]", "{\"a\":\"b}", "{\"a\":tru}",
		"{\"a\":\"\\", "{\"a\":1.5.5}", "{\"a\":0x10}",
		/* cJSON reads a \u escape's bad hex digits as 0 and accepts it */
		"{\"a\":\"\\uZZZZ\"}", "{\"a\":\"\\u00zz\"}",
	};
	static const char *const good[] = {
		"{}", "{\"a\":0}", "{\"a\":-0.5e-3}", "{\"a\":\"\\ud83c\\udf89\\\"\"}",
		"{\"a\":[true,false,null,{\"b\":\"\xe2\x82\xac\"}]}", "{\"a\":1E+2}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (trace_fix_line_is_object(bad[i], strlen(bad[i])))
			fail_msg("accepted %s", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!trace_fix_line_is_object(good[i], strlen(good[i])))
			fail_msg("refused %s", good[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_trace_is_realistic),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_repaired_is_complete),
		cmocka_unit_test(test_not_ours),
		cmocka_unit_test(test_damaged_middle_line),
		cmocka_unit_test(test_bad_escape_line_dropped),
		cmocka_unit_test(test_bytes_dropped_is_what_was_removed),
		cmocka_unit_test(test_complete_means_valid),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_line_check_is_strict),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
