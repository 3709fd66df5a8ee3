// SPDX-License-Identifier: MIT
/*
 * batch_replay - the loader's batched path on its own: BATCH records, as
 * the BPF program copies a thread's buffer into the ring, go through
 * batch_path (split, TSC to ns, literals, the merge behind the watermark)
 * -> the model -> JSON into /dev/null, on one core, with no kernel.
 *
 * The buffers are real: two threads of this program append events with
 * the real header (include/ctrace.h, both semaphores raised by hand, so
 * the flush site is only its nops), each a 16 KiB buffer's worth of a mix
 * per 8 events: a span (begin + end), 4 instants with literal names (one
 * with a 40-byte computed args object), a counter add, a counter set.
 * Each pass hands both buffers on again as the next flush of their thread
 * (the sequence numbers follow on, the events' TSCs move on by a pass's
 * ticks), and
 * the watermark follows the ring as the session's loop moves it.
 * The end-of-trace summary is fed, as the tracer does without -q.
 *
 *   batch_replay [--cpu C] [--out FILE] [N]   (default 10 M events, into /dev/null)
 *
 * Linked with the loader's objects (as loader_replay). Prints "key value"
 * lines: events, seconds, events_per_s, trace_events, bytes, lost,
 * maxrss_kib.
 */
#include "bench.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>

#undef CTRACE_SITE_LAYOUT_ONLY /* the real sites: the buffers are appended by them */
#include "../../include/ctrace.h"
#include "ingest/batch_path.h"
#include "encode/json/chrome_trace.h"
#include "ctrace_record.h"
#include "encode/json/json_writer.h"
#include "model/model_facts.h"
#include "lib/proc_info.h"
#include "model/trace_model.h"
#include "encode/trace_summary.h"

struct captured {
	unsigned char bytes[CTRACE_BATCH_BYTES];
	size_t n;          /* header + events */
	uint32_t count;    /* events */
	uint64_t last_tsc; /* after the last event */
	uint32_t at[CTRACE_BATCH_BYTES / 16]; /* each event's offset in the events (its TSC first) */
	size_t n_at;
	uint64_t buf;      /* the buffer's address in this process */
	uint32_t tid;
};

static __attribute__((noinline)) uint64_t tsc_now(void)
{
	return __builtin_ia32_rdtsc();
}

/* Both threads alive at once: their spans' addresses (on their stacks) differ. */
static pthread_barrier_t both;

/* One thread's buffer filled (not flushed) with the mix, copied out. */
static void *fill(void *arg)
{
	struct captured *c = arg;
	char args[64];
	int i = 0;

	pthread_barrier_wait(&both);
	CTRACE_INSTANT(NULL, "hello", CTRACE_SCOPE_THREAD, NULL); /* the buffer, allocated */
	ctrace__batch_tls->len = 0;
	ctrace__batch_tls->count = 0;
	/* Room for one more round of the mix: a full buffer would flush (and start again). */
	while (ctrace__batch_tls->len + 400 < sizeof(ctrace__batch_tls->data)) {
		struct ctrace_span sp;

/* Each event's offset, noted before its macro appends it: each pass moves its TSC on. */
#define AT(site) do { c->at[c->n_at++] = ctrace__batch_tls->len; site; } while (0)
		snprintf(args, sizeof(args), "{\"bytes\":%d,\"file\":\"/var/data/a.bin\"}", 4096 + i++ % 10);
		AT(CTRACE_SPAN_BEGIN(NULL, &sp, "handle request", NULL));
		AT(CTRACE_INSTANT(NULL, "cache miss", CTRACE_SCOPE_THREAD, NULL));
		AT(CTRACE_COUNTER_ADD(NULL, "bytes read", 4096));
		AT(CTRACE_INSTANT(NULL, "parsed", CTRACE_SCOPE_THREAD, args));
		AT(CTRACE_SPAN_END(&sp, NULL));
		AT(CTRACE_COUNTER_SET(NULL, "queue depth", i % 17));
		AT(CTRACE_INSTANT(NULL, "flush", CTRACE_SCOPE_PROCESS, NULL));
		AT(CTRACE_INSTANT(NULL, "done", CTRACE_SCOPE_THREAD, NULL));
#undef AT
	}
	c->last_tsc = tsc_now();
	c->n = CTRACE__BATCH_HEADER + ctrace__batch_tls->len;
	c->count = ctrace__batch_tls->count;
	c->buf = (uint64_t)(uintptr_t)ctrace__batch_tls;
	c->tid = ctrace__batch_tls->tid;
	memcpy(c->bytes, ctrace__batch_tls, c->n);
	pthread_barrier_wait(&both); /* the other's spans are on its stack until then */
	return NULL;
}

/* The literals are this program's own strings. */
static bool read_own(void *ctx, const struct ctrace_event *ev, int arg, const char **s, size_t *len,
		     bool *truncated, char *buf, size_t max)
{
	const char *p = (const char *)(uintptr_t)ev->arg[arg];

	(void)ctx, (void)buf;
	*s = p;
	*len = strnlen(p, max);
	*truncated = false;
	return true;
}

static void to_model(void *ctx, const struct ctrace_event *ev)
{
	struct trace_model *m = ctx;

	model_facts_event(m, ev);
	trace_model_event(m, ev);
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	static struct captured cap[2];
	static unsigned char rec[sizeof(struct ctrace_record) + CTRACE_BATCH_BYTES];
	long total = 10000000;
	const char *out = "/dev/null";
	int cpu = -1;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct trace_stats stats = { 0 };
	struct trace_model model;
	struct chrome_trace tf;
	struct trace_fanout fan;
	struct trace_summary summary;
	struct json_writer w;
	struct tsc_clock tsc;
	struct batch_path bp;
	uint64_t stop_ns = 0, span_ticks, end_tsc, end_ns = 0, done = 0;
	double t0, secs;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else
			total = atol(argv[i]);
	}
	{
		pthread_t th[2];

		pthread_barrier_init(&both, NULL, 2);
		ctrace_semaphore = 1; /* as if a batching tracer were attached */
		ctrace_batch_semaphore.semaphore = 1;
		for (int t = 0; t < 2; t++)
			if (pthread_create(&th[t], NULL, fill, &cap[t]))
				return 1;
		for (int t = 0; t < 2; t++)
			pthread_join(th[t], NULL);
		ctrace_batch_semaphore.semaphore = 0;
		ctrace_semaphore = 0;
	}
	bench_pin(cpu);
	tsc_clock_init(&tsc);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || jw_init(&w, fd, 1 << 20) < 0 || proc_facts_read(getpid(), &target) < 0) {
		fputs("batch_replay: setup failed\n", stderr);
		return 1;
	}
	facts.tracer_version = "bench";
	facts.target = &target;
	chrome_trace_begin(&tf, &w, &facts);
	/* As the tracer does unless -q: the end-of-trace summary is fed with every event. */
	trace_summary_init(&summary);
	trace_fanout_init(&fan);
	trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	trace_fanout_add(&fan, trace_summary_encoder(&summary));
	trace_model_init(&model, &fan, &stats);
	model_facts_process(&model, (uint32_t)getpid());
	trace_model_add_process(&model, (uint32_t)getpid());
	batch_path_init(&bp, true, &tsc, &stats, &stop_ns, 0, to_model, &model);
	bp.read_str = read_own;
	bp.next_read_ns = UINT64_MAX; /* the buffers are not read from the process: they are replayed */
	/*
	 * A pass covers the ticks both threads took to fill their buffers
	 * (from the earlier first event to the later end): each pass's events
	 * are the captured ones, their TSCs moved on by that many ticks a
	 * pass, so that time goes on as it would for the next flushes.
	 */
	{
		uint64_t first[2], lo, hi;

		for (int t = 0; t < 2; t++) {
			if (cap[t].n_at != cap[t].count) {
				fputs("batch_replay: an event without its offset\n", stderr);
				return 1;
			}
			memcpy(&first[t], cap[t].bytes + CTRACE__BATCH_HEADER, 8);
		}
		lo = first[0] < first[1] ? first[0] : first[1];
		hi = cap[0].last_tsc > cap[1].last_tsc ? cap[0].last_tsc : cap[1].last_tsc;
		span_ticks = hi - lo + 1000;
		end_tsc = hi;
	}
	t0 = bench_cpu_ns();
	for (uint64_t pass = 0; done < (uint64_t)total; pass++) {
		end_ns = tsc_clock_to_ns(&tsc, end_tsc + pass * span_ticks);
		for (int t = 0; t < 2; t++) {
			struct ctrace_record r = { 0 };
			uint64_t seq = pass * cap[t].count;

			r.kind = CTRACE_KIND_BATCH;
			r.tgid = (uint32_t)getpid();
			r.tid = cap[t].tid;
			r.ts_ns = end_ns; /* the copy's time: no event of it is later */
			r.arg[0] = cap[t].buf;
			r.arg[1] = cap[t].n;
			r.arg[2] = CTRACE_BATCH_WHY_FULL;
			r.arg[3] = seq + cap[t].count;
			memcpy(rec, &r, sizeof(r));
			memcpy(rec + sizeof(r), cap[t].bytes, cap[t].n);
			memcpy(rec + sizeof(r) + 8, &seq, 8); /* first_seq */
			for (size_t k = 0; k < cap[t].n_at; k++) {
				unsigned char *at = rec + sizeof(r) + CTRACE__BATCH_HEADER + cap[t].at[k];
				uint64_t ev_tsc;

				memcpy(&ev_tsc, at, 8);
				ev_tsc += pass * span_ticks;
				memcpy(at, &ev_tsc, 8);
			}
			stats.records++;
			batch_path_record(&bp, rec, sizeof(r) + cap[t].n);
			done += cap[t].count;
		}
		/* The ring drained up to this pass's flushes, as the session's loop says. */
		batch_path_tick(&bp, end_ns, end_ns);
	}
	batch_path_finish(&bp, -1);
	trace_model_finish(&model, end_ns + 1000);
	chrome_trace_end(&tf, &facts, &stats);
	jw_flush(&w);
	secs = (bench_cpu_ns() - t0) / 1e9;

	printf("events %llu\nseconds %.3f\nevents_per_s %.0f\n", (unsigned long long)done, secs,
	       done / secs);
	printf("trace_events %llu\nbytes %llu\nlost %llu\nforced %llu\nbad_records %llu\nmaxrss_kib %ld\n",
	       (unsigned long long)tf.events, (unsigned long long)w.written,
	       (unsigned long long)bp.lost, (unsigned long long)bp.merge.forced,
	       (unsigned long long)stats.bad_records, maxrss_kib());
	batch_path_free(&bp);
	jw_free(&w);
	proc_facts_free(&target);
	close(fd);
	return 0;
}
