// SPDX-License-Identifier: MIT
/*
 * test_exec_start - BLOCKED (fails today): after exec(), the new program's
 * first events are lost in most runs.
 *
 * The exec is seen by the sched_process_exec tracepoint, and the new image
 * is attached later, by the loop (session_loop.c: attach_what_appeared),
 * while the program already runs: whatever it emits in its first
 * milliseconds is not in the trace. launched emits "main-first" on its first
 * line and is done ~1 ms later; `ctrace-bpf -- execer launched` (a wrapper
 * that execs the real program, as scripts do) has it in about 2 runs out of
 * 5. Launch mode holds the command at its entry point until it is attached;
 * an exec'd image is not held.
 *
 *   cc $(CFLAGS) -Itests/lib tests/integration/blocked/test_exec_start.c \
 *      build/tests/lib/[a-z]*.o -lcjson -lcmocka -lm \
 *      -o build/tests/integration/test_exec_start
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

static void test_exec_image_from_first_instruction(void **state)
{
	char execer[PATH_MAX], launched[PATH_MAX], rel[PATH_MAX];
	int lost = 0;

	(void)state;
	tr_require_root();
	if (!realpath(tr_program_path("execer", rel, sizeof(rel)), execer) ||
	    !realpath(tr_program_path("launched", rel, sizeof(rel)), launched))
		fail_msg("test programs: %s", strerror(errno));
	for (int run = 0; run < 5; run++) {
		const char *args[] = { "--", execer, launched, NULL };
		long pid;

		if (tr_init(&r) < 0)
			fail_msg("%s", r.error);
		am_start_tracer(&r, args);
		am_finish(&r, TR_TIMEOUT_MS);
		pid = am_need_field(r.tracer_stdout, "uid=", "pid");
		am_one(&r, "I", "ctrace: exec", pid);
		if (am_count(&r, "I", "main-first", pid) != 1 ||
		    am_count(&r, "I", "main-last", pid) != 1)
			lost++;
		tr_free(&r);
	}
	if (lost)
		fail_msg("in %d of 5 runs, the exec'd program's events (main-first, main-last) are not in the trace",
			 lost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_exec_image_from_first_instruction, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
