/* SPDX-License-Identifier: MIT */
/*
 * test_launch.c - launch_start() holds a command at its entry point: the
 * libraries are mapped, main has not run (the test program creates a file
 * first thing in main: it must not exist while held), the instruction
 * pointer is at AT_ENTRY and the int3 is gone from there; then it runs as if
 * nothing had happened. For a PIE, a non-PIE, a static, a static-PIE
 * executable and a #! script. Exit codes and 128+signal, launch_abort, the
 * change of user under sudo (root only), and each error: command not found,
 * not executable, a directory, a missing library, an empty argv.
 *
 * In tests/unit because it links userspace/session/launch.o (unit tests get every
 * loader object). Runs from the repository root and needs cc (and libc.a for
 * the static programs, from libc6-dev).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "session/launch.h"

static char dir[64]; /* mkdtemp: programs and marker files */

/*
 * The target: creates argv[1] first thing in main, then per argv[2]: a
 * number to exit with, "sigN" to raise signal N, "pause" to wait for ever.
 * -lm with a libm call makes libm a DT_NEEDED library to look for.
 */
static const char prog_src[] =
	"#include <fcntl.h>\n"
	"#include <math.h>\n"
	"#include <signal.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <unistd.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	if (argc > 1) {\n"
	"		int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);\n"
	"		if (fd >= 0)\n"
	"			close(fd);\n"
	"	}\n"
	"	if (argc > 2 && !strcmp(argv[2], \"pause\"))\n"
	"		for (;;)\n"
	"			pause();\n"
	"	if (argc > 2 && !strncmp(argv[2], \"sig\", 3))\n"
	"		raise(atoi(argv[2] + 3));\n"
	"	return argc > 2 ? (int)sqrt(atof(argv[2]) * atof(argv[2])) : 0;\n"
	"}\n";

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
	char src[PATH_MAX];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctrace-launch-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755)) /* 0755: the sudo test runs as nobody */
		return -1;
	path_in_dir(src, sizeof(src), "prog.c");
	if (!(f = fopen(src, "w")) || fputs(prog_src, f) < 0 || fclose(f))
		return -1;
	if (run("cd '%s' && cc -O2 -Wl,--no-as-needed prog.c -o prog -lm && "
		"cc -O2 -no-pie prog.c -o prog_nopie -lm && "
		"cc -O2 -static prog.c -o prog_static -lm && "
		"cc -O2 -static-pie prog.c -o prog_static_pie -lm && "
		"printf '#!/bin/sh\\n: > \"$1\"\\nexit 4\\n' > script.sh && chmod 755 script.sh && "
		"cp prog not_executable && chmod 644 not_executable && "
		"printf '#!/nonexistent/interp\\n' > bad_interp.sh && chmod 755 bad_interp.sh && "
		"echo 'int gone(void) { return 7; }' | cc -O2 -shared -fPIC -x c - -o libgone.so && "
		"echo 'int gone(void); int main(void) { return gone(); }' | cc -O2 -x c - -o needs_gone -L. -lgone && "
		"rm libgone.so", dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (strncmp(dir, "/tmp/ctrace-launch-", 19) == 0)
		run("rm -rf '%s'", dir);
	return 0;
}

/* ---- helpers ---- */

static bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* True if /proc/PID/maps names a file whose name contains `what`. */
static bool maps_have(pid_t pid, const char *what)
{
	char fname[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/* The value of a "Key:\t..." line of /proc/PID/status (newline removed). */
static void status_field(pid_t pid, const char *key, char *buf, size_t len)
{
	char fname[64], line[512];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/status", (int)pid);
	f = fopen(fname, "r");
	assert_non_null(f);
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			const char *v = line + klen + 1;

			while (*v == '\t' || *v == ' ')
				v++;
			snprintf(buf, len, "%s", v);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

/* Waits (up to 10 s) for the child's end; its exit code. */
static int wait_exit(struct launch *l)
{
	int code = -1;

	for (int i = 0; i < 10000; i++) {
		struct timespec ms = { 0, 1000000 };

		if (launch_reap(l, &code))
			return code;
		nanosleep(&ms, NULL);
	}
	launch_abort(l);
	fail_msg("child %d did not exit within 10 s", (int)l->pid);
	return -1;
}

/* stderr of the calls between capture_begin and capture_end, into a file. */
static int saved_stderr = -1;
static char captured_path[PATH_MAX];

static void capture_begin(void)
{
	int fd;

	path_in_dir(captured_path, sizeof(captured_path), "stderr.txt");
	fd = open(captured_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* Ends the capture; what was written, in buf. */
static void capture_end(char *buf, size_t len)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(captured_path, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Exactly one line, containing `what`. */
static void assert_one_line_with(const char *text, const char *what)
{
	size_t n = strlen(text);

	if (n < 2 || text[n - 1] != '\n' || strchr(text, '\n') != text + n - 1 ||
	    !strstr(text, what))
		fail_msg("expected one line with '%s', got:\n%s", what, text);
}

/*
 * Launches dir/NAME MARKER [ARG]: checks it is held at its entry before
 * main (no marker yet, ptrace-stopped, rip == AT_ENTRY, no int3 left
 * there), and that `lib` (if any) is already mapped.
 */
static void launch_held(struct launch *l, const char *name, const char *arg,
			const char *lib, char *marker, size_t mlen)
{
	char prog[PATH_MAX], state[64];
	char *argv[] = { prog, marker, (char *)arg, NULL };
	struct user_regs_struct regs;
	long word;

	path_in_dir(prog, sizeof(prog), name);
	snprintf(marker, mlen, "%s/marker-%s", dir, name);
	unlink(marker);
	assert_int_equal(launch_start(l, argv), 0);
	assert_true(l->pid > 0);
	assert_true(l->held);
	assert_false(file_exists(marker)); /* main has not run */
	status_field(l->pid, "State", state, sizeof(state));
	assert_non_null(strstr(state, "tracing stop"));
	if (lib)
		assert_true(maps_have(l->pid, lib));
	/* This process is the tracer: it can look at the held child. */
	assert_int_equal(ptrace(PTRACE_GETREGS, l->pid, NULL, &regs), 0);
	assert_int_equal(regs.rip, l->entry);
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, l->pid, (void *)l->entry, NULL);
	assert_int_equal(errno, 0);
	assert_int_not_equal(word & 0xff, 0xcc);
}

/* Held, then let go: main runs (the marker appears) and it exits with 3. */
static void held_then_runs(const char *name, const char *lib)
{
	struct launch l;
	char marker[PATH_MAX];

	launch_held(&l, name, "3", lib, marker, sizeof(marker));
	assert_int_equal(launch_resume(&l), 0);
	assert_false(l.held);
	assert_int_equal(wait_exit(&l), 3);
	assert_true(file_exists(marker));
	assert_true(l.reaped);
}

/* ---- the tests ---- */

static void test_pie(void **state)
{
	(void)state;
	held_then_runs("prog", "libc.so");
}

static void test_needed_library_mapped(void **state)
{
	struct launch l;
	char marker[PATH_MAX];
	int code;

	(void)state;
	launch_held(&l, "prog", "0", "libm.so", marker, sizeof(marker));
	assert_false(launch_reap(&l, &code)); /* held: not exited */
	launch_abort(&l);
	assert_true(l.reaped);
	assert_false(file_exists(marker));
}

static void test_non_pie(void **state)
{
	(void)state;
	held_then_runs("prog_nopie", "libc.so");
}

/* No loader: the exec leaves it at its entry point already. */
static void test_static(void **state)
{
	(void)state;
	held_then_runs("prog_static", NULL);
}

static void test_static_pie(void **state)
{
	(void)state;
	held_then_runs("prog_static_pie", NULL);
}

/* A #! script is held at its interpreter's entry (the shell's libc mapped). */
static void test_script(void **state)
{
	struct launch l;
	char prog[PATH_MAX], marker[PATH_MAX];
	char *argv[] = { prog, marker, NULL };

	(void)state;
	path_in_dir(prog, sizeof(prog), "script.sh");
	path_in_dir(marker, sizeof(marker), "marker-script");
	unlink(marker);
	assert_int_equal(launch_start(&l, argv), 0);
	assert_false(file_exists(marker));
	assert_true(maps_have(l.pid, "libc.so"));
	assert_int_equal(launch_resume(&l), 0);
	assert_int_equal(wait_exit(&l), 4);
	assert_true(file_exists(marker));
}

/* argv[0] without a slash is searched in PATH. */
static void test_path_search(void **state)
{
	struct launch l;
	char *argv[] = { "sh", "-c", "exit 5", NULL };

	(void)state;
	assert_int_equal(launch_start(&l, argv), 0);
	assert_int_equal(launch_resume(&l), 0);
	assert_int_equal(wait_exit(&l), 5);
}

static void test_exit_codes(void **state)
{
	static const struct {
		const char *arg;
		int code;
	} cases[] = {
		{ "0", 0 }, { "42", 42 }, { "sig15", 128 + 15 }, { "sig9", 128 + 9 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct launch l;
		char marker[PATH_MAX];
		int code = -1;

		launch_held(&l, "prog", cases[i].arg, NULL, marker, sizeof(marker));
		assert_int_equal(launch_resume(&l), 0);
		assert_int_equal(wait_exit(&l), cases[i].code);
		/* Reaped once: asking again gives the same answer. */
		assert_true(launch_reap(&l, &code));
		assert_int_equal(code, cases[i].code);
	}
}

/* A running child is not reaped until it ends; launch_abort ends it. */
static void test_running_then_abort(void **state)
{
	struct launch l;
	char marker[PATH_MAX];
	int code = -1;

	(void)state;
	launch_held(&l, "prog", "pause", NULL, marker, sizeof(marker));
	assert_int_equal(launch_resume(&l), 0);
	for (int i = 0; i < 5000 && !file_exists(marker); i++)
		usleep(1000);
	assert_true(file_exists(marker));
	assert_false(launch_reap(&l, &code));
	launch_abort(&l);
	assert_true(launch_reap(&l, &code));
	assert_int_equal(code, 128 + 9);
	launch_abort(&l); /* twice: nothing happens */
}

/* Under sudo the child runs as the invoking user, with only their groups. */
static void test_sudo_user(void **state)
{
	struct launch l;
	char marker[PATH_MAX], uid[128], gid[128], groups[256];

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: the change of user needs root\n");
		skip();
	}
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	launch_held(&l, "prog", "0", "libc.so", marker, sizeof(marker));
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	status_field(l.pid, "Uid", uid, sizeof(uid));
	status_field(l.pid, "Gid", gid, sizeof(gid));
	status_field(l.pid, "Groups", groups, sizeof(groups));
	assert_string_equal(uid, "65534\t65534\t65534\t65534");
	assert_string_equal(gid, "65534\t65534\t65534\t65534");
	/* root's groups are gone: only nobody's own. */
	assert_string_not_equal(groups, "");
	for (char *g = strtok(groups, " "); g; g = strtok(NULL, " "))
		assert_string_equal(g, "65534");
	assert_int_equal(launch_resume(&l), 0);
	assert_int_equal(wait_exit(&l), 0);
}

static void test_sudo_bad_ids(void **state)
{
	struct launch l;
	char err[1024];
	char *argv[] = { "true", NULL };
	int rc;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: SUDO_UID is only read as root\n");
		skip();
	}
	setenv("SUDO_UID", "nobody", 1);
	setenv("SUDO_GID", "65534", 1);
	capture_begin();
	rc = launch_start(&l, argv);
	capture_end(err, sizeof(err));
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(l.pid, 0);
	assert_one_line_with(err, "SUDO_UID");
}

/* Each error: its -errno, one line on stderr, and no child left. */
static void expect_error(char *const argv[], int want, const char *what)
{
	struct launch l;
	char err[1024];
	int rc;

	capture_begin();
	rc = launch_start(&l, argv);
	capture_end(err, sizeof(err));
	assert_int_equal(rc, want);
	assert_int_equal(l.pid, 0);
	assert_false(l.held);
	assert_one_line_with(err, what);
	/* Nothing left to reap: the child (if any) was reaped already. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_command_not_found(void **state)
{
	char *argv[] = { "ctrace-no-such-command-x7", "arg", NULL };

	(void)state;
	expect_error(argv, -ENOENT, "ctrace-no-such-command-x7: command not found");
}

static void test_no_such_file(void **state)
{
	char path[PATH_MAX];
	char *argv[] = { path, NULL };

	(void)state;
	path_in_dir(path, sizeof(path), "no-such-program");
	expect_error(argv, -ENOENT, "no such file");
	path_in_dir(path, sizeof(path), "bad_interp.sh");
	expect_error(argv, -ENOENT, "its interpreter (#! line or ELF loader) does not exist");
}

static void test_not_executable(void **state)
{
	char path[PATH_MAX];
	char *argv[] = { path, NULL };

	(void)state;
	path_in_dir(path, sizeof(path), "not_executable");
	expect_error(argv, -EACCES, "permission denied");
	argv[0] = dir; /* a directory */
	expect_error(argv, -EACCES, "permission denied");
}

/* The loader fails before the entry point: -ECHILD, and its exit code kept. */
static void test_missing_library(void **state)
{
	struct launch l;
	char path[PATH_MAX], err[2048];
	char *argv[] = { path, NULL };
	int rc, code = -1;

	(void)state;
	path_in_dir(path, sizeof(path), "needs_gone");
	capture_begin();
	rc = launch_start(&l, argv);
	capture_end(err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	assert_int_equal(l.pid, 0);
	assert_non_null(strstr(err, "libgone.so")); /* the loader's own message */
	assert_non_null(strstr(err, "ctrace-bpf: "));
	assert_non_null(strstr(err, "exited with code 127 before its program started"));
	assert_true(launch_reap(&l, &code));
	assert_int_equal(code, 127);
}

static void test_empty_argv(void **state)
{
	char *argv[] = { NULL };
	char *empty[] = { "", NULL };

	(void)state;
	expect_error(argv, -EINVAL, "no command");
	expect_error(empty, -EINVAL, "no command");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_needed_library_mapped),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_static_pie),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_path_search),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_running_then_abort),
		cmocka_unit_test(test_sudo_user),
		cmocka_unit_test(test_sudo_bad_ids),
		cmocka_unit_test(test_command_not_found),
		cmocka_unit_test(test_no_such_file),
		cmocka_unit_test(test_not_executable),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_empty_argv),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
