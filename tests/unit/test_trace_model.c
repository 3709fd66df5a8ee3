// SPDX-License-Identifier: MIT
/*
 * The loader's logic without the kernel or a process: decoded events and
 * the facts of processes (thread names) go into the trace model, and what
 * it says is checked event by event (contexts, ids, counters, span
 * pairing, unfinished spans, names): as typed events, kept by a recording
 * encoder (trace_record.h), and, for what is the JSON's own (nest_ties.h,
 * metadata, escaping), as the JSON the JSON encoder beside it writes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "encode/json/json_writer.h"
#include "encode/json/chrome_trace.h"
#include "model/trace_model.h"
#include "trace_record.h"

/* cmocka 1.1.5 (Debian 12) has no assert_double_equal. */
#define assert_near(a, b, eps)                                                 \
	do {                                                                   \
		double a_ = (a), b_ = (b);                                     \
		if (!(fabs(a_ - b_) <= (eps)))                                 \
			fail_msg("%.9g != %.9g", a_, b_);                      \
	} while (0)

/*
 * No real process: the model reads nothing, its names are the facts it is
 * told (the harness names PID's main thread "tester"; TID2 has no name).
 */
#define PID 4000000u
#define TID2 4000001u

struct harness {
	FILE *tmp;
	struct json_writer w;
	struct chrome_trace tf;
	struct trace_fanout fan;
	struct trace_record rec; /* every typed event the model said */
	struct trace_stats stats;
	struct trace_model m;
	struct proc_facts target;
	struct trace_facts facts;
	cJSON *doc;
	uint32_t pid;
};

static int setup(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));

	h->pid = PID;
	h->tmp = tmpfile();
	assert_non_null(h->tmp);
	assert_int_equal(jw_init(&h->w, fileno(h->tmp), 64), 0);
	h->target.pid = h->target.ns_pid = (int)h->pid;
	snprintf(h->target.comm, sizeof(h->target.comm), "tester");
	h->facts.tracer_version = "test";
	h->facts.target = &h->target;
	h->facts.start_wall_ns = 1;
	h->facts.start_mono_ns = 1000;
	chrome_trace_begin(&h->tf, &h->w, &h->facts);
	trace_fanout_init(&h->fan);
	trace_fanout_add(&h->fan, chrome_trace_encoder(&h->tf));
	trace_fanout_add(&h->fan, trace_record_encoder(&h->rec));
	trace_model_init(&h->m, &h->fan, &h->stats);
	trace_model_thread_name(&h->m, h->pid, h->pid, "tester", 6);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;

	cJSON_Delete(h->doc);
	trace_record_free(&h->rec);
	jw_free(&h->w);
	fclose(h->tmp);
	proc_facts_free(&h->target);
	free(h);
	return 0;
}

/* Ends the trace and parses what was written. */
static cJSON *finish(struct harness *h, uint64_t stop_ns)
{
	long size;
	char *text;

	trace_model_finish(&h->m, stop_ns);
	h->stats.stop_mono_ns = stop_ns;
	chrome_trace_end(&h->tf, &h->facts, &h->stats);
	assert_int_equal(jw_flush(&h->w), 0);
	size = ftell(h->tmp);
	text = calloc(1, size + 1);
	rewind(h->tmp);
	assert_int_equal(fread(text, 1, size, h->tmp), size);
	h->doc = cJSON_ParseWithOpts(text, NULL, 1);
	if (!h->doc)
		fail_msg("not JSON: %s", text);
	free(text);
	return cJSON_GetObjectItem(h->doc, "traceEvents");
}

static struct ctrace_event ev(uint16_t kind, uint64_t ts, uint32_t tgid,
			      uint32_t tid)
{
	struct ctrace_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.ts_ns = ts;
	e.tgid = tgid;
	e.tid = tid;
	return e;
}

static void with_name(struct ctrace_event *e, const char *name)
{
	e->name = name;
	e->name_len = strlen(name);
}

static void with_args(struct ctrace_event *e, const char *args)
{
	e->args = args;
	e->args_len = strlen(args);
}

static void begin(struct harness *h, uint64_t ts, uint32_t tid, uint64_t marker,
		  uint64_t span, const char *name, const char *args)
{
	struct ctrace_event e = ev(CTRACE_KIND_SPAN_BEGIN, ts, h->pid, tid);

	e.arg[0] = marker;
	e.arg[1] = span;
	with_name(&e, name);
	if (args)
		with_args(&e, args);
	trace_model_event(&h->m, &e);
}

static void end(struct harness *h, uint64_t ts, uint32_t tid, uint64_t span,
		const char *args)
{
	struct ctrace_event e = ev(CTRACE_KIND_SPAN_END, ts, h->pid, tid);

	e.arg[0] = span;
	if (args)
		with_args(&e, args);
	trace_model_event(&h->m, &e);
}

static void counter(struct harness *h, uint16_t kind, uint64_t ts, uint64_t marker,
		    const char *name, double v)
{
	struct ctrace_event e = ev(kind, ts, h->pid, h->pid);

	e.arg[0] = marker;
	memcpy(&e.arg[2], &v, sizeof(v));
	with_name(&e, name);
	trace_model_event(&h->m, &e);
}

static void new_pid(struct harness *h, uint64_t marker, const char *pname)
{
	struct ctrace_event e = ev(CTRACE_KIND_NEW_PID, 1, h->pid, h->pid);

	e.arg[0] = marker;
	with_name(&e, pname);
	trace_model_event(&h->m, &e);
}

/* The n-th event (0-based) with this phase and name, or NULL. */
static cJSON *find(cJSON *events, const char *ph, const char *name, int n)
{
	cJSON *e;

	cJSON_ArrayForEach(e, events) {
		cJSON *p = cJSON_GetObjectItem(e, "ph"), *nm = cJSON_GetObjectItem(e, "name");

		if (p && nm && !strcmp(p->valuestring, ph) && !strcmp(nm->valuestring, name) && n-- == 0)
			return e;
	}
	return NULL;
}

static double num(cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItem(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", key);
	return v->valuedouble;
}

static const char *str(cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItem(o, key);

	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", key);
	return v->valuestring;
}

static void test_same_thread_span_is_complete_event(void **state)
{
	struct harness *h = *state;
	const struct trace_event *x;
	cJSON *events, *args;

	begin(h, 2000, h->pid, 0, 0x10, "outer", "{\"a\":1}");
	begin(h, 2500, h->pid, 0, 0x20, "inner", NULL);
	end(h, 3000, h->pid, 0x20, NULL);
	end(h, 4000, h->pid, 0x10, "{\"b\":2}");
	events = finish(h, 5000);

	x = trace_record_find(&h->rec, TE_COMPLETE, "outer", 0);
	assert_non_null(x);
	assert_int_equal(x->pid, h->pid);
	assert_int_equal(x->tid, h->pid);
	assert_int_equal(x->ts_ns, 2000);
	assert_int_equal(x->dur_ns, 2000);
	assert_string_equal(x->args.s, "{\"a\":1}");     /* the begin's args */
	assert_string_equal(x->end_args.s, "{\"b\":2}"); /* and the end's */
	assert_null(x->unfinished);
	x = trace_record_find(&h->rec, TE_COMPLETE, "inner", 0);
	assert_non_null(x);
	assert_int_equal(x->ts_ns, 2500);
	assert_int_equal(x->dur_ns, 500);
	assert_int_equal(x->args.n + x->end_args.n, 0);
	/* The inner ended first: said first */
	assert_true(x < trace_record_find(&h->rec, TE_COMPLETE, "outer", 0));
	/* The JSON encoder merges the two ends' args into one object */
	args = cJSON_GetObjectItem(find(events, "X", "outer", 0), "args");
	assert_int_equal((int)num(args, "a"), 1);
	assert_int_equal((int)num(args, "b"), 2);
	assert_null(cJSON_GetObjectItem(find(events, "X", "inner", 0), "args")); /* none given: none written */
	assert_int_equal(h->stats.unfinished_spans, 0);
}

/*
 * Two spans of a thread begun at the same nanosecond (the TSC's 10 ns
 * steps on AMD hosts): the X's are written inner first, and the outer one
 * begins 1 ns before the inner (nest_ties.h), whether it ended or was
 * still open at the stop; counted in metadata.
 */
/* The X's outer and inner: inner at begin_us, outer 1 ns before it and ending at end_us. */
static void assert_outer_just_before(cJSON *events, const char *outer_name, const char *inner_name,
				     double begin_us, double end_us)
{
	cJSON *outer = find(events, "X", outer_name, 0), *inner = find(events, "X", inner_name, 0);

	assert_non_null(inner);
	assert_non_null(outer);
	assert_near(num(inner, "ts"), begin_us, 1e-9);
	assert_near(num(outer, "ts"), begin_us - 0.001, 1e-9);
	assert_near(num(outer, "ts") + num(outer, "dur"), end_us, 1e-9); /* its end kept */
}

static void test_tied_begins_written_nested(void **state)
{
	struct harness *h = *state;
	cJSON *events, *md;

	begin(h, 2000, h->pid, 0, 0x10, "outer", NULL);
	begin(h, 2000, h->pid, 0, 0x20, "inner", NULL);
	end(h, 3000, h->pid, 0x20, NULL);
	end(h, 4000, h->pid, 0x10, NULL);
	begin(h, 5000, h->pid, 0, 0x30, "open outer", NULL);
	begin(h, 5000, h->pid, 0, 0x40, "open inner", NULL);
	end(h, 6000, h->pid, 0x40, NULL);
	events = finish(h, 7000);

	assert_outer_just_before(events, "outer", "inner", 2.0, 4.0);
	assert_outer_just_before(events, "open outer", "open inner", 5.0, 7.0);
	md = cJSON_GetObjectItem(h->doc, "metadata");
	assert_int_equal((int)num(md, "slice_begin_ties_moved"), 2);
	assert_int_equal((int)num(md, "slice_begin_ties_left"), 0);
}

static void test_cross_thread_span_is_async_pair(void **state)
{
	struct harness *h = *state;
	const struct trace_event *a, *a2;
	cJSON *events, *b, *e, *b2;

	begin(h, 2000, h->pid, 0, 0x10, "request", NULL);
	end(h, 3000, TID2, 0x10, "{\"status\":\"ok\"}");
	begin(h, 4000, h->pid, 0, 0x10, "request", NULL); /* the address reused */
	end(h, 5000, TID2, 0x10, NULL);
	events = finish(h, 6000);

	/* The model: one async pair a span, its two threads and times, ids unique and never 0 */
	a = trace_record_find(&h->rec, TE_ASYNC, "request", 0);
	a2 = trace_record_find(&h->rec, TE_ASYNC, "request", 1);
	assert_non_null(a);
	assert_non_null(a2);
	assert_null(trace_record_find(&h->rec, TE_COMPLETE, "request", 0));
	assert_int_equal(a->pid, h->pid);
	assert_int_equal(a->tid, h->pid);
	assert_int_equal(a->end_tid, TID2);
	assert_int_equal(a->ts_ns, 2000);
	assert_int_equal(a->end_ns, 3000);
	assert_string_equal(a->end_args.s, "{\"status\":\"ok\"}");
	assert_int_not_equal(a->id, 0); /* DevTools ignores id 0 */
	assert_int_not_equal(a->id, a2->id);
	/* The JSON encoder: a "b"/"e" pair of one id */
	b = find(events, "b", "request", 0);
	e = find(events, "e", "request", 0);
	b2 = find(events, "b", "request", 1);
	assert_non_null(b);
	assert_non_null(e);
	assert_non_null(b2);
	assert_string_equal(str(b, "cat"), "ctrace.async");
	assert_string_equal(str(b, "id"), str(e, "id"));
	assert_string_not_equal(str(b, "id"), str(b2, "id")); /* unique per span */
	assert_string_not_equal(str(b, "id"), "0x0"); /* DevTools ignores id 0 */
	assert_int_equal((int)num(b, "tid"), (int)h->pid);
	assert_int_equal((int)num(e, "tid"), (int)TID2);
	assert_near(num(e, "ts"), 3.0, 1e-9);
	assert_string_equal(str(cJSON_GetObjectItem(e, "args"), "status"), "ok");
}

static void test_unfinished_and_unmatched_spans(void **state)
{
	struct harness *h = *state;
	const struct trace_event *t;
	cJSON *events, *x, *i, *md;

	begin(h, 2000, h->pid, 0, 0x10, "never ends", "{\"k\":\"v\"}");
	end(h, 2500, h->pid, 0x98, NULL); /* maybe begun before the tracer came: counted */
	end(h, 2600, h->pid, 0x98, NULL); /* ended twice: a mistake */
	{
		/* Another process, traced from its first instruction: only a mistake. */
		struct ctrace_event e = ev(CTRACE_KIND_SPAN_END, 2700, h->pid + 1, h->pid + 1);

		e.arg[0] = 0x99;
		trace_model_traced_from_start(&h->m, h->pid + 1);
		trace_model_event(&h->m, &e);
	}
	events = finish(h, 7000);

	/* The model: the open span closed at the stop, said unfinished, its args kept */
	t = trace_record_find(&h->rec, TE_COMPLETE, "never ends", 0);
	assert_non_null(t);
	assert_int_equal(t->dur_ns, 5000);
	assert_string_equal(t->unfinished, "still open when tracing stopped");
	assert_false(t->open_at_dump);
	assert_string_equal(t->args.s, "{\"k\":\"v\"}");
	/* Two ends without a begin said (one counted only), by address */
	t = trace_record_find(&h->rec, TE_NOTICE, "ctrace: span end without begin", 0);
	assert_non_null(t);
	assert_int_equal(t->scope, 't');
	assert_string_equal(trace_record_arg(t, "span")->s, "0x98");
	t = trace_record_find(&h->rec, TE_NOTICE, "ctrace: span end without begin", 1);
	assert_non_null(t);
	assert_int_equal(t->pid, h->pid + 1);
	assert_string_equal(trace_record_arg(t, "span")->s, "0x99");
	assert_null(trace_record_find(&h->rec, TE_NOTICE, "ctrace: span end without begin", 2));
	/* And the JSON encoder's rendering of them */
	x = find(events, "X", "never ends", 0);
	assert_non_null(x);
	assert_near(num(x, "dur"), 5.0, 1e-9); /* closed at the stop */
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(x, "args"), "unfinished")));
	assert_string_equal(str(cJSON_GetObjectItem(x, "args"), "k"), "v");
	i = find(events, "I", "ctrace: span end without begin", 0);
	assert_non_null(i);
	assert_string_equal(str(cJSON_GetObjectItem(i, "args"), "span"), "0x98");
	i = find(events, "I", "ctrace: span end without begin", 1);
	assert_non_null(i);
	assert_string_equal(str(cJSON_GetObjectItem(i, "args"), "span"), "0x99");
	assert_null(find(events, "I", "ctrace: span end without begin", 2));
	md = cJSON_GetObjectItem(h->doc, "metadata");
	assert_int_equal((int)num(md, "unfinished_spans"), 1);
	assert_int_equal((int)num(md, "unmatched_span_ends"), 2);
	assert_int_equal((int)num(md, "spans_begun_before_tracing"), 1);
}

static void test_counters_per_context(void **state)
{
	struct harness *h = *state;
	const struct trace_event *c;
	double expect_default[] = { 5, 7.5, 6.5 }, expect_pseudo[] = { 1, 2 };
	int k = 0, d = 0, p = 0;
	uint32_t pseudo = 0;

	counter(h, CTRACE_KIND_COUNTER_SET, 2000, 0, "c", 5);
	new_pid(h, 0xabc, "pseudo");
	counter(h, CTRACE_KIND_COUNTER_SET, 2100, 0xabc, "c", 1);
	counter(h, CTRACE_KIND_COUNTER_ADD, 2200, 0, "c", 2.5);
	counter(h, CTRACE_KIND_COUNTER_ADD, 2300, 0xabc, "c", 1);
	counter(h, CTRACE_KIND_COUNTER_ADD, 2400, 0, "c", -1);
	finish(h, 3000);

	/* Each context's counter keeps its own sum; the pseudo-process is named before its first sample */
	c = trace_record_find(&h->rec, TE_PROCESS_NAME, "pseudo", 0);
	assert_non_null(c);
	pseudo = c->pid;
	assert_true(pseudo >= CTRACE_PSEUDO_BASE);
	for (; (c = trace_record_find(&h->rec, TE_COUNTER, "c", k)); k++) {
		if (c->pid == h->pid) {
			assert_near(c->value, expect_default[d++], 0);
		} else {
			assert_int_equal(c->pid, pseudo);
			assert_near(c->value, expect_pseudo[p++], 0);
		}
	}
	assert_int_equal(k, 5);
	assert_int_equal(d, 3);
	assert_int_equal(p, 2);
}

static void test_markers_and_contexts(void **state)
{
	struct harness *h = *state;
	cJSON *events, *meta, *i1, *i2, *i3, *tn;
	struct ctrace_event e;
	uint32_t pseudo;

	new_pid(h, 0xabc, "pseudo A");
	e = ev(CTRACE_KIND_INSTANT, 2000, h->pid, h->pid);
	e.arg[0] = 0xabc;
	e.arg[2] = 'g';
	with_name(&e, "in pseudo");
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_DISCARD, 2100, h->pid, h->pid);
	e.arg[0] = 0xabc;
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_INSTANT, 2200, h->pid, h->pid);
	e.arg[0] = 0xabc;
	e.arg[2] = 'p';
	with_name(&e, "after discard");
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_INSTANT, 2300, h->pid, h->pid);
	e.arg[2] = 'x'; /* not a scope: the thread scope */
	with_name(&e, "odd scope");
	trace_model_event(&h->m, &e);
	events = finish(h, 3000);

	i1 = find(events, "I", "in pseudo", 0);
	assert_non_null(i1);
	pseudo = (uint32_t)num(i1, "pid");
	assert_true(pseudo >= CTRACE_PSEUDO_BASE && pseudo < 0x80000000u);
	assert_true((uint32_t)num(i1, "tid") >= CTRACE_PSEUDO_BASE); /* a pseudo tid */
	assert_string_equal(str(i1, "s"), "g");
	meta = find(events, "M", "process_name", 0);
	assert_non_null(meta);
	/* The pseudo-process is named, with its own pid. */
	for (int k = 0; (meta = find(events, "M", "process_name", k)); k++)
		if ((uint32_t)num(meta, "pid") == pseudo)
			break;
	assert_non_null(meta);
	assert_string_equal(str(cJSON_GetObjectItem(meta, "args"), "name"), "pseudo A");
	/* The pseudo thread's name tells the real tid. */
	for (int k = 0; (tn = find(events, "M", "thread_name", k)); k++)
		if ((uint32_t)num(tn, "pid") == pseudo)
			break;
	assert_non_null(tn);
	{
		char want[32];

		snprintf(want, sizeof(want), "tester (tid %u)", h->pid);
		assert_string_equal(str(cJSON_GetObjectItem(tn, "args"), "name"), want);
	}
	i2 = find(events, "I", "after discard", 0);
	assert_int_equal((uint32_t)num(i2, "pid"), h->pid);
	assert_string_equal(str(i2, "s"), "p");
	i3 = find(events, "I", "odd scope", 0);
	assert_string_equal(str(i3, "s"), "t");
}

/* The name metadata of pid (and tid, for thread_name), the n-th one; NULL if none. */
static const char *name_of(cJSON *events, const char *what, uint32_t pid, uint32_t tid, int n)
{
	cJSON *m;

	for (int k = 0; (m = find(events, "M", what, k)); k++)
		if ((uint32_t)num(m, "pid") == pid && (uint32_t)num(m, "tid") == tid && n-- == 0)
			return str(cJSON_GetObjectItem(m, "args"), "name");
	return NULL;
}

/* The index of e in traceEvents. */
static int index_of(cJSON *events, cJSON *e)
{
	int i = 0;

	for (cJSON *x = events->child; x; x = x->next, i++)
		if (x == e)
			return i;
	return -1;
}

/*
 * Names come from the facts the model is told, nothing else: a thread
 * named before its first event, renamed after; a thread never named; a
 * forked child named by its fork record; an exec'd process by the name
 * given with its exec, and not renamed when none was.
 */
static void test_names_are_the_facts_told(void **state)
{
	struct harness *h = *state;
	const uint32_t child = PID + 10, tid3 = PID + 3;
	struct ctrace_event e;
	cJSON *events, *exec1, *meta;

	trace_model_thread_name(&h->m, h->pid, TID2, "worker", 6);
	e = ev(CTRACE_KIND_INSTANT, 2000, h->pid, TID2);
	with_name(&e, "on worker");
	trace_model_event(&h->m, &e);
	trace_model_thread_name(&h->m, h->pid, TID2, "worker-2", 8);  /* renamed */
	trace_model_thread_name(&h->m, h->pid, TID2, "worker-2", 8);  /* the same again: nothing */
	e = ev(CTRACE_KIND_INSTANT, 2100, h->pid, tid3);
	with_name(&e, "on unnamed");
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_FORK, 2200, h->pid, h->pid);
	e.arg[0] = h->pid;
	e.arg[1] = child;
	with_name(&e, "tester");
	trace_model_event(&h->m, &e);
	trace_model_exec_name(&h->m, h->pid, "newprog", 7);
	e = ev(CTRACE_KIND_EXEC, 2300, h->pid, h->pid);
	e.arg[0] = h->pid;
	e.arg[1] = h->pid;
	with_name(&e, "/usr/bin/newprog");
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_EXEC, 2400, child, child); /* no name given: gone already */
	e.arg[0] = child;
	e.arg[1] = child;
	with_name(&e, "/usr/bin/other");
	trace_model_event(&h->m, &e);
	events = finish(h, 3000);

	assert_string_equal(name_of(events, "process_name", h->pid, h->pid, 0), "tester");
	assert_string_equal(name_of(events, "thread_name", h->pid, TID2, 0), "worker");
	assert_string_equal(name_of(events, "thread_name", h->pid, TID2, 1), "worker-2");
	assert_null(name_of(events, "thread_name", h->pid, TID2, 2));
	{
		char want[48];

		snprintf(want, sizeof(want), "thread (tid %u)", tid3);
		assert_string_equal(name_of(events, "thread_name", h->pid, tid3, 0), want);
	}
	assert_int_equal((int)num(cJSON_GetObjectItem(find(events, "I", "ctrace: fork", 0), "args"),
				  "child_pid"), (int)child);
	assert_string_equal(name_of(events, "process_name", child, child, 0), "tester");
	exec1 = find(events, "I", "ctrace: exec", 0);
	assert_non_null(exec1);
	assert_string_equal(str(cJSON_GetObjectItem(exec1, "args"), "path"), "/usr/bin/newprog");
	assert_string_equal(name_of(events, "process_name", h->pid, h->pid, 1), "newprog");
	meta = find(events, "M", "process_name", 0);
	for (int k = 0; (meta = find(events, "M", "process_name", k)); k++)
		if (!strcmp(str(cJSON_GetObjectItem(meta, "args"), "name"), "newprog"))
			break;
	assert_int_equal(index_of(events, meta), index_of(events, exec1) + 1); /* right after */
	assert_non_null(find(events, "I", "ctrace: exec", 1));
	assert_null(name_of(events, "process_name", child, child, 1)); /* not renamed */
}

static void test_hostile_strings_stay_valid(void **state)
{
	struct harness *h = *state;
	cJSON *events, *i;
	struct ctrace_event e = ev(CTRACE_KIND_INSTANT, 2000, h->pid, h->pid);
	static const char bad_name[] = "q\"b\\\x01\xff\xc0\x80z";

	e.name = bad_name;
	e.name_len = sizeof(bad_name) - 1;
	e.arg[2] = 't';
	with_args(&e, "[1,2");
	trace_model_event(&h->m, &e);
	e = ev(CTRACE_KIND_INSTANT, 2100, h->pid, h->pid);
	with_name(&e, "cut");
	e.name_flags = CTRACE_STR_TRUNCATED;
	e.args_flags = CTRACE_STR_FAULT;
	trace_model_event(&h->m, &e);
	counter(h, CTRACE_KIND_COUNTER_SET, 2200, 0, "nan", NAN);
	counter(h, CTRACE_KIND_COUNTER_SET, 2300, 0, "CpuProfile", 1);
	events = finish(h, 3000);

	/* DevTools would drop every process for an event of this name. */
	assert_null(find(events, "C", "CpuProfile", 0));
	assert_non_null(find(events, "C", "CpuProfile (renamed by ctrace)", 0));

	i = find(events, "I", "q\"b\\\x01\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz", 0);
	assert_non_null(i);
	assert_string_equal(str(cJSON_GetObjectItem(i, "args"), "raw"), "[1,2");
	i = find(events, "I", "cut\xe2\x80\xa6[truncated]", 0);
	assert_non_null(i);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(i, "args"), "args_unreadable")));
	/* NaN is left out of the counter's track, shown as an instant, counted. */
	assert_null(find(events, "C", "nan", 0));
	i = find(events, "I", "ctrace: counter sample not a number", 0);
	assert_non_null(i);
	assert_string_equal(str(cJSON_GetObjectItem(i, "args"), "counter"), "nan");
	assert_string_equal(str(cJSON_GetObjectItem(i, "args"), "value"), "NaN");
	assert_int_equal(h->stats.non_finite_counter_samples, 1);
}

/* Instants "ctrace: memory bound reached" for `table`. */
static int bound_notices(cJSON *events, const char *table)
{
	cJSON *e;
	int n = 0;

	for (int k = 0; (e = find(events, "I", "ctrace: memory bound reached", k)); k++)
		if (!strcmp(str(cJSON_GetObjectItem(e, "args"), "table"), table))
			n++;
	return n;
}

static double evicted_in_metadata(struct harness *h, const char *table)
{
	cJSON *mem = cJSON_GetObjectItem(cJSON_GetObjectItem(h->doc, "metadata"), "memory");

	return num(cJSON_GetObjectItem(cJSON_GetObjectItem(mem, "tables"), table), "evicted");
}

/*
 * Past its bound, the oldest open span is written as unfinished at the
 * time of the BEGIN that evicted it; its END is then counted, not shown.
 */
static void test_oldest_open_span_evicted_as_unfinished(void **state)
{
	struct harness *h = *state;
	cJSON *events, *a, *b, *c;

	h->m.b_spans.limit = 1; /* room for the newest only */
	begin(h, 100, h->pid, 0, 0x10, "A", NULL);
	begin(h, 200, h->pid, 0, 0x20, "B", NULL);
	begin(h, 300, h->pid, 0, 0x30, "C", NULL);
	end(h, 400, h->pid, 0x10, NULL);
	end(h, 500, h->pid, 0x30, NULL);
	events = finish(h, 3000);

	a = find(events, "X", "A", 0);
	assert_non_null(a);
	assert_near(num(a, "dur"), 0.1, 1e-9); /* 100 -> 200 ns, in us */
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "args"), "unfinished")));
	assert_non_null(strstr(str(cJSON_GetObjectItem(a, "args"), "unfinished_reason"), "evicted"));
	b = find(events, "X", "B", 0);
	assert_non_null(b);
	assert_near(num(b, "dur"), 0.1, 1e-9);
	c = find(events, "X", "C", 0);
	assert_non_null(c);
	assert_near(num(c, "dur"), 0.2, 1e-9);
	assert_null(cJSON_GetObjectItem(c, "args")); /* ended: a plain span */
	assert_null(find(events, "I", "ctrace: span end without begin", 0));
	assert_int_equal(h->stats.ends_of_evicted_spans, 1);
	assert_int_equal(h->stats.unfinished_spans, 2);
	assert_int_equal(bound_notices(events, "open_spans"), 1); /* two evictions, one notice */
	assert_near(evicted_in_metadata(h, "open_spans"), 2, 0);
}

/* The counter updated least recently goes first; an ADD to it starts again from 0. */
static void test_least_recently_updated_counter_evicted(void **state)
{
	struct harness *h = *state;
	cJSON *events;

	counter(h, CTRACE_KIND_COUNTER_ADD, 100, 0, "a", 1);
	h->m.b_counters.limit = 2 * h->m.b_counters.bytes; /* room for two of these */
	counter(h, CTRACE_KIND_COUNTER_ADD, 200, 0, "b", 1);
	counter(h, CTRACE_KIND_COUNTER_ADD, 300, 0, "a", 1); /* a: 2, now the newest */
	counter(h, CTRACE_KIND_COUNTER_ADD, 400, 0, "c", 1); /* evicts b */
	counter(h, CTRACE_KIND_COUNTER_ADD, 500, 0, "a", 1); /* a: 3, kept */
	counter(h, CTRACE_KIND_COUNTER_ADD, 600, 0, "b", 1); /* b: 1 again, evicts c */
	events = finish(h, 3000);

	assert_near(num(cJSON_GetObjectItem(find(events, "C", "a", 2), "args"), "value"), 3, 0);
	assert_near(num(cJSON_GetObjectItem(find(events, "C", "b", 1), "args"), "value"), 1, 0);
	assert_int_equal(bound_notices(events, "counters"), 1);
	assert_near(evicted_in_metadata(h, "counters"), 2, 0);
}

/* The marker used least recently is discarded: its events go to the real process. */
static void test_least_recently_used_marker_discarded(void **state)
{
	struct harness *h = *state;
	struct ctrace_event e;
	cJSON *events, *i1, *i2;

	h->m.b_contexts.limit = 1;
	new_pid(h, 0xa, "pseudo A");
	new_pid(h, 0xb, "pseudo B"); /* evicts A */
	e = ev(CTRACE_KIND_INSTANT, 2000, h->pid, h->pid);
	e.arg[0] = 0xa;
	with_name(&e, "was in A");
	trace_model_event(&h->m, &e);
	e.arg[0] = 0xb;
	with_name(&e, "in B");
	trace_model_event(&h->m, &e);
	events = finish(h, 3000);

	i1 = find(events, "I", "was in A", 0);
	i2 = find(events, "I", "in B", 0);
	assert_int_equal((uint32_t)num(i1, "pid"), h->pid);
	assert_true((uint32_t)num(i2, "pid") >= CTRACE_PSEUDO_BASE);
	assert_int_equal(bound_notices(events, "pseudo_processes"), 1);
	assert_near(evicted_in_metadata(h, "pseudo_processes"), 1, 0);
}

/* The bounds come from --max-memory, the tracer's own reserve taken off first. */
static void test_bounds_derived_from_max_memory(void **state)
{
	struct harness *h = *state;
	struct table_bound streams;
	size_t total = 0;

	tb_init(&streams, "batch_streams", "", 0);
	trace_model_limit_memory(&h->m, 64ull << 20, NULL, NULL, &streams);
	for (unsigned i = 0; i < h->stats.n_bounds; i++)
		total += h->stats.bounds[i]->limit;
	assert_true(total <= (64ull << 20) - TRACE_MEMORY_RESERVE);
	assert_true(total >= ((64ull << 20) - TRACE_MEMORY_RESERVE) / 10 * 8);
	assert_true(h->m.b_spans.limit > h->m.b_counters.limit);
	finish(h, 3000);
	assert_near(num(cJSON_GetObjectItem(cJSON_GetObjectItem(h->doc, "metadata"), "memory"),
			"max_memory_bytes"), 64.0 * 1024 * 1024, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_thread_span_is_complete_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tied_begins_written_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_thread_span_is_async_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unfinished_and_unmatched_spans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_per_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_markers_and_contexts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_are_the_facts_told, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_strings_stay_valid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oldest_open_span_evicted_as_unfinished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_least_recently_updated_counter_evicted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_least_recently_used_marker_discarded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_derived_from_max_memory, setup, teardown),
	};

	return cmocka_run_group_tests_name("trace_model", tests, NULL, NULL);
}
