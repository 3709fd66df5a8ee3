// SPDX-License-Identifier: MIT
/*
 * test_container - a process in a container: its own mount and PID
 * namespaces (unshare --mount --pid --fork --mount-proc), its program copied
 * into a tmpfs mounted only inside the namespace, so that the path it runs
 * from does not exist on the host. The tracer is given its host pid and
 * must find its objects through /proc/PID/root; the trace has the host's
 * pids and tids, and context.target.pid_in_namespace says the pid the
 * process knows itself by. With --stacks, its frames are symbolized from
 * its objects and the container's own separate debug files.
 */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

static struct trace_run r;
static char nsdir[300]; /* the mount point, inside r.dir */

static int free_all(void **state)
{
	(void)state;
	/* unshare first: with --kill-child its death ends the namespace */
	if (r.prog.pid && !r.prog.reaped) {
		kill(r.prog.pid, SIGKILL);
		tr_reap(&r.prog, 5000);
	}
	/* empty on the host (the tmpfs was the namespace's); before tr_free
	 * removes the files of r.dir and then r.dir itself */
	if (nsdir[0])
		rmdir(nsdir);
	nsdir[0] = '\0';
	tr_free(&r);
	return 0;
}

/* The pid of the only child of `pid` (the namespace's init), 0 if none yet. */
static long only_child(long pid)
{
	char path[64], *text;
	long child = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, pid);
	text = tr_read_file(path, NULL);
	if (text)
		child = strtol(text, NULL, 10);
	free(text);
	return child;
}

/* The NSpid line of /proc/PID/task/TID/status: host id and innermost id. */
static bool ns_ids(long pid, long tid, long *host, long *inner)
{
	char path[80], *text, *line;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/status", pid, tid);
	text = tr_read_file(path, NULL);
	line = text ? strstr(text, "\nNSpid:") : NULL;
	if (line) {
		char *p = line + 7, *end;

		*host = strtol(p, &end, 10);
		*inner = *host;
		while (end != p) {
			p = end;
			long v = strtol(p, &end, 10);

			if (end != p)
				*inner = v;
		}
		ok = true;
	}
	free(text);
	return ok;
}

/*
 * Starts test program `name` ARGS in new mount and PID namespaces, from a
 * tmpfs mounted at nsdir inside them only; waits for its "ready". Returns
 * its host pid (r.pid is what it printed: its pid in the namespace).
 */
/*
 * split: the copy's DWARF goes into a separate file found by its build-id
 * under the container's own /usr/lib/debug (a tmpfs mounted there inside
 * the namespace only), the copy keeping its symbols only: as a container
 * with a -dbgsym package installed has it.
 */
static long start_in_container_split(const char *name, const char *const *args, bool split)
{
	/* $1 mount point, $2 program, the rest its arguments */
	static const char script[] =
		"mount -t tmpfs ctrace-test \"$1\" && cp \"$2\" \"$1/\" && "
		"p=\"$1/$(basename \"$2\")\" && shift 2 && exec \"$p\" \"$@\"";
	static const char split_script[] =
		"mount -t tmpfs ctrace-test \"$1\" && cp \"$2\" \"$1/\" && "
		"p=\"$1/$(basename \"$2\")\" && shift 2 && "
		"id=$(readelf -n \"$p\" | sed -n 's/.*Build ID: //p') && [ -n \"$id\" ] && "
		"objcopy --only-keep-debug \"$p\" \"$p.debug\" && objcopy --strip-debug \"$p\" && "
		"mkdir -p /usr/lib/debug && mount -t tmpfs ctrace-debug /usr/lib/debug && "
		"d=/usr/lib/debug/.build-id/$(echo \"$id\" | cut -c1-2) && mkdir -p \"$d\" && "
		"mv \"$p.debug\" \"$d/$(echo \"$id\" | cut -c3-).debug\" && exec \"$p\" \"$@\"";
	const char *argv[20];
	char prog[300];
	size_t n = 0;
	long host = 0;
	struct stat st;

	tr_require_root();
	tr_require_command("unshare");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_path(nsdir, sizeof(nsdir), r.dir, "ns");
	if (mkdir(nsdir, 0755) < 0)
		fail_msg("mkdir %s: %s", nsdir, strerror(errno));
	tr_program_abspath(name, prog, sizeof(prog));
	argv[n++] = "unshare";
	argv[n++] = "--mount";
	argv[n++] = "--pid";
	argv[n++] = "--fork";
	argv[n++] = "--mount-proc";
	/* if unshare is killed (tr_free), so is the namespace's init */
	argv[n++] = "--kill-child";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = split ? split_script : script;
	argv[n++] = "sh";
	argv[n++] = nsdir;
	argv[n++] = prog;
	for (size_t i = 0; args && args[i] && n < 19; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (snprintf(r.program, sizeof(r.program), "%s", prog) >= (int)sizeof(r.program))
		fail_msg("path too long: %s", prog);
	if (tr_spawn(&r.prog, r.dir, "program", argv) < 0)
		fail_msg("cannot start unshare");
	if (tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	/* unshare --fork: the namespace's init is unshare's child, our program */
	for (int i = 0; i < 500 && !(host = only_child(r.prog.pid)); i++)
		am_sleep_ms(2);
	if (!host)
		fail_msg("unshare (pid %d) has no child", (int)r.prog.pid);
	/* the premises: its own PID namespace, a path the host cannot see */
	assert_int_equal(r.pid, 1);
	{
		long h, inner;

		assert_true(ns_ids(host, host, &h, &inner));
		assert_int_equal(h, host);
		assert_int_equal(inner, 1);
	}
	{
		char seen[300];

		am_path(seen, sizeof(seen), nsdir, name);
		if (stat(seen, &st) == 0)
			fail_msg("%s is visible from the host: the test would prove nothing", seen);
	}
	return host;
}

static long start_in_container(const char *name, const char *const *args)
{
	return start_in_container_split(name, args, false);
}

/* Traces host pid `host` to its end (with `extra`, an option or NULL) and loads the trace. */
static void trace_host_pid_with(long host, const char *extra)
{
	char pid[24];
	const char *const args[] = { "-p", pid, extra, NULL };

	snprintf(pid, sizeof(pid), "%ld", host);
	am_start_tracer(&r, args);
	am_finish(&r, TR_TIMEOUT_MS);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
}

static void trace_host_pid(long host)
{
	trace_host_pid_with(host, NULL);
}

/*
 * --stacks in a container: the program's objects read through
 * /proc/PID/root, and its DWARF from the container's own separate debug
 * file (found by build-id under its /usr/lib/debug, which the host's does
 * not have): its frames have file:line (the host's path alone: "main").
 */
static void test_stacks_with_the_containers_debug_file(void **state)
{
	const char *const args[] = { "boxed", NULL };
	cJSON *hello, *stack;
	long host;

	(void)state;
	tr_require_command("objcopy");
	host = start_in_container_split("armed_hello", args, true);
	trace_host_pid_with(host, "--stacks");
	assert_int_equal(r.prog_exit, 0);
	hello = am_one(&r, "I", "hello", host);
	stack = tr_arg(hello, "stack");
	if (!cJSON_IsArray(stack) || !cJSON_GetArrayItem(stack, 0) ||
	    strncmp(cJSON_GetArrayItem(stack, 0)->valuestring, "main (armed_hello.c:", 20)) {
		char *text = stack ? cJSON_PrintUnformatted(stack) : NULL;

		fail_msg("hello's stack is %s, not main (armed_hello.c:N) first", text ? text : "(none)");
	}
	assert_true(tr_num(cJSON_GetObjectItem(tr_meta(&r), "stacks"), "frames_unsymbolized") == 0);
}

/* The tracer finds the program through /proc/PID/root; the trace has host ids. */
static void traced_by_host_pid(const char *convert)
{
	const char *const args[] = { "boxed", NULL };
	long host;
	cJSON *hello, *work;
	char *was;

	host = start_in_container("armed_hello", args);
	was = tr_convert_begin(convert);
	trace_host_pid(host);
	tr_convert_end(was);
	assert_int_equal(r.prog_exit, 0);
	assert_string_equal(am_stop_reason(&r), "target exited");
	hello = am_one(&r, "I", "hello", host);
	assert_true(tr_num(hello, "tid") == host);
	assert_string_equal(am_arg_str(hello, "tag"), "boxed");
	/* the process's own view of its pid, which the trace must not use */
	assert_true(am_arg_num(hello, "ns_pid") == 1);
	work = am_one(&r, "X", "work", host);
	assert_true(tr_num(work, "tid") == host);
	assert_string_equal(am_process_name(&r, host), "armed_hello");
	/* nothing under the namespace's pid */
	assert_int_equal(am_count(&r, NULL, NULL, 1), 0);
}

static void test_traced_by_host_pid(void **state)
{
	(void)state;
	traced_by_host_pid("live");
}

/*
 * Converted behind the capture (trace_behind.h): the conversion, a
 * process of its own, cannot open the program by the name the container
 * gives it; it reads the strings from the file the tracer opened.
 */
static void test_traced_by_host_pid_behind_the_capture(void **state)
{
	(void)state;
	traced_by_host_pid("behind");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "converted_from_capture")));
}

/* context and metadata: the host pid, and the pid in its namespace. */
static void test_context_says_pid_in_namespace(void **state)
{
	static const char *const objs[] = { "context", "metadata" };
	const char *const args[] = { "boxed", NULL };
	long host;

	(void)state;
	host = start_in_container("armed_hello", args);
	trace_host_pid(host);
	for (int i = 0; i < 2; i++) {
		cJSON *t = am_target(&r, objs[i]);

		if (tr_num(t, "pid") != host)
			fail_msg("%s.target.pid is %.0f, the host pid is %ld", objs[i],
				 tr_num(t, "pid"), host);
		if (tr_num(t, "pid_in_namespace") != 1)
			fail_msg("%s.target.pid_in_namespace is %.0f, not 1", objs[i],
				 tr_num(t, "pid_in_namespace"));
		assert_string_equal(tr_str(t, "comm"), "armed_hello");
	}
}

/*
 * Threads in the container (started after the attach): each event on the
 * thread's host tid. The tids the threads print are the namespace's; the
 * host's are read from /proc while the threads live (they wait 300 ms
 * after their hello for that).
 */
static void test_threads_by_host_tid(void **state)
{
	long host, ns_tid[3], host_tid[3] = { 0, 0, 0 };
	char pid[24];
	const char *const args[] = { "-p", pid, NULL };
	cJSON *ev[8];
	size_t n;

	(void)state;
	host = start_in_container("late_threads", NULL);
	snprintf(pid, sizeof(pid), "%ld", host);
	am_start_tracer(&r, args);
	/* The threads print in any order: wait for each one's line. */
	am_wait_out_line(&r.prog, "thread 0 ", 10000);
	am_wait_out_line(&r.prog, "thread 1 ", 10000);
	am_wait_out_line(&r.prog, "thread 2 ", 10000);
	{
		char *out = am_read_out(&r.prog);

		for (int k = 0; k < 3; k++) {
			char prefix[32];

			snprintf(prefix, sizeof(prefix), "thread %d ", k);
			ns_tid[k] = am_need_field(out, prefix, "tid");
		}
		free(out);
	}
	/* map each namespace tid to its host tid */
	{
		char path[64];
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "/proc/%ld/task", host);
		d = opendir(path);
		assert_non_null(d);
		while ((e = readdir(d))) {
			long tid = strtol(e->d_name, NULL, 10), h, inner;

			if (tid <= 0 || !ns_ids(host, tid, &h, &inner))
				continue;
			for (int k = 0; k < 3; k++)
				if (inner == ns_tid[k])
					host_tid[k] = h;
		}
		closedir(d);
	}
	for (int k = 0; k < 3; k++)
		if (!host_tid[k])
			fail_msg("thread %d (tid %ld in its namespace) not found in /proc/%ld/task",
				 k, ns_tid[k], host);
	am_finish(&r, TR_TIMEOUT_MS);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	n = am_find(&r, "I", "late-hello", host, ev, 8);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		int k = (int)am_arg_num(ev[i], "k");

		assert_true(k >= 0 && k < 3);
		if (tr_num(ev[i], "tid") != host_tid[k])
			fail_msg("late-hello of thread %d has tid %.0f; its host tid is %ld (%ld in its namespace)",
				 k, tr_num(ev[i], "tid"), host_tid[k], ns_tid[k]);
	}
	assert_true(tr_num(am_one(&r, "I", "main-hello", host), "tid") == host);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_traced_by_host_pid, free_all),
		cmocka_unit_test_teardown(test_traced_by_host_pid_behind_the_capture, free_all),
		cmocka_unit_test_teardown(test_context_says_pid_in_namespace, free_all),
		cmocka_unit_test_teardown(test_threads_by_host_tid, free_all),
		cmocka_unit_test_teardown(test_stacks_with_the_containers_debug_file, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
