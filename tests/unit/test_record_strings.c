/* SPDX-License-Identifier: MIT */
/*
 * test_record_strings.c - where a batched literal is read from when its
 * process has exec()d since the event: a child of this test (its literals
 * are this test's, at the same addresses) is looked at, then exec()s
 * /bin/sleep, the BPF side's epoch moving on. A second look at it (the
 * loader's rescan, every 100 ms) must keep the first one while the
 * records of that exec are still on their way: the events before them
 * are the old image's. test_exec saw "(unreadable)" for such a literal
 * about 1 run in 10 under load when the rescan replaced it.
 *
 * Needs root (reading another process's maps' files), as the tracer does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "chrome_trace.h"
#include "record_strings.h"

/* In .rodata: mapped read-only from this test's file, in the child too. */
static const char before_exec[] = "before-exec, a literal of the old image";

/* A child that execs /bin/sleep when told (a byte on *go), reaped by the caller. */
static pid_t child_that_execs(int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		fail_msg("pipe");
	pid = fork();
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "2", (char *)NULL);
		_exit(1);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

/* Waits until /proc/PID/exe is /bin/sleep (or what it links to): the new image is mapped. */
static void wait_exec(pid_t pid)
{
	char path[64], exe[256];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 2000; i++) {
		ssize_t n = readlink(path, exe, sizeof(exe) - 1);

		if (n > 0 && (exe[n] = 0, strstr(exe, "sleep")))
			return;
		usleep(1000);
	}
	fail_msg("the child never exec()d");
}

static void test_rescan_during_exec_keeps_the_old_image(void **state)
{
	static uint32_t epochs[RECORD_STRINGS_EPOCH_SLOTS]; /* the BPF side's, as the loader sees them */
	struct trace_stats stats;
	struct record_strings rs;
	struct ctrace_event ev;
	const char *str = NULL;
	char buf[CTRACE_NAME_MAX];
	bool truncated;
	size_t len = 0;
	int go, status;
	pid_t pid;
	bool read;

	(void)state;
	if (geteuid() != 0)
		skip();
	memset(&stats, 0, sizeof(stats));
	record_strings_init(&rs, &stats);
	record_strings_watch_epochs(&rs, epochs);
	pid = child_that_execs(&go);
	record_strings_snapshot(&rs, pid); /* before its attach */
	epochs[(uint32_t)pid % RECORD_STRINGS_EPOCH_SLOTS]++; /* its exec, as ctrace_exec bumps it */
	if (write(go, "x", 1) != 1)
		fail_msg("write");
	wait_exec(pid);
	record_strings_snapshot(&rs, pid); /* the rescan, the exec's record not read yet */

	memset(&ev, 0, sizeof(ev));
	ev.kind = CTRACE_KIND_INSTANT;
	ev.tgid = ev.tid = (uint32_t)pid;
	ev.arg[record_name_arg(CTRACE_KIND_INSTANT)] = (uint64_t)(uintptr_t)before_exec;
	read = record_strings_read_late(&rs, &ev, record_name_arg(CTRACE_KIND_INSTANT), &str, &len,
					&truncated, buf, sizeof(buf) - 1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(go);
	if (!read)
		fail_msg("the old image's literal is unreadable (%llu unreadable strings)",
			 (unsigned long long)stats.unreadable_strings);
	assert_int_equal(len, strlen(before_exec));
	assert_memory_equal(str, before_exec, len);
	record_strings_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rescan_during_exec_keeps_the_old_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
