// SPDX-License-Identifier: MIT
/*
 * test_otlp_export - the rules of userspace/encode/otlp/otlp_export.c and otlp_json.c
 * that real runs reach only by chance, fed through the observer as
 * chrome_trace.c feeds it and read back from -o FILE.otlp.json: parents
 * when spans come out of nesting order (the stop's unfinished ones), equal
 * edges, an instant in the tightest span around it or a span of its own,
 * the wait for a parent bounded by time and by count, async spans as roots,
 * args as typed attributes, untrusted bytes as valid UTF-8.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "encode/json/chrome_trace.h"
#include "encode/otlp/otlp_export.h"
#include "encode/otlp/otlp_json.h"

#define PID 4242
#define TID 4243
#define MS 1000000ull
#define BASE (1000000ull * MS) /* monotonic ns of the test's "start" */

struct run {
	struct otlp_export x;
	struct trace_facts facts;
	char dir[64], path[128];
	cJSON *spans[8192];
	size_t n;
	cJSON *docs[64];
	size_t n_docs;
};

static void start(struct run *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/otlp-unit-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/t.otlp.json", r->dir);
	r->facts.start_mono_ns = BASE;
	r->facts.start_wall_ns = BASE + 1700000000ull * 1000 * MS;
	assert_int_equal(otlp_export_open(&r->x, NULL, r->path), 0);
	assert_int_equal(otlp_export_start(&r->x, &r->facts), 0);
}

static const struct ct_text *T(const char *s)
{
	static struct ct_text t[16];
	static unsigned i;
	struct ct_text *p = &t[i++ % 16];

	*p = (struct ct_text){ s, s ? strlen(s) : 0, 0 };
	return p;
}

static void span(struct run *r, uint32_t tid, uint64_t b, uint64_t e, const char *name, const char *why)
{
	r->x.obs.span(r->x.obs.ctx, PID, tid, BASE + b, e - b, T(name), T(NULL), T(NULL), why);
}

static void instant(struct run *r, uint64_t ts, const char *name)
{
	r->x.obs.instant(r->x.obs.ctx, PID, TID, BASE + ts, T(name), 't', T(NULL));
}

/* Ends the export and reads every line of the file back. */
static void finish(struct run *r)
{
	char *text, *line, *save = NULL;
	FILE *f;
	long len;

	otlp_export_finish(&r->x);
	f = fopen(r->path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *d = cJSON_Parse(line), *rs, *ss, *sp;

		assert_non_null(d);
		r->docs[r->n_docs++] = d;
		cJSON_ArrayForEach(rs, cJSON_GetObjectItem(d, "resourceSpans"))
			cJSON_ArrayForEach(ss, cJSON_GetObjectItem(rs, "scopeSpans"))
				cJSON_ArrayForEach(sp, cJSON_GetObjectItem(ss, "spans"))
					r->spans[r->n++] = sp;
	}
	free(text);
}

static void stop(struct run *r)
{
	for (size_t i = 0; i < r->n_docs; i++)
		cJSON_Delete(r->docs[i]);
	otlp_export_close(&r->x, false);
	unlink(r->path);
	rmdir(r->dir);
}

static cJSON *named(struct run *r, const char *name)
{
	cJSON *hit = NULL;

	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(cJSON_GetObjectItem(r->spans[i], "name")->valuestring, name)) {
			assert_null(hit);
			hit = r->spans[i];
		}
	assert_non_null(hit);
	return hit;
}

static const char *parent_of(struct run *r, const char *name)
{
	cJSON *p = cJSON_GetObjectItem(named(r, name), "parentSpanId");

	return p ? p->valuestring : NULL;
}

static const char *id_of(struct run *r, const char *name)
{
	return cJSON_GetObjectItem(named(r, name), "spanId")->valuestring;
}

static size_t n_events(struct run *r, const char *name)
{
	return (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(named(r, name), "events"));
}

static const cJSON *attr(const cJSON *o, const char *key)
{
	cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItem(o, "attributes"))
		if (!strcmp(cJSON_GetObjectItem(a, "key")->valuestring, key))
			return cJSON_GetObjectItem(a, "value");
	return NULL;
}

/* Children before parents, the usual order: each gets the tightest one around it. */
static void test_parents_in_end_order(void **state)
{
	struct run r;

	(void)state;
	start(&r);
	span(&r, TID, 10, 20, "c1", NULL);
	span(&r, TID, 30, 40, "c2", NULL);
	span(&r, TID, 5, 50, "b", NULL);
	span(&r, TID, 60, 70, "c3", NULL);
	span(&r, TID, 0, 100, "a", NULL);
	span(&r, TID + 1, 1, 99, "other-thread", NULL); /* around them in time, not on their thread */
	finish(&r);
	assert_int_equal(r.n, 6);
	assert_string_equal(parent_of(&r, "c1"), id_of(&r, "b"));
	assert_string_equal(parent_of(&r, "c2"), id_of(&r, "b"));
	assert_string_equal(parent_of(&r, "b"), id_of(&r, "a"));
	assert_string_equal(parent_of(&r, "c3"), id_of(&r, "a"));
	assert_null(parent_of(&r, "a"));
	assert_null(parent_of(&r, "other-thread"));
	/* Unix ns: the monotonic time plus the offset taken at the start. */
	assert_string_equal(cJSON_GetObjectItem(named(&r, "c1"), "startTimeUnixNano")->valuestring,
			    "1700001000000000010"); /* BASE (10^15) + 10 + 1.7 * 10^18 */
	stop(&r);
}

/* The stop writes open spans in no order: they nest among themselves at the end. */
static void test_unfinished_nest_at_the_end(void **state)
{
	struct run r;

	(void)state;
	start(&r);
	instant(&r, 60, "in-inner");
	span(&r, TID, 52, 55, "done-in-inner", NULL);
	span(&r, TID, 0, 100, "outer", "still open when tracing stopped");
	span(&r, TID, 50, 100, "inner", "still open when tracing stopped");
	span(&r, TID, 20, 100, "middle", "still open when tracing stopped");
	finish(&r);
	assert_string_equal(parent_of(&r, "inner"), id_of(&r, "middle"));
	assert_string_equal(parent_of(&r, "middle"), id_of(&r, "outer"));
	assert_null(parent_of(&r, "outer"));
	assert_string_equal(parent_of(&r, "done-in-inner"), id_of(&r, "inner"));
	assert_int_equal(n_events(&r, "inner"), 1);
	assert_int_equal(n_events(&r, "outer"), 0);
	assert_true(cJSON_IsTrue(attr(named(&r, "inner"), "ctrace.unfinished") ?
				 cJSON_GetObjectItem(attr(named(&r, "inner"), "ctrace.unfinished"), "boolValue") : NULL));
	stop(&r);
}

/* Same edges: the one written first is the child (the model writes children first). */
static void test_equal_edges(void **state)
{
	struct run r;

	(void)state;
	start(&r);
	span(&r, TID, 10, 20, "child", NULL);
	span(&r, TID, 10, 20, "parent", NULL);
	finish(&r);
	assert_string_equal(parent_of(&r, "child"), id_of(&r, "parent"));
	assert_null(parent_of(&r, "parent"));
	assert_string_not_equal(id_of(&r, "child"), id_of(&r, "parent"));
	stop(&r);
}

/* An instant is an event of the tightest span around it; with none, a span of its own. */
static void test_instants(void **state)
{
	struct run r;
	cJSON *alone;

	(void)state;
	start(&r);
	instant(&r, 5, "before-all");
	instant(&r, 15, "in-inner");
	span(&r, TID, 10, 20, "inner", NULL);
	instant(&r, 25, "in-outer");
	span(&r, TID, 0, 30, "outer", NULL);
	finish(&r);
	assert_int_equal(n_events(&r, "inner"), 1);
	assert_int_equal(n_events(&r, "outer"), 2); /* before-all (at 5) and in-outer */
	stop(&r);
	start(&r);
	instant(&r, 5, "lonely");
	span(&r, TID, 10, 20, "later", NULL);
	finish(&r);
	alone = named(&r, "lonely");
	assert_string_equal(cJSON_GetObjectItem(alone, "startTimeUnixNano")->valuestring,
			    cJSON_GetObjectItem(alone, "endTimeUnixNano")->valuestring);
	assert_int_equal(n_events(&r, "lonely"), 1);
	assert_int_equal(n_events(&r, "later"), 0);
	stop(&r);
}

/* A span waits OTLP_HOLD_NS for a parent at most: then it is a root, whatever ends later. */
static void test_wait_bounded_by_time(void **state)
{
	struct run r;

	(void)state;
	start(&r);
	span(&r, TID, 10, 20, "early", NULL);
	otlp_export_tick(&r.x, BASE + 20 + OTLP_HOLD_NS / 2);
	span(&r, TID, 30, 40, "kept", NULL);
	otlp_export_tick(&r.x, BASE + 21 + OTLP_HOLD_NS); /* early has waited long enough, kept has not */
	span(&r, TID, 0, 50, "late-parent", NULL);
	finish(&r);
	assert_null(parent_of(&r, "early"));
	assert_string_equal(parent_of(&r, "kept"), id_of(&r, "late-parent"));
	assert_int_equal(r.x.parents_not_waited, 0);
	stop(&r);
}

/* And by count: past OTLP_PENDING_MAX waiting on a thread, the oldest go (256 at once), counted. */
static void test_wait_bounded_by_count(void **state)
{
	struct run r;
	char name[32];

	(void)state;
	start(&r);
	for (unsigned i = 0; i <= OTLP_PENDING_MAX; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		span(&r, TID, 10 * i + 1, 10 * i + 5, name, NULL);
	}
	span(&r, TID, 0, 10 * (OTLP_PENDING_MAX + 1), "all", NULL);
	finish(&r);
	assert_int_equal(r.n, OTLP_PENDING_MAX + 2);
	assert_int_equal(r.x.parents_not_waited, 256);
	assert_null(parent_of(&r, "s0"));
	assert_null(parent_of(&r, "s255"));
	assert_string_equal(parent_of(&r, "s256"), id_of(&r, "all"));
	assert_string_equal(parent_of(&r, "s4096"), id_of(&r, "all"));
	stop(&r);
}

/* And on all threads together: OTLP_WAITING_MAX at most, the memory it takes; the rest go, counted. */
static void test_wait_bounded_on_all_threads(void **state)
{
	struct run *r = calloc(1, sizeof(*r));
	char name[32];
	const unsigned threads = 20, each = 4000;

	(void)state;
	start(r);
	for (unsigned t = 0; t < threads; t++)
		for (unsigned i = 0; i < each; i++) {
			snprintf(name, sizeof(name), "t%u-%u", t, i);
			span(r, TID + t, 10 * i + 1, 10 * i + 5, name, NULL);
		}
	assert_true(r->x.waiting <= OTLP_WAITING_MAX);
	assert_true(r->x.waiting > OTLP_WAITING_MAX - 256); /* the last thread's 256 at once */
	assert_int_equal(r->x.parents_not_waited + r->x.waiting, threads * each);
	otlp_export_finish(&r->x);
	assert_int_equal(r->x.spans, threads * each);
	otlp_export_close(&r->x, true);
	rmdir(r->dir);
	free(r);
}

/* A span ended on another thread: a root, with the ending thread said. */
static void test_async_is_a_root(void **state)
{
	struct run r;

	(void)state;
	start(&r);
	r.x.obs.async_span(r.x.obs.ctx, PID, T("handoff"), TID, BASE + 10, T("{\"from\":\"a\"}"), TID + 1,
			   BASE + 20, T("{\"to\":\"b\"}"));
	span(&r, TID, 0, 30, "around", NULL);
	finish(&r);
	assert_null(parent_of(&r, "handoff"));
	assert_string_equal(cJSON_GetObjectItem(attr(named(&r, "handoff"), "ctrace.end_thread.id"), "intValue")->valuestring,
			    "4244");
	assert_string_equal(cJSON_GetObjectItem(attr(named(&r, "handoff"), "args.from"), "stringValue")->valuestring, "a");
	assert_string_equal(cJSON_GetObjectItem(attr(named(&r, "handoff"), "args.to"), "stringValue")->valuestring, "b");
	stop(&r);
}

/* Args as typed attributes; what is not an object, as one string. */
static void test_args_as_attributes(void **state)
{
	static const char args[] = "{\"s\":\"x\",\"i\":-3,\"big\":12345678901,\"d\":1.5,\"b\":true,\"o\":{\"k\":[1,2]},\"n\":null}";
	struct otlp_buf b = { 0 };
	bool first = true;
	cJSON *a, *v;

	(void)state;
	ob_lit(&b, "{\"attributes\":[");
	ob_attrs_from_args(&b, &first, "args", args, strlen(args));
	ob_attrs_from_args(&b, &first, "raw", "[1,2", 4);
	ob_lit(&b, "]}");
	a = cJSON_Parse(b.p);
	assert_non_null(a);
	assert_string_equal(cJSON_GetObjectItem(attr(a, "args.s"), "stringValue")->valuestring, "x");
	assert_string_equal(cJSON_GetObjectItem(attr(a, "args.i"), "intValue")->valuestring, "-3");
	assert_string_equal(cJSON_GetObjectItem(attr(a, "args.big"), "intValue")->valuestring, "12345678901");
	assert_true(cJSON_GetObjectItem(attr(a, "args.d"), "doubleValue")->valuedouble == 1.5);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(attr(a, "args.b"), "boolValue")));
	assert_string_equal(cJSON_GetObjectItem(attr(a, "args.o"), "stringValue")->valuestring, "{\"k\":[1,2]}");
	assert_string_equal(cJSON_GetObjectItem(attr(a, "args.n"), "stringValue")->valuestring, "null");
	v = cJSON_GetObjectItem(attr(a, "raw"), "stringValue");
	assert_string_equal(v->valuestring, "[1,2");
	cJSON_Delete(a);
	ob_free(&b);
}

/* The program's bytes are untrusted: ill-formed UTF-8 becomes U+FFFD, controls are escaped. */
static void test_strings_valid_utf8(void **state)
{
	static const char bad[] = "a\xff" "b\"\\\n\x01" "\xc3\xa9" "\xe2\x82"; /* é kept; a cut sequence */
	struct otlp_buf b = { 0 };
	cJSON *s;

	(void)state;
	ob_str(&b, bad, sizeof(bad) - 1);
	assert_string_equal(b.p, "\"a\xef\xbf\xbd" "b\\\"\\\\\\u000a\\u0001\xc3\xa9\xef\xbf\xbd\"");
	s = cJSON_Parse(b.p);
	assert_non_null(s);
	assert_string_equal(s->valuestring, "a\xef\xbf\xbd" "b\"\\\n\x01\xc3\xa9\xef\xbf\xbd");
	cJSON_Delete(s);
	ob_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parents_in_end_order),
		cmocka_unit_test(test_unfinished_nest_at_the_end),
		cmocka_unit_test(test_equal_edges),
		cmocka_unit_test(test_instants),
		cmocka_unit_test(test_wait_bounded_by_time),
		cmocka_unit_test(test_wait_bounded_by_count),
		cmocka_unit_test(test_wait_bounded_on_all_threads),
		cmocka_unit_test(test_async_is_a_root),
		cmocka_unit_test(test_args_as_attributes),
		cmocka_unit_test(test_strings_valid_utf8),
	};

	return cmocka_run_group_tests_name("otlp_export", tests, NULL, NULL);
}
