// SPDX-License-Identifier: MIT
/*
 * -o FILE.pftrace: real programs traced by the real tracer into Perfetto's
 * protobuf, with the JSON it was made from kept beside it
 * (CTRACE_PFTRACE_JSON), so both come from the same run. Each trace is:
 *   - read by an independent decoder, Debian's protoc --decode with our
 *     .proto (every packet parses; the fields a viewer needs are there);
 *   - read back by our reader into the same events as the JSON, event by
 *     event (pftrace_compare.h: names, ts, dur, pids, tids, args, ...);
 *   - summarized by `ctrace-bpf report` exactly as its JSON is;
 *   - smaller than its JSON.
 * Plus: a tracer SIGKILLed mid-trace leaves the packets written so far,
 * a full disk leaves a file that ends on a whole packet,
 * --format perfetto to standard output, and the refusals.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "trace_run.h"
#include "encode/perfetto/pftrace.h"
#include "pftrace_compare.h"

#define PROTO_DIR "userspace/encode/perfetto"
#define PROTO "perfetto_trace.proto"

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* protoc's text of a .pftrace (fails the test if protoc refuses it). */
static char *protoc_decode(const char *path)
{
	char cmd[1024];
	const char *argv[] = { "sh", "-c", cmd, NULL };
	struct tr_cmd res = { 0 };
	char *out;

	snprintf(cmd, sizeof(cmd), "protoc --decode perfetto.protos.Trace --proto_path=%s %s < '%s'",
		 PROTO_DIR, PROTO, path);
	assert_int_equal(tr_cmd_run(&res, argv, 60000), res.exit);
	if (res.exit != 0 || (res.err && *res.err))
		fail_msg("protoc --decode refused %s (exit %d): %s", path, res.exit, res.err ? res.err : "");
	out = res.out;
	res.out = NULL;
	tr_cmd_free(&res);
	return out;
}

/* The pftrace read back by our reader, parsed. */
static cJSON *read_back(const char *path)
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
	if (!doc)
		fail_msg("%s read back is no JSON", path);
	free(text);
	fclose(in);
	fclose(out);
	return doc;
}

/* `ctrace-bpf report FILE`'s output, without its first line's file name. */
static char *report_of(const char *path)
{
	struct tr_cmd res = { 0 };
	const char *args[] = { path, NULL };
	char *body;

	assert_int_equal(tr_run_tracer(&res, NULL, "report", args, 60000), 0);
	if (res.exit != 0)
		fail_msg("report %s: exit %d: %s", path, res.exit, res.err);
	body = strdup(strchr(res.out, ':') ? strchr(res.out, ':') : res.out);
	tr_cmd_free(&res);
	return body;
}

/*
 * The checks of one run: json and pftrace the same trace; protoc reads it,
 * with each of `names` as an interned event name.
 */
static void check_pair(const char *json_path, const char *pf_path, const char *const *names)
{
	size_t len;
	char *text = tr_read_file(json_path, &len), *decoded, *rj, *rp, why[1200];
	cJSON *json = cJSON_Parse(text), *back;

	assert_non_null(json);
	/* protoc: every packet; the sequence's clock is CLOCK_MONOTONIC (3), with a snapshot */
	decoded = protoc_decode(pf_path);
	assert_non_null(strstr(decoded, "clock_snapshot {"));
	assert_non_null(strstr(decoded, "trace_packet_defaults {\n    timestamp_clock_id: 3"));
	assert_non_null(strstr(decoded, "track_descriptor {"));
	assert_non_null(strstr(decoded, "thread {"));
	assert_non_null(strstr(decoded, "interned_data {"));
	assert_non_null(strstr(decoded, "type: TYPE_SLICE_BEGIN"));
	for (size_t i = 0; names[i]; i++) {
		char want[300];

		snprintf(want, sizeof(want), "event_names {\n      iid: ");
		assert_non_null(strstr(decoded, want));
		snprintf(want, sizeof(want), "name: \"%s\"\n", names[i]);
		if (!strstr(decoded, want))
			fail_msg("protoc's text of %s has no name \"%s\"", pf_path, names[i]);
	}
	/* Every event has its time (packet-level fields are indented by 2): the clock's packet and each track_event */
	if (count(decoded, "\n  timestamp: ") != count(decoded, "\n  track_event {") + 1)
		fail_msg("%s: %zu packet timestamps for %zu track events", pf_path, count(decoded, "\n  timestamp: "),
			 count(decoded, "\n  track_event {"));
	/* Our reader: the same events as the JSON, one by one */
	back = read_back(pf_path);
	if (!pftrace_same_trace(json, back, why, sizeof(why)))
		fail_msg("%s and %s differ: %s", json_path, pf_path, why);
	/* Nothing the writer could not turn into packets */
	assert_true(tr_num(cJSON_GetObjectItem(back, "metadata"), "pftrace_events_not_converted") == 0);
	/* report: the same summary */
	rj = report_of(json_path);
	rp = report_of(pf_path);
	assert_string_equal(rj, rp);
	printf("  %s: JSON %ld bytes, pftrace %ld bytes (%.1fx smaller), %d events\n", names[0],
	       file_size(json_path), file_size(pf_path), (double)file_size(json_path) / (double)file_size(pf_path),
	       cJSON_GetArraySize(cJSON_GetObjectItem(json, "traceEvents")));
	free(rj);
	free(rp);
	free(decoded);
	free(text);
	cJSON_Delete(json);
	cJSON_Delete(back);
}

/* A test program traced into DIR/trace.pftrace, its JSON kept as DIR/trace.json. */
static void run_pair(struct trace_run *r, const char *program, const char *const *prog_args,
		     const char *const *names)
{
	char json_path[300];

	tr_require_root();
	tr_require_command("protoc");
	assert_int_equal(tr_init(r), 0);
	snprintf(json_path, sizeof(json_path), "%s", r->trace_path);
	snprintf(r->trace_path, sizeof(r->trace_path), "%s/trace.pftrace", r->dir);
	setenv("CTRACE_PFTRACE_JSON", json_path, 1);
	if (tr_start_program(r, program, prog_args) < 0 || tr_wait_line(r, "ready", 10000) < 0 ||
	    tr_start_tracer(r, NULL) < 0 || tr_wait(r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r->error);
	unsetenv("CTRACE_PFTRACE_JSON");
	if (r->tracer_exit != 0 || r->prog_exit != 0)
		fail_msg("tracer exited %d, %s %d: %s", r->tracer_exit, program, r->prog_exit, r->tracer_stderr);
	check_pair(json_path, r->trace_path, names);
	/* And the JSON test helpers read it as usual, from the pftrace's JSON */
	snprintf(r->trace_path, sizeof(r->trace_path), "%s", json_path);
	assert_int_equal(tr_load_trace(r), 0);
}

static void test_every_macro(void **state)
{
	static const char *const names[] = { "outer", "inner", "cross-thread", "inst-g", "inst-p", "inst-t",
					     "pseudo-span", NULL };
	struct trace_run r;
	cJSON *outer, *inner;

	(void)state;
	run_pair(&r, "every_macro", NULL, names);
	outer = tr_find(&r, "X", "outer");
	inner = tr_find(&r, "X", "inner");
	assert_non_null(outer);
	assert_non_null(inner);
	tr_assert_inside(inner, outer);
	assert_non_null(tr_find(&r, "b", "cross-thread"));
	assert_non_null(tr_find(&r, "e", "cross-thread"));
	assert_true(tr_count(&r, "C") >= 6);
	{
		/* fix: a .pftrace is written whole packets at a time: one line, exit 1, the file untouched */
		char pf[300];
		const char *args[] = { pf, NULL };
		struct tr_cmd res = { 0 };
		long before;

		snprintf(pf, sizeof(pf), "%s/trace.pftrace", r.dir);
		before = file_size(pf);
		assert_int_equal(tr_run_tracer(&res, NULL, "fix", args, 10000), 0);
		assert_int_equal(res.exit, 1);
		assert_non_null(strstr(res.err, "nothing to repair"));
		assert_ptr_equal(strchr(res.err, '\n'), res.err + strlen(res.err) - 1);
		assert_int_equal(file_size(pf), before);
		tr_cmd_free(&res);
	}
	tr_free(&r);
}

static void test_flows(void **state)
{
	static const char *const prog_args[] = { "handoff", "5", NULL };
	static const char *const names[] = { "accept", "handle", NULL };
	struct trace_run r;

	(void)state;
	run_pair(&r, "flows", prog_args, names);
	assert_true(tr_count(&r, "s") >= 5);
	assert_true(tr_count(&r, "f") >= 5);
	tr_free(&r);
}

static void test_scopes(void **state)
{
	static const char *const names[] = { "outer", "inner", NULL };
	struct trace_run r;

	(void)state;
	run_pair(&r, "scopes", NULL, names);
	tr_free(&r);
}

static void test_hostile(void **state)
{
	static const char *const names[] = { "args-invalid", "args-array", NULL };
	struct trace_run r;

	(void)state;
	run_pair(&r, "hostile", NULL, names);
	tr_free(&r);
}

static void test_typed_args(void **state)
{
	static const char *const names[] = { "read", "op", "long", NULL };
	struct trace_run r;

	(void)state;
	run_pair(&r, "typed_args", NULL, names);
	tr_free(&r);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * A tracer SIGKILLed 1.5 s into tracing ticker (a "tick" instant and the
 * "ticks" counter, its loop count, every millisecond) leaves a .pftrace
 * written while tracing: protoc reads all of it, and it holds the first
 * second whole: the counter's values, the program's loop count, follow
 * each other with none missing, over at least a second, one "tick" each.
 * (Converted at the stop, a killed tracer's .pftrace was empty.) The
 * ticks are counted by their place in the file, not by time: a loop's
 * tick and counter are ~10 ns apart, and on AMD hosts the TSC moves in
 * 10 ns steps, so 1.7% of them carry the same time (126 of 7346 pairs
 * here); the merge keeps such ties in program order.
 */
static void test_sigkill_keeps_the_packets_written(void **state)
{
	static const char *const prog_args[] = { "20", NULL };
	struct trace_run r;
	char *decoded;
	cJSON *back, *ev, *first_sample = NULL, *last_sample = NULL;
	double first_ts = -1, last_ts = -1, last_value = -1;
	size_t samples = 0, ticks = 0;
	bool between = false;

	(void)state;
	tr_require_root();
	tr_require_command("protoc");
	assert_int_equal(tr_init(&r), 0);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/killed.pftrace", r.dir);
	if (tr_start_program(&r, "ticker", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, NULL) < 0 || tr_wait_line(&r, "armed", 10000) < 0)
		fail_msg("%s", r.error);
	sleep_ms(1500);
	kill(r.tracer.pid, SIGKILL);
	if (tr_wait_tracer(&r, 5000) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 128 + SIGKILL);
	decoded = protoc_decode(r.trace_path);
	assert_non_null(strstr(decoded, "clock_snapshot {"));
	back = read_back(r.trace_path);
	/* The counter over the first second of it: the program's loop count, one more each sample */
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(back, "traceEvents")) {
		double ts = tr_num(ev, "ts"), v = tr_num(cJSON_GetObjectItem(ev, "args"), "value");

		if (strcmp(tr_str(ev, "ph") ? tr_str(ev, "ph") : "", "C") || strcmp(tr_str(ev, "name"), "ticks") ||
		    (first_ts >= 0 && ts > first_ts + 1e6))
			continue;
		if (last_value >= 0 && v != last_value + 1)
			fail_msg("the counter goes from %.0f to %.0f at ts %.3f: events of the first second are missing",
				 last_value, v, ts);
		if (first_ts < 0) {
			first_ts = ts;
			first_sample = ev;
		}
		last_ts = ts;
		last_value = v;
		last_sample = ev;
		samples++;
	}
	/* Between two samples in the file, the next loop's "tick": one each */
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(back, "traceEvents")) {
		if (ev == last_sample)
			break;
		if (ev == first_sample)
			between = true;
		else if (between && !strcmp(tr_str(ev, "ph") ? tr_str(ev, "ph") : "", "I") &&
			 !strcmp(tr_str(ev, "name"), "tick"))
			ticks++;
	}
	printf("  killed at 1.5 s: %ld bytes; its first second: %zu counter samples over %.3f s, %zu ticks between\n",
	       file_size(r.trace_path), samples, (last_ts - first_ts) / 1e6, ticks);
	/* The whole second (the kill came 1.5 s after the program saw the tracer): not just its start */
	if (samples < 2 || last_ts - first_ts < 0.99e6)
		fail_msg("%zu counter samples over %.3f s in the killed tracer's .pftrace, not a whole second",
			 samples, (last_ts - first_ts) / 1e6);
	assert_int_equal(ticks, samples - 1);
	free(decoded);
	cJSON_Delete(back);
	tr_free(&r);
}

/*
 * The disk full under a .pftrace (a 256K tmpfs, in a mount namespace of
 * this test's own): one line saying so, a non-zero exit, and a file that
 * ends on its last whole packet, which protoc reads without an error and
 * that holds the bursts written before.
 */
static void test_disk_full_ends_on_a_whole_packet(void **state)
{
	static const char *const prog_args[] = { "run", "4", NULL };
	char dir[] = "/tmp/ctrace-pffull-XXXXXX", *decoded;
	const char *tracer_args[] = { NULL };
	struct trace_run r;
	cJSON *back, *ev;
	size_t bursts = 0;

	(void)state;
	tr_require_root();
	tr_require_command("protoc");
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail_msg("cannot make a mount namespace: %s", strerror(errno));
	assert_non_null(mkdtemp(dir));
	if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0)
		fail_msg("cannot mount a small tmpfs: %s", strerror(errno));
	assert_int_equal(tr_init(&r), 0);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/full.pftrace", dir);
	if (tr_start_program(&r, "faulty", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait_line(&r, "armed", 10000) < 0 ||
	    tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	assert_int_not_equal(r.tracer_exit, 0);
	if (!strstr(r.tracer_stderr, "No space left on device") || !strstr(r.tracer_stderr, "full.pftrace"))
		fail_msg("the tracer did not say the disk is full: %s", r.tracer_stderr);
	decoded = protoc_decode(r.trace_path);
	back = read_back(r.trace_path);
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(back, "traceEvents"))
		bursts += tr_str(ev, "name") && !strcmp(tr_str(ev, "name"), "burst");
	printf("  disk full: %ld bytes, %zu bursts\n", file_size(r.trace_path), bursts);
	/* 256K at ~30 bytes an event: thousands, far more than a flush's worth lost */
	if (bursts < 1000)
		fail_msg("only %zu burst instants in the .pftrace of a full 256K disk", bursts);
	free(decoded);
	cJSON_Delete(back);
	tr_free(&r);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/* The bundled demo, launched by the tracer for 2 s, to standard output with --format perfetto. */
static void test_demo_to_stdout(void **state)
{
	static const char *const names[] = { "handle", "parse", "request done", NULL };
	char dir[] = "/tmp/ctrace-pftrace-XXXXXX", json[300], pf[300], cmd[1200];
	const char *argv[] = { "sh", "-c", cmd, NULL };
	struct tr_cmd res = { 0 };

	(void)state;
	tr_require_root();
	tr_require_command("protoc");
	assert_non_null(mkdtemp(dir));
	snprintf(json, sizeof(json), "%s/demo.json", dir);
	snprintf(pf, sizeof(pf), "%s/demo.out", dir);
	snprintf(cmd, sizeof(cmd), "CTRACE_PFTRACE_JSON=%s %s -q --format perfetto -o - -- build/examples/demo 2 > %s",
		 json, tr_tracer(), pf);
	assert_int_equal(tr_cmd_run(&res, argv, 60000), res.exit);
	if (res.exit != 0)
		fail_msg("%s: exit %d: %s", cmd, res.exit, res.err);
	check_pair(json, pf, names);
	/*
	 * A trace of some size (the demo's 2 s: ~15,000 events) is several times
	 * smaller; the small ones above are mostly their context and metadata,
	 * the same in both.
	 */
	if (file_size(pf) * 3 > file_size(json))
		fail_msg("the pftrace (%ld bytes) is not 3 times smaller than its JSON (%ld)", file_size(pf), file_size(json));
	tr_cmd_free(&res);
	unlink(json);
	unlink(pf);
	rmdir(dir);
}

static void test_refusals(void **state)
{
	static const char *const bad[][6] = {
		{ "-o", "x.pftrace", "--ring", "1M", "--", "true" },
		{ "-o", "x.pftrace", "--max-size", "10M", "--", "true" },
		{ "-o", "x.pftrace", "--stacks", "--", "true", NULL },
		{ "--format", "perfetto", "-o", "x.json.gz", "--", "true" },
		{ "--format", "xml", "--", "true", NULL, NULL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tr_cmd res = { 0 };
		const char *args[7] = { 0 };

		memcpy(args, bad[i], sizeof(bad[i]));
		assert_int_equal(tr_run_tracer(&res, NULL, NULL, args, 10000), 0);
		assert_int_equal(res.exit, 2);
		/* One line, saying what to do */
		assert_non_null(strstr(res.err, "ctrace-bpf: "));
		assert_ptr_equal(strchr(res.err, '\n'), res.err + strlen(res.err) - 1);
		assert_int_equal(file_size("x.pftrace"), -1);
		tr_cmd_free(&res);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_macro),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_typed_args),
		cmocka_unit_test(test_demo_to_stdout),
		cmocka_unit_test(test_sigkill_keeps_the_packets_written),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_disk_full_ends_on_a_whole_packet), /* last: it leaves the mount namespace changed */
	};

	return cmocka_run_group_tests_name("pftrace", tests, NULL, NULL);
}
