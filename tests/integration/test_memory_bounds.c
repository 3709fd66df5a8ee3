// SPDX-License-Identifier: MIT
/*
 * test_memory_bounds - the traced process must not be able to take the
 * host's memory through the tracer. tests/programs/table_flood floods one
 * table of the loader at a time (a million BEGINs without END, a million
 * counter names, NEW_PIDs without DISCARD, NEW_PIDs on one marker) under the
 * real tracer, and each test checks what a user relies on:
 *   - the tracer's peak RSS (wait4's ru_maxrss) stays under --max-memory
 *     plus the ring buffer (-b, 8 MiB by default);
 *   - the trace is strict JSON; metadata.memory counts the table's
 *     evictions, and one instant "ctrace: memory bound reached" per table
 *     shows the first of them (not one per eviction);
 *   - what the program does after the flood is in the trace: the loader
 *     lives, and pairs, counts and names right.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace_run.h"

#define RING_KIB (8 * 1024) /* the default -b */
#define PSEUDO_BASE 1073741824.0

struct flood {
	const char *mode, *n, *max_memory; /* max_memory NULL: the default */
	long ceiling_kib;
	long peak_kib; /* the tracer's VmHWM, last read before it exited */
	struct trace_run r;
};

/* The CPU time (utime + stime, in clock ticks) process `pid` has used; -1 once it is gone. */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime, stime;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
		return -1;
	return (long)(utime + stime);
}

/*
 * Once the program says "flood done": has the tracer caught up, i.e. used
 * no CPU over the last 300 ms (sampled every 2 ms, as the loop goes)? Then
 * the program is told to go on (SIGUSR1) with its after-flood events, which
 * must not find the ring still full of the flood: an ASan loader drains it
 * at ~50k events a second, far slower than the plain one.
 */
struct catch_up {
	bool told;
	long last_ticks;
	int idle_ms;
};

static void tell_when_caught_up(struct flood *f, struct catch_up *c)
{
	long ticks;

	char *out;
	bool done;

	if (c->told)
		return;
	out = tr_read_file(f->r.prog.out_path, NULL);
	done = out && strstr(out, "flood done");
	free(out);
	if (!done)
		return;
	ticks = cpu_ticks(f->r.tracer.pid);
	c->idle_ms = ticks == c->last_ticks ? c->idle_ms + 2 : 0;
	c->last_ticks = ticks;
	if (c->idle_ms >= 300) {
		kill(f->r.prog.pid, SIGUSR1);
		c->told = true;
	}
}

/*
 * Runs table_flood under the tracer, reading the tracer's VmHWM every 2 ms
 * until it exits (not wait4's ru_maxrss: that counts the test's own memory,
 * which the forked child held until its exec).
 */
static void run_flood(struct flood *f)
{
	const char *const prog_args[] = { f->mode, f->n, NULL };
	const char *const with_max[] = { "--max-memory", f->max_memory, NULL };
	struct trace_run *r = &f->r;
	struct catch_up caught = { 0 };
	siginfo_t si;

	tr_require_root();
	if (tr_init(r) < 0 || tr_start_program(r, "table_flood", prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 ||
	    tr_start_tracer(r, f->max_memory ? with_max : NULL) < 0)
		fail_msg("%s", r->error);
	for (;;) {
		long kib;

		memset(&si, 0, sizeof(si));
		/* Exited (a zombie, not yet reaped: its memory is gone)? */
		if (waitid(P_PID, (id_t)r->tracer.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    si.si_pid == r->tracer.pid)
			break;
		kib = tr_tracer_peak_kib(r->tracer.pid);
		if (kib > f->peak_kib)
			f->peak_kib = kib;
		tell_when_caught_up(f, &caught);
		usleep(2000);
	}
	if (tr_wait(r, TR_TIMEOUT_MS) < 0)
		fail_msg("%s", r->error);
	print_message("%s %s (--max-memory %s): tracer peak RSS %ld KiB (ceiling %ld KiB), %.1f s\n",
		      f->mode, f->n, f->max_memory ? f->max_memory : "default", f->peak_kib,
		      f->ceiling_kib, r->tracer_seconds);
	if (r->tracer_exit != 0)
		fail_msg("tracer exited %d: %s", r->tracer_exit, r->tracer_stderr);
	if (r->prog_exit != 0 || !strstr(r->prog_stdout, "still_armed=1"))
		fail_msg("table_flood exited %d: %s", r->prog_exit, r->prog_stdout);
	if (tr_load_trace(r) < 0)
		fail_msg("%s", r->error);
#ifdef __SANITIZE_ADDRESS__
	/*
	 * An ASan build (make SANITIZE=1, tracer and test alike) holds shadow
	 * memory and a quarantine of freed blocks that are not the tracer's:
	 * the plain build checks the ceiling, this one everything else.
	 */
	print_message("(ASan build: the RSS ceiling is checked by the plain build)\n");
	f->ceiling_kib = LONG_MAX;
#endif
	if (f->peak_kib <= 0 || f->peak_kib > f->ceiling_kib)
		fail_msg("the tracer's peak RSS was %ld KiB, over its ceiling of %ld KiB",
			 f->peak_kib, f->ceiling_kib);
}

static const cJSON *memory_table(const struct flood *f, const char *table)
{
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(tr_meta(&f->r), "memory");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(mem, "tables"), table);

	if (!t)
		fail_msg("metadata.memory.tables has no %s", table);
	return t;
}

/* The table gave back entries, and the trace says so once, with its rule. */
static double evicted_and_shown(const struct flood *f, const char *table)
{
	cJSON *notices[64];
	size_t n = tr_find_all(&f->r, "I", "ctrace: memory bound reached", notices, 64), mine = 0;
	double evicted = tr_num(memory_table(f, table), "evicted");

	if (!(evicted > 0))
		fail_msg("%s: metadata.memory.tables.%s.evicted is %g", f->mode, table, evicted);
	for (size_t i = 0; i < n; i++) {
		const cJSON *t = tr_arg(notices[i], "table");

		if (cJSON_IsString(t) && !strcmp(t->valuestring, table)) {
			mine++;
			if (!tr_str(cJSON_GetObjectItem(notices[i], "args"), "rule"))
				fail_msg("the %s notice says no rule", table);
		}
	}
	/* once per table: the trace does not grow with the evictions */
	if (mine != 1 || n > 9)
		fail_msg("%zu \"ctrace: memory bound reached\" instants for %s (%zu in all), %g evicted",
			 mine, table, n, evicted);
	return evicted;
}

/* The program's events after the flood: the loader lives and still models right. */
static void after_flood_arrived(const struct flood *f)
{
	cJSON *c[4];
	const cJSON *pseudo = tr_find(&f->r, "I", "after-pseudo");

	if (!tr_find(&f->r, "I", "after-flood") || !tr_find(&f->r, "X", "after-span"))
		fail_msg("%s: the events after the flood are missing", f->mode);
	if (tr_find_all(&f->r, "C", "after-counter", c, 4) != 2 ||
	    tr_num(cJSON_GetObjectItem(c[0], "args"), "value") != 3 ||
	    tr_num(cJSON_GetObjectItem(c[1], "args"), "value") != 6)
		fail_msg("%s: after-counter is not 3 then 6", f->mode);
	if (!pseudo || tr_num(pseudo, "pid") < PSEUDO_BASE)
		fail_msg("%s: after-pseudo is not in a pseudo-process", f->mode);
}

static void test_open_spans_bounded(void **state)
{
	struct flood f = { .mode = "spans", .n = "1000000", .max_memory = "32M", .ceiling_kib = 32 * 1024 + RING_KIB };
	cJSON *ev;
	double evicted, written = 0;

	(void)state;
	run_flood(&f);
	evicted = evicted_and_shown(&f, "open_spans");
	/* each evicted span is in the trace, as unfinished, with why */
	cJSON_ArrayForEach(ev, f.r.events) {
		const char *why = tr_str(cJSON_GetObjectItem(ev, "args"), "unfinished_reason");

		if (why && !strncmp(why, "evicted", 7) && !strcmp(tr_str(ev, "name"), "leaked"))
			written++;
	}
	if (written != evicted)
		fail_msg("%g spans evicted, %g written as evicted", evicted, written);
	after_flood_arrived(&f);
	tr_free(&f.r);
}

/* With no --max-memory: the default (128M) holds. */
static void test_default_ceiling(void **state)
{
	struct flood f = { .mode = "spans", .n = "1000000", .max_memory = NULL, .ceiling_kib = 128 * 1024 + RING_KIB };
	const cJSON *mem;

	(void)state;
	run_flood(&f);
	mem = cJSON_GetObjectItemCaseSensitive(tr_meta(&f.r), "memory");
	if (tr_num(mem, "max_memory_bytes") != 128.0 * 1024 * 1024)
		fail_msg("metadata.memory.max_memory_bytes is %g", tr_num(mem, "max_memory_bytes"));
	after_flood_arrived(&f);
	tr_free(&f.r);
}

static void test_counters_bounded(void **state)
{
	struct flood f = { .mode = "counters", .n = "1000000", .max_memory = "32M", .ceiling_kib = 32 * 1024 + RING_KIB };

	(void)state;
	run_flood(&f);
	evicted_and_shown(&f, "counters");
	after_flood_arrived(&f);
	tr_free(&f.r);
}

static void test_pseudo_processes_bounded(void **state)
{
	struct flood f = { .mode = "markers", .n = "300000", .max_memory = "32M", .ceiling_kib = 32 * 1024 + RING_KIB };

	(void)state;
	run_flood(&f);
	evicted_and_shown(&f, "pseudo_processes");
	after_flood_arrived(&f);
	tr_free(&f.r);
}

/* NEW_PID again and again on one marker: each pseudo-process's thread is kept, bounded. */
static void test_new_pid_on_one_marker_bounded(void **state)
{
	struct flood f = { .mode = "newpid_one", .n = "300000", .max_memory = "32M", .ceiling_kib = 32 * 1024 + RING_KIB };

	(void)state;
	run_flood(&f);
	evicted_and_shown(&f, "threads");
	after_flood_arrived(&f);
	tr_free(&f.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_spans_bounded),
		cmocka_unit_test(test_default_ceiling),
		cmocka_unit_test(test_counters_bounded),
		cmocka_unit_test(test_pseudo_processes_bounded),
		cmocka_unit_test(test_new_pid_on_one_marker_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
