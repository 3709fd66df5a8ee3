// SPDX-License-Identifier: MIT
/*
 * test_exe_running_pool - `--exe PATH` with a dozen
 * processes already running PATH (the workers of a server). Each emits the
 * moment it sees itself armed: none of those events may be lost.
 *
 * Attaching the file raises the semaphore in every one of them at once,
 * and the BPF side drops the events of a process not yet in traced_tgids:
 * so every running process must be in that map before the file's probes
 * arm it (session_targets.c: trace_exe()).
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

enum { POOL = 12 };

static struct trace_run r;
static struct tr_child pool[POOL];

static int free_all(void **state)
{
	(void)state;
	for (int i = 0; i < POOL; i++) {
		if (pool[i].pid && !pool[i].reaped) {
			kill(pool[i].pid, SIGKILL);
			tr_reap(&pool[i], 5000);
		}
	}
	memset(pool, 0, sizeof(pool));
	tr_free(&r);
	return 0;
}

static void test_every_running_process_from_arming(void **state)
{
	char exe[PATH_MAX], tag[POOL][8], missing[256] = "";
	const char *args[] = { "--exe", exe, "-d", "0.8", NULL };
	size_t lost = 0;

	(void)state;
	tr_require_root();
	tr_program_abspath("armed_hello", exe, sizeof(exe));
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	for (int i = 0; i < POOL; i++) {
		const char *argv[] = { exe, tag[i], NULL };
		char name[16];

		snprintf(tag[i], sizeof(tag[i]), "W%d", i);
		snprintf(name, sizeof(name), "pool%d", i);
		if (tr_spawn(&pool[i], r.dir, name, argv) < 0)
			fail_msg("cannot start %s", exe);
	}
	for (int i = 0; i < POOL; i++)
		am_wait_out_line(&pool[i], "ready", 10000);
	am_start_tracer(&r, args);
	am_finish(&r, TR_TIMEOUT_MS);
	for (int i = 0; i < POOL; i++) {
		if (tr_reap(&pool[i], 5000) < 0 || tr_exit_code(&pool[i]) != 0)
			fail_msg("worker %d (pid %d) did not exit 0", i, (int)pool[i].pid);
		if (am_count(&r, "I", "hello", pool[i].pid) != 1) {
			size_t len = strlen(missing);

			lost++;
			snprintf(missing + len, sizeof(missing) - len, " %d", (int)pool[i].pid);
		}
	}
	if (lost)
		fail_msg("%zu of %d processes running %s lost the event they emitted once armed:%s",
			 lost, (int)POOL, exe, missing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_running_process_from_arming, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
