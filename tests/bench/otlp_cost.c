// SPDX-License-Identifier: MIT
/*
 * otlp_cost - what --otlp costs the loader's loop: nested spans, instants
 * in them and counters written through chrome_trace.c into /dev/null, with
 * no observer and with the OTLP exporter (otlp_export.c) as its observer,
 * its requests written as -o FILE.otlp.json writes them (the sender thread
 * writes the file; with --otlp it would gzip and POST them instead). No
 * kernel, no traced process.
 *
 *   otlp_cost [--cpu C] [--dir DIR] [N]     (default /tmp, 1 M events)
 *
 * Events, per 10 on each of 4 threads in turn: a span "request" holding 3
 * spans "query" (one with args) and 3 instants (one with args) in them, and
 * 2 counters. Prints "key value" lines: json_loop_ns_per_event and
 * otlp_loop_ns_per_event (CPU time of the writing thread: what the loop
 * pays; the sender's is apart), otlp_bytes_per_event (OTLP JSON, before
 * gzip) and otlp_spans, otlp_points.
 */
#include "bench.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "encode/json/chrome_trace.h"
#include "encode/json/json_writer.h"
#include "encode/otlp/otlp_export.h"
#include "lib/proc_info.h"

static const struct ct_text no_args = { "", 0, 0 };

static struct ct_text text(const char *s)
{
	return (struct ct_text){ s, strlen(s), 0 };
}

/* The loop's CPU ns per event, through an observer or none. */
static double run(long n, const struct trace_facts *facts, struct otlp_export *x)
{
	struct json_writer w;
	struct chrome_trace tf;
	struct trace_stats stats = { 0 };
	struct ct_text args40 = text("{\"bytes\":4096,\"file\":\"/var/data/a.bin\"}");
	struct ct_text request = text("request"), query = text("query");
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double c0;

	if (fd < 0 || jw_init(&w, fd, 1 << 20) < 0) {
		perror("/dev/null");
		exit(1);
	}
	jw_write_behind(&w);
	c0 = bench_cpu_ns();
	chrome_trace_begin(&tf, &w, facts);
	tf.obs = x ? &x->obs : NULL;
	for (long i = 0; i < n; i += 10) {
		uint64_t ts = 1000000000ull + (uint64_t)i * 700;
		uint32_t pid = 4242, tid = 4242 + (uint32_t)(i / 10 % 4);

		for (int q = 0; q < 3; q++) {
			uint64_t b = ts + 100 + 200 * (uint64_t)q;

			chrome_trace_instant(&tf, pid, tid, b + 50, &(struct ct_text){ "cache miss", 10, 0 }, 't',
					     q == 1 ? &args40 : &no_args);
			chrome_trace_complete(&tf, pid, tid, b, 150, &query, q == 2 ? &args40 : &no_args, &no_args);
		}
		chrome_trace_complete(&tf, pid, tid, ts, 700, &request, &no_args, &no_args);
		chrome_trace_counter(&tf, pid, tid, ts + 650, &(struct ct_text){ "queue depth", 11, 0 }, (double)(i % 17));
		chrome_trace_counter(&tf, pid, tid, ts + 660, &(struct ct_text){ "bytes read", 10, 0 }, 4096.0 * (double)i);
		if (x && i % 1000 == 0)
			otlp_export_tick(x, ts); /* as the loop does every 50 ms */
	}
	if (x)
		otlp_export_finish(x); /* the rest goes to the sender: part of what the loop pays */
	chrome_trace_end(&tf, facts, &stats);
	jw_finish(&w);
	c0 = (bench_cpu_ns() - c0) / (double)tf.events;
	jw_free(&w);
	close(fd);
	return c0;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp";
	long n = 1000000;
	int cpu = -1;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct otlp_export x;
	char path[4096];
	struct stat st;
	double json_ns, otlp_ns;

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
		fputs("otlp_cost: cannot read /proc/self\n", stderr);
		return 1;
	}
	facts.tracer_version = "bench";
	facts.target = &target;
	facts.start_mono_ns = 1000000000ull;
	facts.start_wall_ns = 1700000000ull * 1000000000ull;
	snprintf(path, sizeof(path), "%s/otlp_cost.%d.otlp.json", dir, (int)getpid());
	json_ns = run(n, &facts, NULL);
	if (otlp_export_open(&x, NULL, path) < 0 || otlp_export_start(&x, &facts) < 0)
		return 1;
	otlp_ns = run(n, &facts, &x);
	if (stat(path, &st) != 0) {
		perror(path);
		return 1;
	}
	printf("events %ld\n", n);
	printf("json_loop_ns_per_event %.1f\notlp_loop_ns_per_event %.1f\n", json_ns, otlp_ns);
	printf("otlp_bytes_per_event %.1f\notlp_spans %llu\notlp_points %llu\notlp_span_events %llu\n",
	       (double)st.st_size / (double)n, (unsigned long long)x.final.spans_sent,
	       (unsigned long long)x.final.points_sent, (unsigned long long)x.span_events);
	otlp_export_close(&x, true);
	proc_facts_free(&target);
	return 0;
}
