// SPDX-License-Identifier: MIT
/*
 * encoders - the encoders on their own (trace_event.h): the same typed
 * trace events handed to the JSON encoder (chrome_trace.c) and to the
 * Perfetto one (pftrace_encode.c), each alone behind a fan-out, on one
 * core, into /dev/null through the writer (no writer thread: the write(2)s
 * are in the figure). Beside them, what -o FILE.pftrace cost before the
 * typed model: the JSON's bytes converted by pftrace_write.c's stream
 * (cJSON on every line).
 *
 *   encoders [--cpu C] [--only pftrace] [N]      (default 4 M typed events)
 *
 * --only pftrace: that encoder alone (for a profiler), its two lines.
 * ENCODERS_NO_ARGS=1 in the environment: the mix without its args objects
 * (what the args' way costs, by difference).
 *
 * Events, per 10: 3 spans (one with a 40-byte args object), 4 instants
 * (one with args, one process-scoped), 2 counters, 1 async pair; names and
 * numbers as a server's trace has them. Prints "key value" lines: for
 * json, pftrace and json_to_pftrace, FORMAT_events_per_s (events as the
 * JSON counts them, over the thread's CPU time) and FORMAT_bytes_per_event.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "encode/json/chrome_trace.h"
#include "encode/json/json_writer.h"
#include "encode/perfetto/pftrace.h"
#include "encode/perfetto/pftrace_encode.h"
#include "lib/proc_info.h"
#include "model/trace_event.h"

struct result {
	double events_per_s, bytes_per_event;
	uint64_t events;
};

static struct ct_text text(const char *s)
{
	return (struct ct_text){ s, strlen(s), CTRACE_STR_PLAIN };
}

/* Hands the mix's n events to f, as the model would. */
static void feed(const struct trace_fanout *f, long n)
{
	static const char *const names[] = { "handle request", "parse", "db query", "render", "flush" };
	struct ct_text args40 = { "{\"bytes\":4096,\"file\":\"/var/data/a.bin\"}", 39, 0 };

	if (getenv("ENCODERS_NO_ARGS"))
		args40 = (struct ct_text){ 0 };

	for (long i = 0; i < n; i += 10) {
		uint64_t ts = 1000000000ull + (uint64_t)i * 700;
		struct ct_text name = text(names[i % 5]);
		uint32_t pid = 4242, tid = 4242 + (uint32_t)(i / 10 % 4);
		struct trace_event x = { .kind = TE_COMPLETE, .pid = pid, .tid = tid, .name = name };
		struct trace_event in = { .kind = TE_INSTANT, .pid = pid, .tid = tid, .scope = 't' };
		struct trace_event c = { .kind = TE_COUNTER, .pid = pid, .tid = tid };

		x.ts_ns = ts;
		x.dur_ns = 5300 + (uint64_t)(i % 977);
		trace_emit(f, &x);
		x.ts_ns = ts + 100;
		x.dur_ns = 1200 + (uint64_t)(i % 311);
		x.args = args40;
		trace_emit(f, &x);
		x.tid = tid + 1;
		x.ts_ns = ts + 200;
		x.dur_ns = 90 + (uint64_t)(i % 37);
		x.args = (struct ct_text){ 0 };
		trace_emit(f, &x);
		in.ts_ns = ts + 300;
		in.name = text("cache miss");
		trace_emit(f, &in);
		in.ts_ns = ts + 350;
		in.name = text("parsed");
		in.args = args40;
		trace_emit(f, &in);
		in.args = (struct ct_text){ 0 };
		in.tid = tid + 1;
		in.ts_ns = ts + 400;
		in.name = text("flush");
		in.scope = 'p';
		trace_emit(f, &in);
		in.ts_ns = ts + 450;
		in.name = text("done");
		in.scope = 't';
		trace_emit(f, &in);
		c.ts_ns = ts + 500;
		c.name = text("queue depth");
		c.value = (double)(i % 17);
		trace_emit(f, &c);
		c.ts_ns = ts + 550;
		c.name = text("bytes read");
		c.value = 4096.0 * (double)i;
		trace_emit(f, &c);
		trace_emit(f, &(struct trace_event){
			.kind = TE_ASYNC, .pid = pid, .tid = tid, .ts_ns = ts + 600, .name = text("io"),
			.id = (uint64_t)i + 1, .end_tid = tid + 1, .end_ns = ts + 650 });
	}
}

enum format { JSON, PFTRACE };

static int run(enum format format, long n, const struct trace_facts *facts, struct result *res, char **json,
	       size_t *json_len)
{
	struct json_writer w, mem;
	struct chrome_trace tf;
	struct pftrace_encoder *pe = NULL;
	struct trace_fanout fan;
	struct trace_stats stats = { 0 };
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double c0;

	if (fd < 0 || jw_init(&w, fd, 1 << 20) < 0)
		return -1;
	trace_fanout_init(&fan);
	/* The JSON once more into memory, untimed: what the old converter is given */
	if (json && jw_init(&mem, -1, (size_t)n * 200) < 0)
		return -1;
	c0 = bench_cpu_ns();
	if (format == JSON) {
		chrome_trace_begin(&tf, json ? &mem : &w, facts);
		trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	} else {
		jw_packets(&w);
		pe = pftrace_encoder_new(&w);
		trace_fanout_add(&fan, pftrace_encoder(pe));
		trace_fanout_begin(&fan, facts);
	}
	feed(&fan, n);
	trace_fanout_end(&fan, facts, &stats);
	if (json) {
		res->events = tf.events;
		*json = mem.buf;
		*json_len = mem.len;
		mem.buf = NULL;
		return 0;
	}
	if (jw_flush(&w) < 0)
		return -1;
	res->events = format == JSON ? tf.events : pftrace_encoder_events(pe);
	res->events_per_s = (double)res->events / ((bench_cpu_ns() - c0) / 1e9);
	res->bytes_per_event = (double)w.written / (double)res->events;
	pftrace_encoder_free(pe);
	jw_free(&w);
	close(fd);
	return 0;
}

/* The JSON's bytes through the converter -o FILE.pftrace used before (pftrace_write.c). */
static int run_old(const char *json, size_t len, uint64_t events, struct result *res)
{
	struct pftrace_stream *s = pftrace_stream_new();
	uint64_t bytes = 0;
	double c0 = bench_cpu_ns();
	size_t n;

	if (!s)
		return -1;
	for (size_t at = 0; at < len; at += 1 << 20) {
		pftrace_stream_feed(s, json + at, len - at < (1u << 20) ? len - at : 1u << 20);
		pftrace_stream_take(s, &n);
		bytes += n;
	}
	pftrace_stream_end(s, NULL);
	pftrace_stream_take(s, &n);
	bytes += n;
	res->events = events;
	res->events_per_s = (double)events / ((bench_cpu_ns() - c0) / 1e9);
	res->bytes_per_event = (double)bytes / (double)events;
	pftrace_stream_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 4000000;
	int cpu = -1;
	bool only_pftrace = false;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct result json, pf, old, small;
	char *text;
	size_t len;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only_pftrace = !strcmp(argv[++i], "pftrace");
		else
			n = atol(argv[i]);
	}
	bench_pin(cpu);
	if (proc_facts_read(getpid(), &target) < 0) {
		fputs("encoders: cannot read /proc/self\n", stderr);
		return 1;
	}
	facts.tracer_version = "bench";
	facts.target = &target;
	if (only_pftrace) {
		if (run(PFTRACE, n, &facts, &pf, NULL, NULL) < 0)
			return 1;
		printf("pftrace_events_per_s %.0f\npftrace_bytes_per_event %.1f\n", pf.events_per_s, pf.bytes_per_event);
		return 0;
	}
	if (run(JSON, n, &facts, &json, NULL, NULL) < 0 || run(PFTRACE, n, &facts, &pf, NULL, NULL) < 0 ||
	    run(JSON, n / 4, &facts, &small, &text, &len) < 0 || run_old(text, len, small.events, &old) < 0) {
		fputs("encoders: failed\n", stderr);
		return 1;
	}
	printf("events %ld\n", n);
	printf("json_events_per_s %.0f\njson_bytes_per_event %.1f\n", json.events_per_s, json.bytes_per_event);
	printf("pftrace_events_per_s %.0f\npftrace_bytes_per_event %.1f\n", pf.events_per_s, pf.bytes_per_event);
	printf("json_to_pftrace_events_per_s %.0f\njson_to_pftrace_bytes_per_event %.1f\n", old.events_per_s,
	       old.bytes_per_event);
	printf("pftrace_over_json %.2f\npftrace_bytes_ratio %.3f\n", pf.events_per_s / json.events_per_s,
	       pf.bytes_per_event / json.bytes_per_event);
	free(text);
	proc_facts_free(&target);
	return 0;
}
