// SPDX-License-Identifier: MIT
/*
 * loader_replay - the loader's user-space half on its own: ring-buffer
 * records, as the BPF program writes them, go through record_decode() ->
 * trace_model_event() -> json_writer into /dev/null, on one core, with no
 * kernel and no traced process. Linked with the loader's objects
 * (every build/userspace object but ctrace_bpf.o and the cmd_ ones: the
 * Makefile's LIB_OBJS).
 *
 *   loader_replay [--mix KIND] [--cpu C] [N]       (default mix, 10 M records)
 *
 * KIND: mix      per 10 records: a span (begin + end, one thread), an async
 *                span (ends on another thread), 4 instants (one with args,
 *                one process-scoped), a counter set, a counter add
 *       instant  instants without args only
 *       args     instants with a 40-byte args object only (cJSON path)
 *       counter  counter sets only
 *       span     span begin + end on one thread only
 *
 * The "recorded stream" is 1000 records built once (about 100 KB, so that
 * it does not weigh in the peak RSS) and replayed; each pass shifts the time
 * stamps forward, so the trace keeps moving on. Prints "key value" lines:
 * records, seconds, records_per_s, events (traceEvents written), bytes,
 * bytes_per_event, maxrss_kib_1m (peak RSS after 1 M records) and
 * maxrss_kib (at the end): flat means the loader does not grow with the
 * trace.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctrace_record.h"
#include "encode/json/json_writer.h"
#include "lib/proc_info.h"
#include "ingest/record_decode.h"
#include "encode/json/chrome_trace.h"
#include "model/model_facts.h"
#include "model/trace_model.h"

#define STREAM_RECORDS 1000
#define STEP_NS 500 /* between two records of the stream */

struct stream {
	unsigned char *buf;
	size_t len, cap;
	size_t off[STREAM_RECORDS], size[STREAM_RECORDS];
	int n;
	uint32_t tgid, tid_a, tid_b;
};

/* Appends one record, 8-byte aligned as in the BPF ring buffer. */
static void add(struct stream *s, uint32_t tid, uint16_t kind, uint64_t a0,
		uint64_t a1, uint64_t a2, uint64_t a3, const char *name,
		const char *args)
{
	struct ctrace_record r = { 0 };
	size_t nl = name ? strlen(name) : 0, al = args ? strlen(args) : 0;
	size_t size = sizeof(r) + nl + al;

	if (s->n == STREAM_RECORDS)
		return;
	r.ts_ns = 1000000000ull + (uint64_t)s->n * STEP_NS;
	r.tgid = s->tgid;
	r.tid = tid;
	r.kind = kind;
	r.arg[0] = a0, r.arg[1] = a1, r.arg[2] = a2, r.arg[3] = a3;
	r.name_len = (uint16_t)nl;
	r.args_len = (uint16_t)al;
	s->off[s->n] = s->len;
	s->size[s->n++] = size;
	memcpy(s->buf + s->len, &r, sizeof(r));
	memcpy(s->buf + s->len + sizeof(r), name, nl);
	memcpy(s->buf + s->len + sizeof(r) + nl, args, al);
	s->len += (size + 7) & ~(size_t)7;
}

static uint64_t bits(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return b;
}

static const char args40[] = "{\"bytes\":4096,\"file\":\"/var/data/a.bin\"}";

/* Fake user addresses: only their identity matters to the model. */
#define NAME_PTR 0x5555555540a0ull
#define ARGS_PTR 0x5555555540f0ull
#define SPAN_PTR(i) (0x7ffd00000000ull + (uint64_t)(i) * 16)

static void build(struct stream *s, const char *kind)
{
	for (int c = 0; s->n < STREAM_RECORDS; c++) {
		uint32_t a = s->tid_a, b = s->tid_b;

		if (!strcmp(kind, "instant")) {
			add(s, a, CTRACE_KIND_INSTANT, 0, NAME_PTR, 't', 0, "tick", NULL);
		} else if (!strcmp(kind, "args")) {
			add(s, a, CTRACE_KIND_INSTANT, 0, NAME_PTR, 't', ARGS_PTR, "tick", args40);
		} else if (!strcmp(kind, "counter")) {
			add(s, a, CTRACE_KIND_COUNTER_SET, 0, NAME_PTR, bits(c % 17), 0, "queue depth", NULL);
		} else if (!strcmp(kind, "span")) {
			add(s, a, CTRACE_KIND_SPAN_BEGIN, 0, SPAN_PTR(c), NAME_PTR, 0, "handle request", NULL);
			add(s, a, CTRACE_KIND_SPAN_END, SPAN_PTR(c), 0, 0, 0, NULL, NULL);
		} else { /* mix */
			add(s, a, CTRACE_KIND_SPAN_BEGIN, 0, SPAN_PTR(2 * c), NAME_PTR, 0, "handle request", NULL);
			add(s, a, CTRACE_KIND_INSTANT, 0, NAME_PTR, 't', 0, "cache miss", NULL);
			add(s, a, CTRACE_KIND_COUNTER_ADD, 0, NAME_PTR, bits(4096), 0, "bytes read", NULL);
			add(s, a, CTRACE_KIND_INSTANT, 0, NAME_PTR, 't', ARGS_PTR, "parsed", args40);
			add(s, a, CTRACE_KIND_SPAN_END, SPAN_PTR(2 * c), 0, 0, 0, NULL, NULL);
			add(s, b, CTRACE_KIND_COUNTER_SET, 0, NAME_PTR, bits(c % 17), 0, "queue depth", NULL);
			add(s, b, CTRACE_KIND_INSTANT, 0, NAME_PTR, 'p', 0, "flush", NULL);
			add(s, b, CTRACE_KIND_SPAN_BEGIN, 0, SPAN_PTR(2 * c + 1), NAME_PTR, 0, "io", NULL);
			add(s, a, CTRACE_KIND_SPAN_END, SPAN_PTR(2 * c + 1), 0, 0, 0, NULL, NULL);
			add(s, b, CTRACE_KIND_INSTANT, 0, NAME_PTR, 't', 0, "done", NULL);
		}
	}
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	const char *kind = "mix";
	long total = 10000000, rss_1m = 0;
	int cpu = -1;
	struct stream s = { 0 };
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct trace_stats stats = { 0 };
	struct trace_model model;
	struct chrome_trace tf;
	struct trace_fanout fan;
	struct json_writer w;
	double t0, secs;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mix") && i + 1 < argc)
			kind = argv[++i];
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else
			total = atol(argv[i]);
	}
	bench_pin(cpu);
	s.tgid = (uint32_t)getpid();
	s.tid_a = s.tgid;
	s.tid_b = s.tgid + 1; /* no such thread: named "thread (tid N)" */
	s.cap = STREAM_RECORDS * (sizeof(struct ctrace_record) + 64);
	s.buf = calloc(1, s.cap);
	build(&s, kind);

	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || jw_init(&w, fd, 1 << 20) < 0 || proc_facts_read(getpid(), &target) < 0) {
		fputs("loader_replay: setup failed\n", stderr);
		return 1;
	}
	facts.tracer_version = "bench";
	facts.target = &target;
	chrome_trace_begin(&tf, &w, &facts);
	trace_fanout_init(&fan);
	trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	trace_model_init(&model, &fan, &stats);
	model_facts_process(&model, s.tgid);
	trace_model_add_process(&model, s.tgid);

	t0 = bench_now_ns();
	for (long done = 0, pass = 0; done < total; pass++) {
		uint64_t shift = (uint64_t)pass * STREAM_RECORDS * STEP_NS;

		for (int i = 0; i < s.n && done < total; i++, done++) {
			struct ctrace_event ev;

			stats.records++;
			if (record_decode(s.buf + s.off[i], s.size[i], &ev) < 0) {
				stats.bad_records++;
				continue;
			}
			ev.ts_ns += shift;
			model_facts_event(&model, &ev);
			trace_model_event(&model, &ev);
			if (done + 1 == 1000000)
				rss_1m = maxrss_kib();
		}
	}
	trace_model_finish(&model, 1000000000ull + (uint64_t)total * STEP_NS);
	chrome_trace_end(&tf, &facts, &stats);
	jw_flush(&w);
	secs = (bench_now_ns() - t0) / 1e9;

	printf("records %ld\nseconds %.3f\nrecords_per_s %.0f\n", total, secs, total / secs);
	printf("events %llu\nbytes %llu\nbytes_per_event %.1f\n",
	       (unsigned long long)tf.events, (unsigned long long)w.written,
	       (double)w.written / (double)tf.events);
	printf("bad_records %llu\n", (unsigned long long)stats.bad_records);
	printf("maxrss_kib_1m %ld\nmaxrss_kib %ld\n", rss_1m, maxrss_kib());
	jw_free(&w);
	proc_facts_free(&target);
	close(fd);
	return 0;
}
