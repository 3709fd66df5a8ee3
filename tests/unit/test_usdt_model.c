// SPDX-License-Identifier: MIT
/*
 * test_usdt_model.c - what --usdt's hits become (userspace/model/usdt_model.c),
 * without the kernel: records as ctrace_usdt writes them go through the
 * trace model, and the JSON written is read back event by event. Typed
 * values, strings cut or unreadable, a demangled type far longer than its
 * mangled name, spans paired by name per thread, and records that are not
 * ctrace_usdt's (another version's, corrupted): counted, never written.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "encode/json/chrome_trace.h"
#include "encode/json/json_writer.h"
#include "model/trace_model.h"
#include "model/usdt_model.h"
#include "attach/usdt_spec.h"

#define PID 4000000u

struct harness {
	FILE *tmp;
	struct json_writer w;
	struct chrome_trace tf;
	struct trace_fanout fan;
	struct trace_stats stats;
	struct trace_model m;
	struct usdt_model um;
	struct usdt_specs specs;
	struct proc_facts target;
	struct trace_facts facts;
	cJSON *doc;
};

static struct harness *h;

static int setup(void **state)
{
	(void)state;
	h = calloc(1, sizeof(*h));
	h->tmp = tmpfile();
	assert_non_null(h->tmp);
	assert_int_equal(jw_init(&h->w, fileno(h->tmp), 64), 0);
	h->target.pid = h->target.ns_pid = (int)PID;
	snprintf(h->target.comm, sizeof(h->target.comm), "tester");
	h->facts.tracer_version = "test";
	h->facts.target = &h->target;
	chrome_trace_begin(&h->tf, &h->w, &h->facts);
	trace_fanout_init(&h->fan);
	trace_fanout_add(&h->fan, chrome_trace_encoder(&h->tf));
	trace_model_init(&h->m, &h->fan, &h->stats);
	trace_model_thread_name(&h->m, PID, PID, "tester", 6);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cJSON_Delete(h->doc);
	jw_free(&h->w);
	fclose(h->tmp);
	proc_facts_free(&h->target);
	free(h);
	return 0;
}

static void specs(const char *const *lines)
{
	char err[400];

	for (size_t i = 0; lines[i]; i++)
		if (usdt_specs_add(&h->specs, lines[i], err, sizeof(err)))
			fail_msg("%s", err);
	usdt_model_init(&h->um, &h->specs);
	h->m.usdt = &h->um;
	h->stats.usdt = &h->um;
}

/* A record as ctrace_usdt writes it: the values, then the strings part. */
struct rec {
	uint64_t values[CTRACE_USDT_ARGS];
	char strings[4096];
	size_t strings_len;
	struct ctrace_event ev;
};

static void rec_init(struct rec *r, size_t probe, unsigned n, uint64_t ts, uint32_t tid)
{
	memset(r, 0, sizeof(*r));
	r->ev.kind = CTRACE_KIND_USDT;
	r->ev.ts_ns = ts;
	r->ev.tgid = PID;
	r->ev.tid = tid;
	r->ev.arg[0] = usdt_probe_cookie(&h->specs, probe);
	r->ev.arg[1] = n;
}

static void rec_str(struct rec *r, unsigned arg, int status, const char *s)
{
	struct ctrace_usdt_str hd = { (uint8_t)arg, (uint8_t)status, (uint16_t)strlen(s) };

	memcpy(r->strings + r->strings_len, &hd, sizeof(hd));
	memcpy(r->strings + r->strings_len + sizeof(hd), s, hd.len);
	r->strings_len += sizeof(hd) + hd.len;
}

static void rec_send(struct rec *r)
{
	r->ev.name = (const char *)r->values;
	r->ev.name_len = r->ev.arg[1] * 8;
	r->ev.args = r->strings;
	r->ev.args_len = r->strings_len;
	trace_model_event(&h->m, &r->ev);
}

static cJSON *finish(uint64_t stop_ns)
{
	long size;
	char *text;

	trace_model_finish(&h->m, stop_ns);
	chrome_trace_end(&h->tf, &h->facts, &h->stats);
	assert_int_equal(jw_flush(&h->w), 0);
	size = ftell(h->tmp);
	text = calloc(1, (size_t)size + 1);
	rewind(h->tmp);
	assert_int_equal(fread(text, 1, (size_t)size, h->tmp), size);
	h->doc = cJSON_ParseWithOpts(text, NULL, 1);
	if (!h->doc)
		fail_msg("not JSON: %s", text);
	free(text);
	return cJSON_GetObjectItem(h->doc, "traceEvents");
}

/* The n-th event of phase ph (0: the first); NULL if none. */
static cJSON *nth(cJSON *events, const char *ph, int n)
{
	cJSON *e;

	cJSON_ArrayForEach(e, events)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph")), ph) && n-- == 0)
			return e;
	return NULL;
}

static cJSON *arg(cJSON *e, const char *key)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), key);
}

static cJSON *usdt_meta(void)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(h->doc, "metadata"), "usdt");
}

static void test_values_strings_and_a_long_type(void **state)
{
	static const char *const lines[] = { "p:hit(ARG1=str,ARG2=str,ARG3=cxxtype,ARG4=str)", NULL };
	/* A type whose demangled name (~6 KB) outgrows every buffer it could be put in. */
	char mangled[1100] = "St6vectorI";
	struct rec r;
	cJSON *e;

	(void)state;
	specs(lines);
	h->specs.probe[0].signed_args = 1; /* "-8@..." for ARG0 */
	for (int i = 0; i < 90; i++)
		strcat(mangled, "S_");
	strcat(mangled, "E");
	rec_init(&r, 0, 5, 5000, PID);
	r.values[0] = (uint64_t)-7;
	r.values[1] = r.values[2] = r.values[4] = 0x1000;
	rec_str(&r, 1, CTRACE_USDT_STR_OK, "a \"quoted\"\n string");
	rec_str(&r, 2, CTRACE_USDT_STR_FAULT, "");
	rec_str(&r, 3, CTRACE_USDT_STR_OK, mangled);
	rec_str(&r, 4, CTRACE_USDT_STR_TRUNCATED, "cut here");
	rec_send(&r);
	e = nth(finish(9000), "I", 0);
	assert_non_null(e);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), "p:hit");
	assert_true(arg(e, "arg0")->valuedouble == -7);
	assert_string_equal(cJSON_GetStringValue(arg(e, "arg1")), "a \"quoted\"\n string");
	assert_string_equal(cJSON_GetStringValue(arg(e, "arg2")), "(unreadable)");
	assert_non_null(strstr(cJSON_GetStringValue(arg(e, "arg4")), "cut here"));
	assert_true(strlen(cJSON_GetStringValue(arg(e, "arg4"))) > strlen("cut here")); /* marked cut */
	/* The long type: demangled as far as it fits, marked cut, or left out; never a broken text. */
	if (arg(e, "arg3"))
		assert_non_null(strstr(cJSON_GetStringValue(arg(e, "arg3")), "std::vector<"));
	assert_true(cJSON_GetObjectItem(usdt_meta(), "unreadable_strings")->valuedouble == 1);
	assert_true(cJSON_GetObjectItem(usdt_meta(), "cut_strings")->valuedouble == 1);
}

static void test_spans_pair_by_name_per_thread(void **state)
{
	static const char *const lines[] = { "p:in(ARG0=str)~p:out(ARG0=str),name=ARG0", NULL };
	static const struct { size_t probe; const char *name; uint32_t tid; } seq[] = {
		{ 1, "orphan", PID },      /* an end with no begin: counted */
		{ 0, "a", PID }, { 0, "b", PID },
		{ 0, "a", PID + 1 },       /* another thread's "a" */
		{ 1, "a", PID },           /* closes PID's "a": its "b" never ended */
		{ 1, "a", PID + 1 },
		{ 0, "open", PID },        /* open at the stop */
	};
	struct rec r;
	cJSON *events, *meta;

	(void)state;
	specs(lines);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		rec_init(&r, seq[i].probe, 1, 1000 * (i + 1), seq[i].tid);
		rec_str(&r, 0, CTRACE_USDT_STR_OK, seq[i].name);
		rec_send(&r);
	}
	events = finish(20000);
	meta = cJSON_GetArrayItem(cJSON_GetObjectItem(usdt_meta(), "specs"), 0);
	assert_true(cJSON_GetObjectItem(meta, "spans")->valuedouble == 2);
	assert_true(cJSON_GetObjectItem(meta, "ends_without_begin")->valuedouble == 1);
	assert_true(cJSON_GetObjectItem(meta, "begins_not_ended")->valuedouble == 1);
	assert_true(cJSON_GetObjectItem(meta, "unfinished")->valuedouble == 1);
	/* PID's "b" (unfinished, ended with "a"), PID's "a", PID+1's "a", then "open" at the stop. */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(nth(events, "X", 0), "name")), "b");
	assert_true(cJSON_IsTrue(arg(nth(events, "X", 0), "unfinished")));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(nth(events, "X", 1), "name")), "a");
	assert_true(cJSON_GetObjectItem(nth(events, "X", 1), "dur")->valuedouble == 3.0); /* 2000 to 5000 ns */
	assert_true(cJSON_GetObjectItem(nth(events, "X", 2), "tid")->valuedouble == PID + 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(nth(events, "X", 3), "name")), "open");
	assert_null(nth(events, "X", 4));
}

static void test_records_not_ours_are_counted(void **state)
{
	static const char *const lines[] = { "p:hit(ARG0=str)", NULL };
	struct rec r;
	struct ctrace_usdt_str bad = { 0, CTRACE_USDT_STR_OK, 500 };

	(void)state;
	specs(lines);
	rec_init(&r, 0, 13, 1000, PID); /* more arguments than there can be */
	rec_send(&r);
	rec_init(&r, 0, 1, 2000, PID);
	r.ev.arg[0] ^= 1ull << 40; /* another way to read them: not this probe's cookie */
	rec_send(&r);
	rec_init(&r, 0, 1, 3000, PID);
	memcpy(r.strings, &bad, sizeof(bad)); /* a string longer than the record */
	r.strings_len = sizeof(bad) + 10;
	rec_send(&r);
	rec_init(&r, 0, 1, 4000, PID);
	rec_str(&r, 5, CTRACE_USDT_STR_OK, "x"); /* of an argument the hit does not have */
	rec_send(&r);
	assert_null(nth(finish(9000), "I", 0));
	assert_true(cJSON_GetObjectItem(usdt_meta(), "unknown_records")->valuedouble == 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_values_strings_and_a_long_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spans_pair_by_name_per_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records_not_ours_are_counted, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
