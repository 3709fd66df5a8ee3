// SPDX-License-Identifier: MIT
/*
 * test_flood - tests/programs/flood fires instants from two threads as fast
 * as they can into a 64 KiB ring buffer, and says how many it fired. Nothing
 * may be lost silently: every event is either in the trace or counted as
 * dropped, exactly; the count is in metadata, in "ctrace: events dropped"
 * instants where the loss happened, and on stderr; and the loader's memory
 * stays flat while it runs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "group_run.h"
#include "target_check.h"
#include "ingest/batch_path.h"
#include "trace_run.h"

#define FLOOD_MS "400"

static struct trace_run run;
/* The tracer's resident memory, sampled every 10 ms while the flood ran. */
static long rss_kib[1000];
static size_t n_rss;
static unsigned long long emitted, emitted_t0, emitted_t1;
static int still_armed = -1;

/* VmRSS of a process in KiB, -1 if it is gone. */
static long rss_of(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Runs flood under the tracer with a 64 KiB buffer, sampling the tracer's RSS. */
static int flood_run(struct trace_run *r)
{
	const char *const prog_args[] = { FLOOD_MS, NULL };
	const char *const tracer_args[] = { "--buffer-size", "64K", NULL };
	const char *line;

	if (tr_init(r) < 0 || tr_start_program(r, "flood", prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_tracer(r, tracer_args) < 0 ||
	    tr_wait_line(r, "armed", 10000) < 0)
		return -1;
	/* From the first shot to the program's report: the tracer at full load. */
	while (!tc_printed(r, "emitted") && n_rss < sizeof(rss_kib) / sizeof(rss_kib[0])) {
		long kib = rss_of(r->tracer.pid);

		if (kib < 0)
			break;
		rss_kib[n_rss++] = kib;
		usleep(10 * 1000);
	}
	if (tr_wait(r, TR_TIMEOUT_MS) < 0)
		return -1;
	line = strstr(r->prog_stdout, "emitted ");
	if (!line || sscanf(line, "emitted t0=%llu t1=%llu total=%llu still_armed=%d",
			    &emitted_t0, &emitted_t1, &emitted, &still_armed) != 4) {
		snprintf(r->error, sizeof(r->error), "flood printed no count: %s", r->prog_stdout);
		return -1;
	}
	if (r->tracer_exit != 0) {
		snprintf(r->error, sizeof(r->error), "tracer exited %d: %s", r->tracer_exit,
			 r->tracer_stderr);
		return -1;
	}
	return tr_load_trace(r);
}

static int group_setup(void **state)
{
	(void)state;
	return tr_group_setup(&run, flood_run, "the flood run");
}

/* Instants named "flood" on thread tid (0: any). */
static unsigned long long kept(double tid)
{
	const cJSON *ev;
	unsigned long long n = 0;

	cJSON_ArrayForEach(ev, run.events) {
		const char *ph = tr_str(ev, "ph"), *name = tr_str(ev, "name");

		if (ph && name && !strcmp(ph, "I") && !strcmp(name, "flood") &&
		    (!tid || tr_num(ev, "tid") == tid))
			n++;
	}
	return n;
}

/* kept + dropped == emitted, to the event; and the flood did overflow. */
static void test_nothing_lost_silently(void **state)
{
	unsigned long long k, d;

	(void)state;
	tr_group_need();
	if (run.prog_exit != 0 || still_armed != 1) /* attached throughout: every shot hit the probe */
		fail_msg("flood exited %d, still_armed %d: %s", run.prog_exit, still_armed, run.prog_stdout);
	k = kept(0);
	d = (unsigned long long)tr_meta_num(&run, "dropped_events");
	print_message("flood: emitted %llu (threads %llu + %llu), kept %llu, dropped %llu\n",
		      emitted, emitted_t0, emitted_t1, k, d);
	if (k + d != emitted)
		fail_msg("kept %llu + dropped %llu = %llu, but %llu were emitted", k, d, k + d, emitted);
	if (d == 0)
		fail_msg("a 64 KiB buffer lost nothing of %llu events: the test proves nothing", emitted);
	/* something got through, from both threads */
	if (k == 0 || emitted_t0 == 0 || emitted_t1 == 0 || tr_meta_num(&run, "bad_records") != 0)
		fail_msg("kept %llu, emitted %llu + %llu, bad records %.0f", k, emitted_t0,
			 emitted_t1, tr_meta_num(&run, "bad_records"));
}

/* Where the loss happened: global instants whose args.dropped add up. */
static void test_drops_shown_where_they_happened(void **state)
{
	cJSON *drops[4096];
	size_t n;
	double sum = 0, last_total = 0, first_ts, last_ts;

	(void)state;
	tr_group_need();
	n = tr_find_all(&run, "I", "ctrace: events dropped", drops, 4096);
	if (n == 0 || n == 4096)
		fail_msg("%zu \"ctrace: events dropped\" instants", n);
	first_ts = tr_num(drops[0], "ts");
	last_ts = tr_num(drops[n - 1], "ts");
	for (size_t i = 0; i < n; i++) {
		double total = tr_num(cJSON_GetObjectItem(drops[i], "args"), "dropped_total");

		assert_string_equal(tr_str(drops[i], "s"), "g");
		assert_true(tr_num(drops[i], "pid") == run.pid);
		sum += tr_num(cJSON_GetObjectItem(drops[i], "args"), "dropped");
		if (total <= last_total) /* each says how many were lost since the last */
			fail_msg("drop instant %zu: dropped_total %.0f after %.0f", i, total, last_total);
		last_total = total;
	}
	if (sum != tr_meta_num(&run, "dropped_events") || last_total != tr_meta_num(&run, "dropped_events"))
		fail_msg("drop instants add up to %.0f (last total %.0f), metadata says %.0f", sum,
			 last_total, tr_meta_num(&run, "dropped_events"));
	/* they sit in the flood's time, not all at the end */
	if (!(first_ts < last_ts))
		fail_msg("%zu drop instants, all at %.3f us", n, first_ts);
}

/* stderr says it too, with the number. */
static void test_drops_on_stderr(void **state)
{
	char want[64];

	(void)state;
	tr_group_need();
	snprintf(want, sizeof(want), "%.0f dropped", tr_meta_num(&run, "dropped_events"));
	if (!strstr(run.tracer_stderr, want))
		fail_msg("stderr does not say \"%s\": %s", want, run.tracer_stderr);
	assert_non_null(strstr(run.tracer_stderr, "buffer"));
}

/*
 * The loader's memory does not grow with the events it handles: after the
 * first quarter of the flood (buffers allocated, pages touched), it stays
 * within 2 MiB of where it was, plus what the batched path's merge may hold
 * by design (MERGE_MAX_BYTES: events behind the watermark, more of them the
 * later a loaded machine lets the watermark move; up to 3 MiB was seen).
 */
static void test_loader_memory_flat(void **state)
{
	long base, peak = 0;

	(void)state;
	tr_group_need();
	if (n_rss < 8)
		fail_msg("only %zu RSS samples of the tracer during the flood", n_rss);
	base = rss_kib[n_rss / 4];
	for (size_t i = n_rss / 4; i < n_rss; i++)
		peak = rss_kib[i] > peak ? rss_kib[i] : peak;
	print_message("loader RSS: %ld KiB at 1/4 of the flood, peak %ld KiB after (%zu samples)\n",
		      base, peak, n_rss);
#ifdef __SANITIZE_ADDRESS__
	/*
	 * ASan holds every freed block in its quarantine (256 MiB by default)
	 * before reuse: the RSS of an ASan loader grows with what it frees.
	 * The plain build checks the bound (as test_memory_bounds does its
	 * ceiling); this one checks that the flood is clean.
	 */
	print_message("(ASan build: the 2 MiB bound is checked by the plain build)\n");
#else
	if (peak - base > 2048 + (long)(MERGE_MAX_BYTES >> 10))
		fail_msg("the loader grew by %ld KiB during the flood (bound %ld KiB)", peak - base,
			 2048 + (long)(MERGE_MAX_BYTES >> 10));
#endif
}

/* The whole file is strict JSON and UTF-8 (tr_load_trace checked RFC 8259). */
static void test_file_complete(void **state)
{
	(void)state;
	tr_group_need();
	assert_true(tr_valid_utf8(run.trace_text, run.trace_len));
	assert_string_equal(tr_str(tr_meta(&run), "stop_reason"),
			    "target exited");
	if (tr_meta_num(&run, "events_written") != cJSON_GetArraySize(run.events))
		fail_msg("metadata.events_written %.0f, the file holds %d", tr_meta_num(&run, "events_written"),
			 cJSON_GetArraySize(run.events));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_lost_silently),
		cmocka_unit_test(test_drops_shown_where_they_happened),
		cmocka_unit_test(test_drops_on_stderr),
		cmocka_unit_test(test_loader_memory_flat),
		cmocka_unit_test(test_file_complete),
	};

	return cmocka_run_group_tests(tests, group_setup, tr_group_teardown);
}
