// SPDX-License-Identifier: MIT
/*
 * test_cli_errors - every bad command line, of `ctrace-bpf` and of
 * `ctrace-bpf fix`: one line on stderr that says what to do, a non-zero
 * exit, within a second, and no output file left behind. (test_cli covers
 * --help and the ways of stopping.)
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

static struct trace_run r;
static struct tr_cmd c;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

/*
 * Runs the tracer with args (a space-separated list; "{OUT}" is a path in
 * the test's directory that must not exist afterwards) and checks the
 * answer: exit code, one line holding `hint`, under a second.
 */
static void expect_error(const char *args, int want_exit, const char *hint)
{
	char buf[512], out[300], *argv[16], *save = NULL;
	size_t n = 0;

	if (!r.dir[0] && tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(out, sizeof(out), "%s/out.json", r.dir);
	unlink(out);
	snprintf(buf, sizeof(buf), "%s", args);
	for (char *a = strtok_r(buf, " ", &save); a && n < 15; a = strtok_r(NULL, " ", &save))
		argv[n++] = !strcmp(a, "{OUT}") ? out : !strcmp(a, "''") ? "" : a;
	argv[n] = NULL;
	cli_run_tracer(&c, NULL, NULL, (const char *const *)argv, 10000);
	if (c.exit == 0 || (want_exit && c.exit != want_exit))
		fail_msg("ctrace-bpf %s: exit %d, want %d", args, c.exit, want_exit);
	if (!cli_one_line(c.err))
		fail_msg("ctrace-bpf %s: not one line on stderr:\n%s", args, c.err);
	if (!strstr(c.err, hint))
		fail_msg("ctrace-bpf %s: no \"%s\" in: %s", args, hint, c.err);
	if (c.seconds > 1.0)
		fail_msg("ctrace-bpf %s: took %.2f s", args, c.seconds);
	if (access(out, F_OK) == 0)
		fail_msg("ctrace-bpf %s: left %s behind", args, out);
}

static void test_bad_pids(void **state)
{
	char args[64];

	(void)state;
	snprintf(args, sizeof(args), "-p %d -o {OUT}", cli_free_pid());
	expect_error(args, 0, "pgrep");
	expect_error("-p abc -o {OUT}", 0, "'abc'");
	expect_error("-p 12x -o {OUT}", 0, "'12x'");
	expect_error("-p '' -o {OUT}", 0, "-p");
	expect_error("-p 0 -o {OUT}", 0, "'0'");
	expect_error("-p -5 -o {OUT}", 0, "-p");
	expect_error("-p 99999999999 -o {OUT}", 0, "'99999999999'");
	expect_error("-o {OUT}", 0, "-p PID");
}

static void test_bad_options(void **state)
{
	char args[96];

	(void)state;
	snprintf(args, sizeof(args), "-p %d -d abc -o {OUT}", (int)getpid());
	expect_error(args, 0, "-d");
	snprintf(args, sizeof(args), "-p %d -d -1 -o {OUT}", (int)getpid());
	expect_error(args, 0, "-d");
	snprintf(args, sizeof(args), "-p %d -b 3 -o {OUT}", (int)getpid());
	expect_error(args, 0, "-b");
	snprintf(args, sizeof(args), "-p %d -b 2G -o {OUT}", (int)getpid());
	expect_error(args, 0, "-b");
	/* Smaller than one batch of events (16 KiB) and what comes meanwhile. */
	snprintf(args, sizeof(args), "-p %d -b 4K -o {OUT}", (int)getpid());
	expect_error(args, 0, "-b");
	snprintf(args, sizeof(args), "-p %d -b 32K -o {OUT}", (int)getpid());
	expect_error(args, 0, "-b");
	snprintf(args, sizeof(args), "-p %d -o {OUT} extra", (int)getpid());
	expect_error(args, 0, "ctrace-bpf");
}

/*
 * Numbers that wrap or that strtod/strtoull read another way than a user
 * means: 18014398509481988K is 2^64 + 4 KiB (wrapped to 4 KiB), "-64K" is
 * 2^64 - 64 KiB to strtoull, 0x10 is 16 to strtod.
 */
static void test_numbers_read_as_written(void **state)
{
	static const char *const bad_sizes[] = {
		"18014398509481988K", "-64K", "-1", " 64K", "+64K", "0x10000", "64KK",
	};
	static const char *const bad_durations[] = {
		"0x10", "inf", "nan", "1e400", "-0", " 5", "5s",
	};
	char args[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		snprintf(args, sizeof(args), "-p %d -b %s -o {OUT}", (int)getpid(), bad_sizes[i]);
		/* strtok splits on spaces: pass the leading-space one as is */
		if (bad_sizes[i][0] == ' ')
			continue;
		expect_error(args, 2, "-b");
	}
	for (size_t i = 0; i < sizeof(bad_durations) / sizeof(bad_durations[0]); i++) {
		if (bad_durations[i][0] == ' ')
			continue;
		snprintf(args, sizeof(args), "-p %d -d %s -o {OUT}", (int)getpid(), bad_durations[i]);
		expect_error(args, 2, "-d");
	}
}

/* --max-memory is read like -b: digits and a suffix, from 32M to 1024G, nothing wraps. */
static void test_max_memory_read_as_written(void **state)
{
	static const char *const bad[] = {
		"0", "31M", "-64M", "0x10M", "18014398509481988K", "1025G", "64MM", "1T", "64M,",
	};
	char args[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-p %d --max-memory %s -o {OUT}", (int)getpid(), bad[i]);
		expect_error(args, 2, "--max-memory needs a size from 32M");
	}
}

/* --ring (the flight recorder) is read like --max-memory, from 64K to 1G, and writes files, not standard output. */
static void test_ring_read_as_written(void **state)
{
	static const char *const bad[] = {
		"0", "63K", "-1M", "0x10M", "18014398509481988K", "2G", "1T", "16MM", "1M,",
	};
	char args[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-p %d --ring %s -o {OUT}", (int)getpid(), bad[i]);
		expect_error(args, 2, "--ring needs a size from 64K to 1G");
	}
	snprintf(args, sizeof(args), "-p %d --ring 1M -o -", (int)getpid());
	expect_error(args, 2, "--ring writes a file per dump: give -o FILE.json");
	/* Its dumps are plain JSON files of their own: no gzip name, no --max-size or --max-files. */
	snprintf(args, sizeof(args), "-p %d --ring 1M -o /tmp/ctrace-cli-never-written.json.gz", (int)getpid());
	expect_error(args, 2, "--ring writes its dumps as plain JSON");
	snprintf(args, sizeof(args), "-p %d --ring 1M --max-size 1M -o {OUT}", (int)getpid());
	expect_error(args, 2, "--ring keeps its events in memory and writes a file per dump: it does not take --max-size");
	snprintf(args, sizeof(args), "-p %d --ring 1M --max-files 2 -o f-%%n.json", (int)getpid());
	expect_error(args, 2, "it does not take --max-size or --max-files");
}

/* A word that is not a command is not a program to run unless `--` or a path says so. */
static void test_unknown_words(void **state)
{
	char args[96];

	(void)state;
	expect_error("frobnicate", 2, "-- frobnicate");
	expect_error("frobnicate -o {OUT}", 2, "-- frobnicate");
	expect_error("-o {OUT} frobnicate", 2, "-- frobnicate");
	snprintf(args, sizeof(args), "--fast=1 -p %d -o {OUT}", (int)getpid());
	expect_error(args, 2, "--fast takes no value");
	snprintf(args, sizeof(args), "--verbose=yes -p %d -o {OUT}", (int)getpid());
	expect_error(args, 2, "--verbose takes no value");
	snprintf(args, sizeof(args), "--frob -p %d -o {OUT}", (int)getpid());
	expect_error(args, 2, "'--frob'");
	snprintf(args, sizeof(args), "--pid -o {OUT}");
	expect_error(args, 2, "ctrace-bpf");
}

/* --exe of a file that is no program says so, not "no probes". */
static void test_exe_not_elf(void **state)
{
	(void)state;
	tr_require_root();
	expect_error("--exe /etc/passwd -o {OUT}", 1, "not an ELF");
	expect_error("--exe /etc -o {OUT}", 1, "not an ELF");
	expect_error("--exe /nonexistent/prog -o {OUT}", 1, "No such file");
}

/*
 * Programs without probes: --exe of one (sleep), -p of a kernel thread,
 * which maps no file and never will. (-p of a process without probes
 * waits for them: test_cli's test_no_probes.)
 */
static void test_processes_without_probes(void **state)
{
	const char *const sleep_args[] = { "5", NULL };
	char args[4200], exe[4096], link[64];
	ssize_t n;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "/bin/sleep", sleep_args) < 0)
		fail_msg("%s", r.error);
	usleep(100 * 1000); /* exec'd */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)r.prog.pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(args, sizeof(args), "--exe %s -o {OUT}", exe);
	expect_error(args, 0, "include/ctrace.h");
	assert_non_null(strstr(c.err, "sleep"));
	expect_error("-p 2 -o {OUT}", 0, "no ctrace probes"); /* kthreadd */
}

/* Outputs it cannot write; the target is a real traced program. */
static void test_unwritable_outputs(void **state)
{
	const char *const prog_args[] = { "20", NULL };
	static const char *const outs[] = {
		"/proc/nonexistent/x.json", "/nonexistent-dir/x.json", "/sys/x.json", "/tmp",
	};
	char args[400];

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		snprintf(args, sizeof(args), "-p %d -o %s", (int)r.prog.pid, outs[i]);
		expect_error(args, 0, "-o");
		assert_non_null(strstr(c.err, outs[i]));
	}
	/* --ring: the first dump's file, opened before attaching */
	snprintf(args, sizeof(args), "-p %d --ring 1M -o /nonexistent-dir/x.json", (int)r.prog.pid);
	expect_error(args, 0, "-o");
	assert_non_null(strstr(c.err, "/nonexistent-dir/x-1.json"));
	/* refused before attaching: the target never saw a tracer */
	usleep(50 * 1000);
	{
		char *out = tr_read_file(r.prog.out_path, NULL);

		assert_null(strstr(out, "armed"));
		free(out);
	}
}

static void test_bad_fix_command_lines(void **state)
{
	char args[600], path[280];
	FILE *f;

	(void)state;
	expect_error("fix", 2, "fix FILE");
	expect_error("fix a b", 2, "--help");
	expect_error("fix /nonexistent/trace.json", 1, "No such file");
	expect_error("fix /etc/passwd", 1, "not a ctrace-bpf trace");
	snprintf(args, sizeof(args), "fix %s", r.dir);
	expect_error(args, 1, "-o OUT");
	snprintf(path, sizeof(path), "%s/empty.json", r.dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(args, sizeof(args), "fix %s -o {OUT}", path);
	expect_error(args, 1, "empty");
	snprintf(args, sizeof(args), "fix %s -o %s", path, path);
	expect_error(args, 1, "same file");
}

/* The "Cap...:" mask of /proc/PID/status ("self" for ourselves). */
static unsigned long long status_caps(const char *pid, const char *field)
{
	char path[64], *text, *at;
	unsigned long long mask = 0;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	text = tr_read_file(path, NULL);
	assert_non_null(text);
	at = strstr(text, field);
	assert_non_null(at);
	mask = strtoull(at + strlen(field) + 1, NULL, 16);
	free(text);
	return mask;
}

/*
 * Process 1 as the target: where the kernel refuses its memory map to a
 * root holding CAP_SYS_PTRACE, the message does not blame CAP_SYS_PTRACE
 * but names what sets the target apart: each capability it holds that we
 * lack. Where the map is readable, it is a process without probes (yet):
 * the tracer says it waits for them, and -d ends it.
 */
static void test_pid_1(void **state)
{
	unsigned long long extra;
	FILE *f;

	(void)state;
	tr_require_root();
	f = fopen("/proc/1/maps", "r");
	if (f) {
		char out[300];
		const char *argv[] = { tr_tracer(), "-p", "1", "-d", "0.2", "-o", out, NULL };

		fclose(f);
		if (!r.dir[0] && tr_init(&r) < 0)
			fail_msg("%s", r.error);
		snprintf(out, sizeof(out), "%s/out.json", r.dir);
		tr_cmd_free(&c);
		if (tr_cmd_run(&c, argv, 10000) < 0)
			fail_msg("cannot run %s", argv[0]);
		assert_int_equal(c.exit, 0);
		if (!strstr(c.err, "no ctrace probes yet"))
			fail_msg("-p 1: %s", c.err);
		return;
	}
	expect_error("-p 1 -o {OUT}", 1, "process 1");
	extra = status_caps("1", "CapPrm") & ~status_caps("self", "CapEff");
	if (!extra)
		return; /* another cause: the general rule is said */
	if (strstr(c.err, "or CAP_SYS_PTRACE"))
		fail_msg("blames CAP_SYS_PTRACE, which we hold: %s", c.err);
	if (!strstr(c.err, "capabilities ctrace-bpf lacks ("))
		fail_msg("process 1 holds capabilities we lack (%#llx); not said in: %s", extra, c.err);
	if ((extra & (1ull << 24)) && !strstr(c.err, "cap_sys_resource"))
		fail_msg("process 1 holds CAP_SYS_RESOURCE, which we lack; not named in: %s", c.err);
}

/* A target that has exited (a zombie: its pid is there, its memory is not) is said to have exited. */
static void test_target_exited(void **state)
{
	char args[64];
	pid_t child;

	(void)state;
	tr_require_root();
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	usleep(100 * 1000); /* a zombie until reaped below */
	snprintf(args, sizeof(args), "-p %d -o {OUT}", (int)child);
	expect_error(args, 1, "exited before it could be traced");
	waitpid(child, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_pids, free_all),
		cmocka_unit_test_teardown(test_bad_options, free_all),
		cmocka_unit_test_teardown(test_numbers_read_as_written, free_all),
		cmocka_unit_test_teardown(test_max_memory_read_as_written, free_all),
		cmocka_unit_test_teardown(test_ring_read_as_written, free_all),
		cmocka_unit_test_teardown(test_unknown_words, free_all),
		cmocka_unit_test_teardown(test_exe_not_elf, free_all),
		cmocka_unit_test_teardown(test_pid_1, free_all),
		cmocka_unit_test_teardown(test_target_exited, free_all),
		cmocka_unit_test_teardown(test_processes_without_probes, free_all),
		cmocka_unit_test_teardown(test_unwritable_outputs, free_all),
		cmocka_unit_test_teardown(test_bad_fix_command_lines, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
