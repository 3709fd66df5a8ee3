// SPDX-License-Identifier: MIT
/*
 * test_backlog - converted behind its capture (CTRACE_CONVERT=behind,
 * trace_behind.h), a trace whose conversion gets no CPU (tests/programs/
 * saturate keeps every CPU busy, and the conversion takes only idle CPU)
 * keeps the capture's backlog within --max-backlog: the file of no name
 * next to the output, watched from outside through the tracer's fds, never
 * holds much more than the bound; past it the tracer says so in one line,
 * and what it shed is in the trace's dropped_events. Once the load ends
 * the conversion catches up and the trace is whole.
 */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define BOUND_MB 32
/*
 * What the file may hold past the bound: the tracer looks every round (10
 * ms) and its writer has up to 16 MiB of buffers on their way, and the
 * conversion gives back what it read 8 MiB at a time.
 */
#define SLACK_MB 32

/* The bytes on disk of the tracer's capture: its open file of no name (0 if none). */
static unsigned long long capture_bytes(pid_t tracer)
{
	char dir[64], link[320], target[300];
	unsigned long long most = 0;
	struct dirent *d;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)tracer);
	fds = opendir(dir);
	if (!fds)
		return 0;
	while ((d = readdir(fds))) {
		struct stat st;
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		/* O_TMPFILE's: "DIR/#INODE (deleted)" */
		if (!strstr(target, " (deleted)") || stat(link, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if ((unsigned long long)st.st_blocks * 512 > most)
			most = (unsigned long long)st.st_blocks * 512;
	}
	closedir(fds);
	return most;
}

static bool program_said(const struct trace_run *r, const char *what)
{
	char *out = tr_read_file(r->prog.out_path, NULL);
	bool said = out && strstr(out, what);

	free(out);
	return said;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_backlog_bounded_while_the_conversion_waits(void **state)
{
	const char *const prog_args[] = { "60", NULL };
	const char *const tracer_args[] = { "-d", "3", "--max-backlog", "32M", NULL };
	unsigned long long peak = 0;
	struct trace_run r;
	int started;
	cJSON *m;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "saturate", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	started = tr_start_tracer_converting(&r, tracer_args, "behind");
	if (started < 0 || tr_wait_line(&r, "armed", 20000) < 0)
		fail_msg("%s", r.error);
	/* The tracer lets go after 3 s: the capture watched until then. */
	for (int waited = 0; !program_said(&r, "\ndisarmed") && waited < 20000; waited += 20) {
		unsigned long long now = capture_bytes(r.tracer.pid);

		peak = now > peak ? now : peak;
		sleep_ms(20);
	}
	if (!program_said(&r, "\ndisarmed"))
		fail_msg("the tracer did not let go of saturate within 20 s");
	kill((pid_t)r.prog.pid, SIGKILL); /* the load ends: the conversion catches up */
	if (tr_wait_tracer(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	print_message("--max-backlog %dM: the capture held %.1f MB at most\n", BOUND_MB, (double)peak / (1 << 20));
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d: %s", r.tracer_exit, r.tracer_stderr);
	if (peak > (BOUND_MB + SLACK_MB) << 20)
		fail_msg("the capture held %llu bytes, past --max-backlog %dM", peak, BOUND_MB);
	if (!strstr(r.tracer_stderr, "(--max-backlog): events are dropped, and counted"))
		fail_msg("the tracer did not say it dropped events past --max-backlog: %s", r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	m = tr_meta(&r);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "converted_from_capture")));
	assert_string_equal(tr_str(m, "stop_reason"), "duration elapsed");
	if (!(tr_num(m, "dropped_events") > 0))
		fail_msg("events were shed and metadata.dropped_events is %.0f", tr_num(m, "dropped_events"));
	if (!tr_find(&r, "I", "ctrace: events dropped"))
		fail_msg("no \"ctrace: events dropped\" instant in the trace");
	if (tr_num(m, "events_written") != cJSON_GetArraySize(r.events))
		fail_msg("metadata.events_written %.0f, the file holds %d", tr_num(m, "events_written"),
			 cJSON_GetArraySize(r.events));
	tr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backlog_bounded_while_the_conversion_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
