// SPDX-License-Identifier: MIT
/*
 * test_output - the trace's file past plain JSON: `-o FILE.json.gz` writes
 * gzip (the same events as the plain JSON, read back event by event), a
 * gzip trace cut by SIGKILL is repaired by `ctrace-bpf fix` and stays
 * gzip, every way of stopping (-d, SIGTERM) ends a complete gzip stream,
 * and `-o -` stays plain JSON.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "target_check.h"
#include "trace_run.h"

static struct trace_run r, r2;
static struct tr_cmd c;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_free(&r2);
	tr_cmd_free(&c);
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The file's first bytes are gzip's magic (1f 8b): compressed, not JSON under a .gz name. */
static void assert_gzip_file(const char *path)
{
	unsigned char magic[2] = { 0 };
	FILE *f = fopen(path, "rb");

	if (!f)
		fail_msg("no file %s", path);
	if (fread(magic, 1, 2, f) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		fail_msg("%s does not begin with gzip's magic 1f 8b but %02x %02x", path, magic[0], magic[1]);
	fclose(f);
}

/*
 * The run's trace path becomes DIR/NAME (after tr_init): the tracer's
 * "-o" is given this path (the harness's own -o comes first, ours wins).
 */
static const char *trace_named(struct trace_run *run, const char *name)
{
	snprintf(run->trace_path, sizeof(run->trace_path), "%s/%s", run->dir, name);
	return run->trace_path;
}

/* Runs `program` under the tracer writing DIR/NAME; both must exit 0, the trace load strictly. */
static void run_into(struct trace_run *run, const char *program, const char *const *prog_args,
		     const char *name, const char *extra)
{
	const char *args[6] = { "-o", NULL, extra, NULL };

	tr_require_root();
	if (tr_init(run) < 0)
		fail_msg("%s", run->error);
	args[1] = trace_named(run, name);
	if (tr_start_program(run, program, prog_args) < 0 || tr_wait_line(run, "ready", 10000) < 0 ||
	    tr_start_tracer(run, args) < 0 || tr_wait(run, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", run->error);
	if (run->tracer_exit != 0)
		fail_msg("tracer exited %d: %s", run->tracer_exit, run->tracer_stderr);
	if (tr_load_trace(run) < 0)
		fail_msg("%s", run->error);
}

/*
 * An event as a line that does not depend on the run: its phase, name,
 * category, scope and args (pids, tids and times differ between runs,
 * and so do the tids in pseudo-threads' names).
 */
static char *event_key(const cJSON *ev)
{
	cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	char *a = args ? cJSON_PrintUnformatted(args) : NULL;
	char *key;
	int n = asprintf(&key, "%s|%s|%s|%s|%s", tr_str(ev, "ph") ? tr_str(ev, "ph") : "",
		     tr_str(ev, "name") ? tr_str(ev, "name") : "", tr_str(ev, "cat") ? tr_str(ev, "cat") : "",
		     tr_str(ev, "s") ? tr_str(ev, "s") : "", a ? a : "");

	free(a);
	if (n < 0)
		return NULL;
	/* A pseudo-thread's name holds its tid ("worker (tid 1234)"): the run's own number. */
	for (char *t = key; (t = strstr(t, "(tid ")); ) {
		char *digits = t += 5, *end = digits + strspn(digits, "0123456789");

		if (end > digits) {
			*digits = 'N';
			memmove(digits + 1, end, strlen(end) + 1);
		}
	}
	return key;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The events' keys, sorted (threads interleave differently from run to run). */
static char **sorted_keys(const struct trace_run *run, size_t *n)
{
	size_t len = (size_t)cJSON_GetArraySize(run->events), i = 0;
	char **keys = calloc(len + 1, sizeof(*keys));
	cJSON *ev;

	assert_non_null(keys);
	cJSON_ArrayForEach(ev, run->events) {
		keys[i] = event_key(ev);
		assert_non_null(keys[i]);
		i++;
	}
	qsort(keys, len, sizeof(*keys), cmp_str);
	*n = len;
	return keys;
}

static void free_keys(char **keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

/* every_macro, once into trace.json and once into trace.json.gz: event for event the same. */
static void test_gzip_has_the_same_events_as_json(void **state)
{
	size_t n_plain, n_gz;
	char **plain, **gz;

	(void)state;
	run_into(&r, "every_macro", NULL, "trace.json", NULL);
	run_into(&r2, "every_macro", NULL, "trace.json.gz", NULL);
	assert_gzip_file(r2.trace_path);
	plain = sorted_keys(&r, &n_plain);
	gz = sorted_keys(&r2, &n_gz);
	if (n_plain < 20)
		fail_msg("only %zu events in the plain trace of every_macro", n_plain);
	for (size_t i = 0; i < n_plain && i < n_gz; i++)
		if (strcmp(plain[i], gz[i]))
			fail_msg("event %zu differs: plain %s, gzip %s", i, plain[i], gz[i]);
	assert_int_equal(n_plain, n_gz);
	/* the end was written: metadata counts what the file holds */
	assert_true(tr_meta_num(&r2, "events_written") == (double)n_gz);
	assert_non_null(strstr(r2.tracer_stderr, "events written"));
	free_keys(plain, n_plain);
	free_keys(gz, n_gz);
}

/*
 * SIGKILL mid-stream: the .json.gz holds whole deflate blocks up to the
 * last 50 ms flush; `fix` repairs it in place, and it stays gzip.
 */
static void test_gzip_cut_by_sigkill_is_repaired_by_fix(void **state)
{
	const char *const prog_args[] = { "run", "4", NULL };
	const char *tracer_args[] = { "-o", NULL, NULL };
	const char *fix_args[] = { NULL, NULL };
	struct stat st = { 0 };
	cJSON *m;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	tracer_args[1] = fix_args[0] = trace_named(&r, "cut.json.gz");
	if (tr_start_program(&r, "faulty", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait_line(&r, "armed", 10000) < 0)
		fail_msg("%s", r.error);
	for (int waited = 0; (stat(r.trace_path, &st) != 0 || st.st_size < 100) && waited < 3000; waited += 10)
		sleep_ms(10);
	if (st.st_size < 100)
		fail_msg("the tracer wrote %lld bytes to its file in 3 s", (long long)st.st_size);
	sleep_ms(300);
	kill(r.tracer.pid, SIGKILL);
	if (tr_wait_tracer(&r, 5000) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 128 + SIGKILL);
	tc_assert_unharmed(&r);

	if (tc_run_fix(&c, fix_args) < 0)
		fail_msg("cannot run fix");
	if (c.exit != 0)
		fail_msg("fix exited %d: %s", c.exit, c.err);
	assert_non_null(strstr(c.err, "repaired"));
	assert_gzip_file(r.trace_path);
	if (tr_load_trace(&r) < 0)
		fail_msg("the repaired .json.gz: %s", r.error);
	m = tr_meta(&r);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "truncated")));
	assert_true(tr_num(m, "events_recovered") == cJSON_GetArraySize(r.events));
	/* ~300 ms of bursts before the kill, all but the last 50 ms on disk */
	if (tc_count(&r, "I", "burst") < 100)
		fail_msg("only %zu burst instants recovered", tc_count(&r, "I", "burst"));
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(m, "target"), "pid") == r.prog.pid);
}

/* ticker traced into a .json.gz, stopped by `stop` (-d or a signal): a complete gzip trace. */
static void stop_gzip_trace(int sig)
{
	const char *const prog_args[] = { "20", NULL };
	const char *tracer_args[] = { "-o", NULL, sig ? NULL : "-d", "0.5", NULL };

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	tracer_args[1] = trace_named(&r, "stopped.json.gz");
	if (tr_start_program(&r, "ticker", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait_line(&r, "armed", 10000) < 0)
		fail_msg("%s", r.error);
	if (sig) {
		sleep_ms(300);
		kill(r.tracer.pid, sig);
	}
	if (tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d: %s", r.tracer_exit, r.tracer_stderr);
	assert_gzip_file(r.trace_path);
	/* strict: the whole stream, trailer included (a stream without its end reads short) */
	if (tr_shell("gzip -t '%s'", r.trace_path) != 0)
		fail_msg("gzip -t finds %s incomplete", r.trace_path);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	if (tc_count(&r, "I", "tick") < 100)
		fail_msg("only %zu ticks in the trace", tc_count(&r, "I", "tick"));
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"),
			    sig ? "SIGTERM" : "duration elapsed");
	kill(r.prog.pid, SIGKILL);
}

static void test_gzip_stopped_by_duration(void **state)
{
	(void)state;
	stop_gzip_trace(0);
}

static void test_gzip_stopped_by_sigterm(void **state)
{
	(void)state;
	stop_gzip_trace(SIGTERM);
}

/* -o - is the terminal's or a pipe's: plain JSON, whatever else is asked. */
static void test_stdout_stays_plain(void **state)
{
	const char *const args[] = { "-o", "-", NULL };

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "every_macro", NULL) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, args) < 0 ||
	    tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 0);
	assert_non_null(r.tracer_stdout);
	if (strncmp(r.tracer_stdout, "{\"context\":", 11))
		fail_msg("standard output does not begin as JSON: %.20s", r.tracer_stdout);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_gzip_has_the_same_events_as_json, free_all),
		cmocka_unit_test_teardown(test_gzip_cut_by_sigkill_is_repaired_by_fix, free_all),
		cmocka_unit_test_teardown(test_gzip_stopped_by_duration, free_all),
		cmocka_unit_test_teardown(test_gzip_stopped_by_sigterm, free_all),
		cmocka_unit_test_teardown(test_stdout_stays_plain, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
