// SPDX-License-Identifier: MIT
/*
 * test_otlp - --otlp URL and -o FILE.otlp.json: the real tracer exports to
 * an OTLP/HTTP receiver on loopback that the test starts
 * (tests/lib/otlp_receiver.c, which keeps every POST). What a user of a
 * collector relies on, read back from what was really sent:
 *   - every span of the JSON trace of the same run is there once, with its
 *     name, thread and times (unix ns: the trace's monotonic ns plus
 *     metadata.otlp.monotonic_to_unix_ns), a unique id, and as parent the
 *     tightest span of its thread around it in the JSON trace;
 *   - instants are events of the span of their thread around them, counters
 *     are gauges with the trace's values;
 *   - the resource says host, service, pid and executable; the trace id is
 *     one per process;
 *   - requests are OTLP/HTTP JSON, gzip, to /v1/traces and /v1/metrics;
 *   - a collector answering 503 gets the request again (nothing lost), and
 *     one that is down costs the trace nothing: the tracer exits 0, says
 *     what was dropped, and counts it in metadata.otlp;
 *   - -o FILE.otlp.json holds the same as JSON lines.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "otlp_receiver.h"
#include "trace_run.h"

#define MAX_SPANS 20000

/* One exported span, and its process's resource. */
struct xspan {
	cJSON *span, *resource;
	unsigned long long start, end; /* unix ns */
	long long tid;
};

struct exported {
	cJSON *docs[OR_MAX_REQUESTS];
	size_t n_docs;
	struct xspan spans[MAX_SPANS];
	size_t n;
	cJSON *metrics[MAX_SPANS]; /* {name, gauge} objects, with their resource */
	cJSON *metric_res[MAX_SPANS];
	size_t n_metrics;
};

/* The value object of attribute key in an attributes array (NULL: absent). */
static cJSON *attr(const cJSON *owner, const char *key)
{
	cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(owner, "attributes")) {
		if (!strcmp(tr_str(a, "key"), key))
			return cJSON_GetObjectItemCaseSensitive(a, "value");
	}
	return NULL;
}

static const char *attr_str(const cJSON *owner, const char *key)
{
	return tr_str(attr(owner, key), "stringValue");
}

/* intValue: a decimal string in OTLP's JSON (int64). */
static long long attr_int(const cJSON *owner, const char *key)
{
	const char *s = tr_str(attr(owner, key), "intValue");

	return s ? strtoll(s, NULL, 10) : -1;
}

static unsigned long long ns_field(const cJSON *o, const char *key)
{
	const char *s = tr_str(o, key);

	assert_non_null(s); /* fixed64: a string */
	return strtoull(s, NULL, 10);
}

/* Reads one request body (ExportTraceServiceRequest or ExportMetricsServiceRequest). */
static void add_doc(struct exported *x, const char *text, size_t len)
{
	cJSON *d = cJSON_ParseWithLength(text, len), *rs, *ss, *sp, *m;

	assert_non_null(d);
	assert_true(x->n_docs < OR_MAX_REQUESTS);
	x->docs[x->n_docs++] = d;
	cJSON_ArrayForEach(rs, cJSON_GetObjectItemCaseSensitive(d, "resourceSpans")) {
		cJSON *res = cJSON_GetObjectItemCaseSensitive(rs, "resource");

		cJSON_ArrayForEach(ss, cJSON_GetObjectItemCaseSensitive(rs, "scopeSpans")) {
			assert_string_equal(tr_str(cJSON_GetObjectItemCaseSensitive(ss, "scope"), "name"), "ctrace-bpf");
			cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(ss, "spans")) {
				assert_true(x->n < MAX_SPANS);
				x->spans[x->n++] = (struct xspan){ sp, res, ns_field(sp, "startTimeUnixNano"),
								    ns_field(sp, "endTimeUnixNano"),
								    attr_int(sp, "thread.id") };
			}
		}
	}
	cJSON_ArrayForEach(rs, cJSON_GetObjectItemCaseSensitive(d, "resourceMetrics")) {
		cJSON *res = cJSON_GetObjectItemCaseSensitive(rs, "resource");

		cJSON_ArrayForEach(ss, cJSON_GetObjectItemCaseSensitive(rs, "scopeMetrics")) {
			cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(ss, "metrics")) {
				assert_true(x->n_metrics < MAX_SPANS);
				x->metric_res[x->n_metrics] = res;
				x->metrics[x->n_metrics++] = m;
			}
		}
	}
}

static void free_exported(struct exported *x)
{
	for (size_t i = 0; i < x->n_docs; i++)
		cJSON_Delete(x->docs[i]);
	free(x);
}

/* What the receiver took (answered 2xx): OTLP/HTTP JSON, gzip, on the right paths. */
static struct exported *read_received(const struct otlp_receiver *rc)
{
	struct exported *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	for (size_t i = 0; i < rc->n; i++) {
		const struct or_request *q = &rc->req[i];

		assert_true(!strcmp(q->path, "/v1/traces") || !strcmp(q->path, "/v1/metrics"));
		assert_string_equal(q->content_type, "application/json");
		assert_string_equal(q->content_encoding, "gzip");
		assert_non_null(q->body); /* gunzipped */
		if (q->status / 100 != 2)
			continue;
		add_doc(x, q->body, q->len);
		if (strstr(q->body, "\"resourceSpans\""))
			assert_string_equal(q->path, "/v1/traces");
		else
			assert_string_equal(q->path, "/v1/metrics");
	}
	return x;
}

/* metadata.otlp.monotonic_to_unix_ns, exactly: past 2^53, a double would round it. */
static unsigned long long offset_of(const struct trace_run *r)
{
	const char *key = "\"monotonic_to_unix_ns\":", *at = strstr(r->trace_text, key);
	unsigned long long off;

	assert_non_null(at);
	off = strtoull(at + strlen(key), NULL, 10);
	assert_true(off > 1600000000ull * 1000000000ull); /* after 2020: epoch ns */
	return off;
}

static double otlp_meta(const struct trace_run *r, const char *key)
{
	return tr_num(cJSON_GetObjectItemCaseSensitive(tr_meta(r), "otlp"), key);
}

static unsigned long long us_to_ns(double us)
{
	return (unsigned long long)llround(us * 1000.0);
}

/* The exported span of JSON "X" ev (same name, thread, start, end), exactly one. */
static const struct xspan *span_of(const struct exported *x, const cJSON *ev, unsigned long long off)
{
	unsigned long long start = us_to_ns(tr_num(ev, "ts")) + off;
	unsigned long long end = start + us_to_ns(tr_num(ev, "dur"));
	const struct xspan *hit = NULL;

	for (size_t i = 0; i < x->n; i++) {
		const struct xspan *s = &x->spans[i];

		if (s->start != start || s->end != end || s->tid != (long long)tr_num(ev, "tid") ||
		    strcmp(tr_str(s->span, "name"), tr_str(ev, "name")))
			continue;
		if (hit)
			fail_msg("span %s at %llu exported twice", tr_str(ev, "name"), start);
		hit = &x->spans[i];
	}
	if (!hit)
		fail_msg("span %s of tid %.0f at ts %.3f not exported", tr_str(ev, "name"), tr_num(ev, "tid"),
			 tr_num(ev, "ts"));
	return hit;
}

/* The tightest "X" of the same thread around ev in the JSON trace (the later written on a tie), or NULL. */
static const cJSON *json_parent(cJSON **xs, size_t n, size_t self)
{
	const cJSON *ev = xs[self], *best = NULL;
	unsigned long long b = us_to_ns(tr_num(ev, "ts")), e = b + us_to_ns(tr_num(ev, "dur")), best_len = 0;

	for (size_t j = 0; j < n; j++) {
		unsigned long long pb = us_to_ns(tr_num(xs[j], "ts")), pe = pb + us_to_ns(tr_num(xs[j], "dur"));

		if (j == self || tr_num(xs[j], "tid") != tr_num(ev, "tid") || tr_num(xs[j], "pid") != tr_num(ev, "pid") ||
		    pb > b || pe < e || (pb == b && pe == e && j < self))
			continue;
		if (!best || pe - pb < best_len) {
			best = xs[j];
			best_len = pe - pb;
		}
	}
	return best;
}

/* Every X of the JSON trace exported once, with its parent from the nesting; ids unique. Returns how many. */
static size_t check_spans_against_trace(const struct trace_run *r, const struct exported *x)
{
	static cJSON *xs[MAX_SPANS];
	unsigned long long off = offset_of(r);
	size_t n = tr_find_all(r, "X", NULL, xs, MAX_SPANS);

	assert_true(n > 0);
	for (size_t i = 0; i < x->n; i++) {
		const char *id = tr_str(x->spans[i].span, "spanId"), *trace = tr_str(x->spans[i].span, "traceId");

		assert_non_null(id);
		assert_int_equal(strlen(id), 16);
		assert_int_equal(strlen(trace), 32);
		assert_string_not_equal(id, "0000000000000000");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(id, tr_str(x->spans[j].span, "spanId")))
				fail_msg("span id %s given twice (%s and %s)", id, tr_str(x->spans[i].span, "name"),
					 tr_str(x->spans[j].span, "name"));
	}
	for (size_t i = 0; i < n; i++) {
		const struct xspan *s = span_of(x, xs[i], off);
		const cJSON *p = json_parent(xs, n, i);
		const char *parent = tr_str(s->span, "parentSpanId");

		/* A pseudo-process (pid 2^30 + N in the JSON trace) says N, and no pid. */
		if (tr_num(xs[i], "pid") >= 0x40000000)
			assert_int_equal(attr_int(s->resource, "ctrace.pseudo_process"),
					 (long long)tr_num(xs[i], "pid") - 0x40000000);
		else
			assert_int_equal(attr_int(s->resource, "process.pid"), (long long)tr_num(xs[i], "pid"));
		assert_int_equal(tr_num(s->span, "kind"), 1); /* SPAN_KIND_INTERNAL */
		if (!p) {
			if (parent)
				fail_msg("%s at %.3f has parent %s, but no span around it", tr_str(xs[i], "name"),
					 tr_num(xs[i], "ts"), parent);
			continue;
		}
		if (!parent)
			fail_msg("%s at %.3f has no parent; %s at %.3f is around it", tr_str(xs[i], "name"),
				 tr_num(xs[i], "ts"), tr_str(p, "name"), tr_num(p, "ts"));
		assert_string_equal(parent, tr_str(span_of(x, p, off)->span, "spanId"));
		assert_string_equal(tr_str(s->span, "traceId"), tr_str(span_of(x, p, off)->span, "traceId"));
	}
	return n;
}

/* The resource of the traced process: host, service, pid, executable. */
static void check_resource(const struct trace_run *r, const cJSON *res, const char *program)
{
	char host[256] = "", exe[4096];

	gethostname(host, sizeof(host) - 1);
	tr_program_abspath(program, exe, sizeof(exe));
	assert_string_equal(attr_str(res, "host.name"), host);
	assert_string_equal(attr_str(res, "service.name"), program);
	assert_int_equal(attr_int(res, "process.pid"), r->pid);
	assert_string_equal(attr_str(res, "process.executable.name"), program);
	assert_string_equal(attr_str(res, "process.executable.path"), exe);
}

/*
 * The requests read by OTLP's schema (our subset, tests/otlp_proto, by
 * tests/lib/otlp_proto_check.py: protoc and python3-protobuf, unknown fields
 * refused): they parse, and hold spans, events and points as counted here.
 */
static void proto_check(const char *mode, const char *what, size_t spans, size_t events, size_t points)
{
	const char *const argv[] = { "/usr/bin/python3", "tests/lib/otlp_proto_check.py", "tests/otlp_proto",
				     mode, what, NULL };
	struct tr_cmd res = { 0 };
	char want[96];

	tr_require_command("protoc");
	assert_int_equal(tr_cmd_run(&res, argv, 60000), 0);
	if (res.exit != 0)
		fail_msg("the OTLP schema refuses what was sent: %s%s", res.out, res.err);
	snprintf(want, sizeof(want), "spans=%zu events=%zu points=%zu\n", spans, events, points);
	assert_string_equal(res.out, want);
	tr_cmd_free(&res);
}

static size_t count_events(const struct exported *x)
{
	size_t n = 0;

	for (size_t i = 0; i < x->n; i++)
		n += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x->spans[i].span, "events"));
	return n;
}

static size_t count_points(const struct exported *x)
{
	size_t n = 0;

	for (size_t i = 0; i < x->n_metrics; i++)
		n += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(x->metrics[i], "gauge"), "dataPoints"));
	return n;
}

static void receiver_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ctrace-otlp-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
	if (!getenv("CTRACE_TEST_KEEP"))
		tr_shell("rm -rf '%s'", dir);
}

/* Runs program traced with --otlp to a receiver answering statuses; the receiver's record in rc. */
static void run_exported(struct trace_run *r, struct otlp_receiver *rc, const char *program,
			 const char *statuses, char *dir, size_t dir_len)
{
	char url[64];
	const char *args[] = { "--otlp", url, NULL };

	tr_require_root();
	receiver_dir(dir, dir_len);
	assert_int_equal(or_start(rc, dir, statuses), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rc->port);
	tr_run_ok(r, program, NULL, args);
	assert_int_equal(or_stop(rc), 0);
}

/* nested_scopes: 5000 spans nested up to 9 deep; each one's parent is the span around it. */
static void test_parents_follow_nesting(void **state)
{
	struct trace_run r;
	struct otlp_receiver rc;
	struct exported *x;
	char dir[64];
	size_t n;

	(void)state;
	run_exported(&r, &rc, "nested_scopes", "200", dir, sizeof(dir));
	x = read_received(&rc);
	proto_check("receiver", dir, x->n, count_events(x), count_points(x));
	n = check_spans_against_trace(&r, x);
	assert_int_equal(x->n, n); /* and nothing else */
	assert_int_equal(otlp_meta(&r, "spans"), n);
	assert_int_equal(otlp_meta(&r, "requests_dropped"), 0);
	assert_int_equal(otlp_meta(&r, "requests_sent"), rc.n);
	for (size_t i = 0; i < x->n; i++) {
		check_resource(&r, x->spans[i].resource, "nested_scopes");
		assert_string_equal(tr_str(x->spans[i].span, "traceId"), tr_str(x->spans[0].span, "traceId"));
	}
	printf("nested_scopes: %zu spans in %zu requests, parents as the JSON trace nests them\n", n, rc.n);
	free_exported(x);
	or_free(&rc);
	remove_dir(dir);
	tr_free(&r);
}

static const struct xspan *find_span(const struct exported *x, const char *name, long long n_arg)
{
	for (size_t i = 0; i < x->n; i++)
		if (!strcmp(tr_str(x->spans[i].span, "name"), name) &&
		    (n_arg < 0 || attr_int(x->spans[i].span, "args.n") == n_arg))
			return &x->spans[i];
	fail_msg("no span %s (n %lld) exported", name, n_arg);
	return NULL;
}

/* The one event of span s named name; its time. */
static unsigned long long event_in(const cJSON *s, const char *name, const cJSON **out)
{
	cJSON *e;
	const cJSON *hit = NULL;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(s, "events")) {
		if (!strcmp(tr_str(e, "name"), name)) {
			assert_null(hit);
			hit = e;
		}
	}
	if (!hit)
		fail_msg("span %s has no event %s", tr_str(s, "name"), name);
	*out = hit;
	return ns_field(hit, "timeUnixNano");
}

/* Instants as the events of the span around them; counters as gauges; the JSON trace's values and times. */
static void check_span_events(const struct trace_run *r, const struct exported *x)
{
	unsigned long long off = offset_of(r);
	cJSON *marks[64], *afters[64], *queue[64];
	size_t n_marks = tr_find_all(r, "I", "mark", marks, 64);
	size_t n_after = tr_find_all(r, "I", "after-work", afters, 64);
	size_t n_queue = tr_find_all(r, "C", "queue", queue, 64), points = 0;

	assert_int_equal(n_marks, 50);
	assert_int_equal(n_after, 50);
	assert_int_equal(n_queue, 50);
	for (size_t i = 0; i < n_marks; i++) {
		const cJSON *ev, *work = find_span(x, "work", (long long)i)->span;
		const cJSON *frame = find_span(x, "frame", (long long)i)->span;

		assert_int_equal(event_in(work, "mark", &ev), us_to_ns(tr_num(marks[i], "ts")) + off);
		assert_int_equal(attr_int(ev, "args.n"), (long long)i);
		assert_string_equal(attr_str(ev, "args.at"), "work");
		assert_int_equal(event_in(frame, "after-work", &ev), us_to_ns(tr_num(afters[i], "ts")) + off);
		assert_int_equal(attr_int(ev, "args.n"), (long long)i);
		assert_null(attr(frame, "ctrace.unfinished")); /* ended as the program ends it */
		/* the mark is work's, not frame's too */
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(frame, "events")), 1);
	}
	{
		const cJSON *ev, *job = find_span(x, "worker-job", -1)->span;

		event_in(job, "job-mark", &ev);
		assert_string_equal(attr_str(ev, "ctrace.scope"), "p");
	}
	for (size_t i = 0; i < x->n_metrics; i++) {
		const cJSON *m = x->metrics[i], *dp;

		if (strcmp(tr_str(m, "name"), "queue"))
			continue;
		dp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
						cJSON_GetObjectItemCaseSensitive(m, "gauge"), "dataPoints"), 0);
		assert_non_null(dp);
		assert_true(points < n_queue);
		/* In the trace's order: the same time and value as its "C". */
		assert_int_equal(ns_field(dp, "timeUnixNano"), us_to_ns(tr_num(queue[points], "ts")) + off);
		assert_true(tr_num(dp, "asDouble") == tr_num(cJSON_GetObjectItemCaseSensitive(queue[points], "args"), "value"));
		assert_int_equal(attr_int(x->metric_res[i], "process.pid"), r->pid);
		points++;
	}
	assert_int_equal(points, n_queue);
}

static void test_instants_and_counters(void **state)
{
	struct trace_run r;
	struct otlp_receiver rc;
	struct exported *x;
	char dir[64];

	(void)state;
	run_exported(&r, &rc, "span_events", "200", dir, sizeof(dir));
	x = read_received(&rc);
	proto_check("receiver", dir, x->n, count_events(x), count_points(x));
	check_spans_against_trace(&r, x);
	check_span_events(&r, x);
	check_resource(&r, x->spans[0].resource, "span_events");
	assert_int_equal(otlp_meta(&r, "span_events"), 50 + 50 + 1);
	assert_int_equal(otlp_meta(&r, "data_points"), 50);
	free_exported(x);
	or_free(&rc);
	remove_dir(dir);
	tr_free(&r);
}

/*
 * 503 twice, then 429 with Retry-After: 2: the request comes again each
 * time, after 250 ms, then 500 ms (doubled), then the 2 s the collector
 * asked for (the backoff's next would be 1 s), and everything arrives once.
 */
static void test_retried_with_backoff(void **state)
{
	struct trace_run r;
	struct otlp_receiver rc;
	struct exported *x;
	char dir[64];
	double gap[3];

	(void)state;
	run_exported(&r, &rc, "span_events", "503,503,429,200", dir, sizeof(dir));
	assert_true(rc.n >= 4);
	assert_int_equal(rc.req[0].status, 503);
	assert_int_equal(rc.req[1].status, 503);
	assert_int_equal(rc.req[2].status, 429);
	/* The same request, tried again. */
	for (int i = 1; i < 4; i++) {
		assert_int_equal(rc.req[i].len, rc.req[0].len);
		assert_memory_equal(rc.req[i].body, rc.req[0].body, rc.req[0].len);
		gap[i - 1] = (double)(rc.req[i].at_ns - rc.req[i - 1].at_ns) / 1e9;
	}
	printf("tried again after %.3f s, %.3f s, %.3f s\n", gap[0], gap[1], gap[2]);
	assert_true(gap[0] >= 0.25 && gap[0] < 0.5);
	assert_true(gap[1] >= 0.5 && gap[1] < 1.0);
	assert_true(gap[2] >= 2.0 && gap[2] < 2.5);
	x = read_received(&rc);
	proto_check("receiver", dir, x->n, count_events(x), count_points(x));
	check_spans_against_trace(&r, x);
	check_span_events(&r, x);
	assert_int_equal(otlp_meta(&r, "retries"), 3);
	assert_int_equal(otlp_meta(&r, "requests_dropped"), 0);
	/* Said at the end: everything sent, after 3 tries again. */
	assert_non_null(strstr(r.tracer_stderr, "ctrace-bpf: otlp: 101 spans (101 span events) and 50 data points sent to http://127.0.0.1:"));
	assert_non_null(strstr(r.tracer_stderr, ", 3 retried\n"));
	free_exported(x);
	or_free(&rc);
	remove_dir(dir);
	tr_free(&r);
}

/* A port nobody listens on (bound, then closed). */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* The collector is down: the trace is whole, the tracer exits 0, and says what it dropped. */
static void test_collector_down(void **state)
{
	struct trace_run r;
	char url[64];
	const char *args[] = { "--otlp", url, NULL };
	size_t n_x;

	(void)state;
	tr_require_root();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	tr_run_ok(&r, "span_events", NULL, args); /* exit 0, the JSON trace strictly valid */
	n_x = tr_count(&r, "X");
	assert_int_equal(n_x, 50 * 2 + 1);
	assert_int_equal(otlp_meta(&r, "requests_sent"), 0);
	assert_true(otlp_meta(&r, "requests_dropped") >= 1);
	assert_int_equal(otlp_meta(&r, "spans_dropped"), otlp_meta(&r, "spans"));
	assert_int_equal(otlp_meta(&r, "spans"), n_x + 0);
	assert_int_equal(otlp_meta(&r, "data_points_dropped"), 50);
	assert_non_null(strstr(tr_str(cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "otlp"), "last_error"),
			       "Couldn't connect"));
	/* One line says it, with the endpoint and the counts. */
	assert_non_null(strstr(r.tracer_stderr, "ctrace-bpf: otlp: "));
	assert_non_null(strstr(r.tracer_stderr, url));
	assert_non_null(strstr(r.tracer_stderr, "dropped (101 spans, 50 data points)"));
	/* Not waiting on a collector that is not there for more than the drain's 5 s. */
	assert_true(r.tracer_seconds < 15);
	printf("collector down: %.0f requests dropped, tracer done in %.1f s\n",
	       otlp_meta(&r, "requests_dropped"), r.tracer_seconds);
	tr_free(&r);
}

/* -o FILE.otlp.json: one request a line, the same spans, events and points. */
static void test_otlp_json_file(void **state)
{
	struct trace_run r;
	struct exported *x = calloc(1, sizeof(*x));
	char path[300], *text, *line, *save = NULL;
	const char *argv[] = { tr_tracer(), "-q", "-p", "{PID}", "-o", path, NULL };
	size_t len, lines = 0, frames = 0;

	(void)state;
	tr_require_root();
	assert_non_null(x);
	assert_int_equal(tr_init(&r), 0);
	snprintf(path, sizeof(path), "%s/run.otlp.json", r.dir);
	assert_int_equal(tr_run_command(&r, "span_events", NULL, argv), 0);
	assert_int_equal(r.tracer_exit, 0);
	assert_int_equal(r.prog_exit, 0);
	text = tr_read_file(path, &len);
	assert_non_null(text);
	assert_int_equal(strncmp(text, "{\"resource", 10), 0);
	assert_null(strstr(text, "traceEvents"));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		add_doc(x, line, strlen(line));
		lines++;
	}
	assert_true(lines >= 2); /* traces and metrics */
	for (size_t i = 0; i < x->n; i++) {
		check_resource(&r, x->spans[i].resource, "span_events");
		if (!strcmp(tr_str(x->spans[i].span, "name"), "frame"))
			frames++;
	}
	assert_int_equal(frames, 50);
	assert_int_equal(x->n, 50 * 2 + 1);
	assert_int_equal(x->n_metrics, 50);
	proto_check("lines", path, x->n, count_events(x), count_points(x));
	for (long long i = 0; i < 50; i++) {
		const cJSON *ev, *work = find_span(x, "work", i)->span, *frame = find_span(x, "frame", i)->span;

		assert_string_equal(tr_str(work, "parentSpanId"), tr_str(frame, "spanId"));
		event_in(work, "mark", &ev);
		event_in(frame, "after-work", &ev);
	}
	free(text);
	free_exported(x);
	tr_free(&r);
}

/* The values of gauge `name` in the process whose resource has attribute key = v, in order. */
static size_t gauge_values(const struct exported *x, const char *name, const char *key, long long v,
			   double *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < x->n_metrics && n < max; i++) {
		const cJSON *dp;

		if (strcmp(tr_str(x->metrics[i], "name"), name) || attr_int(x->metric_res[i], key) != v)
			continue;
		dp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
						cJSON_GetObjectItemCaseSensitive(x->metrics[i], "gauge"), "dataPoints"), 0);
		out[n++] = tr_num(dp, "asDouble");
	}
	return n;
}

/* every_macro: a span ended on another thread, a pseudo-process, its counters, a span never ended. */
static void test_async_and_pseudo_process(void **state)
{
	struct trace_run r;
	struct otlp_receiver rc;
	struct exported *x;
	char dir[64];
	double want[8], got[8];
	size_t n_want, n_got;
	const struct xspan *cross = NULL, *pseudo = NULL, *never = NULL;

	(void)state;
	run_exported(&r, &rc, "every_macro", "200", dir, sizeof(dir));
	x = read_received(&rc);
	proto_check("receiver", dir, x->n, count_events(x), count_points(x));
	check_spans_against_trace(&r, x);
	for (size_t i = 0; i < x->n; i++) {
		const char *name = tr_str(x->spans[i].span, "name");

		if (!strcmp(name, "cross-thread"))
			cross = &x->spans[i];
		else if (!strcmp(name, "pseudo-span"))
			pseudo = &x->spans[i];
		else if (!strcmp(name, "never-ended"))
			never = &x->spans[i];
	}
	assert_non_null(cross);
	assert_non_null(pseudo);
	assert_non_null(never);
	/* Begun on main, ended on the worker: a root, both threads said, both ends' args. */
	assert_null(tr_str(cross->span, "parentSpanId"));
	assert_int_equal(cross->tid, r.main_tid);
	assert_int_equal(attr_int(cross->span, "ctrace.end_thread.id"), r.worker_tid);
	assert_string_equal(attr_str(cross->span, "args.from"), "main");
	assert_string_equal(attr_str(cross->span, "args.to"), "worker");
	assert_int_equal(attr_int(cross->resource, "process.pid"), r.pid);
	/* The pseudo-process is a resource of its own, with a trace of its own. */
	assert_string_equal(attr_str(pseudo->resource, "service.name"), "pseudo A");
	assert_int_equal(attr_int(pseudo->resource, "ctrace.pseudo_process"), 0);
	assert_null(attr(pseudo->resource, "process.pid"));
	assert_string_not_equal(tr_str(pseudo->span, "traceId"), tr_str(cross->span, "traceId"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(attr(never->span, "ctrace.unfinished"), "boolValue")));
	/* Counters: the JSON trace's values, per process. */
	n_want = tr_counter_values(&r, "c", r.pid, want, 8);
	n_got = gauge_values(x, "c", "process.pid", r.pid, got, 8);
	assert_int_equal(n_got, n_want);
	assert_int_equal(n_got, 4);
	for (size_t i = 0; i < n_got; i++)
		assert_true(got[i] == want[i]);
	n_got = gauge_values(x, "c", "ctrace.pseudo_process", 0, got, 8);
	assert_int_equal(n_got, 2);
	assert_true(got[0] == 1 && got[1] == 2);
	free_exported(x);
	or_free(&rc);
	remove_dir(dir);
	tr_free(&r);
}

/* What a user can get wrong: one line saying what to do, exit 2, before anything is traced. */
static void test_refused_command_lines(void **state)
{
	static const struct {
		const char *args[8];
		const char *says;
	} cases[] = {
		{ { "--otlp", "127.0.0.1:4318", "-p", "1", NULL },
		  "ctrace-bpf: --otlp needs the collector's OTLP/HTTP URL, like http://127.0.0.1:4318, not '127.0.0.1:4318'\n" },
		{ { "--otlp", "http://127.0.0.1:4318", "--ring", "1M", "-p", "1", NULL },
		  "ctrace-bpf: --ring keeps the latest events for its dumps: it does not export OTLP (--otlp, -o FILE.otlp.json)\n" },
		{ { "--otlp", "http://127.0.0.1:4318", "-o", "x.otlp.json", "-p", "1", NULL },
		  "ctrace-bpf: give --otlp URL or -o FILE.otlp.json, not both (with --otlp, -o names the JSON trace)\n" },
		{ { "-o", "x.otlp.json", "--max-size", "10M", "-p", "1", NULL },
		  "ctrace-bpf: -o FILE.otlp.json is one file: it does not take --max-size\n" },
	};
	struct tr_cmd res = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(tr_run_tracer(&res, NULL, NULL, cases[i].args, 10000), 0);
		assert_int_equal(res.exit, 2);
		assert_string_equal(res.err, cases[i].says);
	}
	tr_cmd_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parents_follow_nesting),
		cmocka_unit_test(test_instants_and_counters),
		cmocka_unit_test(test_async_and_pseudo_process),
		cmocka_unit_test(test_retried_with_backoff),
		cmocka_unit_test(test_collector_down),
		cmocka_unit_test(test_otlp_json_file),
		cmocka_unit_test(test_refused_command_lines),
	};

	return cmocka_run_group_tests_name("otlp", tests, NULL, NULL);
}
