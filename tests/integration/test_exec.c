// SPDX-License-Identifier: MIT
/*
 * test_exec - a traced process that calls exec(), with the real tracer and
 * real BPF (tests/programs/execer.c):
 *
 *   - the trace says so: an instant "ctrace: exec" with args.path, in the
 *     process, after its last event of the old program;
 *   - tracing goes on with the new program's probes (same pid, new name);
 *   - into a program without probes, the trace still ends cleanly;
 *   - in launch mode, the exit code is the new program's;
 *   - a process that execs again and again: each image's literals read
 *     from that image (tests/programs/exec_chain.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

/* A program without ctrace probes, from PATH's usual places: sleep(1), true(1). */
static const char *bin_path(const char *name)
{
	static char path[64];
	static const char *const dirs[] = { "/bin", "/usr/bin" };

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (access(path, X_OK) == 0)
			return path;
	}
	fail_msg("no %s in /bin or /usr/bin", name);
	return NULL;
}

/* The exec instant of pid, after before-exec; checks its path. */
static cJSON *assert_exec(long pid, const char *path)
{
	cJSON *before = am_one(&r, "I", "before-exec", pid);
	cJSON *exec = am_one(&r, "I", "ctrace: exec", pid);

	assert_true(am_arg_num(before, "pid") == pid);
	assert_true(tr_num(exec, "tid") == pid);
	assert_string_equal(am_arg_str(exec, "path"), path);
	assert_true(tr_num(exec, "ts") > tr_num(before, "ts"));
	return exec;
}

/* The process_name metadata of pid, in file order: first and last. */
static void assert_renamed(long pid, const char *from, const char *to)
{
	cJSON *m[8];
	size_t n = am_find(&r, "M", "process_name", pid, m, 8);

	assert_true(n >= 2);
	assert_string_equal(am_arg_str(m[0], "name"), from);
	assert_string_equal(am_process_name(&r, pid), to);
}

/* exec into a program with probes: announced, then its events, same pid. */
static void test_exec_into_traced_program(void **state)
{
	char hello[PATH_MAX];
	const char *args[] = { tr_program_abspath("armed_hello", hello, sizeof(hello)), "after", NULL };
	cJSON *exec, *ev;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "execer", args, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_string_equal(am_stop_reason(&r), "target exited");
	exec = assert_exec(r.pid, hello);
	/* the new program's events, in the same process, after the exec */
	ev = am_one(&r, "I", "hello", r.pid);
	assert_string_equal(am_arg_str(ev, "tag"), "after");
	assert_true(tr_num(ev, "tid") == r.pid);
	assert_true(tr_num(ev, "ts") > tr_num(exec, "ts"));
	ev = am_one(&r, "X", "work", r.pid);
	assert_true(tr_num(ev, "ts") > tr_num(exec, "ts"));
	assert_renamed(r.pid, "execer", "armed_hello");
	/* and no other process */
	cJSON_ArrayForEach(ev, r.events)
		assert_true(tr_num(ev, "pid") == r.pid);
}

/*
 * exec from a second thread into the program the process already runs
 * (and that is already attached): the new image is traced too. The kernel
 * gives the exec'ing thread the process's pid; probes bound to the old
 * main thread would never fire again, and the second execer, waiting to be
 * armed, would say "never armed" and exit 3.
 */
static void test_exec_from_a_thread_into_the_same_program(void **state)
{
	char self[PATH_MAX], hello[PATH_MAX];
	const char *args[] = { "--from-thread", tr_program_abspath("execer", self, sizeof(self)),
			       tr_program_abspath("armed_hello", hello, sizeof(hello)), "after", NULL };
	cJSON *before[4], *ev;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "execer", args, NULL) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0)
		fail_msg("the program exited %d (3: the execed image was never armed):\n%s",
			 r.prog_exit, r.prog_stdout);
	assert_string_equal(am_stop_reason(&r), "target exited");
	/* both images of execer said before-exec, then armed_hello said hello */
	if (am_find(&r, "I", "before-exec", r.pid, before, 4) != 2) {
		char what[4096];
		size_t at = 0;

		cJSON_ArrayForEach(ev, r.events) {
			const char *name = tr_str(ev, "name"), *ph = tr_str(ev, "ph");

			if (at < sizeof(what))
				at += (size_t)snprintf(what + at, sizeof(what) - at, "  %s %s ts=%.3f\n",
						       ph ? ph : "?", name ? name : "?", tr_num(ev, "ts"));
		}
		fail_msg("expected two before-exec instants, one of each execer image; the trace:\n%s"
			 "strings: %g late, %g from files, %g unreadable; stderr: %s",
			 what, tr_meta_num(&r, "late_string_reads"), tr_meta_num(&r, "file_string_reads"),
			 tr_meta_num(&r, "unreadable_strings"), r.tracer_stderr);
	}
	ev = am_one(&r, "I", "hello", r.pid);
	assert_string_equal(am_arg_str(ev, "tag"), "after");
	assert_true(tr_num(ev, "ts") > tr_num(before[1], "ts"));
}

/*
 * exec into a program without probes: the exec is in the trace, nothing
 * after it, and the tracer ends as the process does, with a complete file.
 */
static void test_exec_into_program_without_probes(void **state)
{
	const char *args[] = { bin_path("sleep"), "0.3", NULL };
	cJSON *exec, *ev, *meta;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "execer", args, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	exec = assert_exec(r.pid, args[0]);
	cJSON_ArrayForEach(ev, r.events)
		if (strcmp(tr_str(ev, "ph"), "M") && tr_num(ev, "ts") > tr_num(exec, "ts"))
			fail_msg("\"%s\" after the exec into %s, which has no probes",
				 tr_str(ev, "name"), args[0]);
	assert_renamed(r.pid, "execer", "sleep");
	meta = tr_meta(&r);
	assert_string_equal(am_stop_reason(&r), "target exited");
	assert_true(tr_num(meta, "unfinished_spans") == 0);
	assert_true(tr_num(meta, "dropped_events") == 0);
	/* it ended with sleep's 0.3 s, not much later */
	if (r.tracer_seconds > 3)
		fail_msg("the tracer ran %.1f s for a process that lived ~0.3 s", r.tracer_seconds);
}

/*
 * exec into a program that exits at once: the process is renamed all the
 * same. Its new name comes with the kernel's exec record; read from /proc
 * when the loader got to the record, it was lost whenever the program had
 * exited by then (true(1) lives ~1 ms; the ASan loader often took longer).
 */
static void test_exec_into_a_program_that_exits_at_once(void **state)
{
	const char *args[] = { bin_path("true"), NULL };

	(void)state;
	tr_require_root();
	if (tr_run(&r, "execer", args, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_exec(r.pid, args[0]);
	assert_renamed(r.pid, "execer", "true");
	assert_string_equal(am_stop_reason(&r), "target exited");
}

/*
 * Launch mode through an exec: the new program is traced, and its exit code
 * is the tracer's. (armed_hello waits until it is armed: that the new image
 * is attached at all is tested here, not how soon.)
 */
static void test_launch_through_exec(void **state)
{
	char execer[PATH_MAX], hello[PATH_MAX];
	const char *args[] = { "--", tr_program_abspath("execer", execer, sizeof(execer)),
			       tr_program_abspath("armed_hello", hello, sizeof(hello)), "launched", "10000",
			       "exit:9", NULL };
	long pid;
	cJSON *exec, *ev;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_start_tracer(&r, args);
	am_wait_tracer(&r, TR_TIMEOUT_MS);
	if (r.tracer_exit != 9)
		fail_msg("the tracer exited %d, the exec'd program's exit code is 9; stderr:\n%s",
			 r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	/* both programs print "ready pid=": the same pid, exec keeps it */
	pid = am_need_field(r.tracer_stdout, "ready", "pid");
	assert_non_null(strstr(r.tracer_stdout, "armed after"));
	exec = assert_exec(pid, hello);
	ev = am_one(&r, "I", "hello", pid);
	assert_string_equal(am_arg_str(ev, "tag"), "launched");
	assert_true(tr_num(ev, "ts") > tr_num(exec, "ts"));
	assert_renamed(pid, "execer", "armed_hello");
	assert_string_equal(am_stop_reason(&r), "target exited");
}

/*
 * A process that execs itself again the moment each image is armed, 100
 * times: each image's literal is read from that image, whatever the
 * tracer's looks at the process saw, and no image's event is lost. Three
 * ways they were: a look landing inside an exec (the new image mapped, the
 * kernel not yet saying so) stood for the old image (test_exec_into_traced_
 * program's "before-exec" "(unreadable)", 1 run in 30 under ASan; here 55
 * of 300 hops); a tracer behind the process, whose look was already of a
 * later image, set aside the image an exec record named (26 of 300 hops
 * unreadable under ASan); and a look inside an exec, not showing the
 * program yet, detached its probes (1 to 3 hops of 100 lost, uncounted).
 */
static void test_exec_chain_reads_each_image_literals(void **state)
{
	enum { HOPS = 100 };
	const char *args[] = { "100", NULL };
	cJSON *hops[HOPS + 1];
	bool seen[HOPS] = { false };
	size_t n;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "exec_chain", args, NULL) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	n = am_find(&r, "I", "hop", r.pid, hops, HOPS + 1);
	if (n != HOPS)
		fail_msg("%zu \"hop\" instants of %d images (%.0f unreadable strings)", n, HOPS,
			 tr_meta_num(&r, "unreadable_strings"));
	for (size_t i = 0; i < n; i++) {
		double hop = am_arg_num(hops[i], "hop");

		assert_true(hop >= 0 && hop < HOPS && !seen[(int)hop]);
		seen[(int)hop] = true;
	}
	assert_int_equal(am_count(&r, "I", "ctrace: exec", r.pid), HOPS - 1);
	assert_true(tr_meta_num(&r, "unreadable_strings") == 0);
	assert_string_equal(am_stop_reason(&r), "target exited");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_exec_into_traced_program, free_all),
		cmocka_unit_test_teardown(test_exec_from_a_thread_into_the_same_program, free_all),
		cmocka_unit_test_teardown(test_exec_into_program_without_probes, free_all),
		cmocka_unit_test_teardown(test_exec_into_a_program_that_exits_at_once, free_all),
		cmocka_unit_test_teardown(test_launch_through_exec, free_all),
		cmocka_unit_test_teardown(test_exec_chain_reads_each_image_literals, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
