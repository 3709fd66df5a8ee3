// SPDX-License-Identifier: MIT
/*
 * test_usdt - --usdt: the USDT probes other programs ship, traced by the
 * real tracer with real BPF and read back event by event:
 *
 *   - tests/programs/foreign_probes.c (<sys/sdt.h> probes, no ctrace probe):
 *     each argument typed as its note says (every width and sign, constants,
 *     N(%reg)), twelve of them, strings read; BEGIN~END spans nested per
 *     thread; the end whose begin never fired and the span open at the stop
 *     counted in metadata.usdt; a %rip-relative spec libbpf 1.1 cannot
 *     decode said on stderr; in launch mode and with -p (its semaphore raised);
 *   - tests/programs/cxx_exceptions.cpp with --usdt cxx: libstdc++'s throw,
 *     catch and rethrow, their types demangled, in the order they ran;
 *   - Debian's python3.11 with --usdt python: a gc.collect() a span with its
 *     generation and count, an import a span named by its module, and the
 *     missing function__entry (CPython gh-98894) said on stderr and in
 *     metadata instead of spans that pair the wrong calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "attach_modes.h"

static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

static const char *const demo_specs[] = {
	"--usdt", "demo:values", "--usdt", "demo:global", "--usdt", "demo:twelve",
	"--usdt", "demo:message(ARG0=str)",
	"--usdt", "demo:enter(ARG0=str)~demo:leave(ARG0=str),name=ARG0",
};

/* `ctrace-bpf --usdt ... -- PROGRAM` to its end, the trace loaded. */
static void launch(const char *program, const char *const *specs, size_t n_specs)
{
	const char *argv[32];
	size_t n = 0;
	char path[300];

	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	for (size_t i = 0; i < n_specs; i++)
		argv[n++] = specs[i];
	argv[n++] = "--";
	argv[n++] = tr_program_abspath(program, path, sizeof(path));
	argv[n] = NULL;
	am_start_tracer(&r, argv);
	am_finish(&r, TR_TIMEOUT_MS);
}

/* metadata.usdt.specs[] of the spec whose first probe is `probe`. */
static cJSON *spec_counts(const char *probe)
{
	cJSON *usdt = cJSON_GetObjectItem(cJSON_GetObjectItem(r.trace, "metadata"), "usdt");
	cJSON *spec;

	cJSON_ArrayForEach(spec, cJSON_GetObjectItem(usdt, "specs"))
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(spec, "probe")), probe))
			return spec;
	fail_msg("metadata.usdt has no spec of %s", probe);
	return NULL;
}

static double count(cJSON *spec, const char *key)
{
	cJSON *v = cJSON_GetObjectItem(spec, key);

	if (!cJSON_IsNumber(v))
		fail_msg("metadata.usdt spec has no %s", key);
	return v->valuedouble;
}

static void test_arguments_typed_as_their_notes_say(void **state)
{
	cJSON *ev;
	char key[8];

	(void)state;
	launch("foreign_probes", demo_specs, sizeof(demo_specs) / sizeof(demo_specs[0]));
	ev = am_one(&r, "I", "demo:values", NAN);
	assert_true(am_arg_num(ev, "arg0") == -5);             /* -1@%r12b */
	assert_true(am_arg_num(ev, "arg1") == 65535);          /* 2@%r13w */
	assert_true(am_arg_num(ev, "arg2") == -100000);        /* -4@%r14d */
	assert_true(am_arg_num(ev, "arg3") == -1234567890123.0); /* -8@%r15 */
	assert_true(am_arg_num(ev, "arg4") == 7);              /* -4@$7 */
	assert_true(am_arg_num(ev, "arg6") == -1);             /* -4@$-1 */
	/* 8@$-1: unsigned, to the last digit (a double would round it). */
	assert_non_null(strstr(r.trace_text, "\"arg5\":18446744073709551615"));
	ev = am_one(&r, "I", "demo:twelve", NAN);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "arg%d", i);
		assert_true(am_arg_num(ev, key) == i + 1);
	}
	assert_true(am_arg_num(ev, "arg10") == 11);  /* -8@0(%rbp) */
	assert_true(am_arg_num(ev, "arg11") == -22); /* -4@8(%rbp) */
	/* A string argument: a literal on a page the probe found cold, read again. */
	assert_string_equal(am_arg_str(am_one(&r, "I", "demo:message", NAN), "arg0"), "hello from demo");
	/* What libbpf 1.1 cannot decode is said, not a failed trace. */
	assert_non_null(strstr(r.tracer_stderr, "demo:global"));
	assert_non_null(strstr(r.tracer_stderr, "-8@demo_global(%rip)"));
	assert_int_equal(am_count(&r, NULL, "demo:global", NAN), 0);
}

static void test_spans_nest_and_cut_pairs_are_counted(void **state)
{
	cJSON *outer, *inner, *open, *spec;
	double o_ts, o_end, i_ts, i_end;

	(void)state;
	launch("foreign_probes", demo_specs, sizeof(demo_specs) / sizeof(demo_specs[0]));
	outer = am_one(&r, "X", "outer", NAN);
	inner = am_one(&r, "X", "inner", NAN);
	o_ts = cJSON_GetObjectItem(outer, "ts")->valuedouble;
	o_end = o_ts + cJSON_GetObjectItem(outer, "dur")->valuedouble;
	i_ts = cJSON_GetObjectItem(inner, "ts")->valuedouble;
	i_end = i_ts + cJSON_GetObjectItem(inner, "dur")->valuedouble;
	assert_true(o_ts < i_ts && i_end < o_end);
	assert_true(cJSON_GetObjectItem(inner, "dur")->valuedouble >= 1000); /* its usleep(1000) */
	assert_string_equal(am_arg_str(inner, "arg0"), "inner");
	open = am_one(&r, "X", "left open", NAN);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(open, "args"), "unfinished")));
	/* The end whose begin never fired: counted, not shown. */
	assert_int_equal(am_count(&r, NULL, "orphan", NAN), 0);
	spec = spec_counts("demo:enter");
	assert_true(count(spec, "spans") == 2);
	assert_true(count(spec, "ends_without_begin") == 1);
	assert_true(count(spec, "unfinished") == 1);
}

static void test_attached_to_a_running_process(void **state)
{
	const char *const args[] = { "wait", NULL };
	const char *const tracer[] = { "--usdt", "demo:message(ARG0=str)", "--usdt",
				       "demo:enter(ARG0=str)~demo:leave(ARG0=str),name=ARG0", NULL };

	(void)state;
	/* The program waits for its own semaphore: the attach must raise it. */
	tr_run_ok(&r, "foreign_probes", args, tracer);
	assert_string_equal(am_arg_str(am_one(&r, "I", "demo:message", r.pid), "arg0"), "hello from demo");
	am_one(&r, "X", "outer", r.pid);
	am_one(&r, "X", "inner", r.pid);
}

static void test_cxx_exceptions_with_their_types(void **state)
{
	static const char *const want[][2] = {
		{ "C++ throw", "std::runtime_error" }, { "C++ catch", "std::runtime_error" },
		{ "C++ throw", "demo::Oops" }, { "C++ catch", "demo::Oops" },
		{ "C++ throw", "int" }, { "C++ catch", "int" },
		{ "C++ throw", "std::runtime_error" }, { "C++ catch", "std::runtime_error" },
		{ "C++ throw", "demo::Oops" }, { "C++ catch", "demo::Oops" },
		{ "C++ throw", "int" }, { "C++ catch", "int" },
		{ "C++ throw", "std::logic_error" }, { "C++ catch", "std::logic_error" },
		{ "C++ rethrow", "std::logic_error" }, { "C++ catch", "std::logic_error" },
	};
	const char *const specs[] = { "--usdt", "cxx" };
	cJSON *ev;
	size_t i = 0;

	(void)state;
	launch("cxx_exceptions", specs, 2);
	cJSON_ArrayForEach(ev, r.events) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));

		if (!name || strncmp(name, "C++ ", 4))
			continue;
		if (i == sizeof(want) / sizeof(want[0]))
			fail_msg("more exception events than the program made");
		assert_string_equal(name, want[i][0]);
		assert_string_equal(am_arg_str(ev, "type"), want[i][1]);
		i++;
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
}

#define PYTHON "/usr/bin/python3.11"

static void test_python_gc_imports_and_missing_entries(void **state)
{
	const char *const argv[] = {
		"--usdt", "python", "--", PYTHON, "-c",
		"import gc\n"
		"gc.collect()\n"
		"import fractions\n"
		"def f(n):\n    return n + 1\n"
		"for i in range(300):\n    f(i)\n",
		NULL,
	};
	cJSON *gc = NULL, *ev, *usdt, *spec;
	size_t gen2 = 0;

	(void)state;
	tr_require_root();
	if (access(PYTHON, X_OK))
		fail_msg(PYTHON " is not installed (scripts/install-deps test installs it)");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_start_tracer(&r, argv);
	am_finish(&r, TR_TIMEOUT_MS);
	/* gc.collect(): a collection of generation 2 (and the interpreter's own at its exit). */
	cJSON_ArrayForEach(ev, r.events) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));

		if (name && !strcmp(name, "gc") && am_arg_num(ev, "generation") == 2) {
			gen2++;
			gc = ev;
		}
	}
	assert_true(gen2 >= 1);
	assert_true(am_arg_num(gc, "collected") >= 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(gc, "ph")), "X");
	assert_string_equal(am_arg_str(am_one(&r, "X", "fractions", NAN), "module"), "fractions");
	/* gh-98894: said, and f's 300 returns without their entries are not spans. */
	assert_non_null(strstr(r.tracer_stderr, "gh-98894"));
	usdt = cJSON_GetObjectItem(cJSON_GetObjectItem(r.trace, "metadata"), "usdt");
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(usdt, "warning")), "gh-98894"));
	spec = spec_counts("python:function__entry");
	assert_true(count(spec, "ends_without_begin") >= 300);
	assert_int_equal(am_count(&r, "X", "f", NAN), 0);
}

static void test_a_bad_spec_is_one_line(void **state)
{
	const char *const argv[] = { "--usdt", "demo", "--", "/bin/true", NULL };

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_start_tracer(&r, argv);
	am_wait_tracer(&r, TR_TIMEOUT_MS);
	assert_int_equal(r.tracer_exit, 2);
	assert_non_null(strstr(r.tracer_stderr, "not a preset (cxx, python, postgres, java) nor PROVIDER:NAME"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_arguments_typed_as_their_notes_say, free_all),
		cmocka_unit_test_teardown(test_spans_nest_and_cut_pairs_are_counted, free_all),
		cmocka_unit_test_teardown(test_attached_to_a_running_process, free_all),
		cmocka_unit_test_teardown(test_cxx_exceptions_with_their_types, free_all),
		cmocka_unit_test_teardown(test_python_gc_imports_and_missing_entries, free_all),
		cmocka_unit_test_teardown(test_a_bad_spec_is_one_line, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
