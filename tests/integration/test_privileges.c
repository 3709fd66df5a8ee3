// SPDX-License-Identifier: MIT
/*
 * test_privileges - the tracer runs as root and writes a file where it is
 * told: without its capabilities it says which it needs; with exactly them
 * (not root) it works; it never writes through a symbolic link, over a file
 * of another user or through a hard link; run via sudo (SUDO_UID/SUDO_GID
 * set while root), the file it makes belongs to the user who ran sudo. The
 * same for `ctrace-bpf fix`, which rewrites files in place. An output that
 * is not a plain file (a FIFO, a device, a file of /proc) is refused before
 * the target is touched; two tracers never write one file; in launch mode
 * with `-o -`, the command's own output does not go into the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "target_check.h"
#include "trace_run.h"

#define NOBODY 65534
#define PRECIOUS "precious data\n"

static struct trace_run r;
static struct tr_cmd c;

static int free_all(void **state)
{
	(void)state;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

/* A ticker to trace; r.dir is the test's directory. */
static void start_ticker(void)
{
	const char *const args[] = { "20", NULL };

	tr_require_root();
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	/* a user without privileges must reach files in it */
	chmod(r.dir, 0777);
}

/* Runs `[wrapper...] ctrace-bpf -p TICKER -o out -d 0.3 [more]` to completion. */
static void run_tracer(const char *const *wrapper, const char *out, const char *more)
{
	char pid[24];
	const char *const args[] = { "-p", pid, "-o", out, "-d", "0.3", more, NULL };

	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	cli_run_tracer(&c, wrapper, NULL, args, 20000);
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", r.dir, name);
}

static void write_file(const char *path, const char *text, uid_t uid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchown(fd, uid, uid), 0);
	close(fd);
}

static void assert_file_is(const char *path, const char *text)
{
	char *got = tr_read_file(path, NULL);

	if (!got || strcmp(got, text))
		fail_msg("%s was changed: now \"%.60s\"", path, got ? got : "(gone)");
	free(got);
}

static void assert_refused(const char *why)
{
	assert_int_not_equal(c.exit, 0);
	cli_assert_one_line(c.err, NULL);
	if (!strstr(c.err, why))
		fail_msg("expected \"%s\" in: %s", why, c.err);
	if (c.seconds > 1.0)
		fail_msg("took %.2f s to refuse", c.seconds);
}

/* Under setpriv, the tracer on a new ticker, into t.json of the test's directory (out). */
static void run_setpriv_ticker(const char *const *setpriv, char *out, size_t out_len)
{
	tr_require_command("setpriv");
	start_ticker();
	path_in(out, out_len, "t.json");
	run_tracer(setpriv, out, NULL);
}

/* No capabilities at all (root's bounding set emptied): says what it needs. */
static void test_no_capabilities(void **state)
{
	const char *const setpriv[] = { "setpriv", "--inh-caps=-all", "--bounding-set=-all", NULL };
	char out[400];

	(void)state;
	run_setpriv_ticker(setpriv, out, sizeof(out));
	assert_refused("CAP_BPF");
	assert_non_null(strstr(c.err, "CAP_PERFMON"));
	assert_non_null(strstr(c.err, "root"));
	assert_int_not_equal(access(out, F_OK), 0); /* no file left behind */
}

/* A user with CAP_BPF and CAP_PERFMON only: told the one that is missing. */
static void test_missing_one_capability(void **state)
{
	const char *const setpriv[] = {
		"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon", NULL,
	};
	char out[400];

	(void)state;
	run_setpriv_ticker(setpriv, out, sizeof(out));
	assert_refused("CAP_SYS_PTRACE");
	assert_null(strstr(c.err, "CAP_BPF ("));
}

/* Not root, exactly the three capabilities the README names: it traces. */
static void test_capabilities_suffice(void **state)
{
	const char *const setpriv[] = {
		"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"--inh-caps=+bpf,+perfmon,+sys_ptrace",
		"--ambient-caps=+bpf,+perfmon,+sys_ptrace", NULL,
	};
	struct stat st;

	(void)state;
	tr_require_command("setpriv");
	start_ticker();
	run_tracer(setpriv, r.trace_path, NULL);
	if (getenv("CTRACE_NO_MULTI") && *getenv("CTRACE_NO_MULTI") && strcmp(getenv("CTRACE_NO_MULTI"), "0")) {
		/* Perf uprobes (kernels before 6.6): the uprobe PMU wants CAP_SYS_ADMIN too, said so. */
		assert_int_equal(c.exit, 1);
		if (!strstr(c.err, "perf uprobes need CAP_SYS_ADMIN too") || !cli_one_line(c.err))
			fail_msg("perf uprobes without CAP_SYS_ADMIN: not the one line expected: %s", c.err);
		return;
	}
	if (c.exit != 0)
		fail_msg("with cap_bpf,cap_perfmon,cap_sys_ptrace: exit %d: %s", c.exit, c.err);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_non_null(tr_find(&r, "I", "tick"));
	assert_int_equal(stat(r.trace_path, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
}

/* A symbolic link at the output's name: refused, its target untouched. */
static void test_no_write_through_symlink(void **state)
{
	char victim[400], link[400], dangling[400], absent[400];

	(void)state;
	start_ticker();
	path_in(victim, sizeof(victim), "victim");
	path_in(link, sizeof(link), "link.json");
	write_file(victim, PRECIOUS, 0);
	assert_int_equal(symlink(victim, link), 0);
	run_tracer(NULL, link, NULL);
	assert_refused("symbolic link");
	assert_file_is(victim, PRECIOUS);
	/* a link to a file that does not exist yet: not created through it */
	path_in(dangling, sizeof(dangling), "dangling.json");
	path_in(absent, sizeof(absent), "absent");
	assert_int_equal(symlink(absent, dangling), 0);
	run_tracer(NULL, dangling, NULL);
	assert_refused("symbolic link");
	assert_int_not_equal(access(absent, F_OK), 0);
}

/* A file of another user (root is not asked to trample it), and hard links. */
static void test_no_write_over_others_file(void **state)
{
	char theirs[400], hard[400], target[400];

	(void)state;
	start_ticker();
	path_in(theirs, sizeof(theirs), "theirs.json");
	write_file(theirs, PRECIOUS, NOBODY);
	run_tracer(NULL, theirs, NULL);
	assert_refused("another user");
	assert_file_is(theirs, PRECIOUS);
	/* a hard link to a file elsewhere: writing would change that file */
	path_in(target, sizeof(target), "elsewhere");
	path_in(hard, sizeof(hard), "hard.json");
	write_file(target, PRECIOUS, 0);
	assert_int_equal(link(target, hard), 0);
	run_tracer(NULL, hard, NULL);
	assert_refused("hard link");
	assert_file_is(target, PRECIOUS);
}

/* Via sudo: the new file is the invoking user's, and so may be an old one. */
static void test_sudo_user_owns_output(void **state)
{
	char own[400];
	struct stat st;

	(void)state;
	start_ticker();
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	run_tracer(NULL, r.trace_path, NULL);
	if (c.exit != 0)
		fail_msg("exit %d: %s", c.exit, c.err);
	assert_int_equal(stat(r.trace_path, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_gid, NOBODY);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	/* an existing file of that user is theirs to overwrite */
	path_in(own, sizeof(own), "own.json");
	write_file(own, PRECIOUS, NOBODY);
	run_tracer(NULL, own, NULL);
	if (c.exit != 0)
		fail_msg("overwriting the sudo user's own file: exit %d: %s", c.exit, c.err);
	assert_int_equal(stat(own, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_true(st.st_size > (off_t)strlen(PRECIOUS));
}

/* A cut trace: the first half of a real one, owned by uid. */
static void make_cut_trace(const char *path, uid_t uid)
{
	char *text;
	size_t len;

	run_tracer(NULL, r.trace_path, NULL);
	if (c.exit != 0)
		fail_msg("exit %d: %s", c.exit, c.err);
	text = tr_read_file(r.trace_path, &len);
	assert_non_null(text);
	text[len / 2] = '\0';
	write_file(path, text, uid);
	free(text);
}

/*
 * fix rewrites in place as root: the file keeps its owner; it does not
 * rewrite a file of another user (unless that is the sudo user), nor a
 * symbolic link.
 */
static void test_fix_in_place_rules(void **state)
{
	char cut[280], link[280], out[280];
	const char *in_place[] = { cut, NULL };
	const char *via_link[] = { link, NULL };
	const char *elsewhere[] = { cut, "-o", out, NULL };
	struct stat st;

	(void)state;
	start_ticker();
	path_in(cut, sizeof(cut), "cut.json");
	path_in(link, sizeof(link), "cut-link.json");
	path_in(out, sizeof(out), "fixed.json");
	make_cut_trace(cut, NOBODY);

	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, in_place), 0);
	assert_refused("another user");
	assert_int_equal(symlink(cut, link), 0);
	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, via_link), 0);
	assert_refused("symbolic link");
	/* -o: reading another user's file is fine; the new file is root's */
	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, elsewhere), 0);
	if (c.exit != 0)
		fail_msg("fix -o: exit %d: %s", c.exit, c.err);
	/* via sudo by that user: repaired in place, still theirs */
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	tr_cmd_free(&c);
	assert_int_equal(tc_run_fix(&c, in_place), 0);
	if (c.exit != 0)
		fail_msg("fix via sudo: exit %d: %s", c.exit, c.err);
	assert_int_equal(stat(cut, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_mode & 0777, 0644);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s", cut);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(tr_meta(&r),
						     "truncated")));
}

/* Via sudo, a file the sudo user could not write (root's, mode 0600) is not theirs to overwrite. */
static void test_sudo_user_cannot_overwrite_roots_file(void **state)
{
	char roots[400];

	(void)state;
	start_ticker();
	path_in(roots, sizeof(roots), "roots.json");
	write_file(roots, PRECIOUS, 0);
	assert_int_equal(chmod(roots, 0600), 0);
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	run_tracer(NULL, roots, NULL);
	assert_refused("another user");
	assert_file_is(roots, PRECIOUS);
}

/* The target has not been armed: its output has no "armed" line. */
static void assert_target_untouched(void)
{
	char *out;

	usleep(50 * 1000);
	out = tr_read_file(r.prog.out_path, NULL);
	if (out && strstr(out, "armed"))
		fail_msg("the target was armed before the output was refused:\n%s", out);
	free(out);
}

/*
 * Outputs that are not plain files: a FIFO (open() would block until a
 * reader comes), a device that fails every write, the memory of a process.
 * All refused at once, before attaching.
 */
static void test_output_not_a_plain_file(void **state)
{
	char fifo[400];
	const char *outs[] = { fifo, "/dev/full", "/proc/self/mem", "/dev/zero", "/sys/kernel/notes" };

	(void)state;
	start_ticker();
	path_in(fifo, sizeof(fifo), "fifo.json");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		run_tracer(NULL, outs[i], NULL);
		assert_refused(outs[i]);
		if (!strstr(c.err, "not a plain file"))
			fail_msg("%s: expected \"not a plain file\" in: %s", outs[i], c.err);
	}
	assert_target_untouched();
}

/* Two tracers told to write one file: the second is refused; the first's file is whole. */
static void test_one_writer_per_file(void **state)
{
	const char *argv[8];
	char pid[24];

	(void)state;
	start_ticker();
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	{
		const char *const first[] = { "-p", pid, "-o", r.trace_path, NULL };

		if (tr_start_tracer(&r, first) < 0 || tr_wait_line(&r, "armed", 10000) < 0)
			fail_msg("%s", r.error);
	}
	argv[0] = tr_tracer();
	argv[1] = "-p";
	argv[2] = pid;
	argv[3] = "-o";
	argv[4] = r.trace_path;
	argv[5] = "-d";
	argv[6] = "0.3";
	argv[7] = NULL;
	tr_cmd_free(&c);
	if (tr_cmd_run(&c, argv, 20000) < 0)
		fail_msg("cannot run %s", argv[0]);
	assert_refused("another ctrace-bpf");
	kill(r.tracer.pid, SIGINT);
	if (tr_wait_tracer(&r, 20000) < 0 || r.tracer_exit != 0)
		fail_msg("the first tracer: exit %d: %s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("the first tracer's file: %s", r.error);
	if (!tr_find(&r, "I", "tick"))
		fail_msg("the first tracer's file has no tick");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_no_capabilities, free_all),
		cmocka_unit_test_teardown(test_missing_one_capability, free_all),
		cmocka_unit_test_teardown(test_capabilities_suffice, free_all),
		cmocka_unit_test_teardown(test_no_write_through_symlink, free_all),
		cmocka_unit_test_teardown(test_no_write_over_others_file, free_all),
		cmocka_unit_test_teardown(test_sudo_user_owns_output, free_all),
		cmocka_unit_test_teardown(test_fix_in_place_rules, free_all),
		cmocka_unit_test_teardown(test_sudo_user_cannot_overwrite_roots_file, free_all),
		cmocka_unit_test_teardown(test_output_not_a_plain_file, free_all),
		cmocka_unit_test_teardown(test_one_writer_per_file, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
