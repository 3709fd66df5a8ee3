// SPDX-License-Identifier: MIT
/*
 * test_cold_strings - names on pages the traced process never touched
 * (tests/programs/cold_strings), one ending at the last byte before an
 * inaccessible page. Whatever program set the loader took (or
 * CTRACE_PROGRAM_SET forced: `make test-program-sets` runs this under each),
 * every name is in the trace: a sleepable set faults the pages in inside
 * the probe (metadata.late_string_reads stays 0); probe_read cannot, and
 * the loader reads them from the process (late_string_reads counts them).
 * When the process is gone before the loader could, they are read from the
 * file they were mapped from (metadata.file_string_reads), or counted lost.
 *
 * Per-event probes (--no-batch): that is the path a probe reads strings on.
 * Batched, the site copies a non-literal name itself (touching its page),
 * which test_batch covers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

static struct trace_run r;
static const char *const per_event[] = { "--no-batch", NULL };

static int free_run(void **state)
{
	(void)state;
	tr_free(&r);
	return 0;
}

static size_t count(const char *ph, const char *name)
{
	cJSON *all[8];

	return tr_find_all(&r, ph, name, all, 8);
}

/* Events carrying each name, right; the counter's value too. */
static int names_found(void)
{
	cJSON *c = tr_find(&r, "C", "cold-counter");

	if (c && tr_num(cJSON_GetObjectItem(c, "args"), "value") != 7)
		fail_msg("cold-counter = %g, expected 7",
			 tr_num(cJSON_GetObjectItem(c, "args"), "value"));
	return (int)count("I", "edge-name") + (int)count("I", "cold-name") + (c != NULL);
}

static void test_cold_names_are_read(void **state)
{
	cJSON *md;
	const char *set;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "cold_strings", NULL, per_event) < 0)
		fail_msg("%s", r.error);
	assert_int_equal(r.prog_exit, 0);
	md = tr_meta(&r);
	set = tr_str(md, "program_set");
	if (!set)
		fail_msg("the trace's metadata has no \"program_set\"");
	assert_int_equal(count("I", "edge-name"), 1);
	assert_int_equal(count("I", "cold-name"), 1);
	assert_int_equal(names_found(), 3);
	assert_true(tr_num(md, "unreadable_strings") == 0);
	if (!strcmp(set, "probe_read")) {
		/* The probe could not read them; the loader did. */
		if (tr_num(md, "late_string_reads") != 3)
			fail_msg("probe_read: %g late string reads, expected 3",
				 tr_num(md, "late_string_reads"));
	} else if (tr_num(md, "late_string_reads") != 0) {
		fail_msg("%s: %g strings were not read by the probe (it should fault their pages in)",
			 set, tr_num(md, "late_string_reads"));
	}
}

/* The process exits at once: what nobody could read is counted, never lost silently. */
static void test_cold_names_of_a_process_gone(void **state)
{
	static const char *const args[] = { "0", NULL };
	cJSON *md;
	const char *set;
	int found;

	(void)state;
	tr_require_root();
	if (tr_run(&r, "cold_strings", args, per_event) < 0)
		fail_msg("%s", r.error);
	md = tr_meta(&r);
	set = tr_str(md, "program_set");
	if (!set)
		fail_msg("the trace's metadata has no \"program_set\"");
	found = names_found();
	if (found + (int)tr_num(md, "unreadable_strings") != 3)
		fail_msg("%s: %d names in the trace and %g counted unreadable, of 3",
			 set, found, tr_num(md, "unreadable_strings"));
	/* Read-only file pages: what the process's memory no longer gives, the file does. */
	assert_int_equal(found, 3);
	if (!strcmp(set, "probe_read") &&
	    tr_num(md, "late_string_reads") + tr_num(md, "file_string_reads") != 3)
		fail_msg("probe_read: %g strings read from the process and %g from its file, expected 3 in all",
			 tr_num(md, "late_string_reads"), tr_num(md, "file_string_reads"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cold_names_are_read, free_run),
		cmocka_unit_test_teardown(test_cold_names_of_a_process_gone, free_run),
	};

	return cmocka_run_group_tests_name("cold_strings", tests, NULL, NULL);
}
