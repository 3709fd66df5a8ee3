// SPDX-License-Identifier: MIT
/*
 * test_late_names - names that change or vanish.
 *
 * 1. A thread that names itself after the tracer first saw it keeps its old
 *    name in the trace: model_facts_threads() reads /proc/PID/task
 *    every 100 ms but never replaces a name it has. late_threads 3 250: each
 *    thread lives 250 ms as "late_threads", then becomes "late-K" and only
 *    then emits; the trace must name it "late-K". (With RENAME_MS 0 the same
 *    happens whenever a scan falls between pthread_create and
 *    pthread_setname_np: it made test_processes flaky.)
 *
 * 2. With -f, a child that is gone before the tracer reads /proc/PID/comm
 *    is named "process PID": forker's grandchild (it emits and exits at
 *    once) is "process N" in about half the runs. Its name is known when it
 *    is forked (the parent's comm: the sched_process_fork tracepoint has it).
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

static void test_thread_renamed_after_seen(void **state)
{
	static const char *const args[] = { "3", "250", NULL };

	(void)state;
	tr_require_root();
	if (tr_run(&r, "late_threads", args, NULL) < 0)
		fail_msg("%s", r.error);
	for (int k = 0; k < 3; k++) {
		char prefix[32], want[16];
		long tid;
		cJSON *meta;

		snprintf(prefix, sizeof(prefix), "thread %d ", k);
		tid = am_need_field(r.prog_stdout, prefix, "tid");
		snprintf(want, sizeof(want), "late-%d", k);
		meta = tr_find_meta(&r, "thread_name", r.pid, tid);
		if (!meta || strcmp(am_arg_str(meta, "name"), want))
			fail_msg("thread %ld emitted as \"%s\" but is named \"%s\" in the trace", tid,
				 want, meta ? am_arg_str(meta, "name") : "(no thread_name)");
	}
}

/* Three runs: each short-lived child must be named after its program. */
static void test_short_lived_children_named(void **state)
{
	char exe[PATH_MAX];
	static const char *const f[] = { "-f", NULL };

	(void)state;
	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	for (int run = 0; run < 3; run++) {
		const char *args[] = { exe, "forked", "400", NULL };
		const char *names[2] = { "child ", "grandchild " };

		if (tr_run(&r, "forker", args, f) < 0)
			fail_msg("%s", r.error);
		for (int i = 0; i < 2; i++) {
			long pid = am_need_field(r.prog_stdout, names[i], "pid");
			const char *name = am_process_name(&r, pid);

			if (!name || strcmp(name, "forker"))
				fail_msg("run %d: forker's %s%ld is named \"%s\" in the trace", run,
					 names[i], pid, name ? name : "(no process_name)");
		}
		tr_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_thread_renamed_after_seen, free_all),
		cmocka_unit_test_teardown(test_short_lived_children_named, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
