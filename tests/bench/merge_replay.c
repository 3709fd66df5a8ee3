// SPDX-License-Identifier: MIT
/*
 * merge_replay - event_merge.c alone: what putting batched events back in
 * time order costs the loader per event, with no kernel and no output.
 * Two threads' batches of 680 events (a 16 KiB buffer of instants) arrive
 * in turn, each thread's stamps interleaved with the other's, and the
 * watermark trails the newest event by HELD events' worth of time, as when
 * the loader waits for an idle thread's buffer: the heap holds about HELD.
 *
 *   merge_replay [--cpu C] [HELD [N]]     (default 100000 held, 20 M events)
 *
 * Linked with the loader's objects (as loader_replay). Prints "key value"
 * lines: events, held, ns_per_event, events_per_s. For A/B of the merge
 * by hand: build each version and run both in the same minute.
 */
#include "bench.h"

#include <stdint.h>

#include "ingest/event_merge.h"

static uint64_t released;

static void count(void *ctx, const struct ctrace_event *ev)
{
	(void)ctx;
	(void)ev;
	released++;
}

int main(int argc, char **argv)
{
	struct event_merge m;
	long held = 100000, n = 20000000;
	int cpu = -1, i = 1;
	uint64_t ts[2] = { 1000000, 1000005 };
	double t0;

	if (i + 1 < argc && !strcmp(argv[i], "--cpu")) {
		cpu = atoi(argv[i + 1]);
		i += 2;
	}
	if (i < argc)
		held = atol(argv[i++]);
	if (i < argc)
		n = atol(argv[i++]);
	bench_pin(cpu);
	event_merge_init(&m, 0, count, NULL);
	t0 = bench_cpu_ns();
	for (long pushed = 0; pushed < n;) {
		for (int t = 0; t < 2; t++) {
			for (int k = 0; k < 680; k++, pushed++) {
				struct ctrace_event ev = { .kind = 3, .tid = (uint32_t)t + 1, .name = "tick",
							   .name_len = 4, .args = "", .ts_ns = ts[t] };

				ts[t] += 10; /* 10 ns apart: the other thread's are in between */
				event_merge_push(&m, &ev);
			}
		}
		/* Both threads have sent up to ts; keep `held` events' worth of time back. */
		if (ts[0] > (uint64_t)held * 5)
			event_merge_release(&m, ts[0] - (uint64_t)held * 5);
	}
	event_merge_release(&m, UINT64_MAX);
	t0 = bench_cpu_ns() - t0;
	printf("events %ld\nheld %ld\nns_per_event %.1f\nevents_per_s %.0f\n", n, held, t0 / n,
	       n / (t0 / 1e9));
	event_merge_free(&m);
	return released == (uint64_t)n ? 0 : 1;
}
