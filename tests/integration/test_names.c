// SPDX-License-Identifier: MIT
/*
 * test_names - thread names and track order: tests/programs/names traced by
 * the real tracer, in both event paths. What a user relies on:
 *   - CTRACE_THREAD_NAME names the thread in the trace, whole (longer than
 *     the kernel's 15-byte comm), and keeps it while the tracer reads
 *     /proc's names (every 100 ms: the comm there must not undo it);
 *   - a thread renamed with pthread_setname_np and then with prctl while
 *     traced is renamed in the trace each time, at the right moment (a
 *     "ctrace: thread renamed" instant between the events around it), even
 *     when both renames and its exit fall between two of the tracer's
 *     looks at /proc; so is a thread renamed by another thread;
 *   - CTRACE_PROCESS_SORT_INDEX / CTRACE_THREAD_SORT_INDEX write the
 *     process_sort_index / thread_sort_index metadata events;
 *   - Chrome DevTools' trace engine reads the file and shows the last name.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define GIVEN_NAME "acceptor: a name longer than the kernel's fifteen bytes"

static const char *const no_batch[] = { "--no-batch", NULL };

/* tid=N from the program's stdout line "KEY=N" */
static double tid_of(const struct trace_run *r, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(r->prog_stdout, pat);
	assert_non_null(p);
	return atof(p + strlen(pat));
}

/* The names the trace gave thread tid, in file order (viewers keep the last). */
static size_t names_of(const struct trace_run *r, double tid, const char **out, size_t max)
{
	cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events) {
		if (strcmp(tr_str(ev, "ph"), "M") || strcmp(tr_str(ev, "name"), "thread_name") ||
		    tr_num(ev, "pid") != (double)r->pid || tr_num(ev, "tid") != tid)
			continue;
		if (n < max)
			out[n] = cJSON_GetStringValue(tr_arg(ev, "name"));
		n++;
	}
	return n;
}

/* The instant `name` on thread tid (exactly one). */
static cJSON *instant_on(const struct trace_run *r, const char *name, double tid, const char *arg)
{
	cJSON *found[8], *hit = NULL;
	size_t n = tr_find_all(r, "I", name, found, 8);

	for (size_t i = 0; i < n; i++) {
		if (tr_num(found[i], "tid") != tid)
			continue;
		if (arg && (!tr_arg(found[i], "name") ||
			    strcmp(cJSON_GetStringValue(tr_arg(found[i], "name")), arg)))
			continue;
		assert_null(hit);
		hit = found[i];
	}
	assert_non_null(hit);
	return hit;
}

static void before(const cJSON *a, const cJSON *b)
{
	assert_true(tr_num(a, "ts") <= tr_num(b, "ts"));
}

static void names(const char *const *tracer_args)
{
	struct trace_run r;
	const char *got[16];
	double given, renamer, other;
	bool renames_told;
	size_t n;
	cJSON *sort, *sum, *threads;
	char key[64];

	tr_run_ok(&r, "names", NULL, tracer_args);
	given = tid_of(&r, "given_tid");
	renamer = tid_of(&r, "renamer_tid");
	other = tid_of(&r, "other_tid");

	/* Named by the macro, whole, and never named back to its comm. */
	n = names_of(&r, given, got, 16);
	assert_true(n >= 1 && n <= 16);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got[i], GIVEN_NAME);
	before(instant_on(&r, "named", given, NULL), instant_on(&r, "still named", given, NULL));

	/*
	 * Renamed twice, by itself, both shown in order, the last one kept.
	 * The kernel telling each rename, a thread has its first name and one
	 * per rename, whenever the tracer looked at /proc.
	 */
	renames_told = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr_meta(&r), "thread_renames_watched"));
	n = names_of(&r, renamer, got, 16);
	assert_true(n >= 2 && n <= 16);
	if (renames_told)
		assert_int_equal(n, 3);
	assert_string_equal(got[n - 1], "renamed-two");
	assert_string_equal(got[n - 2], "renamed-one");
	{
		cJSON *b = instant_on(&r, "before", renamer, NULL);
		cJSON *r1 = instant_on(&r, "ctrace: thread renamed", renamer, "renamed-one");
		cJSON *a1 = instant_on(&r, "after-setname", renamer, NULL);
		cJSON *r2 = instant_on(&r, "ctrace: thread renamed", renamer, "renamed-two");
		cJSON *a2 = instant_on(&r, "after-prctl", renamer, NULL);

		before(b, r1);
		before(r1, a1);
		before(a1, r2);
		before(r2, a2);
	}
	/* Renamed by another thread. */
	n = names_of(&r, other, got, 16);
	assert_true(n >= 1 && n <= 16);
	if (renames_told)
		assert_int_equal(n, 2);
	assert_string_equal(got[n - 1], "renamed-by-main");
	before(instant_on(&r, "other-before", other, NULL),
	       instant_on(&r, "ctrace: thread renamed", other, "renamed-by-main"));
	before(instant_on(&r, "ctrace: thread renamed", other, "renamed-by-main"),
	       instant_on(&r, "other-after", other, NULL));
	assert_true(tr_meta_num(&r, "thread_renames") >= 3);

	/* The main thread named by a literal; its process keeps the program's name. */
	n = names_of(&r, (double)r.main_tid, got, 16);
	assert_true(n >= 1 && n <= 16);
	assert_string_equal(got[n - 1], "main: the loop");
	sort = tr_find_meta(&r, "process_name", (double)r.pid, (double)r.pid);
	assert_non_null(sort);
	assert_string_equal(cJSON_GetStringValue(tr_arg(sort, "name")), "names");

	/* Sort indexes: the seed's metadata events, on the process and the main thread. */
	sort = tr_find_meta(&r, "process_sort_index", (double)r.pid, (double)r.pid);
	assert_non_null(sort);
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(sort, "args"), "sort_index") == -3);
	sort = tr_find_meta(&r, "thread_sort_index", (double)r.pid, (double)r.main_tid);
	assert_non_null(sort);
	assert_true(tr_num(cJSON_GetObjectItemCaseSensitive(sort, "args"), "sort_index") == 5);

	/* DevTools' engine reads the file and keeps each thread's last name. */
	sum = tr_checker_summary(r.trace_path);
	threads = cJSON_GetObjectItemCaseSensitive(sum, "threads");
	snprintf(key, sizeof(key), "%ld:%.0f", r.pid, given);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(threads, key)), GIVEN_NAME);
	snprintf(key, sizeof(key), "%ld:%.0f", r.pid, renamer);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(threads, key)), "renamed-two");
	snprintf(key, sizeof(key), "%ld:%.0f", r.pid, other);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(threads, key)), "renamed-by-main");
	cJSON_Delete(sum);
	tr_free(&r);
}

static void test_names_and_renames(void **state)
{
	(void)state;
	names(NULL);
}

static void test_names_and_renames_per_event(void **state)
{
	(void)state;
	names(no_batch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_renames),
		cmocka_unit_test(test_names_and_renames_per_event),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
