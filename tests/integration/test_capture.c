// SPDX-License-Identifier: MIT
/*
 * test_capture - -o FILE.ctrace and `ctrace-bpf convert`: deterministic
 * test programs traced twice by the real tracer, once live into JSON and
 * once into a capture converted afterwards; the two traces must be the same
 * trace, event by event: the same events with the same names, categories,
 * phases and args (times, pids and tids aside: they are another run's),
 * the same counts, the same metadata counters. Then what a user relies on
 * of a capture itself:
 *   - the same capture converted to .json.gz and .pftrace holds that trace
 *     too (the .json.gz byte for byte, the .pftrace read back);
 *   - `report` reads a capture;
 *   - a capture cut short converts up to its last whole record and says so;
 *   - a capture of a newer format version is refused in one line, exit 1;
 *   - a file that is no capture is refused in one line.
 * (cut_strings: strings the probe could not read, read from the process
 * when captured.) And the trace command converting behind its capture
 * (CTRACE_CONVERT=behind) writes the same trace as live.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "encode/perfetto/pftrace.h"
#include "pftrace_compare.h"
#include "trace_run.h"

/* Values of one run that another run has otherwise: left out of the comparison. */
static const char *const run_fields[] = { "ts", "dur", "pid", "tid", "id", "id2", "bind_id", "tts", NULL };

/*
 * A string with what is the run's own in it made plain: "tid 1234" and
 * addresses ("0x7ffe...": a span's pointer in an unmatched end) change
 * from run to run.
 */
static void plain_run_values(char *s)
{
	char *w = s;

	for (const char *p = s; *p;) {
		const char *end = p;

		/* The end of what is replaced is found before anything is written over it. */
		if (!strncmp(p, "tid ", 4) && isdigit((unsigned char)p[4])) {
			for (end = p + 4; isdigit((unsigned char)*end); end++)
				;
			memcpy(w, "tid N", 5);
			w += 5;
			p = end;
		} else if (p[0] == '0' && p[1] == 'x' && isxdigit((unsigned char)p[2])) {
			for (end = p + 2; isxdigit((unsigned char)*end); end++)
				;
			memcpy(w, "0xA", 3);
			w += 3;
			p = end;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The events of a trace as sorted lines of text, without the run's own
 * values. names_race: a thread_name's name is left out (its event kept):
 * the live path reads a short-lived thread's name in /proc when the model
 * first shows the thread, racing the thread's exit, so that two live runs
 * of span_events differ (1 in 5, measured): "span_events" or "thread (tid N)".
 */
static char **event_lines(const cJSON *events, size_t *n, bool names_race)
{
	size_t count = (size_t)cJSON_GetArraySize(events), i = 0;

	assert_non_null(events);
	char **v = calloc(count ? count : 1, sizeof(*v));
	const cJSON *ev;

	assert_non_null(v);
	cJSON_ArrayForEach(ev, events) {
		cJSON *e = cJSON_Duplicate(ev, true);

		for (const char *const *f = run_fields; *f; f++)
			cJSON_DeleteItemFromObjectCaseSensitive(e, *f);
		if (names_race && !strcmp(tr_str(e, "name") ? tr_str(e, "name") : "", "thread_name"))
			cJSON_DeleteItemFromObjectCaseSensitive(e, "args");
		v[i] = cJSON_PrintUnformatted(e);
		assert_non_null(v[i]);
		plain_run_values(v[i]);
		cJSON_Delete(e);
		i++;
	}
	qsort(v, count, sizeof(*v), by_text);
	*n = count;
	return v;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * The metadata's counters: the same in both, but for these: times, the
 * target, what each run read live, and how the events came, as the timing
 * falls: `records`, the ring records (a thread's events come in its own
 * flushes or in the loader's reads of its buffer: two live runs of
 * nested_scopes under load, 18 and 417), and which events came batched
 * and which per event, `literals_by_reference` and `batch.events` (under
 * load, about 1 run in 30 of nested_scopes has some of its events per
 * event: 3800 of 5000 batched).
 */
static const char *const meta_own[] = {
	"trace_start_wall_time", "trace_start_wall_ns", "trace_start_monotonic_ns", "trace_stop_monotonic_ns",
	"target", "remote_reads", "late_string_reads", "file_string_reads", "records", "literals_by_reference",
	"converted_from_capture", NULL,
};
static const char *const batch_own[] = { "events", NULL };

static bool meta_own_key(const char *k)
{
	for (const char *const *m = meta_own; *m; m++)
		if (!strcmp(*m, k))
			return true;
	return false;
}

static void same_trace(const struct trace_run *live, const struct trace_run *conv, const char *what, bool names_race)
{
	size_t nl, nc;
	char **l = event_lines(live->events, &nl, names_race), **c = event_lines(conv->events, &nc, names_race);
	const cJSON *ml = tr_meta(live), *mc = tr_meta(conv), *item;

	for (size_t i = 0; i < nl && i < nc; i++)
		if (strcmp(l[i], c[i]))
			fail_msg("%s: live and converted traces differ:\n  live:      %s\n  converted: %s", what, l[i],
				 c[i]);
	if (nl != nc)
		fail_msg("%s: %zu events live, %zu converted", what, nl, nc);
	free_lines(l, nl);
	free_lines(c, nc);
	assert_non_null(ml);
	assert_non_null(mc);
	cJSON_ArrayForEach(item, ml) {
		const cJSON *other = cJSON_GetObjectItemCaseSensitive(mc, item->string);
		bool same;

		if (meta_own_key(item->string))
			continue;
		if (!strcmp(item->string, "batch") && other) {
			cJSON *a = cJSON_Duplicate(item, true), *b = cJSON_Duplicate(other, true);

			for (const char *const *k = batch_own; *k; k++) {
				cJSON_DeleteItemFromObjectCaseSensitive(a, *k);
				cJSON_DeleteItemFromObjectCaseSensitive(b, *k);
			}
			same = cJSON_Compare(a, b, true);
			cJSON_Delete(a);
			cJSON_Delete(b);
		} else {
			same = other && cJSON_Compare(item, other, true);
		}
		if (!same) {
			char *a = cJSON_PrintUnformatted(item), *b = other ? cJSON_PrintUnformatted(other) : NULL;

			fail_msg("%s: metadata.%s: live %s, converted %s", what, item->string, a, b ? b : "(none)");
		}
	}
	/* A string the live tracer read from the process, the conversion reads from its file: counted either way. */
	assert_true(tr_meta_num(live, "late_string_reads") + tr_meta_num(live, "file_string_reads") ==
		    tr_meta_num(conv, "late_string_reads") + tr_meta_num(conv, "file_string_reads"));
	cJSON_ArrayForEach(item, mc)
		if (!meta_own_key(item->string) && !cJSON_GetObjectItemCaseSensitive(ml, item->string))
			fail_msg("%s: metadata.%s converted, not live", what, item->string);
}

/* Writes `ctrace-bpf convert CAPTURE -o OUT`; its exit code. */
static int convert(const char *capture, const char *out, char **err)
{
	struct tr_cmd res = { 0 };
	const char *args[] = { capture, "-o", out, NULL };
	int code;

	assert_int_equal(tr_run_tracer(&res, NULL, "convert", args, 60000), 0);
	code = res.exit;
	if (err)
		*err = res.err ? strdup(res.err) : strdup("");
	tr_cmd_free(&res);
	return code;
}

/* The program traced into a capture, converted into conv->trace_path: conv is then loaded. */
static void capture_run(struct trace_run *conv, const char *program, const char *const *prog_args,
			const char *const *extra, char *capture, size_t capture_len)
{
	const char *argv[16];
	size_t n = 0;
	char *err;

	argv[n++] = tr_tracer();
	argv[n++] = "-p";
	argv[n++] = "{PID}";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = "{TRACE}.ctrace";
	for (; extra && *extra && n < 15; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	if (tr_run_command(conv, program, prog_args, argv) < 0)
		fail_msg("%s", conv->error);
	if (conv->tracer_exit != 0)
		fail_msg("capture of %s: tracer exited %d: %s", program, conv->tracer_exit, conv->tracer_stderr);
	snprintf(capture, capture_len, "%s.ctrace", conv->trace_path);
	if (convert(capture, conv->trace_path, &err) != 0)
		fail_msg("convert %s: %s", capture, err);
	free(err);
	if (tr_load_trace(conv) < 0)
		fail_msg("%s", conv->error);
}

static void live_and_captured(const char *program, const char *const *prog_args, const char *const *extra,
			      bool names_race)
{
	struct trace_run live, conv;
	char capture[400], what[128];

	tr_require_root();
	snprintf(what, sizeof(what), "%s%s", program, extra && extra[0] ? " --no-batch" : "");
	tr_run_ok(&live, program, prog_args, extra);
	capture_run(&conv, program, prog_args, extra, capture, sizeof(capture));
	assert_true(cJSON_GetArraySize(conv.events) > 0);
	same_trace(&live, &conv, what, names_race);
	tr_free(&live);
	tr_free(&conv);
}

/*
 * The trace command converting behind its capture (CTRACE_CONVERT=behind,
 * trace_behind.h) writes the trace the live model writes.
 */
static void live_and_behind(const char *program, const char *const *prog_args, bool names_race)
{
	struct trace_run live, behind;
	char *was;

	tr_require_root();
	was = tr_convert_begin("live");
	tr_run_ok(&live, program, prog_args, NULL);
	setenv("CTRACE_CONVERT", "behind", 1);
	tr_run_ok(&behind, program, prog_args, NULL);
	tr_convert_end(was);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr_meta(&live), "converted_from_capture")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr_meta(&behind), "converted_from_capture")));
	same_trace(&live, &behind, program, names_race);
	tr_free(&live);
	tr_free(&behind);
}

static const char *const no_batch[] = { "--no-batch", NULL };
static const char *const typed_args[] = { "/tmp/a \"b\"", NULL };

static void test_every_macro(void **state)
{
	(void)state;
	live_and_captured("every_macro", NULL, NULL, false);
}

static void test_every_macro_no_batch(void **state)
{
	(void)state;
	live_and_captured("every_macro", NULL, no_batch, false);
}

static void test_typed_args(void **state)
{
	(void)state;
	live_and_captured("typed_args", typed_args, NULL, false);
}

static void test_nested_scopes(void **state)
{
	(void)state;
	live_and_captured("nested_scopes", NULL, NULL, false);
}

static void test_literals(void **state)
{
	(void)state;
	live_and_captured("literals", NULL, NULL, false);
}

static void test_names(void **state)
{
	(void)state;
	live_and_captured("names", NULL, NULL, true);
}

static void test_span_events(void **state)
{
	(void)state;
	live_and_captured("span_events", NULL, NULL, true);
}

/*
 * Strings the probe could not read (no NUL before a PROT_NONE page): read
 * from the process when captured, as live; a conversion has no process.
 */
static void test_strings_read_late(void **state)
{
	(void)state;
	live_and_captured("cut_strings", NULL, NULL, false);
}

static void test_behind_every_macro(void **state)
{
	(void)state;
	live_and_behind("every_macro", NULL, false);
}

static void test_behind_names(void **state)
{
	(void)state;
	live_and_behind("names", NULL, true);
}

static void test_behind_strings_read_late(void **state)
{
	(void)state;
	live_and_behind("cut_strings", NULL, false);
}

static void test_flows(void **state)
{
	(void)state;
	live_and_captured("flows", (const char *const[]){ "handoff", "20", NULL }, NULL, false);
}

static char *gunzip_file(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	int got;

	assert_non_null(gz);
	assert_non_null(buf);
	while ((got = gzread(gz, buf + n, (unsigned)(cap - n - 1))) > 0) {
		n += (size_t)got;
		if (cap - n < 2) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	gzclose(gz);
	buf[n] = '\0';
	return buf;
}

static cJSON *pftrace_back(const char *path)
{
	FILE *in = fopen(path, "rb"), *out = tmpfile();
	char why[256], *text;
	long len;
	cJSON *doc;

	assert_non_null(in);
	assert_non_null(out);
	if (pftrace_to_json(in, out, why, sizeof(why)) < 0)
		fail_msg("%s: %s", path, why);
	len = ftell(out);
	text = malloc((size_t)len + 1);
	assert_non_null(text);
	rewind(out);
	assert_int_equal(fread(text, 1, (size_t)len, out), (size_t)len);
	text[len] = 0;
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	free(text);
	fclose(in);
	fclose(out);
	return doc;
}

/* One capture, every format: the same trace in each; report reads the capture. */
static void test_every_format(void **state)
{
	struct trace_run conv;
	char capture[400], gz[420], pf[420], *text, why[2048];
	struct tr_cmd res = { 0 };
	const char *report_args[] = { capture, NULL };
	cJSON *back;

	(void)state;
	tr_require_root();
	capture_run(&conv, "every_macro", NULL, NULL, capture, sizeof(capture));
	snprintf(gz, sizeof(gz), "%s/again.json.gz", conv.dir);
	snprintf(pf, sizeof(pf), "%s/again.pftrace", conv.dir);
	assert_int_equal(convert(capture, gz, NULL), 0);
	assert_int_equal(convert(capture, pf, NULL), 0);
	/* A conversion is a function of the capture: the same bytes each time. */
	text = gunzip_file(gz);
	assert_string_equal(text, conv.trace_text);
	free(text);
	back = pftrace_back(pf);
	if (!pftrace_same_trace(conv.trace, back, why, sizeof(why)))
		fail_msg(".pftrace of the capture: %s", why);
	cJSON_Delete(back);
	assert_int_equal(tr_run_tracer(&res, NULL, "report", report_args, 60000), 0);
	assert_int_equal(res.exit, 0);
	assert_non_null(strstr(res.out, "events over"));
	assert_non_null(strstr(res.out, "outer")); /* every_macro's span, by name */
	tr_cmd_free(&res);
	tr_free(&conv);
}

static void write_bytes(const char *path, const char *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Cut short, of a newer version, not a capture: said in one line each. */
static void test_bad_captures(void **state)
{
	struct trace_run conv;
	char capture[400], cut[420], newer[420], junk[420], out[420], *err;
	char *bytes;
	size_t len;
	uint32_t v2 = 2;

	(void)state;
	tr_require_root();
	capture_run(&conv, "numbered", (const char *const[]){ "2000", NULL }, NULL, capture, sizeof(capture));
	bytes = tr_read_file(capture, &len);
	assert_non_null(bytes);
	assert_true(len > 4096);
	snprintf(cut, sizeof(cut), "%s/cut.ctrace", conv.dir);
	snprintf(newer, sizeof(newer), "%s/newer.ctrace", conv.dir);
	snprintf(junk, sizeof(junk), "%s/junk.ctrace", conv.dir);
	snprintf(out, sizeof(out), "%s/out.json", conv.dir);

	/* Cut halfway (in a record, or between two): converted up to the last whole one, said so, a valid trace. */
	write_bytes(cut, bytes, len / 2 + 5);
	assert_int_equal(convert(cut, out, &err), 0);
	assert_non_null(strstr(err, "cut short"));
	assert_non_null(strstr(err, "converted up to its last whole record"));
	free(err);
	{
		size_t n;
		char *text = tr_read_file(out, &n);
		cJSON *doc = cJSON_Parse(text);
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");

		assert_non_null(doc);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(meta, "stop_reason")->valuestring,
				    "capture cut short");
		cJSON_Delete(doc);
		free(text);
	}
	unlink(out);

	/* A later version: refused before any record, one line, no trace left. */
	memcpy(bytes + 8, &v2, 4);
	write_bytes(newer, bytes, len);
	assert_int_equal(convert(newer, out, &err), 1);
	assert_non_null(strstr(err, "format version 2"));
	assert_int_equal(lines(err), 1);
	assert_int_not_equal(access(out, F_OK), 0);
	free(err);

	/* Not a capture at all. */
	write_bytes(junk, "{\"traceEvents\":[]}\n", 19);
	assert_int_equal(convert(junk, out, &err), 1);
	assert_non_null(strstr(err, "is not a ctrace-bpf capture"));
	assert_int_equal(lines(err), 1);
	free(err);
	free(bytes);
	tr_free(&conv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_macro),
		cmocka_unit_test(test_every_macro_no_batch),
		cmocka_unit_test(test_typed_args),
		cmocka_unit_test(test_nested_scopes),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_span_events),
		cmocka_unit_test(test_strings_read_late),
		cmocka_unit_test(test_behind_every_macro),
		cmocka_unit_test(test_behind_names),
		cmocka_unit_test(test_behind_strings_read_late),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_every_format),
		cmocka_unit_test(test_bad_captures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
