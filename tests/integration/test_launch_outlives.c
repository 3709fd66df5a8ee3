// SPDX-License-Identifier: MIT
/*
 * test_launch_outlives - in launch mode the tracer's failure never ends the
 * user's command: when the output fails (`-o - | head -c 100`, a full
 * disk) tracing stops (the probes detached, one line saying what failed),
 * the command runs to its own end, and the tracer then exits with the
 * command's status if it is not 0, else 1. The command is
 * tests/programs/outlives.c, which goes on for 1 s after it sees the
 * probes disarmed and writes a marker at its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static struct trace_run r;
static struct tr_cmd c;
static char full_dir[64];

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	if (full_dir[0]) {
		umount2(full_dir, MNT_DETACH);
		rmdir(full_dir);
		full_dir[0] = '\0';
	}
	return 0;
}

static void assert_marker(const char *marker)
{
	char *said = tr_read_file(marker, NULL);

	if (!said)
		fail_msg("the command left no marker %s: it did not run to its end", marker);
	if (strcmp(said, "disarmed\n"))
		fail_msg("the command's marker says \"%s\", not that tracing stopped", said);
	free(said);
}

/* The one line saying what failed, and that the command goes on. */
static void assert_said(const char *err, const char *what)
{
	if (!strstr(err, what))
		fail_msg("the tracer did not say \"%s\":\n%s", what, err);
	if (!strstr(err, "untraced"))
		fail_msg("the tracer did not say the command goes on untraced:\n%s", err);
	if (strstr(err, "Killed") || strstr(err, "killed"))
		fail_msg("the tracer speaks of a kill:\n%s", err);
}

/*
 * `ctrace-bpf -o - -- outlives MARKER 3 | head -c 100`: the reader takes
 * 100 bytes and goes; the command goes on to its end, and the tracer exits
 * with its status, 3.
 */
static void test_closed_pipe_leaves_the_command_running(void **state)
{
	char marker[320], program[300], err_path[320], buf[100];
	int out[2], status = 0, err_fd;
	size_t got = 0;
	pid_t tracer;
	char *err;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(marker, sizeof(marker), "%s/marker", r.dir);
	snprintf(err_path, sizeof(err_path), "%s/tracer.err", r.dir);
	tr_program_path("outlives", program, sizeof(program));
	assert_int_equal(pipe(out), 0);
	err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(err_fd >= 0);
	tracer = fork();
	assert_true(tracer >= 0);
	if (tracer == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err_fd, STDERR_FILENO);
		close(out[0]);
		execl(tr_tracer(), tr_tracer(), "-o", "-", "--", program, marker, "3", (char *)NULL);
		_exit(126);
	}
	close(out[1]);
	close(err_fd);
	/* head -c 100 */
	while (got < sizeof(buf)) {
		ssize_t n = read(out[0], buf + got, sizeof(buf) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(out[0]);
	for (int waited = 0; waitpid(tracer, &status, WNOHANG) == 0; waited += 10) {
		if (waited >= TR_TIMEOUT_MS) {
			kill(tracer, SIGKILL);
			waitpid(tracer, &status, 0);
			fail_msg("the tracer did not exit within %d ms", TR_TIMEOUT_MS);
		}
		usleep(10000);
	}
	err = tr_read_file(err_path, NULL);
	assert_non_null(err);
	assert_int_equal(got, sizeof(buf));
	assert_marker(marker);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 3)
		fail_msg("the tracer's status is %#x, not exit 3 (the command's): %s", status, err);
	assert_said(err, "Broken pipe");
	free(err);
}

/* A disk that fills up: a 256 KiB tmpfs in a mount namespace of this test's own (as test_faults). */
static void make_full_disk(void)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail_msg("cannot make a mount namespace: %s", strerror(errno));
	snprintf(full_dir, sizeof(full_dir), "/tmp/ctrace-full-XXXXXX");
	if (!mkdtemp(full_dir)) {
		full_dir[0] = '\0';
		fail_msg("mkdtemp: %s", strerror(errno));
	}
	if (mount("tmpfs", full_dir, "tmpfs", 0, "size=256k") != 0)
		fail_msg("cannot mount a small tmpfs: %s", strerror(errno));
}

/*
 * The disk fills: the command (exit 0) runs to its end, the tracer exits 1
 * after it, and the file it wrote is repaired by fix as any cut trace.
 */
static void test_full_disk_leaves_the_command_running(void **state)
{
	char marker[320], program[300], out[128];
	const char *argv[] = { "-o", out, "--", program, marker, NULL };

	(void)state;
	tr_require_root();
	make_full_disk();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(out, sizeof(out), "%s/trace.json", full_dir);
	snprintf(marker, sizeof(marker), "%s/marker", r.dir);
	tr_program_path("outlives", program, sizeof(program));
	if (tr_run_tracer(&c, NULL, NULL, argv, TR_TIMEOUT_MS) < 0)
		fail_msg("cannot run the tracer");
	assert_marker(marker);
	if (c.exit != 1)
		fail_msg("the tracer exited %d, not 1 (the command exited 0): %s", c.exit, c.err);
	assert_said(c.err, "No space left on device");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_closed_pipe_leaves_the_command_running, free_all),
		cmocka_unit_test_teardown(test_full_disk_leaves_the_command_running, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
