// SPDX-License-Identifier: MIT
/*
 * pftrace: a trace written by the real JSON writer (chrome_trace.c) with
 * every event kind and the traced program's worst strings (bytes that are
 * no UTF-8, escapes of lone surrogates, NUL and control escapes, quotes,
 * a forged big-integer mark, integers past 2^53, nested and empty args)
 * is turned into a Perfetto trace and read back: the same events, each
 * string valid UTF-8 (protobuf's `string` must be), strict JSON out. A
 * pftrace cut at every byte or full of junk reads back as far as it goes,
 * never crashes. The stream fed in pieces of any size takes whole packets
 * only, the same as the file's. pftrace_utf8(): what it keeps and replaces.
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
#include "json_strict.h"
#include "encode/json/json_writer.h"
#include "encode/perfetto/pftrace.h"
#include "pftrace_compare.h"
#include "perfetto_trace.pb-c.h"

#define T(str) (&(struct ct_text){ .s = (str), .n = sizeof(str) - 1 })
#define TF(str, fl) (&(struct ct_text){ .s = (str), .n = sizeof(str) - 1, .flags = (fl) })

/* The whole file behind f (its position untouched). */
static char *slurp(FILE *f, size_t *len)
{
	struct stat st;
	char *s;

	fflush(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	s = malloc(*len + 1);
	assert_non_null(s);
	assert_int_equal(pread(fileno(f), s, *len, 0), (ssize_t)*len);
	s[*len] = 0;
	return s;
}

/* The JSON trace of every event kind, with hostile strings, as chrome_trace.c writes it. */
static FILE *hostile_json(void)
{
	static const struct proc_facts target = { .pid = 4242, .ns_pid = 1, .comm = "host\xff" "ile",
						   .exe = "/bin/\xc0\xafx", .cwd = "/tmp" };
	struct trace_facts facts = { .tracer_version = "test", .target = &target,
				     .start_wall_ns = 1796470536196410843ull, .start_mono_ns = 9456781407746ull };
	struct trace_stats stats = { .dropped = 7, .unmatched_ends = 3, .stop_reason = "test",
				     .stop_mono_ns = 9456999000000ull };
	struct ct_flow_bind out = { .id = 0x2a, .out = true }, in = { .id = 0x2a, .in = true };
	struct json_writer w;
	struct chrome_trace ct;
	FILE *f;
	int fd = memfd_create("json", 0);
	uint64_t t = 9456800000000ull;

	assert_true(fd >= 0);
	assert_int_equal(jw_init(&w, fd, 64), 0);
	chrome_trace_begin(&ct, &w, &facts);
	chrome_trace_process_name(&ct, 4242, T("pro\xe2\x82" "cess \"q\" \\ \x01\x1f"));
	chrome_trace_thread_name(&ct, 4242, 4243, T("\xed\xa0\x80 lone surrogate bytes \xf0\x9f\x98\x80"));
	chrome_trace_sort_index(&ct, 4242, 4243, true, -5);
	chrome_trace_sort_index(&ct, 4242, 4242, false, 3);
	chrome_trace_complete(&ct, 4242, 4243, t, 1500, T("\xff\xfe span"),
			      T("{\"a\":18446744073709551615,\"b\":-9223372036854775808,\"c\":1.5,\"d\":[1,{},[],null,true],"
				"\"e\":{\"f\":\"\\ud800\\u0000\\u0001x\"},\"g\":\"\\ud83d\\ude00\"}"),
			      T("{\"end\":\"\xffint:123\"}"));
	chrome_trace_complete(&ct, 4242, 4243, t + 10, 20, T("args not JSON"), T("{\"unclosed\": [1, 2"), NULL);
	chrome_trace_complete(&ct, 4242, 4243, t + 40, 5, T("cut"), TF("{\"k\":\"abc", CTRACE_STR_TRUNCATED), NULL);
	chrome_trace_complete(&ct, 4242, 4243, t + 50, 5, TF("", CTRACE_STR_FAULT), TF("", CTRACE_STR_FAULT), NULL);
	chrome_trace_bind_next(&ct, &out);
	chrome_trace_complete(&ct, 4242, 4243, t + 100, 50, T("send"), NULL, NULL);
	chrome_trace_flow_phase(&ct, 's', 4242, 4243, t + 100, 0x2a);
	chrome_trace_bind_next(&ct, &in);
	chrome_trace_complete(&ct, 4242, 4244, t + 200, 50, T("take"), NULL, NULL);
	chrome_trace_flow_phase(&ct, 'f', 4242, 4244, t + 200, 0x2a);
	chrome_trace_async(&ct, 4242, T("a\xffsync"), 7, 4243, t + 300, T("{\"x\":1}"), 4244, t + 400, T("{\"y\":\"\xfe\"}"));
	chrome_trace_instant(&ct, 4242, 4243, t + 500, T("inst g"), 'g', T("{\"s\":\"\xc3\x28\"}"));
	chrome_trace_instant(&ct, 4242, 4243, t + 501, T("inst p"), 'p', NULL);
	chrome_trace_instant(&ct, 4242, 4244, t + 502, T("inst t"), 't', T("{\"ctrace_tid\":1}"));
	chrome_trace_counter(&ct, 4242, 4243, t + 600, T("count\xff"), 2.5);
	chrome_trace_counter(&ct, 4242, 4243, t + 601, T("count\xff"), -1e300);
	chrome_trace_unfinished(&ct, 4242, 4243, t + 700, 99, T("open"), T("{\"q\":2}"), "stop");
	chrome_trace_notice(&ct, 4242, 4242, t + 800, "ctrace: notice", 't',
			    (struct ct_arg[]){ CT_U64("n", UINT64_MAX), CT_STR("s", "\xff\x00z", 3),
					       CT_DOUBLE("d", 1.0 / 0.0) }, 3);
	chrome_trace_end(&ct, &facts, &stats);
	assert_int_equal(jw_finish(&w), 0);
	jw_free(&w);
	f = fdopen(fd, "r+");
	assert_non_null(f);
	rewind(f); /* read from its start */
	return f;
}

static FILE *mem_file(void)
{
	int fd = memfd_create("pf", 0);

	assert_true(fd >= 0);
	return fdopen(fd, "w+");
}

static void test_round_trip_of_hostile_trace(void **state)
{
	FILE *json = hostile_json(), *pf = mem_file(), *back = mem_file();
	struct pftrace_counts counts;
	size_t jlen, blen;
	char *jtext, *btext, why[1024];
	cJSON *jdoc, *bdoc;

	(void)state;
	jtext = slurp(json, &jlen);
	assert_int_equal(pftrace_from_json(json, pf, &counts, why, sizeof(why)), 0);
	/* Every event of the JSON became packets: none left out */
	assert_int_equal(counts.not_converted, 0);
	assert_true(counts.events >= 20);
	rewind(pf);
	assert_int_equal(pftrace_to_json(pf, back, why, sizeof(why)), 0);
	btext = slurp(back, &blen);
	if (!json_strict_check(btext, blen, why, sizeof(why)))
		fail_msg("the pftrace read back is no strict JSON: %s\n%s", why, btext);
	assert_true(json_strict_utf8(btext, blen, NULL));
	jdoc = cJSON_Parse(jtext);
	bdoc = cJSON_Parse(btext);
	assert_non_null(jdoc);
	assert_non_null(bdoc);
	if (!pftrace_same_trace(jdoc, bdoc, why, sizeof(why))) {
		fprintf(stderr, "JSON:\n%s\nread back:\n%s\n", jtext, btext); /* cmocka cuts long messages */
		fail_msg("%s", why);
	}
	/* The integers past 2^53 kept their digits, and the forged mark stayed a string */
	assert_non_null(strstr(btext, "18446744073709551615"));
	assert_non_null(strstr(btext, "-9223372036854775808"));
	assert_non_null(strstr(btext, "1796470536196410843"));
	assert_null(strstr(btext, "\"end\":123"));
	/* The counts of what was lost are in it */
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(bdoc, "metadata"), "dropped_events")->valueint, 7);
	cJSON_Delete(jdoc);
	cJSON_Delete(bdoc);
	free(jtext);
	free(btext);
	fclose(json);
	fclose(pf);
	fclose(back);
}

/*
 * Each process and thread track is declared once, whatever the number of
 * its events (a track per event would be a process per event in Perfetto);
 * a name or sort index comes as the track again, with that fact.
 */
static void test_tracks_declared_once(void **state)
{
	FILE *json = hostile_json(), *pf = mem_file();
	struct pftrace_counts counts;
	char why[256], *bytes, seen[64][24];
	size_t len, n_seen = 0, at = 0;

	(void)state;
	assert_int_equal(pftrace_from_json(json, pf, &counts, why, sizeof(why)), 0);
	bytes = slurp(pf, &len);
	while (at < len) {
		Perfetto__Protos__TracePacket *p;
		uint64_t n = 0;
		int shift = 0;

		assert_int_equal((unsigned char)bytes[at++], 0x0a);
		do
			n |= (uint64_t)(bytes[at] & 0x7f) << shift, shift += 7;
		while (bytes[at++] & 0x80);
		p = perfetto__protos__trace_packet__unpack(NULL, n, (const uint8_t *)bytes + at);
		assert_non_null(p);
		at += n;
		if (p->track_descriptor && (p->track_descriptor->process || p->track_descriptor->thread)) {
			const Perfetto__Protos__TrackDescriptor *d = p->track_descriptor;
			bool fact = d->process ? d->process->process_name || d->process->has_legacy_sort_index :
						 d->thread->thread_name || d->thread->has_legacy_sort_index;
			char key[24];


			snprintf(key, sizeof(key), "%c%d/%lld", d->process ? 'p' : 't',
				 d->process ? d->process->pid : d->thread->pid, d->process ? 0 : (long long)d->thread->tid);
			for (size_t i = 0; i < n_seen && !fact; i++)
				if (!strcmp(seen[i], key))
					fail_msg("track %s declared twice", key);
			if (!fact && n_seen < 64)
				strcpy(seen[n_seen++], key);
		}
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	assert_int_equal(at, len);
	assert_int_equal(n_seen, 4); /* process 4242; threads 4243, 4244 and 4242 */
	free(bytes);
	fclose(json);
	fclose(pf);
}

/* A .pftrace cut anywhere (a killed writer, a partial copy): read as far as it goes, strict JSON out. */
static void test_cut_and_junk(void **state)
{
	FILE *json = hostile_json(), *pf = mem_file();
	struct pftrace_counts counts;
	char why[256];
	size_t len;
	char *bytes;

	(void)state;
	assert_int_equal(pftrace_from_json(json, pf, &counts, why, sizeof(why)), 0);
	bytes = slurp(pf, &len);
	for (size_t cut = 0; cut <= len; cut++) {
		FILE *in = fmemopen(bytes, cut ? cut : 1, "r"), *back = mem_file();
		size_t blen;
		char *btext;
		int ret;

		assert_non_null(in);
		ret = pftrace_to_json(in, back, why, sizeof(why));
		btext = slurp(back, &blen);
		assert_int_equal(ret, 0);
		if (!json_strict_check(btext, blen, why, sizeof(why)))
			fail_msg("cut at %zu: %s", cut, why);
		free(btext);
		fclose(in);
		fclose(back);
	}
	/* Junk: every byte flipped in turn, each file read (an error said, or a trace): no crash */
	for (size_t i = 0; i < len; i++) {
		FILE *in, *back = mem_file();

		bytes[i] ^= 0x5a;
		in = fmemopen(bytes, len, "r");
		why[0] = 0;
		if (pftrace_to_json(in, back, why, sizeof(why)) < 0)
			assert_true(why[0] != 0);
		bytes[i] ^= 0x5a;
		fclose(in);
		fclose(back);
	}
	free(bytes);
	fclose(json);
	fclose(pf);
}

/* The length of the whole packets (field 1, length-delimited) p[0, n) starts with. */
static size_t whole_packets(const unsigned char *p, size_t n)
{
	size_t at = 0;

	while (at < n && p[at] == 0x0a) {
		uint64_t len = 0;
		size_t i = at + 1;
		int shift = 0;

		while (i < n && (p[i] & 0x80) && shift < 63) {
			len |= (uint64_t)(p[i++] & 0x7f) << shift;
			shift += 7;
		}
		if (i >= n)
			break;
		len |= (uint64_t)p[i++] << shift;
		if (len > n - i)
			break;
		at = i + len;
	}
	return at;
}

/* The packets after the first (its clock snapshot is the time of the call). */
static const unsigned char *after_first(const unsigned char *p, size_t n, size_t *rest)
{
	size_t len = 0, i = 1;
	int shift = 0;

	assert_true(n > 2 && p[0] == 0x0a);
	while (p[i] & 0x80) {
		len |= (uint64_t)(p[i++] & 0x7f) << shift;
		shift += 7;
	}
	len |= (uint64_t)p[i++] << shift;
	*rest = n - i - len;
	return p + i + len;
}

/*
 * The stream, fed the JSON in pieces of every size from 1 byte (cut
 * mid-line, mid-string, mid-escape): each take ends on a packet boundary,
 * what was taken before the end reads back, and the whole is the same
 * packets as the file's conversion.
 */
static void test_stream_in_pieces(void **state)
{
	static const size_t pieces[] = { 1, 2, 3, 7, 13, 64, 100, 1000, 4095, 4097, 1 << 20 };
	FILE *json = hostile_json(), *pf = mem_file();
	struct pftrace_counts counts, scounts;
	char why[256], *jtext, *ref;
	size_t jlen, rlen, ref_rest;
	const unsigned char *ref_tail;

	(void)state;
	jtext = slurp(json, &jlen);
	assert_int_equal(pftrace_from_json(json, pf, &counts, why, sizeof(why)), 0);
	ref = slurp(pf, &rlen);
	ref_tail = after_first((const unsigned char *)ref, rlen, &ref_rest);
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		struct pftrace_stream *s = pftrace_stream_new();
		unsigned char *got = NULL;
		size_t glen = 0, n, rest, takes = 0;
		const void *out;
		const unsigned char *tail;

		assert_non_null(s);
		for (size_t at = 0; at < jlen; at += pieces[k]) {
			pftrace_stream_feed(s, jtext + at, jlen - at < pieces[k] ? jlen - at : pieces[k]);
			out = pftrace_stream_take(s, &n);
			assert_int_equal(whole_packets(out, n), n);
			got = realloc(got, glen + n + 1);
			assert_non_null(got);
			memcpy(got + glen, out, n);
			glen += n;
			takes += n > 0;
		}
		{
			/* Cut here (a tracer killed before its end): a trace that reads back, strict JSON */
			FILE *in = fmemopen(got, glen, "r"), *back = mem_file();
			size_t blen;
			char *btext;

			assert_int_equal(pftrace_to_json(in, back, why, sizeof(why)), 0);
			btext = slurp(back, &blen);
			if (!json_strict_check(btext, blen, why, sizeof(why)))
				fail_msg("pieces of %zu, before the end: %s", pieces[k], why);
			free(btext);
			fclose(in);
			fclose(back);
		}
		pftrace_stream_end(s, &scounts);
		out = pftrace_stream_take(s, &n);
		assert_int_equal(whole_packets(out, n), n);
		got = realloc(got, glen + n + 1);
		memcpy(got + glen, out, n);
		glen += n;
		tail = after_first(got, glen, &rest);
		if (rest != ref_rest || memcmp(tail, ref_tail, rest))
			fail_msg("pieces of %zu: %zu bytes of packets, not the file's %zu", pieces[k], rest, ref_rest);
		assert_int_equal(scounts.events, counts.events);
		assert_int_equal(scounts.packets, counts.packets);
		if (pieces[k] < 64)
			assert_true(takes > 10); /* packets came out as the events did, not all at the end */
		pftrace_stream_free(s);
		free(got);
	}
	free(jtext);
	free(ref);
	fclose(json);
	fclose(pf);
}

/*
 * More names than the interning table holds (2^18, pftrace_write.c): the
 * table starts again (counted in the metadata), and every event still
 * reads back with its own name, the ones met again after it too.
 */
static void test_tables_bounded(void **state)
{
	enum { N = (1 << 18) + 1000 };
	struct pftrace_stream *s = pftrace_stream_new();
	FILE *pf = mem_file(), *back = mem_file();
	struct pftrace_counts counts;
	char line[200], why[256], *btext;
	size_t n, blen, i = 0;
	const void *out;
	cJSON *doc, *ev;
	const char *head = "{\"context\":{}},\n\"traceEvents\":[\n", *end = "\"metadata\":{}}\n";

	(void)state;
	pftrace_stream_feed(s, head, strlen(head)); /* as chrome_trace.c begins and ends */
	for (i = 0; i < N + 10; i++) {
		/* the last 10: names from the start again, after the table was emptied */
		int len = snprintf(line, sizeof(line),
				   "{\"ph\":\"I\",\"name\":\"n%zu\",\"pid\":1,\"tid\":1,\"ts\":%zu.000,\"s\":\"t\"},\n",
				   i < N ? i : i - N, i + 1);

		pftrace_stream_feed(s, line, (size_t)len);
	}
	pftrace_stream_feed(s, end, strlen(end));
	pftrace_stream_end(s, &counts);
	assert_true(counts.tables_cleared >= 1);
	out = pftrace_stream_take(s, &n);
	assert_int_equal(fwrite(out, 1, n, pf), n);
	rewind(pf);
	assert_int_equal(pftrace_to_json(pf, back, why, sizeof(why)), 0);
	btext = slurp(back, &blen);
	doc = cJSON_Parse(btext);
	assert_non_null(doc);
	i = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "traceEvents")) {
		const cJSON *name = cJSON_GetObjectItem(ev, "name");
		char want[32];

		if (!cJSON_IsString(name) || strncmp(name->valuestring, "n", 1))
			continue;
		snprintf(want, sizeof(want), "n%zu", i < N ? i : i - N);
		assert_string_equal(name->valuestring, want);
		i++;
	}
	assert_int_equal(i, N + 10);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "metadata"), "pftrace_tables_cleared")->valuedouble ==
		    (double)counts.tables_cleared);
	cJSON_Delete(doc);
	free(btext);
	pftrace_stream_free(s);
	fclose(pf);
	fclose(back);
}

static void test_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" }, /* 2, 3, 4 bytes */
		{ "a\xff" "b", "a\xef\xbf\xbd" "b" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* overlong '/' */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* a surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* past U+10FFFF */
		{ "\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* cut short */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *copy;
		const char *got = pftrace_utf8(cases[i].in, &copy);

		assert_string_equal(got, cases[i].out);
		assert_true(json_strict_utf8(got, strlen(got), NULL));
		if (!strcmp(cases[i].in, cases[i].out))
			assert_ptr_equal(got, cases[i].in); /* valid: no copy */
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_of_hostile_trace),
		cmocka_unit_test(test_tracks_declared_once),
		cmocka_unit_test(test_cut_and_junk),
		cmocka_unit_test(test_stream_in_pieces),
		cmocka_unit_test(test_tables_bounded),
		cmocka_unit_test(test_utf8),
	};

	return cmocka_run_group_tests_name("pftrace", tests, NULL, NULL);
}
