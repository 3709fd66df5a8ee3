// SPDX-License-Identifier: MIT
/*
 * test_usdt - --usdt: the USDT probes other programs ship, traced by the
 * real tracer with real BPF and read back event by event:
 *
 *   - tests/programs/foreign_probes.c (<sys/sdt.h> probes, no ctrace probe):
 *     each argument typed as its note says (every width and sign, constants,
 *     N(%reg)), twelve of them, strings read; BEGIN~END spans nested per
 *     thread; the end whose begin never fired and the span open at the stop
 *     counted in metadata.usdt; %rip-relative specs (which libbpf 1.1
 *     cannot decode: ctrace-bpf reads them) with the values the program set;
 *     in launch mode and with -p (its semaphore raised);
 *   - tests/programs/cxx_exceptions.cpp with --usdt cxx: libstdc++'s throw,
 *     catch and rethrow, their types demangled, in the order they ran;
 *   - Debian's python3.11 with --usdt python: a gc.collect() a span with its
 *     generation and count, an import a span named by its module; its
 *     function__entry fires only under sys.settrace/setprofile (CPython
 *     gh-98894), so the preset attaches neither half of that pair (said at
 *     the start and in metadata): no function__return per call; the pair
 *     given by hand is attached, and pairs what fires under setprofile;
 *   - Debian's PostgreSQL 15, a server the test starts on a Unix socket in
 *     its temporary directory (initdb as the postgres user), with --usdt
 *     postgres on the postmaster (-f: the backend psql's connection forks)
 *     and its checkpointer: each query a span named by its text, its parse,
 *     plan and execute inside it, transactions with their lxid, a CHECKPOINT
 *     with what checkpoint__done's %rip-relative specs read (the buffers it
 *     wrote, shared_buffers' pages), as the server's log says;
 *   - Debian's OpenJDK 17 with --usdt java and -XX:+ExtendedDTraceProbes on
 *     tests/programs/java/Hello.java: each method call a span "Class.method",
 *     nested as they ran, per Java thread; a System.gc() a GC span; the
 *     thread it starts told with its name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
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
	/*
	 * Read relative to %rip (libbpf 1.1 cannot decode these; ctrace-bpf
	 * does): values the program set at run time from its pid, which the
	 * file does not hold. -8@demo_global(%rip): an exported global;
	 * -4@8+demo_stats(%rip): a static struct's field, in .symtab only.
	 */
	ev = am_one(&r, "I", "demo:global", NAN);
	assert_true(am_arg_num(ev, "arg0") == -(tr_num(ev, "pid") * 1000 + 7));
	assert_true(am_arg_num(ev, "arg1") == tr_num(ev, "pid") + 5);
	assert_null(strstr(r.tracer_stderr, "not traced"));
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

/* The first frame of args.stack of ev, "" if none. */
static const char *stack_top(cJSON *ev, int i)
{
	cJSON *st = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "stack");
	const char *f = cJSON_GetStringValue(cJSON_GetArrayItem(st, i));

	return f ? f : "";
}

static void test_stacks_of_hits_and_spans(void **state)
{
	const char *const cxx[] = { "--stacks", "--usdt", "cxx" };
	const char *const demo[] = { "--stacks", "--usdt", "demo:enter(ARG0=str)~demo:leave(ARG0=str),name=ARG0" };
	cJSON *ev;

	(void)state;
	/* A throw's stack: libstdc++'s __cxa_throw, then the program's main. */
	launch("cxx_exceptions", cxx, 3);
	cJSON_ArrayForEach(ev, r.events)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name")) ?: "", "C++ throw"))
			break;
	assert_non_null(ev);
	assert_string_equal(stack_top(ev, 0), "__cxa_throw");
	assert_non_null(strstr(stack_top(ev, 1), "main (cxx_exceptions.cpp:"));
	tr_free(&r);
	/* A span's stack is its begin's. */
	launch("foreign_probes", demo, 3);
	assert_non_null(strstr(stack_top(am_one(&r, "X", "outer", NAN), 0), "main (foreign_probes.c:"));
}

#define PYTHON "/usr/bin/python3.11"

/* Every event of phase ph named `name`, at most max, into v; their number. */
static size_t events_named(const char *ph, const char *name, cJSON **v, size_t max)
{
	size_t n = 0;
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events) {
		const char *evn = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));

		if (evn && !strcmp(evn, name) && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ph")), ph) &&
		    n < max)
			v[n++] = ev;
	}
	return n;
}

static void start_python(const char *const *argv)
{
	tr_require_root();
	if (access(PYTHON, X_OK))
		fail_msg(PYTHON " is not installed (scripts/install-deps test installs it)");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_start_tracer(&r, argv);
	am_finish(&r, TR_TIMEOUT_MS);
}

/*
 * CPython 3.11 fires function__entry only under sys.settrace/setprofile
 * (gh-98894) but function__return at every return: the preset leaves the
 * pair out there, says so once before tracing, and a loop of calls runs
 * with no probe hit per call (not one function__return record).
 */
static void test_python_gc_imports_and_no_return_probe_without_entries(void **state)
{
	const char *const argv[] = {
		"--usdt", "python", "--", PYTHON, "-c",
		"import gc, time\n"
		"gc.collect()\n"
		"import fractions\n"
		"def f(n):\n    return n + 1\n"
		"for i in range(300):\n    f(i)\n"
		"t = time.monotonic(); i = 0\n"
		"while time.monotonic() - t < 1:\n"
		"    for _ in range(100):\n        f(i)\n"
		"    i += 1\n"
		"print('iterations', i)\n",
		NULL,
	};
	cJSON *gc = NULL, *ev, *spec;
	const char *said, *tracing;
	size_t gen2 = 0;

	(void)state;
	start_python(argv);
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
	/* Said once, at the start (before the tracing line), and why. */
	said = strstr(r.tracer_stderr, "--usdt python: python:function__entry~python:function__return is not traced: CPython 3.11");
	tracing = strstr(r.tracer_stderr, "tracing process");
	assert_non_null(said);
	assert_non_null(tracing);
	assert_true(said < tracing);
	assert_non_null(strstr(said, "gh-98894"));
	assert_null(strstr(said + 1, "--usdt python: python:function__entry"));
	/* Not attached: no record of either half; so no warning at the end either. */
	spec = spec_counts("python:function__entry");
	assert_int_equal(count(spec, "hits"), 0);
	assert_int_equal(count(spec, "ends_without_begin"), 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(spec, "attached")));
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(spec, "begin_fires_rarely")), "gh-98894"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r.trace, "metadata"), "usdt"),
					"warning"));
	assert_int_equal(am_count(&r, "X", "f", NAN), 0);
	print_message("python loop traced with --usdt python: %s", r.tracer_stdout ? r.tracer_stdout : "?\n");
}

/*
 * The pair given by hand is attached as asked (said at the start): what
 * fires pairs, each end with its own call's entry: under sys.setprofile
 * each call of g and of f inside it is a span, f within g; the calls after
 * setprofile(None) (returns alone) are no span and pair with nothing.
 */
static void test_python_pair_given_pairs_the_calls_whose_entry_fires(void **state)
{
	const char *const argv[] = {
		"--usdt",
		"python:function__entry(ARG0=str:file,ARG1=str:function,ARG2=int:line)"
		"~python:function__return(ARG0=str:file,ARG1=str:function,ARG2=int:line),name=ARG1",
		"--", PYTHON, "-c",
		"import sys\n"
		"def f(n):\n    return n + 1\n"
		"def g(n):\n    return f(n) * 2\n"
		"sys.setprofile(lambda *a: None)\n"
		"for i in range(50):\n    g(i)\n"
		"sys.setprofile(None)\n"
		"for i in range(70):\n    g(i)\n",
		NULL,
	};
	cJSON *f[60], *g[60], *spec;
	size_t nf, ng;

	(void)state;
	start_python(argv);
	assert_non_null(strstr(r.tracer_stderr, "--usdt python:function__entry~python:function__return: CPython 3.11"));
	nf = events_named("X", "f", f, 60);
	ng = events_named("X", "g", g, 60);
	assert_int_equal(nf, 50);
	assert_int_equal(ng, 50);
	for (size_t i = 0; i < nf; i++) {
		double fts = cJSON_GetObjectItem(f[i], "ts")->valuedouble;
		double fend = fts + cJSON_GetObjectItem(f[i], "dur")->valuedouble;
		bool inside = false;

		for (size_t j = 0; j < ng && !inside; j++) {
			double gts = cJSON_GetObjectItem(g[j], "ts")->valuedouble;

			inside = gts <= fts && fend <= gts + cJSON_GetObjectItem(g[j], "dur")->valuedouble;
		}
		assert_true(inside);
		assert_true(am_arg_num(f[i], "line") == 2);
	}
	spec = spec_counts("python:function__entry");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(spec, "attached")));
	/* The 140 returns of the calls after setprofile(None) came alone. */
	assert_true(count(spec, "ends_without_begin") >= 140);
	assert_int_equal(count(spec, "begins_not_ended"), 0);
}

#define PG_BIN "/usr/lib/postgresql/15/bin"

static char pg_dir[300];

/* A small file's text (caller frees); "" if unreadable. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	if (!buf)
		fail_msg("out of memory");
	if (f) {
		n = fread(buf, 1, 65535, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

/* Waits until the tracer's stderr has `what` (it attached); fails after timeout_ms. */
static void wait_tracer_says(const char *what, int timeout_ms)
{
	for (int ms = 0; ms < timeout_ms; ms += 10) {
		char *err = read_text(r.tracer.err_path);
		bool said = strstr(err, what) != NULL;

		free(err);
		if (said)
			return;
		am_sleep_ms(10);
	}
	fail_msg("the tracer did not say '%s' within %d ms", what, timeout_ms);
}

static void pg_stop(void)
{
	char cmd[800];

	if (!pg_dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "su postgres -s /bin/sh -c '" PG_BIN "/pg_ctl -D %s/data -m immediate stop' >/dev/null 2>&1",
		 pg_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_usdt: pg_ctl stop failed\n");
	pg_dir[0] = '\0';
}

static int stop_server(void **state)
{
	pg_stop();
	return free_all(state);
}

/* Runs `sh -c cmd` as the postgres user; fails the test unless it exits 0. */
static void as_postgres(const char *cmd)
{
	char line[2048];

	snprintf(line, sizeof(line), "su postgres -s /bin/sh -c \"%s\" >>%s/pg.out 2>&1", cmd, pg_dir);
	if (system(line) != 0)
		fail_msg("as postgres: %s failed (see %s/pg.out)", cmd, pg_dir);
}

/* The pid of the postmaster's child whose command line says `what` (e.g. "checkpointer"). */
static long pg_child(long postmaster, const char *what)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	long found = 0;

	while (d && (de = readdir(d)) && !found) {
		char path[300], buf[512];
		FILE *f;
		size_t n;
		long ppid = 0;

		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (!strrchr(buf, ')') || sscanf(strrchr(buf, ')') + 2, "%*c %ld", &ppid) != 1 || ppid != postmaster)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (strstr(buf, what))
			found = atol(de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

static void test_postgres_queries_transactions_checkpoint(void **state)
{
	char cmd[1200], pids[64], pidfile[400], log[400], *text;
	const char *argv[12];
	long pm, ckpt;
	cJSON *q, *part, *ckpt_span;
	int written, added, removed, recycled;
	double percent;
	char *done;
	size_t n_tx = 0;
	cJSON *ev;

	(void)state;
	tr_require_root();
	if (access(PG_BIN "/postgres", X_OK))
		fail_msg(PG_BIN "/postgres is not installed (scripts/install-deps test installs postgresql-15)");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	/* The server's own directory, the postgres user's (its socket too). */
	am_path(pg_dir, sizeof(pg_dir), r.dir, "pg");
	if (mkdir(pg_dir, 0700) || chmod(r.dir, 0755))
		fail_msg("cannot make %s", pg_dir);
	snprintf(cmd, sizeof(cmd), "chown postgres %s", pg_dir);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
	snprintf(cmd, sizeof(cmd), PG_BIN "/initdb -D %s/data -A trust -U postgres --no-sync", pg_dir);
	as_postgres(cmd);
	/* shared_buffers: 295 pages of 8 KB, a size no default has (checkpoint__done's NBuffers). */
	snprintf(cmd, sizeof(cmd), PG_BIN "/pg_ctl -D %s/data -l %s/server.log"
		 " -o '-k %s -c listen_addresses= -c shared_buffers=2360kB -c log_checkpoints=on' -w start",
		 pg_dir, pg_dir, pg_dir);
	as_postgres(cmd);
	snprintf(pidfile, sizeof(pidfile), "%s/data/postmaster.pid", pg_dir);
	text = read_text(pidfile);
	pm = atol(text);
	free(text);
	ckpt = pg_child(pm, "checkpointer");
	if (pm <= 0 || ckpt <= 0)
		fail_msg("no postmaster (%ld) or checkpointer (%ld)", pm, ckpt);
	snprintf(pids, sizeof(pids), "%ld,%ld", pm, ckpt);
	argv[0] = "-p";
	argv[1] = pids;
	argv[2] = "-f";
	argv[3] = "--usdt";
	argv[4] = "postgres";
	argv[5] = NULL;
	am_start_tracer(&r, argv);
	wait_tracer_says("ctrace-bpf: tracing process", 15000);
	snprintf(cmd, sizeof(cmd),
		 "psql -h %s -X -q -c 'create table t(a int)' -c 'insert into t select generate_series(1,1000)'"
		 " -c 'select count(*) from t' -c 'begin' -c 'select 1' -c 'commit' -c 'checkpoint'",
		 pg_dir);
	as_postgres(cmd);
	kill(r.tracer.pid, SIGINT);
	am_finish(&r, TR_TIMEOUT_MS);
	snprintf(log, sizeof(log), "%s/server.log", pg_dir); /* pg_stop() forgets the directory */
	pg_stop();
	/* A query: a span named by its text, its parse, plan and execute inside it, in its backend. */
	q = am_one(&r, "X", "select count(*) from t", NAN);
	assert_string_equal(am_arg_str(q, "query"), "select count(*) from t");
	assert_true(tr_num(q, "pid") != pm); /* the backend psql's connection forked */
	for (size_t i = 0; i < 3; i++) {
		static const char *const parts[] = { "parse", "plan", "execute" };
		cJSON *found[16];
		size_t n = am_find(&r, "X", parts[i], tr_num(q, "pid"), found, 16), inside = 0;

		for (size_t k = 0; k < n; k++)
			if (tr_num(found[k], "ts") >= tr_num(q, "ts") &&
			    tr_num(found[k], "ts") + tr_num(found[k], "dur") <= tr_num(q, "ts") + tr_num(q, "dur"))
				inside++;
		if (inside != 1)
			fail_msg("%zu %s spans inside the query's, not 1", inside, parts[i]);
	}
	/* Transactions: begin ... commit is one, with its lxid. */
	cJSON_ArrayForEach(ev, r.events) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));

		if (name && !strcmp(name, "transaction") && am_arg_num(ev, "lxid") > 0)
			n_tx++;
	}
	assert_true(n_tx >= 4);
	/*
	 * The CHECKPOINT, in the checkpointer: a span from checkpoint__start to
	 * checkpoint__done, whose arguments are read relative to %rip
	 * (-4@40+CheckpointStats(%rip) -4@NBuffers(%rip) ...). Checked against
	 * the server's own account of it (log_checkpoints): "checkpoint
	 * complete: wrote N buffers (P%); A WAL file(s) added, R removed, C
	 * recycled", P being N of shared_buffers' pages.
	 */
	ckpt_span = am_one(&r, "X", "checkpoint", ckpt);
	part = am_one(&r, "X", "checkpoint: buffers", ckpt);
	assert_true(tr_num(part, "dur") > 0);
	assert_true(tr_num(part, "ts") >= tr_num(ckpt_span, "ts"));
	assert_true(am_arg_num(ckpt_span, "buffers_total") == 295);
	text = read_text(log);
	done = strstr(text, "checkpoint complete: wrote ");
	if (!done || strstr(done + 1, "checkpoint complete: wrote ") ||
	    sscanf(done, "checkpoint complete: wrote %d buffers (%lf%%); %d WAL file(s) added, %d removed, %d recycled",
		   &written, &percent, &added, &removed, &recycled) != 5)
		fail_msg("the server logged not one checkpoint: %s", text);
	free(text);
	assert_true(written > 0);
	assert_true(am_arg_num(ckpt_span, "buffers_written") == written);
	assert_true(fabs(100.0 * written / am_arg_num(ckpt_span, "buffers_total") - percent) < 0.05 + 1e-9);
	assert_true(am_arg_num(ckpt_span, "wal_files_added") == added);
	assert_true(am_arg_num(ckpt_span, "wal_files_removed") == removed);
	assert_true(am_arg_num(ckpt_span, "wal_files_recycled") == recycled);
}

#define JAVA_HOME "/usr/lib/jvm/java-17-openjdk-amd64"

/* The X spans named `name` on thread tid inside [ts, ts + dur]. */
static size_t spans_inside(const char *name, double tid, const cJSON *outer)
{
	cJSON *found[64];
	size_t n = am_find(&r, "X", name, NAN, found, 64), inside = 0;
	double from = tr_num(outer, "ts"), to = from + tr_num(outer, "dur");

	for (size_t i = 0; i < n; i++)
		if (tr_num(found[i], "tid") == tid && tr_num(found[i], "ts") >= from &&
		    tr_num(found[i], "ts") + tr_num(found[i], "dur") <= to)
			inside++;
	return inside;
}

/* The name of thread tid in its last thread_name metadata (viewers keep the last); "" if none. */
static const char *last_thread_name(double pid, double tid)
{
	const char *name = "";
	cJSON *ev;

	cJSON_ArrayForEach(ev, r.events)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name")) ?: "", "thread_name") &&
		    tr_num(ev, "pid") == pid && tr_num(ev, "tid") == tid)
			name = am_arg_str(ev, "name");
	return name;
}

static void test_java_methods_nested_per_thread(void **state)
{
	char cmd[1000], classes[300];
	const char *argv[12];
	cJSON *main_x, *outers[8], *lambda, *ev, *started = NULL;

	(void)state;
	tr_require_root();
	if (access(JAVA_HOME "/bin/javac", X_OK))
		fail_msg(JAVA_HOME "/bin/javac is not installed (scripts/install-deps test installs openjdk-17-jdk-headless)");
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	am_path(classes, sizeof(classes), r.dir, "classes");
	snprintf(cmd, sizeof(cmd), JAVA_HOME "/bin/javac -d %s tests/programs/java/Hello.java", classes);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
	argv[0] = "--usdt";
	argv[1] = "java";
	argv[2] = "--";
	argv[3] = JAVA_HOME "/bin/java";
	argv[4] = "-XX:+ExtendedDTraceProbes";
	argv[5] = "-cp";
	argv[6] = classes;
	argv[7] = "Hello";
	argv[8] = NULL;
	am_start_tracer(&r, argv);
	am_finish(&r, TR_TIMEOUT_MS);
	assert_non_null(strstr(r.tracer_stdout, "sum=75"));
	/* run, 5 outer calls inside it, 2 inner calls inside each, on main's thread. */
	main_x = am_one(&r, "X", "Hello.run", NAN);
	assert_string_equal(am_arg_str(main_x, "signature"), "()V");
	assert_int_equal(am_find(&r, "X", "Hello.outer", NAN, outers, 8), 5);
	assert_int_equal(spans_inside("Hello.outer", tr_num(main_x, "tid"), main_x), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(spans_inside("Hello.inner", tr_num(main_x, "tid"), outers[i]), 2);
	/* JDK classes dotted, as Java writes them. */
	assert_true(am_count(&r, "X", "java.lang.Object.<init>", NAN) > 0);
	/* The lambda ran on the thread worker-with-a-long-name, told by thread__start with its native tid. */
	lambda = am_one(&r, "X", "Hello.lambda$run$0", NAN);
	assert_true(tr_num(lambda, "tid") != tr_num(main_x, "tid"));
	cJSON_ArrayForEach(ev, r.events) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));

		if (name && !strcmp(name, "thread start") && !strcmp(am_arg_str(ev, "thread"), "worker-with-a-long-name"))
			started = ev;
	}
	assert_non_null(started);
	assert_true(am_arg_num(started, "native_tid") == tr_num(lambda, "tid"));
	/* Named in the trace by its whole Java name, where the kernel's comm keeps 15 bytes. */
	assert_string_equal(last_thread_name(tr_num(lambda, "pid"), tr_num(lambda, "tid")), "worker-with-a-long-name");
	/* System.gc(): a full GC, a span (the JVM may collect at other times too). */
	{
		cJSON *gcs[16];
		size_t n = am_find(&r, "X", "GC", NAN, gcs, 16), full = 0;

		for (size_t i = 0; i < n; i++)
			full += am_arg_num(gcs[i], "full") == 1 && tr_num(gcs[i], "dur") > 0;
		assert_true(full >= 1);
	}
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
		cmocka_unit_test_teardown(test_stacks_of_hits_and_spans, free_all),
		cmocka_unit_test_teardown(test_python_gc_imports_and_no_return_probe_without_entries, free_all),
		cmocka_unit_test_teardown(test_python_pair_given_pairs_the_calls_whose_entry_fires, free_all),
		cmocka_unit_test_teardown(test_postgres_queries_transactions_checkpoint, stop_server),
		cmocka_unit_test_teardown(test_java_methods_nested_per_thread, free_all),
		cmocka_unit_test_teardown(test_a_bad_spec_is_one_line, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
