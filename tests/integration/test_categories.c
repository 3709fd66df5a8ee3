// SPDX-License-Identifier: MIT
/*
 * test_categories - categories (include/ctrace.h: CTRACE_CATEGORY,
 * CTRACE_IN) with the real tracer and real BPF, on the program of
 * tests/programs/categories/, built here the way users build theirs: the
 * default category ctrace and one CTRACE_IN(verbose, ...) site in main.c,
 * net.c and db.c one category each, libcatplugin.so (linked) of its own.
 *
 *   - every event's "cat" is its site's category, each event there the
 *     number of times its site ran (spans, scopes, instants, counters);
 *   - --categories net,db traces only those; --categories -verbose all but
 *     that; and the sites of the others never evaluated their arguments
 *     and their semaphores stayed 0, while each traced category's
 *     semaphore holds exactly one reference (the program reads them while
 *     traced);
 *   - both event paths: batched (every category's sites batch, each event
 *     carrying its category; metadata.event_path "batched" and
 *     metadata.batch.events every event the sites emitted) and per event
 *     (--no-batch, CTRACE_NO_BATCH=1);
 *   - 4000 events of three categories interleaved on one thread (typed
 *     args and counters: both ways a batched event is appended), several
 *     buffers' worth: each with its own category, in the order they ran,
 *     kept + dropped == emitted;
 *   - `list` shows each site's category;
 *   - a bad --categories is one line and exit 2;
 *   - Chrome DevTools' engine reads the trace.
 * Without BPF cookies (make test-program-sets: probe_read) the category
 * of a per-event site is not known: such events must then be "(unknown)"
 * and counted in metadata.events_of_unknown_category, never another name.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"
#include "../programs/categories/cats.h"

#define SRC "tests/programs/categories"
#define ROUNDS 3 /* main.c's */

static char dir[64], program[128], plugin[128];
static char build_error[4096];

static int group_setup(void **state)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	const char *flags = "-O2 -g -Wall -Wextra -Werror -pedantic -std=gnu11 -Iinclude -pthread";
	char log[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctrace-cats-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(build_error, sizeof(build_error), "mkdtemp failed");
		return 0;
	}
	chmod(dir, 0755);
	snprintf(program, sizeof(program), "%s/categories", dir);
	snprintf(plugin, sizeof(plugin), "%s/libcatplugin.so", dir);
	snprintf(log, sizeof(log), "%s/build.log", dir);
	if (tr_shell("%s %s -fPIC -shared -DCTRACE_CATEGORY=plugin " SRC "/plugin.c -o %s >%s 2>&1 && "
		     "%s %s " SRC "/main.c " SRC "/net.c " SRC "/db.c -L%s -lcatplugin -Wl,-rpath,%s -o %s >>%s 2>&1",
		     cc, flags, plugin, log, cc, flags, dir, dir, program, log) != 0) {
		char *text = tr_read_file(log, NULL);

		snprintf(build_error, sizeof(build_error), "building %s: %s", program, text ? text : "?");
		free(text);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (dir[0] && !getenv("CTRACE_TEST_KEEP"))
		tr_shell("rm -rf %s", dir);
	return 0;
}

static void need_program(void)
{
	if (build_error[0])
		fail_msg("%s", build_error);
}

/* The category each event name of the program belongs to. */
static const struct {
	const char *name, *ph, *cat;
} sites[] = {
	{ "ctrace-instant", "I", "ctrace" },   { "ctrace-scope", "X", "ctrace" },
	{ "verbose-instant", "I", "verbose" }, { "net-span", "X", "net" },
	{ "net-instant", "I", "net" },         { "net-counter", "C", "net" },
	{ "net-scope", "X", "net" },           { "db-instant", "I", "db" },
	{ "plugin-instant", "I", "plugin" },
};
#define N_SITES (sizeof(sites) / sizeof(sites[0]))
static const char *const all_cats[] = { "ctrace", "verbose", "net", "db", "plugin" };
#define N_CATS (sizeof(all_cats) / sizeof(all_cats[0]))

static bool listed(const char *list, const char *cat)
{
	size_t n = strlen(cat);

	for (const char *p = list; (p = strstr(p, cat)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* The program's report line of one category: armed, semaphore, evaluations. */
static void report_of(const struct trace_run *r, const char *cat, int *armed, unsigned *sem,
		      unsigned *evals)
{
	char key[64];
	const char *line;

	snprintf(key, sizeof(key), "cat %s ", cat);
	line = r->prog_stdout ? strstr(r->prog_stdout, key) : NULL;
	if (!line || sscanf(line + strlen(key), "armed=%d semaphore=%u evals=%u", armed, sem, evals) != 3)
		fail_msg("no report of category %s in the program's output:\n%s", cat,
			 r->prog_stdout ? r->prog_stdout : "");
}

/* The category and phase of the program's "order" event i (cats.h), and its number's key. */
static const struct {
	const char *cat, *ph, *key;
} order_kinds[4] = {
	{ "ctrace", "I", "i" }, { "verbose", "I", "i" }, { "net", "C", "value" }, { "ctrace", "C", "value" },
};

static int by_ts(const void *a, const void *b)
{
	double x = tr_num(*(cJSON *const *)a, "ts"), y = tr_num(*(cJSON *const *)b, "ts");

	return x < y ? -1 : x > y;
}

/*
 * The "order" events: those of the traced categories, each of its own
 * category, in the order they ran; kept + dropped == emitted. Returns how
 * many the program emitted (the traced ones).
 */
static size_t check_order(const struct trace_run *r, const char *traced, bool known)
{
	static cJSON *ev[ORDER_EVENTS + 1];
	size_t emitted = 0, kept = 0, next = 0;
	double dropped = tr_meta_num(r, "dropped_events");
	cJSON *e;

	for (int i = 0; i < ORDER_EVENTS; i++)
		emitted += listed(traced, order_kinds[i % 4].cat);
	cJSON_ArrayForEach(e, r->events) {
		const char *name = tr_str(e, "name");

		if (name && !strcmp(name, "order") && kept <= ORDER_EVENTS)
			ev[kept++] = e;
	}
	if ((double)kept + dropped != (double)emitted)
		fail_msg("order: %zu kept + %g dropped, %zu emitted", kept, dropped, emitted);
	/* Stable: events of one thread are written in their order, and their times never go back. */
	for (size_t i = 1; i < kept; i++)
		for (size_t k = i; k > 0 && by_ts(&ev[k - 1], &ev[k]) > 0; k--) {
			cJSON *t = ev[k];

			ev[k] = ev[k - 1];
			ev[k - 1] = t;
		}
	for (size_t k = 0; k < kept; k++) {
		cJSON *args = cJSON_GetObjectItemCaseSensitive(ev[k], "args");
		const char *cat = tr_str(ev[k], "cat");
		double v;
		int i, kind;

		/* The next one emitted that is traced: its number, kind and category. */
		while (!listed(traced, order_kinds[next % 4].cat))
			next++;
		kind = (int)(next % 4);
		v = tr_num(args, order_kinds[kind].key);
		i = (int)v;
		if (dropped == 0 && (size_t)i != next)
			fail_msg("order: event %zu by time is number %g, expected %zu (out of order)", k, v, next);
		if (i < (int)next)
			fail_msg("order: event %zu by time is number %g, after %zu (out of order)", k, v, next);
		next = (size_t)i + 1;
		kind = i % 4;
		if (strcmp(tr_str(ev[k], "ph"), order_kinds[kind].ph) ||
		    !cat || strcmp(cat, known ? order_kinds[kind].cat : "(unknown)"))
			fail_msg("order %d: ph %s cat %s, expected %s %s", i, tr_str(ev[k], "ph"), cat ? cat : "(none)",
				 order_kinds[kind].ph, known ? order_kinds[kind].cat : "(unknown)");
	}
	return emitted;
}

/* Batched unless --no-batch is among the tracer's arguments or CTRACE_NO_BATCH=1 (the suite's per-event run). */
static bool batch_wanted(const char *const *tracer_args)
{
	const char *env = getenv("CTRACE_NO_BATCH");

	for (size_t i = 0; tracer_args && tracer_args[i]; i++)
		if (!strcmp(tracer_args[i], "--no-batch"))
			return false;
	return !env || strcmp(env, "1");
}

/*
 * Traces the program with `option` (NULL: none; e.g. "--categories" and
 * `value`), expecting the categories `traced` (comma-separated) and
 * checking the trace and the program's report event by event.
 */
static void run_and_check(const char *traced, const char *const *tracer_args, bool devtools)
{
	const char *filter = "";
	const char *const prog_args[] = { traced, NULL };
	struct trace_run r;
	bool cookies, batched;
	cJSON *meta;
	double unknown;
	size_t n_unknown = 0, emitted = 0, n_order;

	need_program();
	for (size_t i = 0; tracer_args && tracer_args[i]; i++)
		if (!strcmp(tracer_args[i], "--categories"))
			filter = tracer_args[i + 1];
	tr_run_ok(&r, program, prog_args, tracer_args);
	meta = tr_meta(&r);
	assert_non_null(meta);
	/* The trace says which categories were asked for ("": all). */
	assert_non_null(tr_str(meta, "categories"));
	assert_string_equal(tr_str(meta, "categories"), filter);
	cookies = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(meta, "bpf_cookies"));
	batched = tr_str(meta, "event_path") && !strcmp(tr_str(meta, "event_path"), "batched");
	if (batched != batch_wanted(tracer_args))
		fail_msg("metadata.event_path %s, expected %s", tr_str(meta, "event_path") ? tr_str(meta, "event_path") : "(none)",
			 batch_wanted(tracer_args) ? "batched" : "per_event");

	for (size_t i = 0; i < N_SITES; i++) {
		cJSON *ev[2 * ROUNDS];
		size_t n = tr_find_all(&r, sites[i].ph, sites[i].name, ev, 2 * ROUNDS);
		bool on = listed(traced, sites[i].cat);
		/* Without cookies only a batched event knows its category (it carries it). */
		bool known = cookies || batched;
		const char *want = known ? sites[i].cat : "(unknown)";

		if (n != (on ? ROUNDS : 0))
			fail_msg("%s (category %s, %s): %zu events, expected %d", sites[i].name, sites[i].cat,
				 on ? "traced" : "not traced", n, on ? ROUNDS : 0);
		for (size_t k = 0; k < n; k++) {
			const char *cat = tr_str(ev[k], "cat");

			if (!cat || strcmp(cat, want))
				fail_msg("%s: cat %s, expected %s (bpf_cookies %d, event path %s)", sites[i].name,
					 cat ? cat : "(none)", want, cookies, batched ? "batched" : "per event");
			/* Each X is one span: a begin and an end record (both unknown without cookies). */
			n_unknown += !known ? (strcmp(sites[i].ph, "X") || strstr(sites[i].name, "scope") ? 1 : 2) : 0;
			emitted += strcmp(sites[i].ph, "X") || strstr(sites[i].name, "scope") ? 1 : 2;
		}
	}
	n_order = check_order(&r, traced, cookies || batched);
	n_unknown += cookies || batched ? 0 : n_order;
	/* Every event of every category took the batched path: none fell back to a probe hit. */
	if (batched && tr_num(cJSON_GetObjectItemCaseSensitive(meta, "batch"), "events") != (double)(emitted + n_order))
		fail_msg("metadata.batch.events %g, expected every event the sites emitted, %zu",
			 tr_num(cJSON_GetObjectItemCaseSensitive(meta, "batch"), "events"), emitted + n_order);
	unknown = tr_meta_num(&r, "events_of_unknown_category");
	if (unknown != (double)n_unknown)
		fail_msg("metadata.events_of_unknown_category %g, expected %zu", unknown, n_unknown);

	for (size_t c = 0; c < N_CATS; c++) {
		int armed;
		unsigned sem, evals;

		report_of(&r, all_cats[c], &armed, &sem, &evals);
		if (listed(traced, all_cats[c])) {
			/* One reference a traced category's semaphore, whatever its number of sites. */
			if (!armed || sem != 1 || evals == 0)
				fail_msg("traced category %s: armed=%d semaphore=%u evals=%u, expected 1, 1, > 0",
					 all_cats[c], armed, sem, evals);
		} else if (armed || sem != 0 || evals != 0) {
			fail_msg("untraced category %s: armed=%d semaphore=%u evals=%u, expected all 0 "
				 "(its sites must cost what an untraced site costs)",
				 all_cats[c], armed, sem, evals);
		}
	}
	if (devtools)
		cJSON_Delete(tr_checker_summary(r.trace_path));
	tr_free(&r);
}

static void test_every_category_by_default(void **state)
{
	(void)state;
	run_and_check("ctrace,verbose,net,db,plugin", NULL, true);
}

static void test_only_the_named_categories(void **state)
{
	const char *const args[] = { "--categories", "net,db", NULL };

	(void)state;
	run_and_check("net,db", args, false);
}

static void test_all_but_the_excluded_category(void **state)
{
	const char *const args[] = { "--categories", "-verbose", NULL };

	(void)state;
	run_and_check("ctrace,net,db,plugin", args, false);
}

static void test_library_and_default_per_event(void **state)
{
	const char *const args[] = { "--no-batch", "--categories", "plugin,ctrace", NULL };

	(void)state;
	run_and_check("ctrace,plugin", args, false);
}

/* `list`: each ctrace site's cat=, in the program and in its library. */
static void test_list_shows_categories(void **state)
{
	static const struct {
		const char *file, *name, *cat;
		unsigned n;
	} want[] = {
		{ program, "instant", "verbose", 2 },    { program, "instant", "ctrace", 2 },
		{ program, "counter_set", "ctrace", 1 }, { program, "scope_tsc", "ctrace", 1 },
		{ program, "span_begin", "net", 1 },     { program, "span_end", "net", 1 },
		{ program, "instant", "net", 1 },        { program, "counter_set", "net", 2 },
		{ program, "scope_tsc", "net", 1 },
		{ program, "instant", "db", 1 },      { plugin, "instant", "plugin", 1 },
	};
	struct tr_cmd c = { 0 };

	(void)state;
	need_program();
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *const args[] = { want[i].file, NULL };
		char pattern[256];
		unsigned seen = 0;

		cli_run_tracer(&c, NULL, "list", args, 20000);
		assert_int_equal(c.exit, 0);
		snprintf(pattern, sizeof(pattern), ":ctrace:%s ", want[i].name);
		for (const char *p = c.out; (p = strstr(p, pattern)); p++) {
			const char *eol = strchr(p, '\n'), *cat = strstr(p, " cat=");
			size_t len = strlen(want[i].cat);

			if (cat && (!eol || cat < eol) && !strncmp(cat + 5, want[i].cat, len) && cat[5 + len] == ' ')
				seen++;
		}
		if (seen != want[i].n)
			fail_msg("list %s: %u ctrace:%s sites with cat=%s, expected %u:\n%s", want[i].file, seen,
				 want[i].name, want[i].cat, want[i].n, c.out);
	}
	tr_cmd_free(&c);
}

/* A --categories that names none of the process's categories says so (not "no probes"). */
static void test_none_of_the_named_categories(void **state)
{
	const char *const prog_args[] = { "net", NULL }; /* waits for net, which never comes */
	const char *const tracer_args[] = { "--categories", "nte", "-d", "0.5", NULL };
	struct trace_run r;

	(void)state;
	need_program();
	tr_require_root();
	if (tr_init(&r) || tr_start_program(&r, program, prog_args) || tr_wait_line(&r, "ready", 10000) ||
	    tr_start_tracer(&r, tracer_args) || tr_wait_tracer(&r, 20000))
		fail_msg("%s", r.error);
	if (!strstr(r.tracer_stderr, "none of the categories --categories names"))
		fail_msg("stderr: %s", r.tracer_stderr);
	assert_int_equal(r.tracer_exit, 0);
	kill(r.prog.pid, SIGTERM);
	tr_wait(&r, 20000);
	/* Killed while waiting: it never saw net armed, so it reported nothing. */
	assert_null(strstr(r.prog_stdout ? r.prog_stdout : "", "cat net armed=1"));
	tr_free(&r);
}

static void test_bad_categories_option(void **state)
{
	static const char *const bad[] = { "", "net,,db", "-", "n-et", "9lives" };
	struct tr_cmd c = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const args[] = { "--categories", bad[i], "-p", "1", NULL };

		cli_run_tracer(&c, NULL, NULL, args, 20000);
		/* One line that says what the option takes (its example). */
		if (c.exit != 2 || !strstr(c.err, "--categories") || !strstr(c.err, "net,db") ||
		    strchr(c.err, '\n') != c.err + strlen(c.err) - 1)
			fail_msg("--categories '%s': exit %d, stderr '%s' (expected 2 and one line)", bad[i], c.exit,
				 c.err);
	}
	tr_cmd_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_category_by_default),
		cmocka_unit_test(test_only_the_named_categories),
		cmocka_unit_test(test_all_but_the_excluded_category),
		cmocka_unit_test(test_library_and_default_per_event),
		cmocka_unit_test(test_list_shows_categories),
		cmocka_unit_test(test_none_of_the_named_categories),
		cmocka_unit_test(test_bad_categories_option),
	};

	return cmocka_run_group_tests_name("categories", tests, group_setup, group_teardown);
}
