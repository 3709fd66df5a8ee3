// SPDX-License-Identifier: MIT
/*
 * test_terminal_names - names the traced process controls reach the
 * operator's terminal only made safe: no byte a terminal acts on (C0
 * controls but the tool's own newlines, DEL, ESC, the C1 controls as bytes
 * or as UTF-8, invalid UTF-8) comes out of the tracer, `report` or `list`,
 * while each name stays recognizable, written with \xHH escapes.
 *
 *   - tests/programs/hostile_names, run from a file whose name holds ESC
 *     sequences, an OSC title, CR and C1, names itself, a thread and a
 *     mapped file that way and fires a span, an instant and a counter so
 *     named; traced with -v (every attach line names the file): the
 *     "tracing process" line, the attach lines and the summary at the end;
 *     then `report` of its trace, `list` of its file and `list -p`;
 *   - a program without probes (a copy of sleep under such a name, with a
 *     library preloaded under another): the "no ctrace probes yet (looked
 *     in: ...)" line and the end's "no probe was attached" line name both;
 *   - a file whose malformed probe note has such a name: `list FILE` and
 *     `--exe FILE` refuse it naming the probe escaped;
 *   - on a terminal (a pseudo-terminal, so the status line is drawn too):
 *     the only escape sequences are the status line's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

/* As tests/programs/hostile_names.c names them, and as they must be shown. */
#define PROCESS_NAME "\033[2J\033]0;pwn\a\r\xc2\x9b"
#define PROCESS_SHOWN "\\x1b[2J\\x1b]0;pwn\\x07\\x0d\\xc2\\x9b"
#define SPAN_NAME "span \033[2J\033]2;owned\a\rFAKE"
#define SPAN_SHOWN "span \\x1b[2J\\x1b]2;owned\\x07\\x0dFAKE"
#define INSTANT_NAME "instant \033[1A\033[2K\b\x7f\xc2\x9b" "1A"
#define INSTANT_SHOWN "instant \\x1b[1A\\x1b[2K\\x08\\x7f\\xc2\\x9b1A"
#define COUNTER_NAME "counter \033]0;owned\033\\\r"
#define COUNTER_SHOWN "counter \\x1b]0;owned\\x1b\\x5c\\x0d"

/* The program's own file: ESC, OSC, CR, a lone C1 CSI byte (not UTF-8), C1 OSC as UTF-8. */
#define EXE_NAME "hn\033[2J\033]0;owned\a\r\x9b" "31mFAKE\xc2\x9d"
#define EXE_SHOWN "hn\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x9b31mFAKE\\xc2\\x9d"

/* The probe-less process: its name is its file's first 15 bytes. */
#define SLEEP_NAME "\033[2J\033]0;s\a\r\xc2\x9bzz-sleep"
#define SLEEP_COMM_SHOWN "\\x1b[2J\\x1b]0;s\\x07\\x0d\\xc2\\x9bzz"
#define SLEEP_SHOWN "\\x1b[2J\\x1b]0;s\\x07\\x0d\\xc2\\x9bzz-sleep"
/* Preloaded: LD_PRELOAD splits at spaces and colons, so none here. */
#define LIB_NAME "libz\033[H\033[2J\r\bFAKE\x9b" "31m\x7f.so"
#define LIB_SHOWN "libz\\x1b[H\\x1b[2J\\x0d\\x08FAKE\\x9b31m\\x7f.so"

static struct trace_run r;
static struct tr_cmd c;
static pid_t sleeper;

static int free_all(void **state)
{
	(void)state;
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
		sleeper = 0;
	}
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

/*
 * Fails unless text holds nothing a terminal acts on: no C0 control but
 * newline, no DEL, no C1 control (U+0080..U+009F), only valid UTF-8.
 */
static void assert_terminal_safe(const char *what, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = strlen(text);

	for (size_t i = 0; i < len; i++) {
		bool c1 = p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f;

		if ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f || c1)
			fail_msg("%s: byte 0x%02x%s at offset %zu, in:\n%.*s", what, p[i], c1 ? " (C1 in UTF-8)" : "", i,
				 (int)(i > 200 ? 200 : i), text + (i > 200 ? i - 200 : 0));
	}
	if (!tr_valid_utf8(text, len))
		fail_msg("%s: not valid UTF-8 (a lone C1 byte or a cut sequence):\n%s", what, text);
}

/* A line of text that starts with `start` and holds `part` (NULL: any). */
static void assert_line(const char *what, const char *text, const char *start, const char *part)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);

		if (n >= strlen(start) && !strncmp(l, start, strlen(start)) &&
		    (!part || memmem(l, n, part, strlen(part))))
			return;
	}
	fail_msg("%s has no line starting \"%s\" holding \"%s\":\n%s", what, start, part ? part : "", text);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *bytes = tr_read_file(from, &len);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (!bytes || fd < 0 || write(fd, bytes, len) != (ssize_t)len)
		fail_msg("copying %s: %s", from, strerror(errno));
	close(fd);
	free(bytes);
}

/* hostile_names, run from dir/EXE_NAME, traced with -v to its end. */
static void trace_hostile_names(char *exe, size_t len)
{
	char prog[PATH_MAX];
	const char *const prog_args[] = { r.dir, NULL };
	const char *const tracer_args[] = { "-v", NULL };

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(exe, len, "%s/%s", r.dir, EXE_NAME);
	copy_file(tr_program_abspath("hostile_names", prog, sizeof(prog)), exe);
	if (tr_start_program(&r, exe, prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, tracer_args) < 0 || tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.prog_exit != 0 || r.tracer_exit != 0)
		fail_msg("program exit %d, tracer exit %d: %s", r.prog_exit, r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
}

/* The trace's lines and summary: safe, each name there escaped; the file keeps the names as they were. */
static void test_trace_says_names_escaped(void **state)
{
	char exe[PATH_MAX];

	(void)state;
	trace_hostile_names(exe, sizeof(exe));
	assert_terminal_safe("the tracer's stderr", r.tracer_stderr);
	assert_terminal_safe("the tracer's stdout", r.tracer_stdout);
	assert_line("stderr", r.tracer_stderr, "ctrace-bpf: tracing process ", "(" PROCESS_SHOWN "):");
	assert_line("stderr", r.tracer_stderr, "ctrace-bpf: attached ctrace:", EXE_SHOWN "+0x");
	/* The summary's rows */
	assert_line("stderr", r.tracer_stderr, "  " SPAN_SHOWN, NULL);
	assert_line("stderr", r.tracer_stderr, "  " INSTANT_SHOWN, NULL);
	assert_line("stderr", r.tracer_stderr, "  " COUNTER_SHOWN, NULL);
	/* The file: the names as the program gave them (JSON escapes its own way) */
	assert_non_null(tr_find(&r, "X", SPAN_NAME));
	assert_non_null(tr_find(&r, "I", INSTANT_NAME));
	assert_non_null(tr_find(&r, "C", COUNTER_NAME));
	assert_string_equal(cJSON_GetStringValue(tr_arg(tr_find_meta(&r, "process_name", (double)r.pid, (double)r.pid), "name")),
			    PROCESS_NAME);
}

/* `report` of that trace: its summary the same, safe. */
static void test_report_says_names_escaped(void **state)
{
	char exe[PATH_MAX];

	(void)state;
	trace_hostile_names(exe, sizeof(exe));
	cli_run_tracer(&c, NULL, "report", (const char *const[]){ r.trace_path, NULL }, 20000);
	assert_int_equal(c.exit, 0);
	assert_terminal_safe("report's stdout", c.out);
	assert_terminal_safe("report's stderr", c.err);
	assert_line("report", c.out, "  " SPAN_SHOWN, NULL);
	assert_line("report", c.out, "  " INSTANT_SHOWN, NULL);
	assert_line("report", c.out, "  " COUNTER_SHOWN, NULL);
}

/* `list FILE` and `list -p PID` of hostile_names: its file's name escaped in every line. */
static void test_list_says_names_escaped(void **state)
{
	char exe[PATH_MAX], pid[24], prog[PATH_MAX];

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(exe, sizeof(exe), "%s/%s", r.dir, EXE_NAME);
	copy_file(tr_program_abspath("hostile_names", prog, sizeof(prog)), exe);
	cli_run_tracer(&c, NULL, "list", (const char *const[]){ exe, NULL }, 20000);
	assert_int_equal(c.exit, 0);
	assert_terminal_safe("list's stdout", c.out);
	assert_terminal_safe("list's stderr", c.err);
	assert_line("list", c.out, "usdt:", EXE_SHOWN ":ctrace:");

	/* Running, waiting for a tracer that does not come (it exits 3 after 10 s) */
	if (tr_start_program(&r, exe, (const char *const[]){ r.dir, NULL }) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	cli_run_tracer(&c, NULL, "list", (const char *const[]){ "-p", pid, NULL }, 20000);
	assert_int_equal(c.exit, 0);
	assert_terminal_safe("list -p's stdout", c.out);
	assert_terminal_safe("list -p's stderr", c.err);
	assert_line("list -p", c.out, "usdt:", EXE_SHOWN ":ctrace:");
	kill((pid_t)r.prog.pid, SIGKILL);
}

/* The path of the zlib this test runs with: a library without probes of any kind. */
static void zlib_path(char *buf, size_t len)
{
	Dl_info info;

	if (!dladdr((void *)zlibVersion, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		fail_msg("cannot find the path of libz");
	snprintf(buf, len, "%s", info.dli_fname);
}

/* Whether process pid maps a file whose path ends with `name`. */
static bool maps_file(pid_t pid, const char *name)
{
	char path[64], *maps;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = tr_read_file(path, NULL);
	found = maps && strstr(maps, name);
	free(maps);
	return found;
}

/* A process without probes: the waiting line and the end's line list what was looked in, escaped. */
static void test_looked_in_escaped(void **state)
{
	char sleep_path[PATH_MAX], lib[PATH_MAX], libz[PATH_MAX], pid[24], out[PATH_MAX];

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(sleep_path, sizeof(sleep_path), "%s/%s", r.dir, SLEEP_NAME);
	snprintf(lib, sizeof(lib), "%s/%s", r.dir, LIB_NAME);
	snprintf(out, sizeof(out), "%s/trace.json", r.dir);
	copy_file("/bin/sleep", sleep_path);
	zlib_path(libz, sizeof(libz));
	copy_file(libz, lib);
	sleeper = fork();
	if (sleeper < 0)
		fail_msg("fork: %s", strerror(errno));
	if (sleeper == 0) {
		setenv("LD_PRELOAD", lib, 1);
		execl(sleep_path, sleep_path, "30", (char *)NULL);
		_exit(127);
	}
	for (int waited_ms = 0; !maps_file(sleeper, LIB_NAME); waited_ms += 10) {
		if (waited_ms > 10000)
			fail_msg("the sleep never mapped %s", lib);
		usleep(10000);
	}
	snprintf(pid, sizeof(pid), "%d", (int)sleeper);
	cli_run_tracer(&c, NULL, NULL, (const char *const[]){ "-p", pid, "-d", "0.5", "-o", out, NULL }, 20000);
	assert_terminal_safe("the tracer's stderr", c.err);
	assert_terminal_safe("the tracer's stdout", c.out);
	assert_line("stderr", c.err, "ctrace-bpf: process ", "(" SLEEP_COMM_SHOWN ") has no ctrace probes yet (looked in: ");
	assert_line("stderr", c.err, "ctrace-bpf: process ", SLEEP_SHOWN);
	assert_line("stderr", c.err, "ctrace-bpf: process ", LIB_SHOWN);
	assert_line("stderr", c.err, "ctrace-bpf: no probe was attached in the whole trace (looked in: ", SLEEP_SHOWN);
	assert_line("stderr", c.err, "ctrace-bpf: no probe was attached in the whole trace (looked in: ", LIB_SHOWN);

	cli_run_tracer(&c, NULL, "list", (const char *const[]){ "-p", pid, NULL }, 20000);
	assert_terminal_safe("list -p's stdout", c.out);
	assert_terminal_safe("list -p's stderr", c.err);
}

/*
 * A program with one stapsdt note named with ESC, OSC, BEL, CR and C1 whose
 * site is in no executable segment (0x1234): a note usdt_notes refuses,
 * quoting its provider and name.
 */
static const char bad_note_s[] =
	"\t.pushsection .note.stapsdt,\"?\",\"note\"\n"
	"\t.balign 4\n"
	"\t.4byte 2f-1f, 4f-3f, 3\n"
	"1:\t.asciz \"stapsdt\"\n"
	"2:\t.balign 4\n"
	"3:\t.8byte 0x1234\n"
	"\t.8byte 0\n"
	"\t.8byte 0\n"
	"\t.asciz \"evil\"\n"
	"\t.asciz \"\\033]0;owned\\007\\r\\302\\233x\"\n"
	"\t.asciz \"\"\n"
	"4:\t.balign 4\n"
	"\t.popsection\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";
#define BAD_NOTE_SHOWN "probe evil:\\x1b]0;owned\\x07\\x0d\\xc2\\x9bx at 0x1234 is not in an executable segment"

/* list and --exe of a file whose malformed note has a hostile name: refused, the name escaped. */
static void test_malformed_note_named_escaped(void **state)
{
	char src[PATH_MAX], exe[PATH_MAX];
	FILE *f;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(src, sizeof(src), "%s/bad_note.s", r.dir);
	snprintf(exe, sizeof(exe), "%s/bad_note", r.dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(bad_note_s, f);
	assert_int_equal(fclose(f), 0);
	if (tr_shell("cd '%s' && echo 'int main(void) { return 0; }' > main.c && cc main.c bad_note.s -o bad_note", r.dir))
		fail_msg("cannot build the program with a bad note (cc)");

	cli_run_tracer(&c, NULL, "list", (const char *const[]){ exe, NULL }, 20000);
	assert_int_equal(c.exit, 1);
	assert_terminal_safe("list's stderr", c.err);
	assert_line("list's stderr", c.err, "ctrace-bpf: ", BAD_NOTE_SHOWN);

	cli_run_tracer(&c, NULL, NULL, (const char *const[]){ "--exe", exe, NULL }, 20000);
	assert_int_equal(c.exit, 1);
	assert_terminal_safe("--exe's stderr", c.err);
	assert_line("--exe's stderr", c.err, "ctrace-bpf: --exe ", BAD_NOTE_SHOWN);
}

/* Everything from fd until its last writer is gone (EIO), NUL-terminated. */
static char *read_terminal(int fd, pid_t pid)
{
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap);

	assert_non_null(text);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, TR_TIMEOUT_MS) <= 0) {
			kill(pid, SIGKILL);
			fail_msg("the tracer did not end within %d ms", TR_TIMEOUT_MS);
		}
		if (len + 4096 > cap) {
			text = realloc(text, cap *= 2);
			assert_non_null(text);
		}
		got = read(fd, text + len, cap - len - 1);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	text[len] = '\0';
	return text;
}

/* The terminal's CR LF made LF (in place). */
static void crlf_to_lf(char *text)
{
	for (char *p; (p = strstr(text, "\r\n"));)
		memmove(p, p + 1, strlen(p + 1) + 1);
}

/* text with every `what` taken out (in place). */
static void remove_all(char *text, const char *what)
{
	size_t n = strlen(what);

	for (char *p; (p = strstr(text, what));)
		memmove(p, p + n, strlen(p + n) + 1);
}

/*
 * hostile_names launched on a 24x120 terminal, from its hostile file:
 * what reaches the terminal, the status line's sequences taken out (its
 * region, its draws, its erase) and the terminal's CR LF made LF, holds
 * nothing a terminal acts on.
 */
static void test_terminal_shows_no_raw_control(void **state)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 120 };
	char exe[PATH_MAX], prog[PATH_MAX], *screen;
	int fd, status;
	pid_t pid;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(exe, sizeof(exe), "%s/%s", r.dir, EXE_NAME);
	copy_file(tr_program_abspath("hostile_names", prog, sizeof(prog)), exe);
	pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0)
		fail_msg("forkpty: %s", strerror(errno));
	if (pid == 0) {
		execl(tr_tracer(), tr_tracer(), "-o", r.trace_path, "--", exe, r.dir, (char *)NULL);
		_exit(127);
	}
	screen = read_terminal(fd, pid);
	close(fd);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the tracer (and its command) exited with status 0x%x:\n%s", status, screen);
	if (!strstr(screen, " dropped | ")) /* a status line's, whatever it counts */
		fail_msg("no status line was drawn:\n%s", screen);
	crlf_to_lf(screen);
	remove_all(screen, "\0337\033[1;23r\0338");       /* the scrolling region */
	remove_all(screen, "\0337\033[24;1H\033[2K"); /* a draw's start */
	remove_all(screen, "\0337\033[r");             /* the end's whole screen */
	remove_all(screen, "\0338");
	remove_all(screen, "\n\033[1A");
	assert_terminal_safe("the terminal", screen);
	/* Named as it was when it started: its file's first 15 bytes */
	assert_line("the terminal", screen, "ctrace-bpf: tracing process ", "(hn\\x1b[2J\\x1b]0;owned):");
	assert_line("the terminal", screen, "  " SPAN_SHOWN, NULL);
	free(screen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_trace_says_names_escaped, free_all),
		cmocka_unit_test_teardown(test_report_says_names_escaped, free_all),
		cmocka_unit_test_teardown(test_list_says_names_escaped, free_all),
		cmocka_unit_test_teardown(test_looked_in_escaped, free_all),
		cmocka_unit_test_teardown(test_malformed_note_named_escaped, free_all),
		cmocka_unit_test_teardown(test_terminal_shows_no_raw_control, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
