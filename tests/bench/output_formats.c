// SPDX-License-Identifier: MIT
/*
 * output_formats - the trace writer on its own, plain JSON against gzip
 * (-o FILE.json.gz) and Perfetto's protobuf (-o FILE.pftrace): the same
 * typed events (trace_event.h) through the JSON encoder (chrome_trace.c)
 * or the Perfetto one (pftrace_encode.c) and json_writer.c (write-behind
 * thread, zlib in it for gzip) into a real file, as the loader writes them.
 * No kernel, no traced process: what the output format costs and saves.
 *
 *   output_formats [--cpu C] [--dir DIR] [N]     (default /tmp, 2 M events)
 *
 * Events, per 10: 3 spans ("X", one with args), 4 instants (one with a
 * 40-byte args object), 2 counters, 1 async pair half; names and numbers
 * as a server's trace has them. Prints "key value" lines, for json,
 * gzip and pftrace: FORMAT_bytes_per_event, FORMAT_events_per_s (writing to the file
 * being complete, fsync excluded), FORMAT_mb_per_s (JSON bytes through the
 * writer a second), FORMAT_loop_ns_per_event (CPU time of the writing
 * thread alone: what the loader's loop pays; compression is in the other
 * thread), and gzip_ratio; the same for pftrace (encoded in the loop), and
 * pftrace_ratio.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "encode/json/chrome_trace.h"
#include "encode/json/json_writer.h"
#include "encode/perfetto/pftrace.h"
#include "encode/perfetto/pftrace_encode.h"
#include "model/trace_event.h"
#include "lib/proc_info.h"

struct result {
	double bytes_per_event, events_per_s, mb_per_s, loop_ns_per_event;
	unsigned long long bytes, json_bytes;
	double seconds; /* writing, from the first event to the file complete */
	uint64_t events;
};

static struct ct_text text(const char *s)
{
	return (struct ct_text){ s, strlen(s), 0 };
}

enum format { JSON, GZIP, PFTRACE };

static int run(const char *dir, enum format format, long n, const struct trace_facts *facts, struct result *res)
{
	static const char *const names[] = { "handle request", "parse", "db query", "render", "flush" };
	char path[4096];
	struct json_writer w;
	struct chrome_trace tf;
	struct pftrace_encoder *pe = NULL;
	struct trace_fanout fan;
	uint64_t events;
	struct trace_stats stats = { 0 };
	struct ct_text args40 = text("{\"bytes\":4096,\"file\":\"/var/data/a.bin\"}");
	double t0, c0;
	int fd;

	snprintf(path, sizeof(path), "%s/output_formats.%d.%s", dir, (int)getpid(),
		 format == GZIP ? "json.gz" : format == PFTRACE ? "pftrace" : "json");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || jw_init(&w, fd, 1 << 20) < 0 || (format == GZIP && jw_gzip(&w) < 0)) {
		perror(path);
		return -1;
	}
	jw_write_behind(&w);
	t0 = bench_now_ns();
	c0 = bench_cpu_ns();
	trace_fanout_init(&fan);
	if (format == PFTRACE) {
		jw_packets(&w);
		pe = pftrace_encoder_new(&w);
		if (!pe)
			return -1;
		trace_fanout_add(&fan, pftrace_encoder(pe));
		trace_fanout_begin(&fan, facts);
	} else {
		chrome_trace_begin(&tf, &w, facts);
		trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	}
	for (long i = 0; i < n; i += 10) {
		uint64_t ts = 1000000000ull + (uint64_t)i * 700;
		struct ct_text name = text(names[i % 5]);
		uint32_t pid = 4242, tid = 4242 + (uint32_t)(i / 10 % 4);
		const struct trace_event evs[] = {
			{ .kind = TE_COMPLETE, .pid = pid, .tid = tid, .ts_ns = ts, .dur_ns = 5300 + (uint64_t)(i % 977),
			  .name = name },
			{ .kind = TE_COMPLETE, .pid = pid, .tid = tid, .ts_ns = ts + 100, .dur_ns = 1200 + (uint64_t)(i % 311),
			  .name = name, .args = args40 },
			{ .kind = TE_COMPLETE, .pid = pid, .tid = tid + 1, .ts_ns = ts + 200, .dur_ns = 90 + (uint64_t)(i % 37),
			  .name = name },
			{ .kind = TE_INSTANT, .pid = pid, .tid = tid, .ts_ns = ts + 300, .name = { "cache miss", 10, 0 },
			  .scope = 't' },
			{ .kind = TE_INSTANT, .pid = pid, .tid = tid, .ts_ns = ts + 350, .name = { "parsed", 6, 0 },
			  .scope = 't', .args = args40 },
			{ .kind = TE_INSTANT, .pid = pid, .tid = tid + 1, .ts_ns = ts + 400, .name = { "flush", 5, 0 },
			  .scope = 'p' },
			{ .kind = TE_INSTANT, .pid = pid, .tid = tid + 1, .ts_ns = ts + 450, .name = { "done", 4, 0 },
			  .scope = 't' },
			{ .kind = TE_COUNTER, .pid = pid, .tid = tid, .ts_ns = ts + 500, .name = { "queue depth", 11, 0 },
			  .value = (double)(i % 17) },
			{ .kind = TE_COUNTER, .pid = pid, .tid = tid, .ts_ns = ts + 550, .name = { "bytes read", 10, 0 },
			  .value = 4096.0 * (double)i },
			{ .kind = TE_ASYNC, .pid = pid, .tid = tid, .ts_ns = ts + 600, .name = { "io", 2, 0 },
			  .id = (uint64_t)i + 1, .end_tid = tid + 1, .end_ns = ts + 650 },
		};

		for (size_t k = 0; k < sizeof(evs) / sizeof(evs[0]); k++)
			trace_emit(&fan, &evs[k]);
	}
	trace_fanout_end(&fan, facts, &stats);
	events = pe ? pftrace_encoder_events(pe) : tf.events;
	pftrace_encoder_free(pe);
	if (jw_finish(&w) < 0) {
		fprintf(stderr, "output_formats: writing %s failed: %s\n", path, strerror(w.err));
		return -1;
	}
	res->loop_ns_per_event = (bench_cpu_ns() - c0) / (double)events;
	res->events_per_s = (double)events / ((bench_now_ns() - t0) / 1e9);
	res->json_bytes = w.in_handed;
	res->bytes = w.written;
	res->bytes_per_event = (double)w.written / (double)events;
	res->mb_per_s = (double)res->json_bytes / 1e6 / ((double)events / res->events_per_s);
	res->seconds = (double)events / res->events_per_s;
	res->events = events;
	jw_free(&w);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp";
	long n = 2000000;
	int cpu = -1;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct result json, gz, pf;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else
			n = atol(argv[i]);
	}
	bench_pin(cpu);
	if (proc_facts_read(getpid(), &target) < 0) {
		fputs("output_formats: cannot read /proc/self\n", stderr);
		return 1;
	}
	facts.tracer_version = "bench";
	facts.target = &target;
	if (run(dir, JSON, n, &facts, &json) < 0 || run(dir, GZIP, n, &facts, &gz) < 0 ||
	    run(dir, PFTRACE, n, &facts, &pf) < 0)
		return 1;
	printf("events %ld\n", n);
	printf("json_bytes_per_event %.1f\njson_events_per_s %.0f\njson_mb_per_s %.0f\njson_loop_ns_per_event %.1f\n",
	       json.bytes_per_event, json.events_per_s, json.mb_per_s, json.loop_ns_per_event);
	printf("gzip_bytes_per_event %.1f\ngzip_events_per_s %.0f\ngzip_mb_per_s %.0f\ngzip_loop_ns_per_event %.1f\n",
	       gz.bytes_per_event, gz.events_per_s, gz.mb_per_s, gz.loop_ns_per_event);
	printf("gzip_ratio %.2f\n", (double)json.bytes / (double)gz.bytes);
	printf("pftrace_bytes_per_event %.1f\npftrace_events_per_s %.0f\npftrace_mb_per_s %.0f\npftrace_loop_ns_per_event %.1f\n",
	       pf.bytes_per_event, pf.events_per_s, pf.mb_per_s, pf.loop_ns_per_event);
	printf("pftrace_ratio %.2f\n", (double)json.bytes / (double)pf.bytes);
	proc_facts_free(&target);
	return 0;
}
