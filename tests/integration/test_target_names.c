// SPDX-License-Identifier: MIT
/*
 * test_target_names - what a trace says the traced program is, when the
 * program changed it under us:
 *   - metadata.target.cmdline of a program that retitled itself over its
 *     argument area (tests/programs/retitle, as setproctitle does) is its
 *     title alone, not the title followed by the NULs or the old
 *     arguments' tail that /proc/PID/cmdline returns; a program's own
 *     empty argument is still kept;
 *   - OTLP's service.name (and process.executable.name and .path) of a
 *     program whose file was deleted while it runs (rebuilt, upgraded) is
 *     its file's, without the " (deleted)" the kernel adds to /proc/PID/exe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define TITLE "retitle: worker"
/* More than the 64 bytes retitle's head mode zeroes. */
#define LONG_ARG_1 "--config=/etc/a-server/with-a-rather-long-configuration-file-name.conf"
#define LONG_ARG_2 "--port=6379"

static struct trace_run r;

static int free_run(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

/* metadata.target.cmdline of the run: its strings, how many. */
static size_t cmdline_of(const char **out, size_t max)
{
	cJSON *target = cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "target");
	cJSON *cmdline = cJSON_GetObjectItemCaseSensitive(target, "cmdline"), *s;
	size_t n = 0;

	assert_true(cJSON_IsArray(cmdline));
	cJSON_ArrayForEach(s, cmdline) {
		assert_true(cJSON_IsString(s));
		if (n < max)
			out[n] = s->valuestring;
		n++;
	}
	return n;
}

static void assert_title_alone(const char *mode)
{
	const char *const args[] = { mode, LONG_ARG_1, LONG_ARG_2, NULL };
	const char *v[8];
	size_t n;

	tr_run_ok(&r, "retitle", args, NULL);
	n = cmdline_of(v, 8);
	if (n != 1)
		fail_msg("cmdline of a program retitled (%s) has %zu strings, not 1 (the title); the second: '%s'",
			 mode, n, n > 1 ? v[1] : "");
	assert_string_equal(v[0], TITLE);
}

/* The whole area zeroed, then the title: /proc says the title and 90-odd empty strings. */
static void test_retitled_whole_area(void **state)
{
	(void)state;
	assert_title_alone("whole");
}

/* Its head zeroed, then the title: /proc says the title, empty strings, then the old tail. */
static void test_retitled_head(void **state)
{
	(void)state;
	assert_title_alone("head");
}

/* Not retitled: every argument, an empty one too. */
static void test_not_retitled_keeps_empty_argument(void **state)
{
	const char *const args[] = { "none", "a", "", "b", NULL };
	const char *v[8];
	char prog[300];

	(void)state;
	tr_run_ok(&r, "retitle", args, NULL);
	assert_int_equal(cmdline_of(v, 8), 5);
	tr_program_path("retitle", prog, sizeof(prog));
	assert_string_equal(v[0], prog);
	assert_string_equal(v[1], "none");
	assert_string_equal(v[2], "a");
	assert_string_equal(v[3], "");
	assert_string_equal(v[4], "b");
}

/* The string value of attribute key in a resource (NULL: absent). */
static const char *attr_str(const cJSON *resource, const char *key)
{
	cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(resource, "attributes")) {
		if (!strcmp(tr_str(a, "key"), key))
			return tr_str(cJSON_GetObjectItemCaseSensitive(a, "value"), "stringValue");
	}
	return NULL;
}

/* A program whose file is deleted while it runs: service.name is still its file's name. */
static void test_deleted_program_service_name(void **state)
{
	char src[300], exe[300], path[300], *text, *line, *save = NULL;
	const char *const prog_args[] = { "none", NULL };
	const char *const tracer_args[] = { "-q", NULL };
	size_t resources = 0;

	(void)state;
	tr_require_root();
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	tr_program_abspath("retitle", src, sizeof(src));
	snprintf(exe, sizeof(exe), "%s/rebuilt-server", r.dir);
	if (tr_shell("cp '%s' '%s'", src, exe) != 0)
		fail_msg("cannot copy %s", src);
	snprintf(r.trace_path, sizeof(r.trace_path), "%s/run.otlp.json", r.dir);
	snprintf(path, sizeof(path), "%s", r.trace_path);
	if (tr_start_program(&r, exe, prog_args) < 0 || tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(unlink(exe), 0);
	if (tr_start_tracer(&r, tracer_args) < 0 || tr_wait(&r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.tracer_exit, 0);
	assert_int_equal(r.prog_exit, 0);
	text = tr_read_file(path, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *doc = cJSON_Parse(line), *rs;

		assert_non_null(doc);
		cJSON_ArrayForEach(rs, cJSON_GetObjectItemCaseSensitive(doc, "resourceSpans")) {
			const cJSON *res = cJSON_GetObjectItemCaseSensitive(rs, "resource");

			assert_string_equal(attr_str(res, "service.name"), "rebuilt-server");
			assert_string_equal(attr_str(res, "process.executable.name"), "rebuilt-server");
			assert_string_equal(attr_str(res, "process.executable.path"), exe);
			resources++;
		}
		cJSON_Delete(doc);
	}
	free(text);
	assert_true(resources >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_retitled_whole_area, free_run),
		cmocka_unit_test_teardown(test_retitled_head, free_run),
		cmocka_unit_test_teardown(test_not_retitled_keeps_empty_argument, free_run),
		cmocka_unit_test_teardown(test_deleted_program_service_name, free_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
