// SPDX-License-Identifier: MIT
/*
 * test_hostile - tests/programs/hostile sends bad names, bad args, unreadable
 * pointers and non-finite counters; the trace must still be one valid JSON
 * document (RFC 8259, valid UTF-8), keep what it can, and go on to the last
 * event, "after". The program is traced once (group setup).
 */
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
#include "group_run.h"
#include "trace_run.h"

#define TRUNC_MARK "\xe2\x80\xa6[truncated]" /* "…[truncated]" */
#define REPLACEMENT "\xef\xbf\xbd"           /* U+FFFD */

static struct trace_run run;

static int group_setup(void **state)
{
	(void)state;
	return tr_group_trace(&run, "hostile");
}

/* The first I event whose name starts with prefix. */
static cJSON *instant_starting(const char *prefix)
{
	cJSON *ev;

	cJSON_ArrayForEach(ev, run.events) {
		const char *name = tr_str(ev, "name");

		if (!strcmp(tr_str(ev, "ph"), "I") && name &&
		    !strncmp(name, prefix, strlen(prefix)))
			return ev;
	}
	fail_msg("no instant named \"%s...\"", prefix);
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Tracer and program both fine, file strictly valid (tr_run checked RFC 8259). */
static void test_file_valid(void **state)
{
	(void)state;
	tr_group_need();
	assert_int_equal(run.tracer_exit, 0);
	assert_int_equal(run.prog_exit, 0);
	assert_true(tr_valid_utf8(run.trace_text, run.trace_len));
	assert_int_equal(strlen(run.trace_text), run.trace_len); /* no NUL byte */
	assert_non_null(tr_meta(&run));
}

static void test_after_arrived(void **state)
{
	cJSON *after;

	(void)state;
	tr_group_need();
	after = tr_group_one("I", "after");
	assert_true(tr_num(after, "pid") == run.pid);
	assert_true(cJSON_IsTrue(tr_arg(after, "ok")));
}

static void test_bad_names(void **state)
{
	const char *name;

	(void)state;
	tr_group_need();
	/* invalid UTF-8: replaced, the valid rest kept */
	name = tr_str(instant_starting("bad-utf8 "), "name");
	assert_non_null(strstr(name, REPLACEMENT));
	assert_true(ends_with(name, " end"));
	/* control bytes, quotes and backslashes: escaped, and read back exactly */
	tr_group_one("I", "ctl \x01\x02\x1f\x7f\t\n\r end");
	tr_group_one("I", "quote\" back\\ slash/ \"}],{\"x\":");
	tr_group_one("I", "ls \xe2\x80\xa8 ps \xe2\x80\xa9 end");
	/* U+2028/2029 escaped in the file: the JSON stays valid JavaScript too */
	assert_null(strstr(run.trace_text, "\xe2\x80\xa8"));
	assert_null(strstr(run.trace_text, "\xe2\x80\xa9"));
}

static void test_truncated_name(void **state)
{
	const char *name, *raw;
	size_t n;

	(void)state;
	tr_group_need();
	name = tr_str(instant_starting("xxxxxxxx"), "name");
	n = strlen(name);
	assert_true(ends_with(name, TRUNC_MARK));
	assert_true(n > 64 && n < 4096); /* cut, not 1 MiB */
	for (size_t i = 0; i < n - strlen(TRUNC_MARK); i++)
		assert_int_equal(name[i], 'x');
	/* a 1 MiB args text: kept as a string, visibly cut */
	raw = cJSON_GetStringValue(tr_arg(tr_group_one("I", "big-args"), "raw"));
	assert_non_null(raw);
	assert_true(ends_with(raw, TRUNC_MARK));
	assert_true(strlen(raw) < 64 * 1024);
}

/* Args that are not a JSON object are kept as {"raw": text}. */
static void test_bad_args(void **state)
{
	static const struct {
		const char *name, *raw;
	} cases[] = {
		{ "args-invalid", "{not json" },
		{ "args-array", "[1,2,3]" },
		{ "args-number", "42" },
		{ "args-trailing", "{\"k\":1} x" },
	};
	cJSON *dup, *k;
	const char *raw;

	(void)state;
	tr_group_need();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		raw = cJSON_GetStringValue(tr_arg(tr_group_one("I", cases[i].name), "raw"));
		if (!raw || strcmp(raw, cases[i].raw))
			fail_msg("%s: args.raw should be '%s'", cases[i].name, cases[i].raw);
	}
	/* duplicate keys: an object with k (either value) or the raw text */
	dup = tr_group_one("I", "args-dup");
	k = tr_arg(dup, "k");
	assert_true((cJSON_IsNumber(k) && (k->valuedouble == 1 || k->valuedouble == 2)) ||
		    cJSON_IsString(tr_arg(dup, "raw")));
	/* 100000-deep nesting: kept as text, not parsed (no stack overflow) */
	raw = cJSON_GetStringValue(tr_arg(tr_group_one("I", "args-deep"), "raw"));
	assert_non_null(raw);
	assert_int_equal(strncmp(raw, "[[[[[[[[", 8), 0);
	/* invalid UTF-8 in args: repaired */
	raw = cJSON_GetStringValue(tr_arg(tr_group_one("I", "args-bad-utf8"), "raw"));
	assert_non_null(raw);
	assert_non_null(strstr(raw, REPLACEMENT));
}

/* (const char *)1 as name and args: the probe cannot read it. */
static void test_unreadable_pointers(void **state)
{
	cJSON *ev[4];

	(void)state;
	tr_group_need();
	/* the instant with name 1 and args 8, and the span named 1 */
	assert_int_equal(tr_find_all(&run, "I", "(unreadable)", ev, 4), 1);
	assert_int_equal(tr_find_all(&run, "X", "(unreadable)", ev, 4), 1);
	/* a NULL name is an event too (named "" or "(unreadable)") */
	/* all 17 CTRACE_INSTANTs of hostile.c and the 4 non-finite counter samples */
	assert_int_equal(tr_count(&run, "I"), 21);
}

static void test_bad_scope(void **state)
{
	const char *s;

	(void)state;
	tr_group_need();
	s = tr_str(tr_group_one("I", "scope-bogus"), "s");
	assert_non_null(s);
	assert_true(!strcmp(s, "g") || !strcmp(s, "p") || !strcmp(s, "t"));
}

static bool str_is(const cJSON *obj, const char *key, const char *want)
{
	const char *s = tr_str(obj, key);

	return s && !strcmp(s, want);
}

/* The "not a number" instant of counter `name` whose sample was `value`. */
static void non_finite_sample(const char *name, const char *value, const char *added)
{
	cJSON *ev;

	cJSON_ArrayForEach(ev, run.events) {
		cJSON *args = cJSON_GetObjectItem(ev, "args");

		if (str_is(ev, "ph", "I") && str_is(ev, "name", "ctrace: counter sample not a number") &&
		    str_is(args, "counter", name) && str_is(args, "value", value) &&
		    (!added || str_is(args, "added", added)))
			return;
	}
	fail_msg("no \"ctrace: counter sample not a number\" instant for %s = %s", name, value);
}

/*
 * NaN and infinities are not drawn: viewers take a counter with a string
 * value for a counter of strings. Every C carries a finite number; each
 * sample left out is an instant saying what it was, and is counted.
 */
static void test_non_finite_counters(void **state)
{
	cJSON *c[8], *meta;
	size_t n;

	(void)state;
	tr_group_need();
	n = tr_find_all(&run, "C", NULL, c, 8);
	for (size_t i = 0; i < n; i++) {
		cJSON *v = tr_arg(c[i], "value");

		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
			fail_msg("counter \"%s\" has a sample that is not a finite number",
				 tr_str(c[i], "name"));
	}
	/* nan = NaN, inf = +inf, -inf = -inf, inf += -inf: left out; nan = 1.5 drawn */
	assert_int_equal(n, 1);
	assert_string_equal(tr_str(c[0], "name"), "nan");
	assert_true(tr_num(cJSON_GetObjectItem(c[0], "args"), "value") == 1.5);
	non_finite_sample("nan", "NaN", NULL);
	non_finite_sample("inf", "Infinity", NULL);
	non_finite_sample("-inf", "-Infinity", NULL);
	non_finite_sample("inf", "-Infinity", "-Infinity"); /* 0 (none drawn yet) + -inf */
	meta = tr_meta(&run);
	assert_true(tr_num(meta, "non_finite_counter_samples") == 4);
}

static void test_pairing_mistakes(void **state)
{
	cJSON *meta, *m[8];
	size_t n;
	int pseudo = 0;

	(void)state;
	tr_group_need();
	/* The END of a span never begun: under -p, maybe begun before the tracer came */
	assert_null(tr_find(&run, "I", "ctrace: span end without begin"));
	meta = tr_meta(&run);
	assert_true(tr_num(meta, "unmatched_span_ends") == 0);
	assert_true(tr_num(meta, "spans_begun_before_tracing") == 1);
	assert_true(tr_num(meta, "unfinished_spans") == 0);
	/* NEW_PID with a NULL name still names its pseudo-process */
	n = tr_find_all(&run, "M", "process_name", m, 8);
	for (size_t i = 0; i < n; i++) {
		const char *name = tr_str(cJSON_GetObjectItem(m[i], "args"), "name");

		if (tr_num(m[i], "pid") >= 1073741824.0) {
			pseudo++;
			assert_non_null(name);
			assert_true(strlen(name) > 0);
		}
	}
	assert_int_equal(pseudo, 1);
}

/*
 * hostile exits right after its last event: the tracer must still name its
 * main thread after the program (it knew the name before the program ended).
 */
static void test_main_thread_named(void **state)
{
	cJSON *m;

	(void)state;
	tr_group_need();
	m = tr_find_meta(&run, "thread_name", run.pid, run.main_tid);
	assert_non_null(m);
	assert_string_equal(tr_str(cJSON_GetObjectItem(m, "args"), "name"), "hostile");
}

/* DevTools' engine reads the file and keeps the last instant. */
static void test_devtools_reads_it(void **state)
{
	cJSON *sum, *i;
	int after = 0, instants;

	(void)state;
	tr_group_need();
	sum = tr_checker_summary(run.trace_path);
	cJSON_ArrayForEach(i, cJSON_GetObjectItem(sum, "instants"))
		after += !strcmp(tr_str(i, "name"), "after");
	instants = cJSON_GetArraySize(cJSON_GetObjectItem(sum, "instants"));
	cJSON_Delete(sum);
	assert_int_equal(after, 1);
	assert_int_equal(instants, tr_count(&run, "I"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_valid),
		cmocka_unit_test(test_after_arrived),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_truncated_name),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_unreadable_pointers),
		cmocka_unit_test(test_bad_scope),
		cmocka_unit_test(test_non_finite_counters),
		cmocka_unit_test(test_pairing_mistakes),
		cmocka_unit_test(test_main_thread_named),
		cmocka_unit_test(test_devtools_reads_it),
	};

	return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
}
