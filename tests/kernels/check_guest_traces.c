// SPDX-License-Identifier: MIT
/*
 * check_guest_traces - checks, on the host, what tests/kernels/guest-init
 * produced inside one booted kernel: each case's trace is read strictly
 * (tests/lib/json_strict.c, then cJSON) and its events are checked one by
 * one against what the program emitted (names, kinds, pids/tids, args), with
 * the ids each program printed about itself.
 *
 *   check_guest_traces OUT_DIR
 *
 * Prints one line per case ("ok" or "FAIL" and why), the program set the
 * tracer reported (its -v lines and the trace's metadata), and the --fast
 * fork hazard as this kernel showed it (recorded, never a failure). Exit 0
 * if every judged case passed, 1 otherwise.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_run.h"

#define PSEUDO_BASE 1073741824.0 /* 2^30: pseudo-process pids start here */

/* One case of the guest's suite, as it left it in OUT_DIR/NAME/. */
struct gcase {
	const char *name;
	char dir[256];
	char *prog_out, *tracer_err, *seconds;
	int prog_exit, tracer_exit;
	int tracer_exit_ok; /* what ctrace-bpf exits with when all went well */
	struct trace_run r;
	bool failed;
};

static void fail_case(struct gcase *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail_case(struct gcase *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = true;
	printf("  FAIL %-12s ", c->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* On a false condition: the case fails with this reason, and stops. */
#define NEED(c, cond, ...)                                                     \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fail_case(c, __VA_ARGS__);                             \
			return;                                                \
		}                                                              \
	} while (0)

static char *read_in(const struct gcase *c, const char *file)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", c->dir, file);
	return tr_read_file(path, NULL);
}

static int read_int(const struct gcase *c, const char *file)
{
	char *s = read_in(c, file);
	int v = s ? atoi(s) : -1;

	free(s);
	return v;
}

/*
 * KEY=N on the first line of text that starts with prefix; -1 if absent.
 * The programs print their own ids this way ("ready pid=P main_tid=T").
 */
static long field(const char *text, const char *prefix, const char *key)
{
	size_t plen = strlen(prefix), klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');

		if (strncmp(l, prefix, plen))
			continue;
		if (!end)
			end = l + strlen(l);
		for (const char *k = l; k + klen < end; k++)
			if (!strncmp(k, key, klen) && k[klen] == '=' && (k == l || k[-1] == ' '))
				return strtol(k + klen + 1, NULL, 10);
		return -1;
	}
	return -1;
}

static bool has_text(const char *text, const char *what)
{
	return text && strstr(text, what);
}

/* The last "ctrace-bpf: ..." line of the tracer that is not an attach line. */
static void tracer_summary(const char *err, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *l = err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");

		if (!strncmp(l, "ctrace-bpf: ", 12) && strncmp(l, "ctrace-bpf: attached", 20))
			snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), l);
	}
}

static int load_case(struct gcase *c, const char *out_dir)
{
	char line[512];

	snprintf(c->dir, sizeof(c->dir), "%s/%s", out_dir, c->name);
	c->prog_out = read_in(c, "prog.out");
	c->tracer_err = read_in(c, "tracer.err");
	c->seconds = read_in(c, "seconds");
	c->prog_exit = read_int(c, "prog.exit");
	c->tracer_exit = read_int(c, "tracer.exit");
	if (!c->prog_out || !c->tracer_err) {
		fail_case(c, "the guest left no output in %s (did the case run?)", c->dir);
		return -1;
	}
	c->r.pid = field(c->prog_out, "ready", "pid");
	c->r.main_tid = field(c->prog_out, "ready", "main_tid");
	c->r.worker_tid = field(c->prog_out, "ready", "worker_tid");
	c->r.tracer_exit = c->tracer_exit;
	c->r.tracer_stderr = NULL;
	if (snprintf(c->r.trace_path, sizeof(c->r.trace_path), "%.*s/trace.json",
		     (int)sizeof(c->r.trace_path) - 12, c->dir) >= (int)sizeof(c->r.trace_path)) {
		fail_case(c, "the path %s is too long", c->dir);
		return -1;
	}
	if (c->tracer_exit != c->tracer_exit_ok) {
		tracer_summary(c->tracer_err, line, sizeof(line));
		fail_case(c, "the tracer exited %d, want %d: %s (all it said: %s/tracer.err)",
			  c->tracer_exit, c->tracer_exit_ok, line, c->dir);
		return -1;
	}
	if (tr_load_trace(&c->r) < 0) {
		fail_case(c, "%s", c->r.error);
		return -1;
	}
	if (!tr_check_time_fields(c->r.trace_text, line, sizeof(line))) {
		fail_case(c, "%s", line);
		return -1;
	}
	return 0;
}

/* The one event ph/name in process pid (any pid if pid < 0); NULL unless one. */
static cJSON *one(struct gcase *c, const char *ph, const char *name, double pid)
{
	cJSON *all[16];
	cJSON *found = NULL;
	size_t n = tr_find_all(&c->r, ph, name, all, 16), k = 0;

	for (size_t i = 0; i < n; i++)
		if (pid < 0 || tr_num(all[i], "pid") == pid) {
			found = all[i];
			k++;
		}
	if (k != 1) {
		fail_case(c, "%zu events %s \"%s\" in pid %.0f, want 1", k, ph, name, pid);
		return NULL;
	}
	return found;
}

static bool on(const cJSON *ev, double pid, double tid)
{
	return tr_num(ev, "pid") == pid && tr_num(ev, "tid") == tid;
}

static bool arg_is(const cJSON *ev, const char *key, double want)
{
	cJSON *v = tr_arg(ev, key);

	return cJSON_IsNumber(v) && v->valuedouble == want;
}

static bool arg_str_is(const cJSON *ev, const char *key, const char *want)
{
	cJSON *v = tr_arg(ev, key);

	return cJSON_IsString(v) && !strcmp(v->valuestring, want);
}

static bool meta_str_is(struct gcase *c, const char *key, const char *want)
{
	const char *v = tr_str(tr_meta(&c->r), key);

	return v && !strcmp(v, want);
}

/*
 * uprobe_multi links are probed before any program set is loaded: on a
 * kernel without them no set is loaded for them and unloaded again (a
 * load, and an attach and detach of the batches' death watches, for
 * nothing); on a kernel with them, they are used. Batched either way.
 */
static void check_links_probed(struct gcase *c)
{
	const cJSON *feat = cJSON_GetObjectItem(tr_meta(&c->r), "kernel_features");
	const cJSON *multi = cJSON_GetObjectItem(feat, "uprobe_multi_links");

	NEED(c, meta_str_is(c, "event_path", "batched"), "metadata.event_path is not \"batched\"");
	NEED(c, cJSON_IsBool(multi), "metadata.kernel_features.uprobe_multi_links is missing");
	if (cJSON_IsTrue(multi))
		NEED(c, meta_str_is(c, "probe_links", "uprobe_multi"),
		     "the kernel has uprobe_multi links, the trace says probe_links is not uprobe_multi");
	else
		NEED(c, !has_text(c->tracer_err, "for uprobe_multi links") &&
				!has_text(c->tracer_err, "uprobe_multi links refused"),
		     "the kernel has no uprobe_multi links, yet a program set was tried with them (tracer -v)");
}

/* every_macro: every event kind, the scenario of tests/programs/every_macro.c. */
static void check_every_macro(struct gcase *c)
{
	double pid = c->r.pid, main = c->r.main_tid, worker = c->r.worker_tid, v[8], pseudo = -1;
	cJSON *outer, *inner, *b, *e, *ev, *m[8];
	size_t n;

	NEED(c, c->prog_exit == 0, "every_macro exited %d", c->prog_exit);
	NEED(c, pid > 0 && worker > 0, "no \"ready pid= main_tid= worker_tid=\" line");
	NEED(c, tr_meta_num(&c->r, "dropped_events") == 0, "metadata.dropped_events is not 0");
	check_links_probed(c);
	NEED(c, tr_count(&c->r, "X") == 4 && tr_count(&c->r, "I") == 5 && tr_count(&c->r, "C") == 6 &&
			tr_count(&c->r, "b") == 1 && tr_count(&c->r, "e") == 1,
	     "events X/I/C/b/e: %zu/%zu/%zu/%zu/%zu, want 4/5/6/1/1", tr_count(&c->r, "X"),
	     tr_count(&c->r, "I"), tr_count(&c->r, "C"), tr_count(&c->r, "b"), tr_count(&c->r, "e"));
	/* Same-thread spans, nested, with the args of begin and end. */
	NEED(c, (outer = one(c, "X", "outer", pid)) && (inner = one(c, "X", "inner", pid)), "-");
	NEED(c, on(outer, pid, main) && on(inner, pid, main), "outer/inner not on the main thread");
	NEED(c, arg_is(outer, "a", 1) && arg_is(outer, "d", 4) && arg_is(inner, "b", 2) &&
			arg_is(inner, "c", 3),
	     "outer/inner args are not {a:1,d:4}/{b:2,c:3}");
	NEED(c, tr_num(inner, "dur") >= 2000 && tr_num(inner, "ts") >= tr_num(outer, "ts") + 1000 &&
			tr_num(inner, "ts") + tr_num(inner, "dur") <=
				tr_num(outer, "ts") + tr_num(outer, "dur") - 1000,
	     "inner is not inside outer with the program's 1 ms margins");
	/* Cross-thread: begun on main, ended on the worker, one id. */
	NEED(c, (b = one(c, "b", "cross-thread", pid)) && (e = one(c, "e", "cross-thread", pid)), "-");
	NEED(c, on(b, pid, main) && on(e, pid, worker), "cross-thread b/e not on main/worker");
	{
		char *bs = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, "id"));
		char *es = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "id"));
		bool same = bs && es && !strcmp(bs, es) && strcmp(bs, "0") && strcmp(bs, "\"\"");

		free(bs);
		free(es);
		NEED(c, same, "cross-thread b and e do not share one non-zero id");
	}
	NEED(c, (tr_arg(b, "from") || tr_arg(e, "from")) && (tr_arg(b, "to") || tr_arg(e, "to")),
	     "cross-thread lost the args of its begin or end");
	/* Instants, one per scope. */
	for (int i = 0; i < 3; i++) {
		static const char *const names[] = { "inst-g", "inst-p", "inst-t" };
		static const char *const scopes[] = { "g", "p", "t" };

		NEED(c, (ev = one(c, "I", names[i], pid)), "-");
		NEED(c, on(ev, pid, main) && tr_str(ev, "s") && !strcmp(tr_str(ev, "s"), scopes[i]) &&
				arg_str_is(ev, "scope", scopes[i]),
		     "%s: not on main, or its scope is not \"%s\"", names[i], scopes[i]);
	}
	/* Counters: set 5, add 2.5, add -1, and 0.25 after the discard. */
	n = tr_counter_values(&c->r, "c", pid, v, 8);
	NEED(c, n == 4 && v[0] == 5 && v[1] == 7.5 && v[2] == 6.5 && v[3] == 6.75,
	     "counter c in the process: %zu values, want 5, 7.5, 6.5, 6.75", n);
	/* CTRACE_NEW_PID: a pseudo-process with its own events and counter. */
	n = tr_find_all(&c->r, "M", "process_name", m, 8);
	for (size_t i = 0; i < n; i++)
		if (arg_str_is(m[i], "name", "pseudo A"))
			pseudo = tr_num(m[i], "pid");
	NEED(c, pseudo >= PSEUDO_BASE, "no pseudo-process \"pseudo A\"");
	NEED(c, one(c, "I", "pseudo-instant", pseudo) && one(c, "X", "pseudo-span", pseudo), "-");
	n = tr_counter_values(&c->r, "c", pseudo, v, 8);
	NEED(c, n == 2 && v[0] == 1 && v[1] == 2, "counter c in \"pseudo A\": %zu values, want 1, 2", n);
	/* CTRACE_DISCARD: the marker is the real process again. */
	NEED(c, (ev = one(c, "I", "after-discard", pid)) && on(ev, pid, main),
	     "after-discard is not on the real main thread");
	/* The span never ended, and the end never begun, are said so. */
	NEED(c, (ev = one(c, "X", "never-ended", pid)) && cJSON_IsTrue(tr_arg(ev, "unfinished")) &&
			tr_meta_num(&c->r, "unfinished_spans") == 1,
	     "never-ended is not marked unfinished (or metadata.unfinished_spans != 1)");
	/* Traced with -p, the end never begun may be of a span begun before the tracer came: counted. */
	NEED(c, !tr_find(&c->r, "I", "ctrace: span end without begin") &&
			tr_meta_num(&c->r, "unmatched_span_ends") == 0 &&
			tr_meta_num(&c->r, "spans_begun_before_tracing") == 1,
	     "the end without begin is shown, or not counted in metadata.spans_begun_before_tracing");
}

/* scopes: CTRACE_SCOPE; "outer" holds two "inner", one with {"i":1}. */
static void check_scopes(struct gcase *c)
{
	cJSON *outer, *inner[4];
	double o0, o1;
	size_t n;
	int with_args = 0;

	NEED(c, c->prog_exit == 0, "scopes exited %d", c->prog_exit);
	NEED(c, (outer = one(c, "X", "outer", c->r.pid)), "-");
	NEED(c, on(outer, c->r.pid, c->r.main_tid) && tr_num(outer, "dur") >= 20000,
	     "outer: not on main or shorter than its 20 ms of sleeps");
	n = tr_find_all(&c->r, "X", "inner", inner, 4);
	NEED(c, n == 2, "%zu X \"inner\", want 2", n);
	o0 = tr_num(outer, "ts");
	o1 = o0 + tr_num(outer, "dur");
	for (size_t i = 0; i < n; i++) {
		double ts = tr_num(inner[i], "ts"), end = ts + tr_num(inner[i], "dur");

		NEED(c, on(inner[i], c->r.pid, c->r.main_tid) && tr_num(inner[i], "dur") >= 5000,
		     "inner: not on main or shorter than 5 ms");
		NEED(c, ts >= o0 && end <= o1, "inner [%.3f, %.3f] not inside outer [%.3f, %.3f]", ts,
		     end, o0, o1);
		with_args += arg_is(inner[i], "i", 1);
	}
	NEED(c, with_args == 1, "%d inner scopes with {\"i\":1}, want 1", with_args);
}

/* launch: `ctrace-bpf -- launched 7 threads:2`, traced from main's first line. */
static void check_launch(struct gcase *c)
{
	long pid = field(c->prog_out, "uid=", "pid"), tid = field(c->prog_out, "uid=", "tid");
	double v[4];
	cJSON *ev, *th[4];
	size_t n;

	NEED(c, pid > 0, "launched printed no \"uid= ... pid= tid=\" line");
	c->r.pid = pid;
	NEED(c, (ev = one(c, "I", "main-first", pid)) && on(ev, pid, tid),
	     "main-first (main's first statement) is not in the trace on the main thread");
	NEED(c, tr_counter_values(&c->r, "uid", pid, v, 4) == 1 && v[0] == 0, "counter uid is not one 0");
	NEED(c, tr_counter_values(&c->r, "gid", pid, v, 4) == 1 && v[0] == 0, "counter gid is not one 0");
	n = tr_find_all(&c->r, "I", "thread-hello", th, 4);
	NEED(c, n == 2, "%zu thread-hello, want 2", n);
	for (int k = 0; k < 2; k++) {
		char prefix[32];
		long ktid;
		bool found = false;

		snprintf(prefix, sizeof(prefix), "thread %d ", k);
		ktid = field(c->prog_out, prefix, "tid");
		for (size_t i = 0; i < n; i++)
			found |= arg_is(th[i], "k", k) && on(th[i], pid, ktid);
		NEED(c, found, "no thread-hello {\"k\":%d} on tid %ld", k, ktid);
	}
	NEED(c, (ev = one(c, "I", "main-last", pid)) && on(ev, pid, tid), "main-last missing");
}

/* dlopen: probes in a library loaded before the attach and one after. */
static void check_dlopen(struct gcase *c)
{
	cJSON *hits[8], *ev;
	size_t n;
	int early = 0, late = 0;

	NEED(c, c->prog_exit == 0, "dso_loader exited %d", c->prog_exit);
	NEED(c, field(c->prog_out, "late", "armed_ms") >= 0,
	     "the library dlopen()ed after the attach was never armed (late armed_ms=-1)");
	n = tr_find_all(&c->r, "I", "lib-hit", hits, 8);
	for (size_t i = 0; i < n; i++) {
		if (!on(hits[i], c->r.pid, c->r.main_tid))
			continue;
		early += arg_str_is(hits[i], "lib", "early") && arg_is(hits[i], "n", 1);
		late += arg_str_is(hits[i], "lib", "late") && arg_is(hits[i], "n", 2);
	}
	NEED(c, early == 1 && late == 1, "lib-hit early/late: %d/%d, want 1/1", early, late);
	NEED(c, (ev = one(c, "I", "exe-hit", c->r.pid)) && on(ev, c->r.pid, c->r.main_tid),
	     "exe-hit missing");
}

/* follow: -f, the forked child, its child and an exec'd child are traced. */
static void check_follow(struct gcase *c)
{
	long child = field(c->prog_out, "child ", "pid");
	long grandchild = field(c->prog_out, "grandchild ", "pid");
	long exec_child = field(c->prog_out, "exec-child ", "pid");
	static const char *const parent_names[] = { "parent-before", "parent-after" };
	cJSON *ev;

	NEED(c, c->prog_exit == 0 && has_text(c->prog_out, "children ok"),
	     "forker exited %d: a child failed", c->prog_exit);
	NEED(c, child > 0 && grandchild > 0 && exec_child > 0, "forker did not print its children's pids");
	for (int i = 0; i < 2; i++)
		NEED(c, (ev = one(c, "I", parent_names[i], c->r.pid)) && arg_is(ev, "pid", (double)c->r.pid),
		     "%s missing", parent_names[i]);
	NEED(c, (ev = one(c, "I", "child-hello", child)) && arg_is(ev, "pid", child),
	     "the forked child's child-hello is not in the trace under its pid %ld", child);
	NEED(c, (ev = one(c, "I", "grandchild-hello", grandchild)) && arg_is(ev, "pid", grandchild),
	     "grandchild-hello is not in the trace under pid %ld", grandchild);
	NEED(c, (ev = one(c, "I", "hello", exec_child)) && arg_str_is(ev, "tag", "forked"),
	     "the exec'd child's hello {\"tag\":\"forked\"} is not in the trace under pid %ld", exec_child);
}

/*
 * fast_fork: recorded only. Does a child die running the nop5 its parent
 * hit? Only a kernel that optimizes a uprobe on a nop5 (into a call to a
 * per-process trampoline page) can show it; where the tracer says --fast
 * attached at the 1-byte nop instead, the hazard was not exercised.
 */
static void report_fast_fork(struct gcase *c)
{
	const char *killed = c->prog_out ? strstr(c->prog_out, "killed by signal") : NULL;
	const cJSON *nop5 = NULL;
	const char *where;

	if (!c->prog_out || c->tracer_exit != 0) {
		printf("  --fast fork hazard: not known (the tracer exited %d)\n", c->tracer_exit);
		return;
	}
	for (const char *l = c->tracer_err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, "ctrace-bpf: --fast", 18))
			printf("  tracer: %.*s\n", (int)strcspn(l, "\n"), l);
	if (tr_load_trace(&c->r) == 0)
		nop5 = cJSON_GetObjectItem(cJSON_GetObjectItem(c->r.trace, "metadata"), "fast_nop5");
	where = cJSON_IsFalse(nop5) ? "at the 1-byte nop (metadata fast_nop5=false): not exercised"
	      : cJSON_IsTrue(nop5)  ? "at the nop5 (metadata fast_nop5=true)"
				    : "at the nop5 (the trace does not say otherwise)";
	if (killed)
		printf("  --fast fork hazard: PRESENT, --fast attached %s: a child running its parent's site died (%.*s)\n",
		       where, (int)strcspn(killed, "\n"), killed);
	else if (has_text(c->prog_out, "grandchild pid="))
		printf("  --fast fork hazard: absent, --fast attached %s: the children ran the site their parent hit and lived\n",
		       where);
	else
		printf("  --fast fork hazard: not known: forker says: %.*s\n",
		       (int)strcspn(c->prog_out, "\n"), c->prog_out);
}

/* What the tracer said about the programs it loaded, and the metadata. */
static void report_program_set(struct gcase *c)
{
	const cJSON *meta, *item;
	bool any = false;

	for (const char *l = c->tracer_err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");

		if (!strncmp(l, "ctrace-bpf: ", 12) && strncmp(l, "ctrace-bpf: attached", 20) &&
		    (memmem(l, n, "program", 7) || memmem(l, n, "set", 3))) {
			printf("  tracer -v: %.*s\n", (int)n, l);
			any = true;
		}
	}
	if (!any)
		printf("  tracer -v: no line names a program set\n");
	/* The verifier's reason is the line before its "processed N insns". */
	for (const char *l = c->tracer_err, *prev = NULL; c->tracer_exit && l && *l;
	     prev = l, l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (prev && !strncmp(l, "processed ", 10)) {
			printf("  verifier: %.*s\n", (int)strcspn(prev, "\n"), prev);
			break;
		}
	meta = c->r.trace ? cJSON_GetObjectItem(c->r.trace, "metadata") : NULL;
	if (!meta)
		return;
	printf("  metadata:");
	cJSON_ArrayForEach(item, meta) {
		char *v = cJSON_PrintUnformatted(item);

		if (v && (!strcmp(item->string, "events_written") ||
			  !strcmp(item->string, "dropped_events") ||
			  !strcmp(item->string, "probes_attached") || strstr(item->string, "program") ||
			  strstr(item->string, "set") || strstr(item->string, "kernel")))
			printf(" %s=%s", item->string, v);
		free(v);
	}
	putchar('\n');
}

/*
 * usdt: `ctrace-bpf --usdt demo:values --usdt demo:global --usdt
 * 'demo:message(ARG0=str)' -- foreign_probes`: libbpf's USDT path (values
 * in registers of each width, a string) and ctrace-bpf's own for
 * %rip-relative specs (usdt_locs, found by the uprobe's BPF cookie), the
 * values the program set from its pid. Before, ctrace_usdt did not load on
 * 6.1 at all (its verifier gave up: E2BIG).
 */
static void check_usdt(struct gcase *c)
{
	cJSON *ev;
	double pid;

	NEED(c, (ev = one(c, "I", "demo:values", -1)), "no demo:values");
	NEED(c, arg_is(ev, "arg0", -5) && arg_is(ev, "arg2", -100000) && arg_is(ev, "arg4", 7),
	     "demo:values' arguments are not -5, ..., -100000, ..., 7");
	NEED(c, (ev = one(c, "I", "demo:message", -1)) && arg_str_is(ev, "arg0", "hello from demo"),
	     "no demo:message with arg0 \"hello from demo\"");
	NEED(c, (ev = one(c, "I", "demo:global", -1)), "no demo:global (its specs are %%rip-relative)");
	pid = tr_num(ev, "pid");
	NEED(c, arg_is(ev, "arg0", -(pid * 1000 + 7)) && arg_is(ev, "arg1", pid + 5),
	     "demo:global's arguments are not -(pid * 1000 + 7) and pid + 5 (pid %.0f)", pid);
}

/*
 * One trace of a process traced three times in a row (guest-init's
 * retrace): counter "n" (tests/programs/lifecycle paced 100) numbered one
 * after the other, at least 5 samples in its second, nothing counted lost.
 */
static void check_window(struct gcase *c, const struct trace_run *r, int which)
{
	const cJSON *ev;
	double last = -1;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events) {
		double v;

		if (!tr_str(ev, "name") || strcmp(tr_str(ev, "name"), "n") || strcmp(tr_str(ev, "ph"), "C"))
			continue;
		v = tr_num(cJSON_GetObjectItem(ev, "args"), "value");
		NEED(c, last < 0 || v == last + 1, "trace %d: sample %.0f after %.0f: a gap in its window", which, v,
		     last);
		last = v;
		n++;
	}
	NEED(c, n >= 5, "trace %d: %zu samples in 1 s, at least 5 expected", which, n);
	NEED(c, tr_meta_num(r, "dropped_events") == 0, "trace %d: %.0f events dropped", which,
	     tr_meta_num(r, "dropped_events"));
}

/* The three traces of one process, batched or per event (want_path). */
static void check_retraced(struct gcase *c, const char *want_path)
{
	struct trace_run later = { 0 };
	char *dot;

	check_window(c, &c->r, 1);
	NEED(c, meta_str_is(c, "event_path", want_path), "metadata.event_path is not %s", want_path);
	for (int i = 2; i <= 3 && !c->failed; i++) {
		snprintf(later.trace_path, sizeof(later.trace_path), "%s", c->r.trace_path);
		dot = strrchr(later.trace_path, '.');
		snprintf(dot, sizeof(later.trace_path) - (size_t)(dot - later.trace_path), "-%d.json", i);
		if (tr_load_trace(&later) < 0) {
			fail_case(c, "%s", later.error);
			break;
		}
		check_window(c, &later, i);
		tr_free(&later);
	}
	tr_free(&later);
}

static void check_reattach(struct gcase *c)
{
	check_retraced(c, "batched");
}

static void check_reattach_per_event(struct gcase *c)
{
	check_retraced(c, "per_event");
}

int main(int argc, char **argv)
{
	static struct gcase cases[] = {
		{ .name = "every_macro" }, { .name = "scopes" },
		{ .name = "launch", .tracer_exit_ok = 7 }, /* the command's exit code */
		{ .name = "dlopen" },      { .name = "follow" }, { .name = "fast_fork" },
		{ .name = "usdt" },        { .name = "reattach" }, { .name = "reattach_per_event" },
	};
	static void (*const checks[])(struct gcase *) = {
		check_every_macro, check_scopes, check_launch, check_dlopen, check_follow, NULL,
		check_usdt, check_reattach, check_reattach_per_event,
	};
	int failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: check_guest_traces OUT_DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gcase *c = &cases[i];

		if (!checks[i]) { /* recorded, not judged: only what it printed */
			snprintf(c->dir, sizeof(c->dir), "%s/%s", argv[1], c->name);
			c->prog_out = read_in(c, "prog.out");
			c->tracer_err = read_in(c, "tracer.err");
			c->tracer_exit = read_int(c, "tracer.exit");
			snprintf(c->r.trace_path, sizeof(c->r.trace_path), "%.*s/trace.json",
				 (int)sizeof(c->r.trace_path) - 12, c->dir);
			continue;
		}
		if (load_case(c, argv[1]) == 0)
			checks[i](c);
		if (!c->failed)
			printf("  ok   %-12s %4zu events  %5.2f s\n", c->name, tr_count(&c->r, NULL),
			       c->seconds ? atof(c->seconds) : NAN);
		failed += c->failed;
	}
	report_program_set(&cases[0]);
	report_fast_fork(&cases[5]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		free(cases[i].prog_out);
		free(cases[i].tracer_err);
		free(cases[i].seconds);
		tr_free(&cases[i].r);
	}
	return failed ? 1 : 0;
}
