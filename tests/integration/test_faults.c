// SPDX-License-Identifier: MIT
/*
 * test_faults - faults on either side of the trace, with real processes and
 * real BPF: the target crashes or exits mid-trace, the tracer is SIGKILLed,
 * interrupted twice, cut off by a closed pipe or a full disk, or shares the
 * target with a second tracer. Each time: the target runs on unharmed with
 * its probes off again (CTRACE_ENABLED() false, its code byte-for-byte its
 * file's), and what was traced can be opened (directly, or after
 * `ctrace-bpf fix`).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "target_check.h"
#include "trace_run.h"

/* Freed by the teardown, also when a test fails. */
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

/* A span the target left open when it died: written to the end, marked. */
static void check_unfinished(const char *name)
{
	cJSON *x = tr_find(&r, "X", name);

	if (!x)
		fail_msg("no X event \"%s\" in the trace", name);
	assert_true(cJSON_IsTrue(tr_arg(x, "unfinished")));
	assert_true(tr_num(x, "dur") >= 0);
	assert_true(tr_meta_num(&r, "unfinished_spans") == 1);
}

/* The target dies of SIGSEGV mid-trace: the trace is complete anyway. */
static void test_target_crashes(void **state)
{
	const char *const args[] = { "crash", NULL };

	(void)state;
	tr_require_root();
	if (tr_run(&r, "faulty", args, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 128 + SIGSEGV);
	assert_int_equal(r.tracer_exit, 0);
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"), "target exited");
	assert_true(tc_count(&r, "I", "burst") >= 20);
	check_unfinished("doomed");
	assert_non_null(strstr(r.tracer_stderr, "target exited"));
}

static void test_target_exits_mid_span(void **state)
{
	const char *const args[] = { "exit", NULL };

	(void)state;
	tr_run_ok(&r, "faulty", args, NULL);
	assert_true(tc_count(&r, "I", "burst") >= 20);
	check_unfinished("left open");
}

/* Loads a repaired (or any) trace file strictly into run. */
static void load_file(struct trace_run *run, const char *path)
{
	if (!run->dir[0] && tr_init(run) < 0)
		fail_msg("%s", run->error);
	snprintf(run->trace_path, sizeof(run->trace_path), "%s", path);
	if (tr_load_trace(run) < 0)
		fail_msg("%s", run->error);
}

/* After `fix`, the file is a strict trace that says it was cut, with events. */
static void check_fixed(const char *path)
{
	cJSON *m;

	tr_free(&r2);
	load_file(&r2, path);
	m = tr_meta(&r2);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "truncated")));
	assert_true(tr_num(m, "events_recovered") == cJSON_GetArraySize(r2.events));
	assert_true(tc_count(&r2, "I", "burst") > 100);
	/* the context survived, and metadata repeats its facts for Perfetto */
	assert_non_null(cJSON_GetObjectItemCaseSensitive(r2.trace, "context"));
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(m, "target"), "pid") == r.prog.pid);
}

/* Until the file at path is whole JSON (its writer done), up to ms: its text, or NULL. */
static char *whole_file(const char *path, int ms)
{
	for (int waited = 0; waited <= ms; waited += 50) {
		char *text = tr_read_file(path, NULL);
		cJSON *j = text ? cJSON_Parse(text) : NULL;

		cJSON_Delete(j);
		if (j)
			return text;
		free(text);
		sleep_ms(50);
	}
	return NULL;
}

/*
 * SIGKILL: no handler runs. The kernel drops the uprobes with the tracer's
 * fds; the target must go on, disarmed. Live (the default) the file, cut
 * anywhere, is repaired by `ctrace-bpf fix`; converted behind the capture
 * (CTRACE_CONVERT=behind), the conversion goes on to the capture's end and
 * the file is whole, its stop_reason "capture cut short".
 */
static void tracer_sigkill(bool live)
{
	const char *const args[] = { "run", "4", NULL };
	const char *const fix_args[] = { r.trace_path, NULL };
	struct stat st = { 0 };
	char why[256], *text;
	long diff;

	char *was = tr_convert_begin(live ? "live" : "behind");

	tc_start_faulty(&r, args, NULL);
	tr_convert_end(was);
	/* Once it has written (the point is a file cut anywhere), kill mid-stream. */
	for (int waited = 0; (stat(r.trace_path, &st) != 0 || st.st_size == 0) && waited < 3000; waited += 10)
		sleep_ms(10);
	if (st.st_size == 0)
		fail_msg("the tracer wrote nothing to its file in 3 s");
	sleep_ms(100);
	/* the check below can see a probe: while attached the code differs */
	diff = tc_code_diff(r.prog.pid, why, sizeof(why));
	if (diff <= 0)
		fail_msg("while traced the target's code shows no probe (%ld): %s", diff, why);
	kill(r.tracer.pid, SIGKILL);
	if (tr_wait_tracer(&r, 5000) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 128 + SIGKILL);
	tc_assert_unharmed(&r);
	if (!live) {
		/* The conversion, not the tracer: it ends the file on its own. */
		text = whole_file(r.trace_path, 10000);
		if (!text)
			fail_msg("the trace %s is not whole JSON 10 s after the tracer was killed", r.trace_path);
		free(text);
		tr_free(&r2);
		load_file(&r2, r.trace_path);
		assert_string_equal(tr_str(tr_meta(&r2), "stop_reason"), "capture cut short");
		assert_true(tc_count(&r2, "I", "burst") > 100);
		assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(tr_meta(&r2), "target"), "pid") == r.prog.pid);
		return;
	}

	/* the file holds what was written before the kill: fix closes it */
	if (tc_run_fix(&c, fix_args) < 0)
		fail_msg("cannot run fix");
	if (c.exit != 0)
		fail_msg("fix exited %d: %s", c.exit, c.err);
	assert_non_null(strstr(c.err, "repaired"));
	check_fixed(r.trace_path);
}

static void test_tracer_sigkill(void **state)
{
	(void)state;
	tracer_sigkill(true);
}

static void test_tracer_sigkill_behind_capture(void **state)
{
	(void)state;
	tracer_sigkill(false);
}

/*
 * SIGKILL of the tracer of a quiet program (1 event a millisecond, far less
 * than the writer's buffer): the file still holds all but the last moment.
 * Written live, as tracer_sigkill's first case: behind a capture the file
 * is made whole by the conversion instead.
 */
static void test_tracer_sigkill_quiet(void **state)
{
	const char *const prog_args[] = { "5", NULL };
	const char *const fix_args[] = { r.trace_path, NULL };
	int started;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	started = tr_start_tracer_converting(&r, NULL, "live");
	if (started < 0 || tr_wait_line(&r, "armed", 10000) < 0)
		fail_msg("%s", r.error);
	sleep_ms(1000); /* ~1000 ticks, ~200 KB of trace */
	kill(r.tracer.pid, SIGKILL);
	if (tr_wait_tracer(&r, 5000) < 0)
		fail_msg("%s", r.error);
	if (tc_run_fix(&c, fix_args) < 0)
		fail_msg("cannot run fix");
	if (c.exit != 0)
		fail_msg("after a SIGKILL 1 s into the trace, fix finds nothing: %s", c.err);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	/* at most the last ~50 ms round is lost: at least the first 0.8 s is there */
	if (tc_count(&r, "I", "tick") < 500)
		fail_msg("only %zu of ~1000 ticks survived the SIGKILL", tc_count(&r, "I", "tick"));
	if (tr_wait_line(&r, "disarmed", 5000) < 0)
		fail_msg("the target still sees a tracer: %s", r.error);
}

/* `ctrace-bpf -o - | head`: the pipe closes under the tracer. */
static void test_sigpipe(void **state)
{
	const char *const prog_args[] = { "run", "4", NULL };
	const char *const argv[] = {
		"bash", "-c",
		"\"$0\" -p \"$1\" -o - | head -c 100000 > /dev/null; echo \"status ${PIPESTATUS[0]}\"",
		tr_tracer(), "{PID}", NULL,
	};
	int status = -1;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "faulty", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_command(&r, argv) < 0 ||
	    tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	if (sscanf(r.tracer_stdout, "status %d", &status) != 1)
		fail_msg("no status: %s / %s", r.tracer_stdout, r.tracer_stderr);
	/* ended by itself, not killed by SIGPIPE, while the target still ran */
	if (status >= 128)
		fail_msg("the tracer was killed by signal %d: %s", status - 128, r.tracer_stderr);
	assert_true(r.tracer_seconds < 3.5);
	assert_false(r.prog.reaped);
	if (status != 0 && !strstr(r.tracer_stderr, "Broken pipe"))
		fail_msg("exit %d without saying why: %s", status, r.tracer_stderr);
	tc_assert_unharmed(&r);
}

/* Ctrl-C twice in a row: still one clean end. */
static void test_second_sigint(void **state)
{
	const char *const args[] = { "run", "2", NULL };

	(void)state;
	tc_start_faulty(&r, args, NULL);
	sleep_ms(200);
	kill(r.tracer.pid, SIGINT);
	sleep_ms(1);
	kill(r.tracer.pid, SIGINT);
	if (tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("ctrace-bpf exited %d after two SIGINTs: %s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"), "SIGINT");
	assert_true(tc_count(&r, "I", "burst") >= 20);
	tc_assert_unharmed(&r);
}

/* Last "ts" of events named name, in microseconds. */
static double last_ts(const struct trace_run *run, const char *name)
{
	const cJSON *ev;
	double last = 0;

	cJSON_ArrayForEach(ev, run->events) {
		const char *nm = tr_str(ev, "name");

		if (nm && !strcmp(nm, name) && tr_num(ev, "ts") > last)
			last = tr_num(ev, "ts");
	}
	return last;
}

/*
 * Two tracers on one process: both get every event; stopping one leaves the
 * other tracing (the semaphore is a count: the target stays armed).
 */
static void test_two_tracers(void **state)
{
	const char *const args[] = { "run", "3", NULL };
	const char *argv[8];
	char pid[24], err2[400];
	struct tr_child second;
	double a_stop;

	(void)state;
	tc_start_faulty(&r, args, NULL);
	if (tr_init(&r2) < 0)
		fail_msg("%s", r2.error);
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	argv[0] = tr_tracer(), argv[1] = "-p", argv[2] = pid, argv[3] = "-o";
	argv[4] = r2.trace_path, argv[5] = NULL;
	assert_int_equal(tr_spawn(&second, r2.dir, "tracer2", argv), 0);
	r2.tracer = second; /* so that tr_free kills it if the test fails */
	snprintf(err2, sizeof(err2), "%s", second.err_path);
	if (!tc_wait_file_has(err2, "tracing process", 10000))
		fail_msg("the second tracer did not start");
	sleep_ms(300);

	kill(r.tracer.pid, SIGINT);
	if (tr_wait_tracer(&r, 10000) < 0 || r.tracer_exit != 0)
		fail_msg("the first tracer: exit %d, %s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	a_stop = tr_meta_num(&r, "trace_stop_monotonic_ns") / 1000.0;
	sleep_ms(300);
	assert_false(tc_printed(&r, "disarmed")); /* the second still traces */

	kill(r2.tracer.pid, SIGINT);
	if (tr_wait_tracer(&r2, 10000) < 0 || r2.tracer_exit != 0)
		fail_msg("the second tracer: exit %d, %s", r2.tracer_exit, r2.tracer_stderr);
	if (tr_load_trace(&r2) < 0)
		fail_msg("%s", r2.error);
	/* both complete, both saw the bursts, the second well after the first stopped */
	assert_true(tc_count(&r, "I", "burst") >= 100);
	assert_true(tc_count(&r2, "I", "burst") > tc_count(&r, "I", "burst") / 2);
	if (last_ts(&r2, "burst") < a_stop + 200 * 1000)
		fail_msg("the second trace ends %.0f us after the first stopped",
			 last_ts(&r2, "burst") - a_stop);
	tc_assert_unharmed(&r);
}

/* A private mount namespace with a 256 KiB tmpfs: a disk that fills up. */
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
 * Disk full: a clear error and a non-zero exit, no hang, the target
 * unharmed; what was written stays, and `fix` recovers it (in place it needs
 * room for a copy: on the full disk it says so and leaves the file as it
 * was; with -o elsewhere it repairs it). Behind a capture, the capture
 * shared the disk and its room is free once the tracer is gone: the copy
 * may fit, and then the file is repaired in place.
 */
static void test_disk_full(void **state)
{
	const char *const args[] = { "run", "3", NULL };
	char out[128], fixed[280], *before, *after;
	const char *tracer_args[] = { "-o", out, NULL };
	const char *fix_in_place[] = { out, NULL };
	const char *fix_to[] = { out, "-o", fixed, NULL };
	size_t before_len, after_len;

	(void)state;
	tr_require_root();
	make_full_disk();
	snprintf(out, sizeof(out), "%s/trace.json", full_dir);
	tc_start_faulty(&r, args, tracer_args);
	if (tr_wait_tracer(&r, 10000) < 0)
		fail_msg("%s", r.error);
	assert_int_not_equal(r.tracer_exit, 0);
	assert_non_null(strstr(r.tracer_stderr, "No space left on device"));
	assert_non_null(strstr(r.tracer_stderr, out));
	assert_true(r.tracer_seconds < 5);
	tc_assert_unharmed(&r);

	before = tr_read_file(out, &before_len);
	if (!before || before_len == 0)
		fail_msg("the partial trace %s is gone or empty", out);
	assert_int_equal(tc_run_fix(&c, fix_in_place), 0);
	if (c.exit == 0 && tr_converts_behind()) {
		free(before);
		check_fixed(out);
		return;
	}
	assert_int_not_equal(c.exit, 0);
	assert_non_null(strstr(c.err, "No space left on device"));
	after = tr_read_file(out, &after_len);
	assert_true(after && after_len == before_len && !memcmp(before, after, before_len));
	free(before);
	free(after);
	snprintf(fixed, sizeof(fixed), "%s/fixed.json", r.dir);
	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, fix_to), 0);
	if (c.exit != 0)
		fail_msg("fix -o exited %d: %s", c.exit, c.err);
	check_fixed(fixed);
}

/* fix will not rewrite a file the tracer is still writing, nor a complete one. */
static void test_fix_waits_for_the_tracer(void **state)
{
	const char *const args[] = { "run", "2", NULL };
	const char *const fix_args[] = { r.trace_path, NULL };
	char *before, *after;
	size_t before_len, after_len;

	(void)state;
	tc_start_faulty(&r, args, NULL);
	assert_int_equal(tc_run_fix(&c, fix_args), 0);
	assert_int_equal(c.exit, 1);
	assert_non_null(strstr(c.err, "still open for writing"));
	kill(r.tracer.pid, SIGINT);
	if (tr_wait_tracer(&r, 10000) < 0 || r.tracer_exit != 0)
		fail_msg("tracer: exit %d, %s", r.tracer_exit, r.tracer_stderr);
	before = tr_read_file(r.trace_path, &before_len);
	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, fix_args), 0);
	assert_int_equal(c.exit, 0);
	assert_non_null(strstr(c.err, "complete"));
	after = tr_read_file(r.trace_path, &after_len);
	assert_true(before && after && before_len == after_len && !memcmp(before, after, after_len));
	free(before);
	free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_target_crashes, free_all),
		cmocka_unit_test_teardown(test_target_exits_mid_span, free_all),
		cmocka_unit_test_teardown(test_tracer_sigkill, free_all),
		cmocka_unit_test_teardown(test_tracer_sigkill_behind_capture, free_all),
		cmocka_unit_test_teardown(test_tracer_sigkill_quiet, free_all),
		cmocka_unit_test_teardown(test_sigpipe, free_all),
		cmocka_unit_test_teardown(test_second_sigint, free_all),
		cmocka_unit_test_teardown(test_two_tracers, free_all),
		cmocka_unit_test_teardown(test_disk_full, free_all),
		cmocka_unit_test_teardown(test_fix_waits_for_the_tracer, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
