// SPDX-License-Identifier: MIT
/*
 * test_early_signal - Ctrl-C or SIGTERM in the tracer's first ~100 ms
 * (loading BPF, attaching). The guarantee: a stop at any moment is a clean
 * end: either no file or one that opens, and the target unharmed, with no
 * probe left in it. A signal that lands before the tracer's main() has run
 * (it is still being exec'd and linked) ends it by the default action, as
 * it would any program: that is acceptable only if it left no file.
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

static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

static void early(int sig)
{
	static const int delays_ms[] = { 0, 5, 20, 50, 100 };
	const char *const args[] = { "run", "10", NULL };
	char why[256];

	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "faulty", args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	for (size_t i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
		struct timespec ts = { 0, delays_ms[i] * 1000000L };
		struct stat st;

		unlink(r.trace_path);
		free(r.tracer_stderr);
		free(r.tracer_stdout);
		r.tracer_stderr = r.tracer_stdout = NULL;
		if (tr_start_tracer(&r, NULL) < 0)
			fail_msg("%s", r.error);
		nanosleep(&ts, NULL);
		kill(r.tracer.pid, sig);
		if (tr_wait_tracer(&r, 10000) < 0)
			fail_msg("%s", r.error);
		if (r.tracer_exit >= 128 && stat(r.trace_path, &st) == 0)
			fail_msg("%s after %d ms killed the tracer (exit %d, stderr: \"%s\") and left a file",
				 strsignal(sig), delays_ms[i], r.tracer_exit, r.tracer_stderr);
		if (stat(r.trace_path, &st) == 0) {
			free(r.trace_text);
			cJSON_Delete(r.trace);
			r.trace_text = NULL;
			r.trace = NULL;
			if (tr_load_trace(&r) < 0)
				fail_msg("after %s at %d ms: %s", strsignal(sig), delays_ms[i], r.error);
		}
		/* no uprobe left behind, the target still running */
		for (int waited = 0; tc_code_diff(r.prog.pid, why, sizeof(why)) != 0; waited += 10) {
			if (waited > 2000)
				fail_msg("a probe stayed in the target after %s at %d ms", strsignal(sig),
					 delays_ms[i]);
			usleep(10000);
		}
		assert_int_equal(kill(r.prog.pid, 0), 0);
	}
}

static void test_early_sigint(void **state)
{
	(void)state;
	early(SIGINT);
}

static void test_early_sigterm(void **state)
{
	(void)state;
	early(SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_early_sigint, free_all),
		cmocka_unit_test_teardown(test_early_sigterm, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
