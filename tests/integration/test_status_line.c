// SPDX-License-Identifier: MIT
/*
 * test_status_line - the live status line, read from a pseudo-terminal
 * the tracer writes to (forkpty) as a user's terminal would show it: the
 * last row set apart, redrawn about twice a second with figures that grow
 * and agree with the trace, never wider than the row, given back empty
 * before the tracer's last lines; nothing of it with -q or when stderr is
 * not a terminal.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

static struct trace_run r;
static struct tr_cmd c;
static char *screen; /* all the tracer wrote to the terminal */
static size_t screen_len;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	free(screen);
	screen = NULL;
	return 0;
}

/* A resize of the terminal once the first status line is drawn (0: none). */
static struct winsize resize_to;

/*
 * `ctrace-bpf [flag] -o DIR/trace.json -- spread_spans ROUNDS` on a
 * terminal of rows x cols: everything it wrote there, its exit code.
 */
static int trace_on_terminal(const char *flag, unsigned short rows, unsigned short cols, const char *rounds)
{
	struct winsize ws = { .ws_row = rows, .ws_col = cols };
	char prog[300];
	const char *argv[8];
	size_t n = 0, cap = 1 << 16;
	int fd, status;
	pid_t pid;

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/trace.json", r.dir);
	tr_program_abspath("spread_spans", prog, sizeof(prog));
	argv[n++] = tr_tracer();
	if (flag)
		argv[n++] = flag;
	argv[n++] = "-o";
	argv[n++] = r.trace_path;
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = rounds;
	argv[n] = NULL;
	pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0)
		fail_msg("forkpty: %s", strerror(errno));
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	screen = malloc(cap);
	screen_len = 0;
	for (struct timespec t0, t; clock_gettime(CLOCK_MONOTONIC, &t0) == 0;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > TR_TIMEOUT_MS / 1000 || poll(&p, 1, TR_TIMEOUT_MS) <= 0) {
			kill(pid, SIGKILL);
			fail_msg("the tracer did not end within %d ms", TR_TIMEOUT_MS);
		}
		if (screen_len + 4096 > cap)
			screen = realloc(screen, cap *= 2);
		got = read(fd, screen + screen_len, cap - screen_len - 1);
		if (got <= 0) /* EIO: the terminal's last writer is gone */
			break;
		screen_len += (size_t)got;
		screen[screen_len] = 0;
		if (resize_to.ws_row && strstr(screen, " dropped | ")) { /* the first status line */
			ioctl(fd, TIOCSWINSZ, &resize_to); /* the kernel sends SIGWINCH to the tracer */
			resize_to.ws_row = 0;
		}
	}
	screen[screen_len] = 0;
	close(fd);
	waitpid(pid, &status, 0);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The status lines drawn: the text of each, in order (at most max). */
static size_t status_draws(unsigned rows, char **out, size_t max)
{
	char head[32];
	size_t n = 0;

	snprintf(head, sizeof(head), "\0337\033[%u;1H\033[2K", rows);
	for (char *p = screen; (p = strstr(p, head)); p += strlen(head)) {
		char *end = strstr(p + strlen(head), "\0338");

		assert_non_null(end);
		if (end == p + strlen(head))
			continue; /* the erase at the end */
		if (n < max)
			out[n] = strndup(p + strlen(head), (size_t)(end - p - strlen(head)));
		n++;
	}
	return n < max ? n : max;
}

/* About 1.7 s of tracing on a 24x100 terminal. */
static void test_status_line_on_a_terminal(void **state)
{
	char *draw[64], *last_draw, *erase, *reset, *exited;
	size_t n;
	double prev_s = -1, s;
	unsigned long long prev_events = 0, events, dropped;
	double kb;
	unsigned procs;
	bool behind;

	(void)state;
	assert_int_equal(trace_on_terminal(NULL, 24, 100, "8"), 0);
	behind = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "converted_from_capture"));
	/* Rows 1-23 scroll; row 24 is the line's. */
	assert_non_null(strstr(screen, "\0337\033[1;23r\0338"));
	n = status_draws(24, draw, 64);
	/* Twice a second for ~1.7 s; a loaded machine may stretch it, not below 3. */
	if (n < 3)
		fail_msg("%zu status lines drawn in a 1.7 s trace:\n%s", n, screen);
	for (size_t i = 0; i < n; i++) {
		char evs[32], evps[32], drp[32], unit[16], unit2[16], bytes_are[16];

		assert_true(strlen(draw[i]) <= 99);
		if (sscanf(draw[i], "ctrace-bpf: %lf s | %31s %15[a-z]/s | %31s %15s | %31s dropped | %lf KB %15s | %u process",
			   &s, evps, unit, evs, unit2, drp, &kb, bytes_are, &procs) != 9)
			fail_msg("not a status line: '%s'", draw[i]);
		/* Behind a capture: the probes' hits it captured (a span is two), not the trace's events. */
		assert_string_equal(unit, behind ? "hits" : "events");
		assert_string_equal(unit2, unit);
		/* "1,234" -> 1234 */
		events = 0;
		for (char *p = evs; *p; p++)
			if (*p != ',')
				events = events * 10 + (unsigned long long)(*p - '0');
		dropped = strtoull(drp, NULL, 10);
		assert_true(s > prev_s);
		if (i)
			assert_true(s - prev_s >= 0.45); /* not more often than twice a second */
		assert_true(events >= prev_events);
		assert_int_equal(dropped, 0);
		assert_int_equal(procs, 1);
		/* Never more than the file holds. */
		if (events > (unsigned long long)tr_meta_num(&r, "events_written") * (behind ? 2 : 1))
			fail_msg("the status line says %llu %s; the file holds %.0f events", events, unit,
				 tr_meta_num(&r, "events_written"));
		/* The trace's bytes; behind a capture, the capture's (the trace is written from it). */
		if (behind) {
			assert_string_equal(bytes_are, "captured");
		} else {
			assert_string_equal(bytes_are, "written");
			assert_true(kb * 1024 <= (double)r.trace_len + 0.05 * 1024);
		}
		prev_s = s;
		prev_events = events;
	}
	assert_true(prev_events > 0);
	for (size_t i = 0; i < n; i++)
		free(draw[i]);
	/* The end: the row erased, the whole screen scrolling again, then the tracer's last lines. */
	last_draw = strstr(screen, "ctrace-bpf: target exited");
	assert_non_null(last_draw);
	erase = strstr(screen, "\0337\033[24;1H\033[2K\0338\0337\033[r\0338");
	assert_non_null(erase);
	reset = strstr(erase, "\033[r");
	exited = strstr(reset, "ctrace-bpf: target exited");
	assert_non_null(exited);
	assert_null(strstr(reset, " dropped | ")); /* no status line drawn after */
	/* The program's own output on the same terminal. */
	assert_non_null(strstr(screen, "ready pid="));
}

/* A narrow terminal: the line is cut to its width less one, never wrapped. */
static void test_narrow_terminal(void **state)
{
	char *draw[64];
	size_t n;

	(void)state;
	assert_int_equal(trace_on_terminal(NULL, 10, 40, "4"), 0);
	n = status_draws(10, draw, 64);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(strlen(draw[i]), 39);
		assert_memory_equal(draw[i], "ctrace-bpf: ", 12);
		free(draw[i]);
	}
}

/* A resize while tracing: the region set again for the new size, the line drawn on the new last row, as wide. */
static void test_resize(void **state)
{
	char *draw[64];
	size_t n;

	(void)state;
	resize_to = (struct winsize){ .ws_row = 30, .ws_col = 50 };
	assert_int_equal(trace_on_terminal(NULL, 24, 100, "8"), 0);
	assert_non_null(strstr(screen, "\0337\033[1;29r\0338"));
	n = status_draws(30, draw, 64);
	if (n < 1)
		fail_msg("no status line on row 30 after the resize:\n%s", screen);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(strlen(draw[i]), 49);
		free(draw[i]);
	}
	/* The end erases the new last row. */
	assert_non_null(strstr(screen, "\0337\033[30;1H\033[2K\0338\0337\033[r\0338"));
}

/* -q: not a single escape sequence, and no line of the tracer's. */
static void test_quiet_on_a_terminal(void **state)
{
	(void)state;
	assert_int_equal(trace_on_terminal("-q", 24, 100, "4"), 0);
	assert_null(strchr(screen, '\033'));
	assert_null(strstr(screen, "ctrace-bpf"));
	assert_non_null(strstr(screen, "ready pid="));
	assert_true(tr_meta_num(&r, "events_written") > 0);
}

/* stderr a file: no status line, no escape sequence. */
static void test_no_status_line_off_a_terminal(void **state)
{
	char prog[300];
	const char *args[] = { "-o", r.trace_path, "--", prog, "4", NULL };

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/trace.json", r.dir);
	args[1] = r.trace_path;
	tr_program_abspath("spread_spans", prog, sizeof(prog));
	cli_run_tracer(&c, NULL, NULL, args, TR_TIMEOUT_MS);
	assert_int_equal(c.exit, 0);
	assert_null(strchr(c.err, '\033'));
	assert_null(strstr(c.err, " dropped | "));
	assert_non_null(strstr(c.err, "target exited"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_status_line_on_a_terminal, free_all),
		cmocka_unit_test_teardown(test_narrow_terminal, free_all),
		cmocka_unit_test_teardown(test_resize, free_all),
		cmocka_unit_test_teardown(test_quiet_on_a_terminal, free_all),
		cmocka_unit_test_teardown(test_no_status_line_off_a_terminal, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
