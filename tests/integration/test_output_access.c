// SPDX-License-Identifier: MIT
/*
 * test_output_access - a trace holds what the target sent (its arguments,
 * its command line, its directory): every file the tracer writes is the
 * tracing user's alone. Each kind of output (JSON, gzip, .pftrace and the
 * JSON kept beside it, .otlp.json, the numbered files of --max-size, the
 * dumps of --ring, a file written over) is created 0600, or with the mode
 * --mode gives, whatever the umask; run via sudo (SUDO_UID/SUDO_GID set while
 * root), each belongs to the user who ran sudo. A bad --mode is one line
 * and exit 2; $CTRACE_PFTRACE_JSON is refused through a symbolic link, as
 * -o is.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

#define NOBODY 65534

static struct trace_run r;
static struct tr_cmd c;

static int free_all(void **state)
{
	(void)state;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("CTRACE_PFTRACE_JSON");
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

/* The owner a file must have: the sudo user's when SUDO_UID is set, else ours. */
static void assert_private(const char *path, mode_t mode)
{
	const char *sudo_uid = getenv("SUDO_UID");
	uid_t uid = sudo_uid ? (uid_t)atoi(sudo_uid) : geteuid();
	gid_t gid = sudo_uid ? (gid_t)atoi(getenv("SUDO_GID")) : getegid();
	struct stat st;

	if (lstat(path, &st) != 0)
		fail_msg("no file %s: %s", path, strerror(errno));
	if ((st.st_mode & 07777) != mode)
		fail_msg("%s has mode %04o, not %04o", path, (unsigned)(st.st_mode & 07777), (unsigned)mode);
	if (st.st_uid != uid || st.st_gid != gid)
		fail_msg("%s belongs to %u:%u, not %u:%u", path, (unsigned)st.st_uid, (unsigned)st.st_gid,
			 (unsigned)uid, (unsigned)gid);
}

static int wait_stderr(const struct trace_run *run, const char *s, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		char *err = tr_read_file(run->tracer.err_path, NULL);
		bool found = err && strstr(err, s);

		free(err);
		if (found)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* What trace_into does besides tracing. */
enum {
	SEND_SIGUSR1 = 1, /* once "armed": a --ring dump */
	KEEP_JSON = 2,    /* $CTRACE_PFTRACE_JSON=DIR/kept.json */
	EXISTING = 4,     /* NAME is there already, 0644, the tracing user's */
};

/* `program prog_arg` traced into DIR/NAME with tracer args `more`: the tracer exits 0. */
static void trace_into(const char *program, const char *prog_arg, const char *name,
		       const char *const *more, int how)
{
	const char *const prog_args[] = { prog_arg, NULL };
	const char *args[16] = { "-o", NULL };
	char kept[400];
	size_t n = 2;

	tr_require_root();
	tr_free(&r);
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/%s", r.dir, name);
	args[1] = r.trace_path;
	for (; more && *more && n < 15; more++)
		args[n++] = *more;
	if (how & KEEP_JSON) {
		snprintf(kept, sizeof(kept), "%s/kept.json", r.dir);
		setenv("CTRACE_PFTRACE_JSON", kept, 1);
	}
	if (how & EXISTING) {
		int fd = open(r.trace_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(chmod(r.trace_path, 0644), 0);
		if (getenv("SUDO_UID"))
			assert_int_equal(chown(r.trace_path, NOBODY, NOBODY), 0);
	}
	if (tr_start_program(&r, program, prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, args) < 0)
		fail_msg("%s", r.error);
	unsetenv("CTRACE_PFTRACE_JSON");
	if (how & SEND_SIGUSR1) {
		if (tr_wait_line(&r, "armed", 10000) < 0)
			fail_msg("%s", r.error);
		assert_int_equal(kill(r.tracer.pid, SIGUSR1), 0);
		if (wait_stderr(&r, "(SIGUSR1)", 10000) < 0)
			fail_msg("no dump said after SIGUSR1");
	}
	/* The program may go on (ticker): tr_free ends it. */
	if (tr_wait_tracer(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("tracer exited %d: %s", r.tracer_exit, r.tracer_stderr);
}

/* DIR/NAME of the last run. */
static const char *in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", r.dir, name);
	return buf;
}

/* Every kind of output the tracer writes, each checked with assert_private(mode). */
static void every_output(const char *mode_arg, mode_t mode)
{
	const char *d[] = { "-d", "0.3", mode_arg ? "--mode" : NULL, mode_arg, NULL };
	const char *rotate[] = { "--max-size", "1M", mode_arg ? "--mode" : NULL, mode_arg, NULL };
	const char *ring[] = { "--ring", "64K", "-d", "1", mode_arg ? "--mode" : NULL, mode_arg, NULL };
	static const char *const plain[] = { "trace.json", "trace.json.gz", "trace.otlp.json" };
	char path[400];

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		trace_into("ticker", "20", plain[i], d, 0);
		assert_private(r.trace_path, mode);
	}
	/* .pftrace, and the JSON $CTRACE_PFTRACE_JSON keeps beside it */
	trace_into("ticker", "20", "trace.pftrace", d, KEEP_JSON);
	assert_private(r.trace_path, mode);
	assert_private(in_dir(path, sizeof(path), "kept.json"), mode);
	/* --max-size with %n: every numbered file */
	trace_into("numbered", "15000", "t-%n.json", rotate, 0);
	for (int k = 1; k <= 2; k++) {
		snprintf(path, sizeof(path), "%s/t-%d.json", r.dir, k);
		assert_private(path, mode);
	}
	/* --ring: the dump on SIGUSR1 and the one at the end */
	trace_into("ticker", "20", "fr.json", ring, SEND_SIGUSR1);
	for (int k = 1; k <= 2; k++) {
		snprintf(path, sizeof(path), "%s/fr-%d.json", r.dir, k);
		assert_private(path, mode);
	}
	/* a file of ours written over: made private too, not left as it was */
	trace_into("ticker", "20", "old.json", d, EXISTING);
	assert_private(r.trace_path, mode);
}

/* Under a umask that lets everyone read: still 0600. */
static void test_every_output_is_private(void **state)
{
	(void)state;
	umask(022);
	every_output(NULL, 0600);
}

/* --mode 0640 gives 0640, even under a umask that would take the group's read away. */
static void test_mode_option(void **state)
{
	(void)state;
	umask(077);
	every_output("0640", 0640);
	umask(022);
}

/* Via sudo: each file is the sudo user's, still 0600. */
static void test_every_output_is_the_sudo_users(void **state)
{
	(void)state;
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	umask(022);
	every_output(NULL, 0600);
}

/*
 * $CTRACE_PFTRACE_JSON names a symbolic link planted there: refused as -o
 * is, the file it points to untouched.
 */
static void test_kept_json_not_through_a_link(void **state)
{
	char pid[24], out[400], kept[400], victim[400];
	const char *const args[] = { "-p", pid, "-o", out, "-d", "0.3", NULL };
	char *text;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", (const char *const[]){ "20", NULL }) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	in_dir(out, sizeof(out), "t.pftrace");
	in_dir(kept, sizeof(kept), "kept.json");
	in_dir(victim, sizeof(victim), "victim");
	{
		FILE *f = fopen(victim, "w");

		assert_non_null(f);
		fputs("precious\n", f);
		fclose(f);
	}
	assert_int_equal(symlink(victim, kept), 0);
	setenv("CTRACE_PFTRACE_JSON", kept, 1);
	cli_run_tracer(&c, NULL, NULL, args, 20000);
	unsetenv("CTRACE_PFTRACE_JSON");
	if (c.exit == 0)
		fail_msg("CTRACE_PFTRACE_JSON through a symbolic link was written: %s", c.err);
	cli_assert_one_line(c.err, "symbolic link");
	text = tr_read_file(victim, NULL);
	assert_non_null(text);
	assert_string_equal(text, "precious\n");
	free(text);
}

/* A bad --mode: one line saying what --mode takes, exit 2, before anything is traced. */
static void test_bad_mode(void **state)
{
	static const char *const bad[] = { "0755", "0700", "0641", "abc", "0999", "8", "", "01600",
					   "04600", "0x180", "-600", "0600 ", "0o600" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const args[] = { "-p", "1", "--mode", bad[i], NULL };

		cli_run_tracer(&c, NULL, NULL, args, 10000);
		if (c.exit != 2)
			fail_msg("--mode '%s': exit %d, not 2: %s", bad[i], c.exit, c.err);
		cli_assert_one_line(c.err, "--mode takes");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_mode, free_all),
		cmocka_unit_test_teardown(test_every_output_is_private, free_all),
		cmocka_unit_test_teardown(test_mode_option, free_all),
		cmocka_unit_test_teardown(test_every_output_is_the_sudo_users, free_all),
		cmocka_unit_test_teardown(test_kept_json_not_through_a_link, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
