// SPDX-License-Identifier: MIT
/*
 * pftrace_encode: the Perfetto encoder and the JSON one handed the same
 * typed events, every kind, with the traced program's worst strings (bytes
 * that are no UTF-8, escapes of lone surrogates, NUL and control escapes,
 * quotes, a forged big-integer mark, integers past 2^53, nested and empty
 * args, names Chrome reserves, cut and unreadable strings), flows, ties
 * (nest_ties.h) and a sort index past int32: the .pftrace read back
 * (pftrace_read.c) is the JSON's trace, event by event, strict UTF-8 JSON,
 * nothing left unconverted; and it is made of whole packets only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "encode/json/chrome_trace.h"
#include "ctrace_record.h"
#include "json_strict.h"
#include "encode/json/json_writer.h"
#include "encode/perfetto/pftrace.h"
#include "pftrace_compare.h"
#include "encode/perfetto/pftrace_encode.h"
#include "model/trace_event.h"

#define T(str) ((struct ct_text){ .s = (str), .n = sizeof(str) - 1 })
#define TF(str, fl) ((struct ct_text){ .s = (str), .n = sizeof(str) - 1, .flags = (fl) })

static char *slurp(int fd, size_t *len)
{
	struct stat st;
	char *s;

	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	s = malloc(*len + 1);
	assert_non_null(s);
	assert_int_equal(pread(fd, s, *len, 0), (ssize_t)*len);
	s[*len] = 0;
	return s;
}

/* Every kind of event, hostile, to both encoders. */
static void feed(const struct trace_fanout *f)
{
	const struct ct_arg notice_args[] = { CT_U64("n", UINT64_MAX), CT_STR("s", "\xff\x00z", 3),
					      CT_DOUBLE("d", 1.0 / 0.0) };
	uint64_t t = 9456800000000ull;
	const struct trace_event evs[] = {
		{ .kind = TE_PROCESS_NAME, .pid = 4242, .tid = 4242, .name = T("pro\xe2\x82" "cess \"q\" \\ \x01\x1f") },
		{ .kind = TE_THREAD_NAME, .pid = 4242, .tid = 4243,
		  .name = T("\xed\xa0\x80 lone surrogate bytes \xf0\x9f\x98\x80") },
		{ .kind = TE_THREAD_NAME, .pid = 4242, .tid = 4244, .name = TF("cut name", CTRACE_STR_TRUNCATED) },
		{ .kind = TE_SORT_INDEX, .pid = 4242, .tid = 4243, .thread = true, .sort_index = -5 },
		{ .kind = TE_SORT_INDEX, .pid = 4242, .tid = 4242, .sort_index = 1ll << 40 },
		/* a child and its parent begun at the same ns: the parent 1 ns before, in both */
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t, .dur_ns = 100, .name = T("child") },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t, .dur_ns = 1500, .name = T("\xff\xfe span"),
		  .args = T("{\"a\":18446744073709551615,\"b\":-9223372036854775808,\"c\":1.5,\"d\":[1,{},[],null,true],"
			    "\"e\":{\"f\":\"\\ud800\\u0000\\u0001x\"},\"g\":\"\\ud83d\\ude00\"}"),
		  .end_args = T("{\"end\":\"\xffint:123\"}") },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2000, .dur_ns = 20, .name = T("args not JSON"),
		  .args = T("{\"unclosed\": [1, 2") },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2040, .dur_ns = 5, .name = T("cut"),
		  .args = TF("{\"k\":\"abc", CTRACE_STR_TRUNCATED) },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2050, .dur_ns = 5,
		  .name = TF("", CTRACE_STR_FAULT), .args = TF("", CTRACE_STR_FAULT) },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2060, .dur_ns = 5,
		  .name = T("CpuProfile"), .cat = 0 },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2100, .dur_ns = 50, .name = T("send"),
		  .flow = { .id = 0x2a, .out = true } },
		{ .kind = TE_FLOW_STEP, .pid = 4242, .tid = 4243, .ts_ns = t + 2100, .flow_out = true, .id = 0x2a },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4244, .ts_ns = t + 2200, .dur_ns = 50, .name = T("take"),
		  .flow = { .id = 0x2a, .in = true } },
		{ .kind = TE_FLOW_STEP, .pid = 4242, .tid = 4244, .ts_ns = t + 2200, .id = 0x2a },
		{ .kind = TE_FLOW_STEP, .pid = 4242, .tid = 4244, .ts_ns = t + 2200, .flow_out = true, .id = 0x2b },
		{ .kind = TE_ASYNC, .pid = 4242, .tid = 4243, .ts_ns = t + 2300, .name = T("a\xffsync"), .id = 7,
		  .args = T("{\"x\":1}"), .end_tid = 4244, .end_ns = t + 2400, .end_args = T("{\"y\":\"\xfe\"}") },
		{ .kind = TE_INSTANT, .pid = 4242, .tid = 4243, .ts_ns = t + 2500, .name = T("inst g"), .scope = 'g',
		  .args = T("{\"s\":\"\xc3\x28\"}") },
		{ .kind = TE_INSTANT, .pid = 4242, .tid = 4243, .ts_ns = t + 2501, .name = T("inst p"), .scope = 'p' },
		{ .kind = TE_INSTANT, .pid = 4242, .tid = 4244, .ts_ns = t + 2502, .name = T("inst t"), .scope = 't',
		  .args = T("{\"ctrace_tid\":1}") },
		{ .kind = TE_COUNTER, .pid = 4242, .tid = 4243, .ts_ns = t + 2600, .name = T("count\xff"), .value = 2.5 },
		{ .kind = TE_COUNTER, .pid = 4242, .tid = 4243, .ts_ns = t + 2601, .name = T("count\xff"), .value = -1e300 },
		{ .kind = TE_COUNTER, .pid = 4242, .tid = 4243, .ts_ns = t + 2602, .name = T("whole"), .value = 12 },
		{ .kind = TE_COMPLETE, .pid = 4242, .tid = 4243, .ts_ns = t + 2700, .dur_ns = 99, .name = T("open"),
		  .args = T("{\"q\":2}"), .unfinished = "stop" },
		{ .kind = TE_NOTICE, .pid = 4242, .tid = 4242, .ts_ns = t + 2800, .name = T("ctrace: notice"), .scope = 't',
		  .notice_args = notice_args, .n_notice_args = 3 },
	};

	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		trace_emit(f, &evs[i]);
}

static void test_same_trace_as_the_json(void **state)
{
	static const struct proc_facts target = { .pid = 4242, .ns_pid = 1, .comm = "host\xff" "ile",
						   .exe = "/bin/\xc0\xafx", .cwd = "/tmp" };
	struct trace_facts facts = { .tracer_version = "test", .target = &target,
				     .start_wall_ns = 1796470536196410843ull, .start_mono_ns = 9456781407746ull };
	struct trace_stats stats = { .dropped = 7, .unmatched_ends = 3, .stop_reason = "test",
				     .stop_mono_ns = 9456999000000ull };
	int jfd = memfd_create("json", 0), pfd = memfd_create("pf", 0);
	struct json_writer jw, pw;
	struct chrome_trace ct;
	struct pftrace_encoder *pe;
	struct trace_fanout fan;
	FILE *pf, *back = tmpfile();
	char *jtext, *btext, why[1024];
	size_t jlen, blen;
	cJSON *jdoc, *bdoc, *md;

	(void)state;
	assert_true(jfd >= 0 && pfd >= 0 && back);
	assert_int_equal(jw_init(&jw, jfd, 64), 0);
	assert_int_equal(jw_init(&pw, pfd, 64), 0); /* small: packets handed on past the buffer too */
	jw_packets(&pw);
	pe = pftrace_encoder_new(&pw);
	assert_non_null(pe);
	trace_fanout_init(&fan);
	trace_fanout_add(&fan, pftrace_encoder(pe));
	trace_fanout_begin(&fan, &facts);
	chrome_trace_begin(&ct, &jw, &facts);
	trace_fanout_add(&fan, chrome_trace_encoder(&ct));
	feed(&fan);
	trace_fanout_end(&fan, &facts, &stats);
	assert_int_equal(jw_finish(&jw), 0);
	assert_int_equal(jw_finish(&pw), 0);
	/* The same events counted: the async pair two, each flow step one */
	assert_int_equal(pftrace_encoder_events(pe), ct.events);
	pftrace_encoder_free(pe);

	pf = fdopen(pfd, "r");
	assert_non_null(pf);
	rewind(pf);
	if (pftrace_to_json(pf, back, why, sizeof(why)) < 0)
		fail_msg("read back: %s", why);
	jtext = slurp(jfd, &jlen);
	btext = slurp(fileno(back), &blen);
	if (!json_strict_check(btext, blen, why, sizeof(why)))
		fail_msg("the pftrace read back is no strict JSON: %s\n%s", why, btext);
	assert_true(json_strict_utf8(btext, blen, NULL));
	jdoc = cJSON_Parse(jtext);
	bdoc = cJSON_Parse(btext);
	assert_non_null(jdoc);
	assert_non_null(bdoc);
	if (!pftrace_same_trace(jdoc, bdoc, why, sizeof(why))) {
		fprintf(stderr, "JSON:\n%s\nread back:\n%s\n", jtext, btext);
		fail_msg("%s", why);
	}
	/* Integers past 2^53 kept their digits; the forged mark stayed a string; a reserved name renamed */
	assert_non_null(strstr(btext, "18446744073709551615"));
	assert_non_null(strstr(btext, "-9223372036854775808"));
	assert_non_null(strstr(btext, "1796470536196410843"));
	assert_null(strstr(btext, "\"end\":123"));
	assert_non_null(strstr(btext, "CpuProfile (renamed by ctrace)"));
	md = cJSON_GetObjectItem(bdoc, "metadata");
	assert_int_equal(cJSON_GetObjectItem(md, "pftrace_events_not_converted")->valueint, 0);
	assert_int_equal(cJSON_GetObjectItem(md, "pftrace_sort_indexes_clamped")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(md, "slice_begin_ties_moved")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(md, "dropped_events")->valueint, 7);
	cJSON_Delete(jdoc);
	cJSON_Delete(bdoc);
	free(jtext);
	free(btext);
	fclose(pf);
	fclose(back);
	close(jfd);
	jw_free(&jw);
	jw_free(&pw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_trace_as_the_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
