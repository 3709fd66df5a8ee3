// SPDX-License-Identifier: MIT
/*
 * The flight recorder's ring (userspace/encode/flight_recorder.c) without the
 * kernel: events written through chrome_trace.c into a 64 KiB ring, some
 * bigger than its stage (16 KiB) or than the ring itself, dumps at random
 * points. Every dump must be valid JSON, hold a contiguous run of the
 * latest events ending with the last one written, and the events kept and
 * counted overwritten must add up to those written, to the event.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "encode/json/chrome_trace.h"
#include "encode/flight_recorder.h"
#include "encode/json/json_writer.h"

#define RING (64u << 10)

struct rig {
	struct json_writer stage;
	struct chrome_trace ct;
	struct flight_recorder fr;
	long next;          /* args.n of the next event */
	char *pad;
};

static void rig_init(struct rig *g)
{
	memset(g, 0, sizeof(*g));
	assert_int_equal(jw_init(&g->stage, -1, flight_stage_size(RING)), 0);
	chrome_trace_begin_ring(&g->ct, &g->stage, &g->fr);
	assert_int_equal(flight_recorder_init(&g->fr, RING, &g->stage, &g->ct), 0);
	g->pad = malloc(200000);
	memset(g->pad, 'x', 200000);
}

static void rig_free(struct rig *g)
{
	flight_recorder_free(&g->fr);
	jw_free(&g->stage);
	free(g->pad);
}

/* An instant with args {"n":N,"pad":"xxx..."} of about pad bytes. */
static void event(struct rig *g, size_t pad)
{
	char *args = malloc(pad + 64);
	int n = snprintf(args, 64, "{\"n\":%ld,\"pad\":\"", g->next++);

	memcpy(args + n, g->pad, pad);
	memcpy(args + n + pad, "\"}", 3);
	chrome_trace_instant(&g->ct, 1, 1, 1000 + (uint64_t)g->next, &(struct ct_text){ "e", 1, 0 }, 't',
			     &(struct ct_text){ args, strlen(args), 0 });
	free(args);
}

/* A dump, read back: its events' n, checked contiguous and ending at the last written; how many. */
static long dump(struct rig *g, long *first)
{
	struct json_writer out;
	FILE *f = tmpfile();
	char *text;
	long len, count = 0, last = -1;
	uint64_t written;
	cJSON *doc, *ev;

	assert_non_null(f);
	assert_int_equal(jw_init(&out, fileno(f), 0), 0);
	jw_lit(&out, "[");
	written = flight_recorder_write(&g->fr, &out);
	jw_lit(&out, "]");
	assert_int_equal(jw_flush(&out), 0);
	jw_free(&out);
	len = ftell(f);
	text = malloc((size_t)len + 1);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = 0;
	fclose(f);
	doc = cJSON_Parse(text);
	if (!doc)
		fail_msg("dump is not JSON: %.200s", text);
	*first = -1;
	cJSON_ArrayForEach(ev, doc) {
		cJSON *args = cJSON_GetObjectItem(ev, "args");
		long n;

		if (!strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "M"))
			continue; /* a name kept aside */
		n = (long)cJSON_GetObjectItem(args, "n")->valuedouble;
		if (*first < 0)
			*first = n;
		else if (n != last + 1)
			fail_msg("event %ld after %ld", n, last);
		last = n;
		count++;
	}
	assert_int_equal((long)written, cJSON_GetArraySize(doc));
	if (count && last != g->next - 1)
		fail_msg("the dump ends at %ld, the last written is %ld", last, g->next - 1);
	cJSON_Delete(doc);
	free(text);
	return count;
}

static void test_runs_of_latest_events_add_up(void **state)
{
	struct rig g;
	long kept = 0, first;

	(void)state;
	rig_init(&g);
	chrome_trace_process_name(&g.ct, 1, &(struct ct_text){ "proc", 4, 0 });
	srand(14);
	for (int round = 0; round < 200; round++) {
		int n = rand() % 3000;

		for (int i = 0; i < n; i++) {
			int r = rand() % 1000;
			/* Mostly small; some over the stage (16 KiB); a few over the ring (48 KiB). */
			size_t pad = r < 990 ? (size_t)(rand() % 200) :
				     r < 998 ? 20000 + (size_t)(rand() % 20000) : 70000;

			event(&g, pad);
		}
		kept += dump(&g, &first);
		if ((uint64_t)kept + g.fr.overwritten_total != (uint64_t)g.next)
			fail_msg("round %d: %ld kept + %llu overwritten != %ld written", round, kept,
				 (unsigned long long)g.fr.overwritten_total, g.next);
	}
	rig_free(&g);
}

/* A ring that never filled keeps everything since the last dump, names first. */
static void test_nothing_overwritten_when_it_fits(void **state)
{
	struct rig g;
	long first;

	(void)state;
	rig_init(&g);
	for (int i = 0; i < 100; i++)
		event(&g, 10);
	assert_int_equal(dump(&g, &first), 100);
	assert_int_equal(first, 0);
	for (int i = 0; i < 5; i++)
		event(&g, 10);
	assert_int_equal(dump(&g, &first), 5);
	assert_int_equal(first, 100);
	assert_int_equal(g.fr.overwritten_total, 0);
	assert_int_equal(dump(&g, &first), 0);
	rig_free(&g);
}

/*
 * 100 k threads named (~20 MB of names): the first 1024 kept for good, then
 * 4 MiB of the latest; the others forgotten and counted.
 */
static void test_names_bounded_latest_kept(void **state)
{
	struct rig g;
	struct json_writer out;
	FILE *f = tmpfile();
	char name[160], *text;
	long len;
	cJSON *doc, *ev;
	uint64_t n_written;
	int named = 0, last_seen = 0, first_tid = -1, pinned = 0;

	(void)state;
	rig_init(&g);
	memset(name, 'n', sizeof(name));
	for (int tid = 1; tid <= 100000; tid++)
		chrome_trace_thread_name(&g.ct, 1, (uint32_t)tid, &(struct ct_text){ name, 150, 0 });
	assert_true(g.fr.names_bytes <= FLIGHT_NAMES_MAX);
	assert_true(g.fr.names_left_out > 0);
	assert_int_equal(jw_init(&out, fileno(f), 0), 0);
	jw_lit(&out, "[");
	n_written = flight_recorder_write(&g.fr, &out);
	jw_lit(&out, "]");
	assert_int_equal(jw_flush(&out), 0);
	jw_free(&out);
	len = ftell(f);
	text = malloc((size_t)len + 1);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = 0;
	fclose(f);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	cJSON_ArrayForEach(ev, doc) {
		int tid = (int)cJSON_GetObjectItem(ev, "tid")->valuedouble;

		named++;
		last_seen |= tid == 100000;
		if (tid <= FLIGHT_NAMES_PINNED) {
			pinned++;
			continue;
		}
		if (first_tid < 0 || tid < first_tid)
			first_tid = tid;
	}
	assert_int_equal((long)n_written, named);
	/* What was kept is the latest run: the names from first_tid on, all of them. */
	assert_true(last_seen);
	assert_int_equal(pinned, FLIGHT_NAMES_PINNED);
	assert_int_equal(named - pinned, 100000 - first_tid + 1);
	assert_int_equal(g.fr.names_left_out, (uint64_t)(first_tid - 1 - FLIGHT_NAMES_PINNED));
	print_message("%d of 100000 names kept (tids 1..%d and %d..100000), %llu forgotten\n", named,
		      FLIGHT_NAMES_PINNED, first_tid, (unsigned long long)g.fr.names_left_out);
	cJSON_Delete(doc);
	free(text);
	rig_free(&g);
}

static void test_dump_paths(void **state)
{
	char buf[64];

	(void)state;
	flight_dump_path("trace.json", 3, buf, sizeof(buf));
	assert_string_equal(buf, "trace-3.json");
	flight_dump_path("fr-%n.json", 12, buf, sizeof(buf));
	assert_string_equal(buf, "fr-12.json");
	flight_dump_path("out", 1, buf, sizeof(buf));
	assert_string_equal(buf, "out-1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_of_latest_events_add_up),
		cmocka_unit_test(test_nothing_overwritten_when_it_fits),
		cmocka_unit_test(test_names_bounded_latest_kept),
		cmocka_unit_test(test_dump_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
