// SPDX-License-Identifier: MIT
/*
 * test_output - the trace's file past plain JSON: `-o FILE.json.gz` writes
 * gzip (the same events as the plain JSON, read back event by event), a
 * gzip trace cut by SIGKILL is repaired by `ctrace-bpf fix` and stays
 * gzip, every way of stopping (-d, SIGTERM) ends a complete gzip stream,
 * and `-o -` stays plain JSON. --max-size: with %n, numbered files of at
 * most SIZE bytes, each a whole trace that names its process and thread,
 * which together hold every event exactly once (--max-files keeps the
 * newest); with a plain name the file is closed full and tracing stops.
 */
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
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
static char full_dir[64];

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_free(&r2);
	tr_cmd_free(&c);
	if (full_dir[0]) {
		umount2(full_dir, MNT_DETACH);
		rmdir(full_dir);
		full_dir[0] = '\0';
	}
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
 * last 50 ms flush; `fix` repairs it in place, and it stays gzip. Written
 * live: behind a capture the conversion goes on to the capture's end and
 * the file is whole (test_faults: test_tracer_sigkill_behind_capture).
 */
static void test_gzip_cut_by_sigkill_is_repaired_by_fix(void **state)
{
	const char *const prog_args[] = { "run", "4", NULL };
	const char *tracer_args[] = { "-o", NULL, NULL };
	const char *fix_args[] = { NULL, NULL };
	struct stat st = { 0 };
	cJSON *m;
	int started;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	tracer_args[1] = fix_args[0] = trace_named(&r, "cut.json.gz");
	if (tr_start_program(&r, "faulty", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	started = tr_start_tracer_converting(&r, tracer_args, "live");
	if (started < 0 || tr_wait_line(&r, "armed", 10000) < 0)
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

/* A disk that fills up: a 256 KiB tmpfs in a mount namespace of this test's own (as test_faults). */
static void make_full_disk(void)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail_msg("cannot make a mount namespace: %s", strerror(errno));
	snprintf(full_dir, sizeof(full_dir), "/tmp/ctrace-full-XXXXXX");
	if (!mkdtemp(full_dir)) {
		full_dir[0] = '\0';
		fail_msg("mkdtemp: %s", strerror(errno));
	}
	if (mount("tmpfs", full_dir, "tmpfs", 0, "size=256k") != 0)
		fail_msg("cannot mount a small tmpfs: %s", strerror(errno));
}

/*
 * Disk full under a .json.gz: one clear line, a non-zero exit, the target
 * unharmed; the cut gzip stream is repaired by `fix -o` elsewhere, into gzip.
 * Written live, as the test above.
 */
static void test_gzip_disk_full_is_repaired_by_fix(void **state)
{
	const char *const prog_args[] = { "run", "4", NULL };
	char out[128], fixed[280];
	const char *tracer_args[] = { "-o", out, NULL };
	const char *fix_to[] = { out, "-o", fixed, NULL };
	cJSON *m;
	int started;

	(void)state;
	tr_require_root();
	make_full_disk();
	snprintf(out, sizeof(out), "%s/trace.json.gz", full_dir);
	if (tr_init(&r) < 0 || tr_start_program(&r, "faulty", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	started = tr_start_tracer_converting(&r, tracer_args, "live");
	if (started < 0 || tr_wait_line(&r, "armed", 10000) < 0 || tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	assert_int_not_equal(r.tracer_exit, 0);
	if (!strstr(r.tracer_stderr, "No space left on device") || !strstr(r.tracer_stderr, out))
		fail_msg("the tracer did not say the disk is full: %s", r.tracer_stderr);
	tc_assert_unharmed(&r);
	assert_gzip_file(out);

	snprintf(fixed, sizeof(fixed), "%s/fixed.json.gz", r.dir);
	if (tc_run_fix(&c, fix_to) < 0)
		fail_msg("cannot run fix");
	if (c.exit != 0)
		fail_msg("fix -o exited %d: %s", c.exit, c.err);
	assert_gzip_file(fixed);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s", fixed);
	if (tr_load_trace(&r) < 0)
		fail_msg("the repaired trace: %s", r.error);
	m = tr_meta(&r);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "truncated")));
	assert_true(tr_num(m, "events_recovered") == cJSON_GetArraySize(r.events));
	/* 256K of gzip holds some 30000 events; far more than the flushes' loss */
	if (tc_count(&r, "I", "burst") < 5000)
		fail_msg("only %zu burst instants recovered from 256K of gzip", tc_count(&r, "I", "burst"));
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

#define NUMBERED_MAX 400000
#define MiB (1024 * 1024)

/* Loads one file of a rotation strictly into run (a fresh one). */
static void load_file(struct trace_run *run, const char *path)
{
	tr_free(run);
	if (tr_init(run) < 0)
		fail_msg("%s", run->error);
	snprintf(run->trace_path, sizeof(run->trace_path), "%s", path);
	if (tr_load_trace(run) < 0)
		fail_msg("%s", run->error);
}

/*
 * What one file holds of numbered's events: each "n" instant's i and each
 * "hundred" span's from, counted into seen[] (twice is a duplicate); the
 * file must name the process and the thread by itself.
 */
static void tally_file(const char *path, long pid, unsigned char *seen_i, unsigned char *seen_span,
		       long *lo, long *hi)
{
	cJSON *ev, *m;
	bool process_named = false, thread_named = false;

	load_file(&r2, path);
	*lo = NUMBERED_MAX;
	*hi = -1;
	cJSON_ArrayForEach(ev, r2.events) {
		const char *ph = tr_str(ev, "ph"), *name = tr_str(ev, "name");
		cJSON *arg;

		if (!ph || !name)
			continue;
		if (!strcmp(ph, "M") && !strcmp(name, "process_name") && tr_num(ev, "pid") == pid)
			process_named = true;
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name") && tr_num(ev, "tid") == pid) {
			arg = tr_arg(ev, "name");
			thread_named = cJSON_IsString(arg) && !strcmp(arg->valuestring, "numbered-main");
		}
		if (!strcmp(ph, "I") && !strcmp(name, "n") && cJSON_IsNumber(arg = tr_arg(ev, "i"))) {
			long i = (long)arg->valuedouble;

			assert_true(i >= 0 && i < NUMBERED_MAX);
			if (seen_i[i]++)
				fail_msg("event n i=%ld is in two files (again in %s)", i, path);
			*lo = i < *lo ? i : *lo;
			*hi = i > *hi ? i : *hi;
		}
		if (!strcmp(ph, "X") && !strcmp(name, "hundred") && cJSON_IsNumber(arg = tr_arg(ev, "from"))) {
			long from = (long)arg->valuedouble;

			assert_true(from >= 0 && from < NUMBERED_MAX);
			if (seen_span[from]++)
				fail_msg("span hundred from=%ld is in two files (again in %s)", from, path);
			if (cJSON_IsTrue(tr_arg(ev, "unfinished")))
				fail_msg("span hundred from=%ld in %s is unfinished: a rotation cut it", from, path);
		}
	}
	if (!process_named || !thread_named)
		fail_msg("%s does not name %s by itself", path, process_named ? "the thread" : "the process");
	/* and every thread with an event there has its name there (the helper's first event may come first) */
	{
		double named[64];
		int n_named = 0;

		cJSON_ArrayForEach(ev, r2.events)
			if (!strcmp(tr_str(ev, "ph"), "M") && !strcmp(tr_str(ev, "name"), "thread_name") &&
			    n_named < 64)
				named[n_named++] = tr_num(ev, "tid");
		cJSON_ArrayForEach(ev, r2.events) {
			double tid = tr_num(ev, "tid");
			int k = 0;

			while (k < n_named && named[k] != tid)
				k++;
			if (k == n_named)
				fail_msg("%s: thread %.0f has events and no thread_name", path, tid);
		}
	}
	m = tr_meta(&r2);
	assert_true(tr_num(m, "events_written") == cJSON_GetArraySize(r2.events));
	assert_true(tr_num(m, "dropped_events") == 0);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/*
 * numbered N under -o DIR/t-%n.EXT --max-size 1M [more]: the files there
 * (t-1, t-2, ... in order, those removed by --max-files aside) must each
 * be a whole trace within 1M, and hold every event of the kept ones once.
 * Returns how many files are left; *first: the number of the oldest.
 */
static int rotation_run(long n, const char *ext, const char *more, const char *more_val,
			int *first, long *events_lo)
{
	char n_arg[24], pattern[300], path[320];
	const char *const prog_args[] = { n_arg, NULL };
	const char *tracer_args[] = { "-o", pattern, "--max-size", "1M", more, more_val, NULL };
	unsigned char *seen_i = calloc(NUMBERED_MAX, 1), *seen_span = calloc(NUMBERED_MAX, 1);
	long lo, hi, expect_next = -1;
	int files = 0, last = 0;

	assert_true(seen_i && seen_span && n <= NUMBERED_MAX);
	snprintf(n_arg, sizeof(n_arg), "%ld", n);
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(pattern, sizeof(pattern), "%s/t-%%n.%s", r.dir, ext);
	if (tr_start_program(&r, "numbered", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0 || r.prog_exit != 0)
		fail_msg("tracer exited %d, numbered %d: %s", r.tracer_exit, r.prog_exit, r.tracer_stderr);
	*first = 0;
	for (int k = 1; k < 1000; k++) {
		snprintf(path, sizeof(path), "%s/t-%d.%s", r.dir, k, ext);
		if (file_size(path) < 0) {
			if (files)
				break;
			continue; /* removed by --max-files */
		}
		if (!files)
			*first = k;
		files++;
		last = k;
		if (file_size(path) > MiB)
			fail_msg("%s is %ld bytes, over --max-size 1M", path, file_size(path));
		if (!strcmp(ext, "json.gz"))
			assert_gzip_file(path);
		tally_file(path, r.pid, seen_i, seen_span, &lo, &hi);
		/* the files follow each other: this one starts where the last one ended */
		if (expect_next >= 0 && lo != expect_next)
			fail_msg("%s starts at i=%ld, the file before ended at i=%ld", path, lo, expect_next - 1);
		if (files == 1)
			*events_lo = lo;
		expect_next = hi + 1;
		assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(tr_meta(&r2), "output"), "file") == k);
		/* all but the last were full; the last one ended with the target */
		snprintf(path, sizeof(path), "%s/t-%d.%s", r.dir, k + 1, ext);
		assert_string_equal(tr_str(tr_meta(&r2), "stop_reason"),
				    file_size(path) >= 0 ? "--max-size: continued in the next file" :
							   "target exited");
	}
	if (!files)
		fail_msg("no file t-N.%s in %s", ext, r.dir);
	/* from the oldest file kept on, every event is there, once */
	for (long i = *events_lo; i < n; i++)
		if (!seen_i[i])
			fail_msg("event n i=%ld is in no file (files %d..%d)", i, *first, last);
	free(seen_i);
	free(seen_span);
	return files;
}

/* 40000 events, ~100 bytes each in JSON: 4 files of 1M and a fifth. */
static void test_rotation_json_files_hold_every_event_once(void **state)
{
	int first;
	long lo;

	(void)state;
	if (rotation_run(40000, "json", NULL, NULL, &first, &lo) < 4)
		fail_msg("40000 events in under 4 files of 1M");
	assert_int_equal(first, 1);
	assert_int_equal(lo, 0);
	assert_non_null(strstr(r.tracer_stderr, " events written in "));
}

/*
 * gzip, ~7 bytes an event: 300000 events make 3 files of 1M;
 * --max-files 2 keeps the newest two, from an event after 0 to the last.
 */
static void test_rotation_gzip_keeps_the_newest_files(void **state)
{
	int first, files;
	long lo;

	(void)state;
	files = rotation_run(300000, "json.gz", "--max-files", "2", &first, &lo);
	if (first < 2)
		fail_msg("file t-1 was kept with --max-files 2 (%d files)", files);
	assert_int_equal(files, 2);
	assert_true(lo > 0);
	assert_non_null(strstr(r.tracer_stderr, "removed (--max-files)"));
}

/* A plain name: full at 1M, closed as a whole trace; events up to then, none missing; tracing stops. */
static void test_max_size_plain_name_stops(void **state)
{
	const char *const prog_args[] = { "40000", NULL };
	const char *tracer_args[] = { "-o", NULL, "--max-size", "1M", NULL };
	unsigned char *seen_i = calloc(NUMBERED_MAX, 1), *seen_span = calloc(NUMBERED_MAX, 1);
	cJSON *out;
	long lo, hi;

	(void)state;
	assert_true(seen_i && seen_span);
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	tracer_args[1] = trace_named(&r, "full.json");
	if (tr_start_program(&r, "numbered", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 0);
	assert_int_equal(r.prog_exit, 0); /* the target goes on, untraced */
	if (file_size(r.trace_path) > MiB)
		fail_msg("%s is %ld bytes, over --max-size 1M", r.trace_path, file_size(r.trace_path));
	tally_file(r.trace_path, r.pid, seen_i, seen_span, &lo, &hi);
	assert_int_equal(lo, 0);
	for (long i = 0; i <= hi; i++)
		if (!seen_i[i])
			fail_msg("event n i=%ld is missing before the file was full (last i=%ld)", i, hi);
	if (hi >= 39999)
		fail_msg("all 40000 events fit in 1M: the limit was never reached");
	assert_string_equal(tr_str(tr_meta(&r2), "stop_reason"), "--max-size reached");
	out = cJSON_GetObjectItemCaseSensitive(tr_meta(&r2), "output");
	assert_true(tr_num(out, "max_size") == MiB);
	assert_non_null(strstr(r.tracer_stderr, "is full (--max-size"));
	free(seen_i);
	free(seen_span);
}

/* Option mistakes: one line, exit 2, nothing traced. */
static void test_max_size_usage_errors(void **state)
{
	static const struct {
		const char *args[10];
		const char *says;
	} cases[] = {
		{ { "-p", "1", "--max-size", "100K", NULL }, "from 1M to 1024G" },
		{ { "-p", "1", "--max-size", "1X", NULL }, "from 1M to 1024G" },
		{ { "-p", "1", "-o", "t-%n.json", NULL }, "only with --max-size" },
		{ { "-p", "1", "-o", "-", "--max-size", "1M", NULL }, "needs a file" },
		{ { "-p", "1", "-o", "t.json", "--max-size", "1M", "--max-files", "2", NULL }, "needs numbered files" },
		{ { "-p", "1", "-o", "t-%n.json", "--max-size", "1M", "--max-files", "0", NULL }, "from 1 to" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (tr_run_tracer(&c, NULL, NULL, cases[i].args, 10000) < 0)
			fail_msg("cannot run the tracer");
		if (c.exit != 2 || !strstr(c.err, cases[i].says))
			fail_msg("case %zu: exit %d, stderr \"%s\" (wanted 2 and \"%s\")", i, c.exit, c.err,
				 cases[i].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_gzip_has_the_same_events_as_json, free_all),
		cmocka_unit_test_teardown(test_gzip_cut_by_sigkill_is_repaired_by_fix, free_all),
		cmocka_unit_test_teardown(test_gzip_disk_full_is_repaired_by_fix, free_all),
		cmocka_unit_test_teardown(test_gzip_stopped_by_duration, free_all),
		cmocka_unit_test_teardown(test_gzip_stopped_by_sigterm, free_all),
		cmocka_unit_test_teardown(test_stdout_stays_plain, free_all),
		cmocka_unit_test_teardown(test_rotation_json_files_hold_every_event_once, free_all),
		cmocka_unit_test_teardown(test_rotation_gzip_keeps_the_newest_files, free_all),
		cmocka_unit_test_teardown(test_max_size_plain_name_stops, free_all),
		cmocka_unit_test_teardown(test_max_size_usage_errors, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
