// SPDX-License-Identifier: MIT
/*
 * test_stacks - --stacks with the real tracer and real BPF, on
 * tests/programs/stacks/chains.c built with and without frame pointers
 * (gcc -O2 -g) and tests/programs/hostile_stack.c:
 *
 *   - every event carries the user stack where its macro ran, exactly the
 *     call chain the program made: an always-inline function, a static
 *     one, a shared library's static and exported ones, a C++ template
 *     instance (demangled), each frame "function (file:line)" at the line
 *     the program printed for that site or call; below main, libc's frames
 *     (the unwind went on through code built without frame pointers);
 *   - the same stack in the seed's stackFrames (parent links, category the
 *     object) from the event's "sf", and as args.stack for Perfetto; a
 *     span's X has its begin's;
 *     Chrome DevTools' engine reads the file;
 *   - fp for the frame-pointer build, dwarf for the other, chosen by
 *     itself and said in metadata.stacks; dwarf asked for on the
 *     frame-pointer build gives the same chains; --stacks=N keeps N frames;
 *   - a stripped library (no symbols, no DWARF) is unwound through its
 *     .eh_frame: "lib.so+0xoff" for its static function, counted;
 *   - a plugin dlopen()ed, hit, dlclose()d and deleted before the trace
 *     ends is still symbolized; with its DWARF in a separate file found
 *     by build-id (/usr/lib/debug/.build-id), still with file:line;
 *   - the per-event path, with its reason in metadata.event_path_reason;
 *   - a --stacks value it cannot take: one line, exit 2;
 *   - stacks with garbage %rsp/%rbp: the tracer does not crash, the events
 *     are there, what could not be unwound is counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace_run.h"

static struct trace_run r;
/* A separate debug file the run put in /usr/lib/debug/.build-id (removed by free_run). */
static char placed_debug[400];

static int free_run(void **state)
{
	(void)state;
	tr_free(&r);
	if (placed_debug[0])
		unlink(placed_debug);
	placed_debug[0] = '\0';
	return 0;
}

/*
 * Moves the plugin's DWARF into a separate file where Debian's -dbgsym
 * packages put theirs, found by the plugin's build-id:
 * /usr/lib/debug/.build-id/NN/REST.debug. The plugin keeps its symbols only.
 */
static void split_debug(const char *plugin)
{
	char id[64] = "";
	FILE *f;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: //p'", plugin);
	f = popen(cmd, "r");
	if (!f || !fgets(id, sizeof(id), f) || strlen(id) < 10)
		fail_msg("no build-id in %s", plugin);
	pclose(f);
	id[strcspn(id, "\n")] = '\0';
	snprintf(placed_debug, sizeof(placed_debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (tr_shell("mkdir -p \"$(dirname '%s')\" && objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug '%s'",
		     placed_debug, plugin, placed_debug, plugin) != 0)
		fail_msg("cannot split the debug info of %s into %s", plugin, placed_debug);
}

/*
 * Runs `prog` (with the plugin of `mode` copied into the run's directory
 * when plugin, its debug info split off by split_debug() when split)
 * under -p PID --stacks...
 */
static void run_split(const char *prog, const char *mode, bool plugin, bool split, const char *stacks_arg)
{
	char plugin_path[400], name[64], src[300];
	const char *const prog_args[] = { plugin_path, NULL };
	const char *const tracer_args[] = { stacks_arg, NULL };

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	if (plugin) {
		snprintf(plugin_path, sizeof(plugin_path), "%s/libstk_plugin.so", r.dir);
		snprintf(name, sizeof(name), "libstk_plugin_%s.so", mode);
		tr_program_path(name, src, sizeof(src));
		if (tr_shell("cp '%s' '%s'", src, plugin_path) != 0)
			fail_msg("cannot copy %s", src);
		if (split)
			split_debug(plugin_path);
	}
	if (tr_start_program(&r, prog, plugin ? prog_args : NULL) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0 || tr_start_tracer(&r, tracer_args) < 0 ||
	    tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	if (r.tracer_exit != 0)
		fail_msg("the tracer exited %d:\n%s", r.tracer_exit, r.tracer_stderr);
	if (r.prog_exit != 0)
		fail_msg("%s exited %d:\n%s", prog, r.prog_exit, r.prog_stdout);
	if (tr_load_trace(&r) < 0)
		fail_msg("%s", r.error);
}

static void run(const char *prog, const char *mode, bool plugin, const char *stacks_arg)
{
	run_split(prog, mode, plugin, false, stacks_arg);
}

/* The line the program printed as "line TAG=N". */
static int line_of(const char *tag)
{
	char key[80];
	const char *p;

	snprintf(key, sizeof(key), "line %s=", tag);
	p = r.prog_stdout ? strstr(r.prog_stdout, key) : NULL;
	if (!p)
		fail_msg("the program printed no '%s'", key);
	return atoi(p + strlen(key));
}

static cJSON *stack_frames(void)
{
	cJSON *f = cJSON_GetObjectItem(r.trace, "stackFrames");

	if (!cJSON_IsObject(f))
		fail_msg("the trace has no stackFrames object");
	return f;
}

static cJSON *frame(double id)
{
	char key[32];
	cJSON *f;

	snprintf(key, sizeof(key), "%.0f", id);
	f = cJSON_GetObjectItem(stack_frames(), key);
	if (!cJSON_IsObject(f))
		fail_msg("stackFrames has no frame %s", key);
	return f;
}

/* One frame expected: "function (file:line of TAG)" in object `object`. */
struct want {
	const char *fn, *file, *tag, *object;
};

/*
 * The instant `name`'s stack, read both ways (sf through stackFrames' parent
 * links, and args.stack), starts with exactly `want`; the next frame is
 * libc's. Returns how many frames it has.
 */
static int check_chain_of(const char *ph, const char *name, const struct want *want, size_t n,
			  const char *below)
{
	cJSON *ev = tr_find(&r, ph, name), *stack, *f;
	double sf;
	int i = 0;

	if (!ev)
		fail_msg("no instant %s in the trace", name);
	stack = tr_arg(ev, "stack");
	sf = tr_num(ev, "sf");
	if (!cJSON_IsArray(stack) || sf != sf)
		fail_msg("instant %s has no sf or no args.stack", name);
	if ((size_t)cJSON_GetArraySize(stack) <= n) {
		char *text = cJSON_PrintUnformatted(stack);

		fail_msg("%s: %d frames, not more than %zu: %s", name, cJSON_GetArraySize(stack), n, text);
	}
	f = frame(sf);
	for (cJSON *s = stack->child; s; s = s->next, i++) {
		char expect[300];

		if (!f)
			fail_msg("%s: args.stack is longer than its stackFrames chain", name);
		assert_string_equal(tr_str(f, "name"), s->valuestring);
		if ((size_t)i < n) {
			snprintf(expect, sizeof(expect), "%s (%s:%d)", want[i].fn, want[i].file,
				 line_of(want[i].tag));
			if (strcmp(s->valuestring, expect))
				fail_msg("%s: frame %d is '%s', not '%s'", name, i, s->valuestring, expect);
			assert_string_equal(tr_str(f, "category"), want[i].object);
		} else if ((size_t)i == n) {
			assert_string_equal(tr_str(f, "category"), below);
		}
		f = cJSON_GetObjectItem(f, "parent") ? frame(tr_num(f, "parent")) : NULL;
	}
	if (f)
		fail_msg("%s: the stackFrames chain is longer than args.stack", name);
	return i;
}

static int check_chain(const char *name, const struct want *want, size_t n, const char *below)
{
	return check_chain_of("I", name, want, n, below);
}

static void check_chains(const char *mode, const char *how)
{
	char exe[64], lib[64], plugin[] = "libstk_plugin.so";
	cJSON *stacks = cJSON_GetObjectItem(tr_meta(&r), "stacks"), *sum;
	const char *no_batch = getenv("CTRACE_NO_BATCH");

	snprintf(exe, sizeof(exe), "stack_chains_%s", mode);
	snprintf(lib, sizeof(lib), "libstk_%s.so", mode);
	const struct want in_inline[] = {
		{ "stk_inlined", "chains.c", "site-inline", exe },
		{ "stk_outer", "chains.c", "call-inline", exe },
		{ "main", "chains.c", "call-outer", exe },
	};
	const struct want in_static[] = {
		{ "stk_static_leaf", "chains.c", "site-static", exe },
		{ "stk_outer", "chains.c", "call-static", exe },
		{ "main", "chains.c", "call-outer", exe },
	};
	const struct want in_lib[] = {
		{ "stk_lib_leaf", "lib.c", "site-lib", lib },
		{ "stk_lib_entry", "lib.c", "call-lib-leaf", lib },
		{ "main", "chains.c", "call-lib", exe },
	};
	const struct want in_template[] = {
		{ "int stk::twice<int>(int)", "template.cpp", "site-template", exe },
		{ "stk_template_entry", "template.cpp", "call-twice", exe },
		{ "main", "chains.c", "call-template", exe },
	};
	const struct want in_plugin[] = {
		{ "stk_plugin_leaf", "plugin.c", "site-plugin", plugin },
		{ "stk_plugin_hit", "plugin.c", "call-plugin-leaf", plugin },
		{ "plugin", "chains.c", "call-plugin", exe }, /* static, inlined into main */
		{ "main", "chains.c", "call-plugin-fn", exe },
	};

	check_chain("in-inline", in_inline, 3, "libc.so.6");
	check_chain("in-static", in_static, 3, "libc.so.6");
	check_chain("in-lib", in_lib, 3, "libc.so.6");
	check_chain("in-template", in_template, 3, "libc.so.6");
	const struct want in_span[] = {
		{ "stk_spanned", "chains.c", "site-span", exe },
		{ "main", "chains.c", "call-spanned", exe },
	};

	check_chain("in-plugin", in_plugin, 4, "libc.so.6");
	check_chain_of("X", "spanned", in_span, 2, "libc.so.6"); /* its begin's */
	assert_non_null(stacks);
	assert_string_equal(tr_str(stacks, "unwind"), how);
	/* every event: 5 chains, after-plugin, the span's begin and end */
	assert_true(tr_num(stacks, "stacks") == 8);
	assert_true(tr_num(stacks, "capture_errors") == 0);
	assert_true(tr_num(stacks, "not_unwound") == 0);
	assert_true(tr_num(stacks, "frames_unsymbolized") == 0);
	assert_string_equal(tr_str(tr_meta(&r), "event_path"), "per_event");
	if (!no_batch || strcmp(no_batch, "1"))
		assert_non_null(strstr(tr_str(tr_meta(&r), "event_path_reason"), "--stacks"));
	sum = tr_checker_summary(r.trace_path);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "instants")), tr_count(&r, "I"));
	cJSON_Delete(sum);
}

static void test_chains_with_frame_pointers(void **state)
{
	(void)state;
	run("stack_chains_fp", "fp", true, "--stacks");
	check_chains("fp", "fp");
}

static void test_chains_without_frame_pointers(void **state)
{
	(void)state;
	run("stack_chains_nofp", "nofp", true, "--stacks");
	check_chains("nofp", "dwarf");
}

static void test_dwarf_asked_for_on_frame_pointers(void **state)
{
	(void)state;
	run("stack_chains_fp", "fp", true, "--stacks=dwarf");
	check_chains("fp", "dwarf");
}

/*
 * A plugin whose DWARF is only in a separate file, found by its build-id
 * as distributions install them: its frames still have file:line (without
 * that file: its function names only, and this fails).
 */
static void test_separate_debug_file(void **state)
{
	(void)state;
	run_split("stack_chains_nofp", "nofp", true, true, "--stacks");
	check_chains("nofp", "dwarf");
}

/* --stacks=2: the two innermost frames only. */
static void test_depth(void **state)
{
	cJSON *ev, *inner;

	(void)state;
	run("stack_chains_nofp", "nofp", false, "--stacks=2");
	ev = tr_find(&r, "I", "in-lib");
	assert_non_null(ev);
	assert_int_equal(cJSON_GetArraySize(tr_arg(ev, "stack")), 2);
	assert_true(tr_num(cJSON_GetObjectItem(tr_meta(&r), "stacks"), "depth") == 2);
	inner = frame(tr_num(ev, "sf"));
	assert_non_null(cJSON_GetObjectItem(inner, "parent"));
	assert_null(cJSON_GetObjectItem(frame(tr_num(inner, "parent")), "parent"));
}

/*
 * A library without symbols or DWARF (stripped): still unwound through its
 * .eh_frame; its static function is "object+0xoffset", its exported one
 * named from .dynsym, and both counted as written without file:line.
 */
static void test_stripped_library(void **state)
{
	cJSON *ev, *stack, *f;
	const char *s0;

	(void)state;
	run("stack_chains_stripped", "stripped", false, "--stacks");
	ev = tr_find(&r, "I", "in-lib");
	assert_non_null(ev);
	stack = tr_arg(ev, "stack");
	s0 = cJSON_GetArrayItem(stack, 0)->valuestring;
	if (strncmp(s0, "libstk_stripped.so+0x", 21))
		fail_msg("in-lib's frame 0 is '%s', not libstk_stripped.so+0x...", s0);
	assert_string_equal(cJSON_GetArrayItem(stack, 1)->valuestring, "stk_lib_entry");
	{
		char main_frame[64];

		snprintf(main_frame, sizeof(main_frame), "main (chains.c:%d)", line_of("call-lib"));
		assert_string_equal(cJSON_GetArrayItem(stack, 2)->valuestring, main_frame);
	}
	f = frame(tr_num(ev, "sf"));
	assert_string_equal(tr_str(f, "category"), "libstk_stripped.so");
	assert_true(tr_num(cJSON_GetObjectItem(tr_meta(&r), "stacks"), "frames_unsymbolized") == 1);
	assert_true(tr_num(cJSON_GetObjectItem(tr_meta(&r), "stacks"), "not_unwound") == 0);
}

static void check_hostile(const char *how)
{
	cJSON *stacks = cJSON_GetObjectItem(tr_meta(&r), "stacks"), *after, *sum;
	const char *names[] = { "garbage-unmapped", "garbage-random" };

	for (size_t i = 0; i < 2; i++) {
		cJSON *ev = tr_find(&r, "I", names[i]);

		if (!ev)
			fail_msg("no instant %s", names[i]);
		/* The site's own frame is known from its pc alone. */
		if (!strstr(cJSON_GetArrayItem(tr_arg(ev, "stack"), 0)->valuestring,
			    "site_with_stack (hostile_stack.c:")) {
			char *text = cJSON_PrintUnformatted(tr_arg(ev, "stack"));

			fail_msg("%s: its stack is %s", names[i], text);
		}
	}
	after = tr_find(&r, "I", "after");
	assert_non_null(after);
	assert_non_null(strstr(cJSON_GetArrayItem(tr_arg(after, "stack"), 0)->valuestring,
			       "main (hostile_stack.c:"));
	assert_string_equal(tr_str(stacks, "unwind"), how);
	assert_true(tr_num(stacks, "stacks") == 3);
	/* The random return addresses are in no object: written as addresses, counted. */
	assert_true(tr_num(stacks, "frames_unsymbolized") >= 1);
	if (!strcmp(how, "dwarf")) /* the unmapped %rsp: nothing to copy */
		assert_true(tr_num(stacks, "capture_errors") == 1);
	sum = tr_checker_summary(r.trace_path);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "instants")), tr_count(&r, "I"));
	cJSON_Delete(sum);
}

static void test_hostile_stack_dwarf(void **state)
{
	(void)state;
	run("hostile_stack", NULL, false, "--stacks=dwarf");
	check_hostile("dwarf");
}

static void test_hostile_stack_fp(void **state)
{
	(void)state;
	run("hostile_stack", NULL, false, "--stacks=fp");
	check_hostile("fp");
}

/* A --stacks the tracer cannot take: one line saying what it takes, exit 2, nothing traced. */
static void test_bad_stacks_values(void **state)
{
	static const char *const bad[] = { "--stacks=0", "--stacks=128", "--stacks=dwarf,x",
					   "--stacks=", "--stacks=-1", "--stacks=fp,,8x" };
	struct tr_cmd res = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const args[] = { bad[i], "-p", "1", NULL };
		const char *nl;

		if (tr_run_tracer(&res, NULL, NULL, args, 5000) < 0)
			fail_msg("cannot run the tracer");
		assert_int_equal(res.exit, 2);
		nl = strchr(res.err, '\n');
		assert_non_null(nl);
		assert_null(strchr(nl + 1, '\n')); /* one line */
		if (!strstr(res.err, "--stacks takes a depth from 1 to 127"))
			fail_msg("%s: %s", bad[i], res.err);
	}
	tr_cmd_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_chains_with_frame_pointers, free_run),
		cmocka_unit_test_teardown(test_chains_without_frame_pointers, free_run),
		cmocka_unit_test_teardown(test_dwarf_asked_for_on_frame_pointers, free_run),
		cmocka_unit_test_teardown(test_separate_debug_file, free_run),
		cmocka_unit_test_teardown(test_depth, free_run),
		cmocka_unit_test_teardown(test_stripped_library, free_run),
		cmocka_unit_test_teardown(test_hostile_stack_dwarf, free_run),
		cmocka_unit_test_teardown(test_hostile_stack_fp, free_run),
		cmocka_unit_test(test_bad_stacks_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
