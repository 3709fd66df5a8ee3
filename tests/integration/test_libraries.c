// SPDX-License-Identifier: MIT
/*
 * test_libraries - probes in shared libraries, with the real tracer, real
 * BPF, tests/programs/dso_loader.c and two libraries built here from
 * tests/programs/lib/probelib.c the way users build theirs (cc -shared
 * -fPIC -Iinclude):
 *
 *   - every loaded object of the process is attached: its executable and
 *     the libraries it has loaded;
 *   - a library dlopen()ed after the tracer attached is picked up within
 *     200 ms, with no user action, and its events are in the trace; the
 *     dynamic linker's hook alone arms it (the maps are looked at again
 *     every 100 ms too);
 *   - a library dlclose()d and another mapped at the same address: each
 *     one's events carry its own literal strings;
 *   - -p of a process without probes waits for them (one line saying so)
 *     and traces the library with probes it loads later; -d stops it;
 *   - a library another process maps too does not bring that process's
 *     events into the trace, whether the probes were attached for the one
 *     process (-p) or for every process that maps the file (-f, --exe).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"
#include "probelib_build.h"
#include "target_check.h"

/* Built once for the whole file: libearly.so and liblate.so. */
static char libdir[64];
static char early_so[128], late_so[128];
static char cycle_a_so[128], cycle_b_so[128]; /* names of one length: same layout */
static char build_error[2048];

static struct trace_run r;
static struct tr_child other; /* the second process of the sharing tests */

/* probelib.c as DIR/lib{name}.so, -O2. */
static int build_lib(const char *name, char *path, size_t len)
{
	return probelib_build(libdir, name, "-O2", path, len, build_error, sizeof(build_error));
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(libdir, sizeof(libdir), "/tmp/ctrace-libs-XXXXXX");
	if (!mkdtemp(libdir)) {
		snprintf(build_error, sizeof(build_error), "mkdtemp: %s", strerror(errno));
		libdir[0] = '\0';
		return 0;
	}
	chmod(libdir, 0755);
	if (build_lib("early", early_so, sizeof(early_so)) == 0 &&
	    build_lib("late", late_so, sizeof(late_so)) == 0 &&
	    build_lib("cycle_a", cycle_a_so, sizeof(cycle_a_so)) == 0)
		build_lib("cycle_b", cycle_b_so, sizeof(cycle_b_so));
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (libdir[0]) {
		unlink(early_so);
		unlink(late_so);
		unlink(cycle_a_so);
		unlink(cycle_b_so);
		rmdir(libdir);
	}
	return 0;
}

static int free_all(void **state)
{
	(void)state;
	if (other.pid && !other.reaped) {
		kill(other.pid, SIGKILL);
		tr_reap(&other, 5000);
	}
	memset(&other, 0, sizeof(other));
	tr_free(&r);
	return 0;
}

static void need_libs(void)
{
	tr_require_root();
	if (build_error[0])
		fail_msg("building the test libraries failed: %s", build_error);
}

/* Runs test program `prog` with prog_args, traced by -p PID and tracer_args. */
static void run_traced(const char *prog, const char *const *prog_args,
		       const char *const *tracer_args)
{
	need_libs();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	if (tr_start_program(&r, prog, prog_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, tracer_args) < 0 ||
	    tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d:\n%s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
}

/*
 * The "late" scenario of dso_loader: libearly.so loaded before the tracer
 * attaches, liblate.so after. Traced with -p PID, or with launch mode (then
 * both libraries come after the start). The program's stdout ends up in
 * r.prog_stdout, its exit code in r.prog_exit.
 */
static void run_late(bool launch)
{
	const char *const prog_args[] = { "late", early_so, late_so, NULL };

	if (!launch) {
		run_traced("dso_loader", prog_args, NULL);
		return;
	}
	need_libs();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	char prog[300];
	const char *const args[] = { "--", tr_program_path("dso_loader", prog, sizeof(prog)),
				     "late", early_so, late_so, NULL };

	am_start_tracer(&r, args);
	am_finish(&r, TR_TIMEOUT_MS);
	r.prog_stdout = strdup(r.tracer_stdout);
	r.prog_exit = r.tracer_exit;
	r.pid = am_need_field(r.prog_stdout, "ready", "pid");
}

/* The lib-hit of library `lib` in process pid (fails unless exactly one). */
static cJSON *lib_hit(const char *lib, double pid)
{
	cJSON *ev[16], *found = NULL;
	size_t n = am_find(&r, "I", "lib-hit", pid, ev, 16);

	for (size_t i = 0; i < n && i < 16; i++) {
		if (!strcmp(am_arg_str(ev[i], "lib"), lib)) {
			if (found)
				fail_msg("two lib-hit events from lib%s.so", lib);
			found = ev[i];
		}
	}
	if (!found)
		fail_msg("no lib-hit from lib%s.so in process %.0f (%zu lib-hit in all)", lib, pid, n);
	return found;
}

/* Both libraries and the executable reported, on the main thread. */
static void assert_all_objects(void)
{
	cJSON *early = lib_hit("early", r.pid), *late = lib_hit("late", r.pid);
	cJSON *exe = am_one(&r, "I", "exe-hit", r.pid);

	assert_int_equal(r.prog_exit, 0);
	assert_true(am_arg_num(early, "n") == 1);
	assert_true(am_arg_num(late, "n") == 2);
	assert_true(tr_num(early, "tid") == r.pid);
	assert_true(tr_num(late, "tid") == r.pid);
	assert_true(tr_num(exe, "tid") == r.pid);
	/* in the order the program made them */
	assert_true(tr_num(early, "ts") <= tr_num(late, "ts"));
	assert_true(tr_num(late, "ts") <= tr_num(exe, "ts"));
}

/* -p PID: the executable and the library loaded before are attached at once. */
static void test_executable_and_library(void **state)
{
	cJSON *meta;

	(void)state;
	run_late(false);
	assert_all_objects();
	/*
	 * Attached in the course of the trace: dso_loader (exe-hit, exe-tick),
	 * libearly.so and liblate.so (lib-hit, hello each). Three objects: libc
	 * and the dynamic linker have no ctrace probes.
	 */
	meta = tr_meta(&r);
	assert_true(tr_num(meta, "objects_with_probes") == 3);
	assert_true(tr_num(meta, "probes_attached") == 6);
}

/* A library dlopen()ed after the attach: armed within 200 ms, traced. */
static void test_dlopen_after_attach(void **state)
{
	long ms;

	(void)state;
	run_late(false);
	ms = am_need_field(r.prog_stdout, "late ", "armed_ms");
	if (ms < 0 || ms > 200)
		fail_msg("the library dlopen()ed after the attach was armed after %ld ms (-1: not within 1 s); it must be within 200 ms",
			 ms);
	lib_hit("late", r.pid);
}

/* The same in launch mode, where both libraries come after the start. */
static void test_dlopen_in_launch_mode(void **state)
{
	long ms;

	(void)state;
	run_late(true);
	ms = am_need_field(r.prog_stdout, "late ", "armed_ms");
	if (ms < 0 || ms > 200)
		fail_msg("late library armed after %ld ms (-1: not within 1 s), not within 200 ms", ms);
	assert_all_objects();
}

/*
 * A library dlopen()ed while the tracer is idle, used 250 ms later: armed
 * by the dynamic linker's hook alone, the tracer's look at the maps being
 * turned off (CTRACE_RESCAN_MS: an hour). The tracer sits idle for 200 ms
 * before the dlopen(), so the figure printed is the cost a user meets: the
 * kernel's first uprobe registration after a quiet spell waits for an RCU
 * grace period (register_for_each_vma takes dup_mmap_sem for writing),
 * 9 to 21 ms on this project's VM; a registration within a grace period of
 * another, as in a first attach, takes ~0.2 ms. Not asserted: a benchmark's.
 */
static void test_dlopen_armed_by_linker_hook(void **state)
{
	const char *const args[] = { "soon", early_so, late_so, "250", NULL };
	long us;

	(void)state;
	need_libs();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	setenv("CTRACE_RESCAN_MS", "3600000", 1);
	if (tr_start_program(&r, "dso_loader", args) < 0 || tr_wait_line(&r, "ready", 10000) < 0 ||
	    tr_start_tracer(&r, NULL) < 0) {
		unsetenv("CTRACE_RESCAN_MS");
		fail_msg("%s", r.error);
	}
	unsetenv("CTRACE_RESCAN_MS");
	if (!tc_wait_file_has(r.tracer.err_path, "ctrace-bpf: tracing process", 10000))
		fail_msg("the tracer did not start tracing: %s", tr_read_file(r.tracer.err_path, NULL));
	usleep(200 * 1000);
	kill((pid_t)r.pid, SIGUSR1);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d:\n%s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	us = am_need_field(r.prog_stdout, "soon ", "armed_us");
	print_message("      the library was armed %ld us after its dlopen() returned\n", us);
	if (us < 0)
		fail_msg("a library dlopen()ed while traced was not armed 250 ms later, with only the dynamic linker's hook to tell the tracer");
	assert_true(am_arg_num(lib_hit("late", r.pid), "n") == 2);
}

/*
 * The "hello from NAME" instant of library NAME: exactly one, its own args.
 * Under the probe_read set (kernels before 6.0: the probe cannot fault a
 * page in) the loader reads a cold literal late, and a library dlclose()d
 * microseconds after its use may be gone by then: the event is then
 * "(unreadable)" and counted, the fallback README's Kernels section
 * states, never another library's string. So with batched events (a
 * literal goes by address, read by the loader from the process or a
 * snapshot of its mappings taken in the event's epoch: a library used and
 * dlclose()d before the loader hears of its dlopen() has none). Returns 1
 * if it was there, 0 if it was that counted fallback.
 */
static int hello_from(const char *name)
{
	char want[64];
	cJSON *ev[8];
	size_t n;

	snprintf(want, sizeof(want), "hello from %s", name);
	n = am_find(&r, "I", want, r.pid, ev, 8);
	if (n == 0 &&
	    (!strcmp(tr_str(tr_meta(&r), "program_set"), "probe_read") ||
	     !strcmp(tr_str(tr_meta(&r), "event_path") ? tr_str(tr_meta(&r), "event_path") : "", "batched")) &&
	    tr_meta_num(&r, "unreadable_strings") >= 1 &&
	    am_find(&r, "I", "(unreadable)", r.pid, ev, 8) >= 1)
		return 0;
	if (n != 1)
		fail_msg("%zu instants \"%s\" (want 1)", n, want);
	if (strcmp(am_arg_str(ev[0], "from"), name))
		fail_msg("\"%s\" carries the args of library %s", want, am_arg_str(ev[0], "from"));
	return 1;
}

/*
 * libcycle_a.so dlclose()d, libcycle_b.so dlopen()ed at the same address:
 * its literals are at the same addresses as libcycle_a's were, and its
 * events still carry its own strings.
 */
static void test_library_replaced_at_same_address(void **state)
{
	const char *const args[] = { "reuse", early_so, cycle_a_so, cycle_b_so, NULL };
	cJSON *ev;
	size_t hellos = 0, shown;

	(void)state;
	run_traced("dso_loader", args, NULL);
	assert_int_equal(r.prog_exit, 0);
	if (am_need_field(r.prog_stdout, "reuse ", "same_base") != 1)
		fail_msg("libcycle_b.so was not mapped where libcycle_a.so was, so this run tests nothing: %s",
			 r.prog_stdout);
	shown = hello_from("cycle_a") + hello_from("cycle_b");
	cJSON_ArrayForEach(ev, r.events)
		hellos += !strncmp(tr_str(ev, "name") ? tr_str(ev, "name") : "", "hello from ", 11);
	assert_int_equal(hellos, shown);
}

/* The tracer's stderr has exactly one line containing `what`. */
static void one_stderr_line(const char *what)
{
	size_t n = 0;

	for (const char *p = r.tracer_stderr; p && (p = strstr(p, what)); p++)
		n++;
	if (n != 1)
		fail_msg("%zu lines with \"%s\" on the tracer's stderr (want 1):\n%s", n, what,
			 r.tracer_stderr);
}

/*
 * -p of a process without probes (a plugin host): the tracer says it waits,
 * and traces the library with probes the process loads 1.5 s later.
 */
static void test_waits_for_probes(void **state)
{
	const char *const args[] = { late_so, "1500", NULL };
	cJSON *hit;

	(void)state;
	run_traced("plugin_host", args, NULL);
	assert_int_equal(r.prog_exit, 0);
	one_stderr_line("waiting for");
	if (am_need_field(r.prog_stdout, "plugin ", "armed_ms") < 0)
		fail_msg("the plugin's probes were never armed");
	hit = lib_hit("late", r.pid);
	assert_true(am_arg_num(hit, "n") == 7);
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"),
			    "target exited");
}

/* Waiting, -d still stops it, with a complete file. */
static void test_waits_until_duration(void **state)
{
	const char *const args[] = { "-", "1500", NULL };
	const char *const targs[] = { "-d", "0.5", NULL };

	(void)state;
	run_traced("plugin_host", args, targs);
	one_stderr_line("waiting for");
	if (r.tracer_seconds > 3)
		fail_msg("-d 0.5 took %.1f s", r.tracer_seconds);
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"),
			    "duration elapsed");
}

/* Waiting, Ctrl-C still stops it, with a complete file. */
static void test_waits_until_sigint(void **state)
{
	const char *const args[] = { "-", "3000", NULL };
	double deadline;

	(void)state;
	need_libs();
	if (tr_init(&r) < 0 || tr_start_program(&r, "plugin_host", args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, NULL) < 0)
		fail_msg("%s", r.error);
	for (deadline = am_now() + 10;;) {
		char *err = tr_read_file(r.tracer.err_path, NULL);
		bool waiting = err && strstr(err, "waiting for");

		free(err);
		if (waiting)
			break;
		if (am_now() > deadline)
			fail_msg("the tracer never said it waits");
		am_sleep_ms(5);
	}
	kill(r.tracer.pid, SIGINT);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d after SIGINT:\n%s", r.tracer_exit, r.tracer_stderr);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
	assert_string_equal(tr_str(tr_meta(&r), "stop_reason"),
			    "SIGINT");
}

/*
 * Two processes run libearly.so: A (dso_loader) is traced, B (a copy of
 * dso_loader at another path, so that --exe does not match it) is not. Both
 * call into the library every 2 ms while the tracer runs; only A's calls
 * may be in the trace. mode: "-p" (probes for A only), "-f" (-p A -f:
 * probes for every process mapping the file, filtered in BPF), "--exe".
 */
static void shared_library(const char *mode)
{
	const char *const loop_args[] = { "loop", early_so, "1200", NULL };
	char copy[300], apid[24], prog[300];
	const char *argv[8];
	const char *args[8];
	cJSON *ev;
	char *other_out;
	long bpid, armed_hits;
	size_t n = 0, mine = 0;

	need_libs();
	if (tr_init(&r) < 0 || tr_start_program(&r, "dso_loader", loop_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	am_path(copy, sizeof(copy), r.dir, "dso_copy");
	am_copy_file(tr_program_path("dso_loader", prog, sizeof(prog)), copy, 0755);
	argv[0] = copy;
	memcpy(argv + 1, loop_args, sizeof(loop_args));
	if (tr_spawn(&other, r.dir, "other", argv) < 0)
		fail_msg("cannot start %s", copy);
	am_wait_out_line(&other, "ready", 10000);
	bpid = other.pid;

	snprintf(apid, sizeof(apid), "%ld", r.pid);
	if (!strcmp(mode, "--exe")) {
		args[n++] = "--exe";
		args[n++] = prog;
	} else {
		args[n++] = "-p";
		args[n++] = apid;
		if (!strcmp(mode, "-f"))
			args[n++] = "-f";
	}
	args[n++] = "-d";
	args[n++] = "0.6";
	args[n] = NULL;
	am_start_tracer(&r, args);
	am_finish(&r, TR_TIMEOUT_MS);
	if (tr_wait(&r, TR_TIMEOUT_MS) < 0 || tr_reap(&other, TR_TIMEOUT_MS) < 0)
		fail_msg("the two processes did not end: %s", r.error);
	assert_int_equal(r.prog_exit, 0);
	assert_int_equal(tr_exit_code(&other), 0);

	/* A was traced, through the library as well as through its executable */
	cJSON_ArrayForEach(ev, r.events) {
		if (!strcmp(tr_str(ev, "name"), "lib-hit") && tr_num(ev, "pid") == r.pid &&
		    !strcmp(am_arg_str(ev, "lib"), "early"))
			mine++;
	}
	if (mine < 20)
		fail_msg("only %zu lib-hit events of the traced process in 0.6 s (one every 2 ms)", mine);
	assert_true(am_count(&r, "I", "exe-tick", r.pid) >= 20);
	/* B: not one event, not even a name */
	cJSON_ArrayForEach(ev, r.events) {
		if (tr_num(ev, "pid") == bpid)
			fail_msg("process %ld, which shares the library but is not traced, is in the trace: \"%s\" \"%s\"",
				 bpid, tr_str(ev, "ph"), tr_str(ev, "name"));
	}
	/* every event is A's (no third process either) */
	cJSON_ArrayForEach(ev, r.events)
		assert_true(tr_num(ev, "pid") == r.pid);

	other_out = am_read_out(&other);
	armed_hits = am_field(other_out, "hits=", "armed_hits");
	free(other_out);
	/*
	 * With -f and --exe, the probes are on the file for every process, so
	 * B's site did fire (its semaphore was raised) and only the filter kept
	 * its events out: the check above is only worth something if so.
	 */
	if (strcmp(mode, "-p") && armed_hits <= 0)
		fail_msg("with %s, B's probe site never fired (armed_hits=%ld): the scenario no longer tests the filter",
			 mode, armed_hits);
}

static void test_shared_library_pid(void **state)
{
	(void)state;
	shared_library("-p");
}

static void test_shared_library_follow(void **state)
{
	(void)state;
	shared_library("-f");
}

static void test_shared_library_exe(void **state)
{
	(void)state;
	shared_library("--exe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_executable_and_library, free_all),
		cmocka_unit_test_teardown(test_dlopen_after_attach, free_all),
		cmocka_unit_test_teardown(test_dlopen_in_launch_mode, free_all),
		cmocka_unit_test_teardown(test_dlopen_armed_by_linker_hook, free_all),
		cmocka_unit_test_teardown(test_library_replaced_at_same_address, free_all),
		cmocka_unit_test_teardown(test_waits_for_probes, free_all),
		cmocka_unit_test_teardown(test_waits_until_duration, free_all),
		cmocka_unit_test_teardown(test_waits_until_sigint, free_all),
		cmocka_unit_test_teardown(test_shared_library_pid, free_all),
		cmocka_unit_test_teardown(test_shared_library_follow, free_all),
		cmocka_unit_test_teardown(test_shared_library_exe, free_all),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
