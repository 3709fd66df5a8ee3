// SPDX-License-Identifier: MIT
/* trace_run.c - see trace_run.h. */
#include "trace_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <setjmp.h>
#include <cmocka.h>
#include "json_strict.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

__attribute__((format(printf, 2, 3)))
static int fail_with(struct trace_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return -1;
}

int tr_shell(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/*
 * Through zlib's gzread(), which reads a plain file as it is: a trace
 * written as FILE.json.gz reads back as its JSON. A gzip stream cut short
 * gives what came before the cut.
 */
char *tr_read_file(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int got;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap * 2 + 65536 + 1);

			if (!nb) {
				free(buf);
				gzclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + 65536;
		}
		got = gzread(f, buf + n, (unsigned)(cap - n < (1u << 30) ? cap - n : (1u << 30)));
		if (got > 0)
			n += (size_t)got;
	} while (got > 0);
	gzclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ---- children ---------------------------------------------------------- */

int tr_spawn(struct tr_child *c, const char *dir, const char *tag,
	     const char *const *argv)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->out_path, sizeof(c->out_path), "%s/%s.out", dir, tag);
	snprintf(c->err_path, sizeof(c->err_path), "%s/%s.err", dir, tag);
	fflush(NULL); /* or the child would flush our buffered output again */
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		return -1;
	}
	if (c->pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(c->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(c->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (in < 0 || out < 0 || err < 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return 0;
}

/* One non-blocking reap attempt: true once the child is reaped. */
static bool try_reap(struct tr_child *c)
{
	if (c->reaped || !c->pid)
		return true;
	if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
		c->reaped = true;
		return true;
	}
	return false;
}

static void kill_and_reap(struct tr_child *c)
{
	if (c->reaped || !c->pid)
		return;
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &c->status, 0) == c->pid)
		c->reaped = true;
}

int tr_reap(struct tr_child *c, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;

	while (!try_reap(c)) {
		if (now_s() >= deadline) {
			kill_and_reap(c);
			return -1;
		}
		sleep_ms(2);
	}
	return 0;
}

int tr_exit_code(const struct tr_child *c)
{
	if (!c->reaped)
		return -1;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return -1;
}

static int make_temp_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ctrace-test-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int tr_cmd_run(struct tr_cmd *res, const char *const *argv, int timeout_ms)
{
	struct tr_child c;
	char dir[64];
	double t0 = now_s();

	memset(res, 0, sizeof(*res));
	res->exit = -1;
	if (make_temp_dir(dir, sizeof(dir)) < 0 || tr_spawn(&c, dir, "cmd", argv) < 0)
		return -1;
	res->exit = tr_reap(&c, timeout_ms) < 0 ? -1 : tr_exit_code(&c);
	res->seconds = now_s() - t0;
	res->out = tr_read_file(c.out_path, NULL);
	res->err = tr_read_file(c.err_path, NULL);
	if (!res->out)
		res->out = strdup("");
	if (!res->err)
		res->err = strdup("");
	remove_dir(dir);
	return 0;
}

void tr_cmd_free(struct tr_cmd *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

int tr_run_tracer(struct tr_cmd *res, const char *const *wrapper, const char *command,
		  const char *const *args, int timeout_ms)
{
	const char *argv[32];
	size_t n = 0;

	tr_cmd_free(res);
	for (; wrapper && *wrapper; wrapper++) {
		if (n == 29)
			return -1;
		argv[n++] = *wrapper;
	}
	argv[n++] = tr_tracer();
	if (command)
		argv[n++] = command;
	for (; args && *args; args++) {
		if (n == 31)
			return -1;
		argv[n++] = *args;
	}
	argv[n] = NULL;
	return tr_cmd_run(res, argv, timeout_ms);
}

/* ---- the run ------------------------------------------------------------ */

const char *tr_tracer(void)
{
	const char *t = getenv("CTRACE_BPF");

	return t && *t ? t : TR_TRACER_DEFAULT;
}

const char *tr_program_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("CTRACE_TEST_PROGRAMS");

	snprintf(buf, len, "%s/%s", dir && *dir ? dir : TR_PROGRAMS_DEFAULT, name);
	return buf;
}

const char *tr_program_abspath(const char *name, char *buf, size_t len)
{
	char rel[PATH_MAX], abs[PATH_MAX];

	if (!realpath(tr_program_path(name, rel, sizeof(rel)), abs))
		fail_msg("%s: %s", rel, strerror(errno));
	if ((size_t)snprintf(buf, len, "%s", abs) >= len)
		fail_msg("%s: path longer than %zu bytes", abs, len - 1);
	return buf;
}

int tr_init(struct trace_run *r)
{
	memset(r, 0, sizeof(*r));
	r->prog_exit = r->tracer_exit = -1;
	if (make_temp_dir(r->dir, sizeof(r->dir)) < 0)
		return fail_with(r, "mkdtemp: %s", strerror(errno));
	snprintf(r->trace_path, sizeof(r->trace_path), "%s/trace.json", r->dir);
	return 0;
}

int tr_start_program(struct trace_run *r, const char *program,
		     const char *const *prog_args)
{
	const char *argv[16];
	size_t n = 0;

	if (strchr(program, '/'))
		snprintf(r->program, sizeof(r->program), "%s", program);
	else
		tr_program_path(program, r->program, sizeof(r->program));
	if (access(r->program, X_OK) != 0)
		return fail_with(r, "test program %s: %s (run make from the repository root)",
				 r->program, strerror(errno));
	argv[n++] = r->program;
	for (size_t i = 0; prog_args && prog_args[i] && n < 15; i++)
		argv[n++] = prog_args[i];
	argv[n] = NULL;
	if (tr_spawn(&r->prog, r->dir, "program", argv) < 0)
		return fail_with(r, "fork: %s", strerror(errno));
	return 0;
}

/* Reads "KEY=NUMBER" from the line, 0 if absent. */
static long field(const char *line, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : 0;
}

int tr_wait_line(struct trace_run *r, const char *prefix, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;
	size_t plen = strlen(prefix);

	for (;;) {
		char *out = tr_read_file(r->prog.out_path, NULL);
		char *line = out;

		while (line && *line) {
			char *nl = strchr(line, '\n');

			/* only complete lines: the program may be mid-write */
			if (!nl)
				break;
			if (!strncmp(line, prefix, plen)) {
				*nl = '\0';
				if (!strcmp(prefix, "ready")) {
					r->pid = field(line, "pid");
					r->main_tid = field(line, "main_tid");
					r->worker_tid = field(line, "worker_tid");
				}
				free(out);
				return 0;
			}
			line = nl + 1;
		}
		free(out);
		if (try_reap(&r->prog)) {
			char *err = tr_read_file(r->prog.err_path, NULL);

			fail_with(r, "%s exited (status %d) before printing '%s': %s",
				  r->program, tr_exit_code(&r->prog), prefix, err ? err : "");
			free(err);
			return -1;
		}
		if (now_s() >= deadline) {
			kill_and_reap(&r->prog);
			return fail_with(r, "%s printed no '%s' line within %d ms",
					 r->program, prefix, timeout_ms);
		}
		sleep_ms(2);
	}
}

int tr_start_tracer(struct trace_run *r, const char *const *tracer_args)
{
	const char *argv[24];
	char pid[24];
	size_t n = 0;

	if (access(tr_tracer(), X_OK) != 0)
		return fail_with(r, "%s: %s (run make from the repository root)",
				 tr_tracer(), strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)r->prog.pid);
	argv[n++] = tr_tracer();
	argv[n++] = "-p";
	argv[n++] = pid;
	argv[n++] = "-o";
	argv[n++] = r->trace_path;
	for (size_t i = 0; tracer_args && tracer_args[i] && n < 23; i++)
		argv[n++] = tracer_args[i];
	argv[n] = NULL;
	r->tracer_seconds = now_s();
	if (tr_spawn(&r->tracer, r->dir, "tracer", argv) < 0)
		return fail_with(r, "fork: %s", strerror(errno));
	return 0;
}

/* s with every "{PID}" and "{EXE}" replaced (malloc'd). */
static char *expand(const char *s, const char *pid, const char *exe, const char *trace)
{
	size_t cap = strlen(s) + 1, n = 0;
	char *out = malloc(cap);

	while (out && *s) {
		const char *put = NULL;
		size_t skip = 1, len;

		if (!strncmp(s, "{PID}", 5))
			put = pid, skip = 5;
		else if (!strncmp(s, "{EXE}", 5))
			put = exe, skip = 5;
		else if (!strncmp(s, "{TRACE}", 7))
			put = trace, skip = 7;
		len = put ? strlen(put) : 1;
		if (n + len + 1 > cap) {
			char *grown = realloc(out, cap = (n + len + 1) * 2);

			if (!grown) {
				free(out);
				return NULL;
			}
			out = grown;
		}
		memcpy(out + n, put ? put : s, len);
		n += len;
		s += skip;
	}
	if (out)
		out[n] = '\0';
	return out;
}

int tr_start_command(struct trace_run *r, const char *const *argv)
{
	char *args[32] = { 0 }, pid[24], exe[4096];
	size_t n = 0;
	int ret = 0;

	snprintf(pid, sizeof(pid), "%d", (int)r->prog.pid);
	if (!realpath(r->program, exe))
		return fail_with(r, "realpath %s: %s", r->program, strerror(errno));
	for (; argv[n] && n < 31; n++)
		if (!(args[n] = expand(argv[n], pid, exe, r->trace_path)))
			return fail_with(r, "out of memory");
	r->tracer_seconds = now_s();
	if (tr_spawn(&r->tracer, r->dir, "tracer", (const char *const *)args) < 0)
		ret = fail_with(r, "fork: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		free(args[i]);
	return ret;
}

/* Exit codes, stdout and stderr of whatever has been reaped. */
static void collect(struct trace_run *r)
{
	if (r->prog.reaped && !r->prog_stdout) {
		r->prog_exit = tr_exit_code(&r->prog);
		r->prog_stdout = tr_read_file(r->prog.out_path, NULL);
		if (!r->prog_stdout)
			r->prog_stdout = strdup("");
	}
	if (r->tracer.reaped && !r->tracer_stderr) {
		r->tracer_exit = tr_exit_code(&r->tracer);
		r->tracer_seconds = now_s() - r->tracer_seconds;
		r->tracer_stderr = tr_read_file(r->tracer.err_path, NULL);
		if (!r->tracer_stderr)
			r->tracer_stderr = strdup("");
		r->tracer_stdout = tr_read_file(r->tracer.out_path, NULL);
		if (!r->tracer_stdout)
			r->tracer_stdout = strdup("");
	}
}

int tr_wait_tracer(struct trace_run *r, int timeout_ms)
{
	int ret = tr_reap(&r->tracer, timeout_ms);

	collect(r);
	if (ret < 0)
		return fail_with(r, "%s did not exit within %d ms (killed); stderr: %s",
				 tr_tracer(), timeout_ms, r->tracer_stderr);
	return 0;
}

int tr_wait(struct trace_run *r, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;
	bool hung;

	while (!(try_reap(&r->prog) & try_reap(&r->tracer)) && now_s() < deadline) {
		collect(r); /* the tracer's time is taken as soon as it exits */
		sleep_ms(2);
	}
	hung = !r->prog.reaped || !r->tracer.reaped;
	if (hung) {
		const char *who = !r->prog.reaped && !r->tracer.reaped ? "the program and the tracer" :
				  !r->prog.reaped ? "the program" : "the tracer";

		kill_and_reap(&r->tracer);
		kill_and_reap(&r->prog);
		collect(r);
		return fail_with(r, "timeout: %s still running after %d ms (killed); tracer stderr: %s",
				 who, timeout_ms, r->tracer_stderr ? r->tracer_stderr : "");
	}
	collect(r);
	return 0;
}

int tr_load_trace(struct trace_run *r)
{
	const char *end = NULL;
	char why[256];

	r->trace_text = tr_read_file(r->trace_path, &r->trace_len);
	if (!r->trace_text)
		return fail_with(r, "no trace file %s: %s; tracer exit %d, stderr: %s",
				 r->trace_path, strerror(errno), r->tracer_exit,
				 r->tracer_stderr ? r->tracer_stderr : "");
	/* Our own RFC 8259 check first: cJSON accepts a few non-JSON forms. */
	if (!json_strict_check(r->trace_text, r->trace_len, why, sizeof(why)))
		return fail_with(r, "trace %s is not valid JSON: %s", r->trace_path, why);
	r->trace = cJSON_ParseWithOpts(r->trace_text, &end, 1);
	if (!r->trace)
		return fail_with(r, "cJSON cannot parse %s near offset %ld", r->trace_path,
				 end ? (long)(end - r->trace_text) : -1L);
	r->events = cJSON_GetObjectItemCaseSensitive(r->trace, "traceEvents");
	if (!cJSON_IsArray(r->events))
		return fail_with(r, "trace %s has no traceEvents array", r->trace_path);
	return 0;
}

int tr_run(struct trace_run *r, const char *program,
	   const char *const *prog_args, const char *const *tracer_args)
{
	double t0 = now_s();
	int left;

	if (tr_init(r) < 0 || tr_start_program(r, program, prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_tracer(r, tracer_args) < 0)
		goto failed;
	left = TR_TIMEOUT_MS - (int)((now_s() - t0) * 1000);
	if (tr_wait(r, left > 0 ? left : 1) < 0)
		goto failed;
	if (r->tracer_exit != 0)
		return fail_with(r, "tracer exited %d; stderr: %s", r->tracer_exit,
				 r->tracer_stderr);
	return tr_load_trace(r);
failed:
	kill_and_reap(&r->tracer);
	kill_and_reap(&r->prog);
	collect(r);
	return -1;
}

int tr_run_command(struct trace_run *r, const char *program,
		   const char *const *prog_args, const char *const *argv)
{
	double t0 = now_s();
	int left;

	if (tr_init(r) < 0 || tr_start_program(r, program, prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_command(r, argv) < 0)
		goto failed;
	left = TR_TIMEOUT_MS - (int)((now_s() - t0) * 1000);
	if (tr_wait(r, left > 0 ? left : 1) < 0)
		goto failed;
	return 0;
failed:
	kill_and_reap(&r->tracer);
	kill_and_reap(&r->prog);
	collect(r);
	return -1;
}

void tr_run_ok(struct trace_run *r, const char *program, const char *const *prog_args,
	       const char *const *tracer_args)
{
	tr_require_root();
	if (tr_run(r, program, prog_args, tracer_args) < 0)
		fail_msg("%s", r->error);
	if (r->prog_exit != 0)
		fail_msg("%s exited %d; stdout:\n%s", program, r->prog_exit, r->prog_stdout);
	if (r->tracer_exit != 0)
		fail_msg("the tracer exited %d; stderr:\n%s", r->tracer_exit, r->tracer_stderr);
}

void tr_free(struct trace_run *r)
{
	kill_and_reap(&r->tracer);
	kill_and_reap(&r->prog);
	free(r->prog_stdout);
	free(r->tracer_stderr);
	free(r->tracer_stdout);
	free(r->trace_text);
	cJSON_Delete(r->trace);
	if (r->dir[0]) {
		if (getenv("CTRACE_TEST_KEEP"))
			fprintf(stderr, "kept %s\n", r->dir);
		else
			remove_dir(r->dir);
	}
	memset(r, 0, sizeof(*r));
}

/* ---- reading the trace --------------------------------------------------- */

static bool str_is(const cJSON *obj, const char *key, const char *want)
{
	const char *s = tr_str(obj, key);

	return want == NULL || (s && !strcmp(s, want));
}

size_t tr_find_all(const struct trace_run *r, const char *ph, const char *name,
		   cJSON **out, size_t max)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events) {
		if (str_is(ev, "ph", ph) && str_is(ev, "name", name)) {
			if (n < max)
				out[n] = (cJSON *)ev;
			n++;
		}
	}
	return n < max ? n : max;
}

cJSON *tr_find(const struct trace_run *r, const char *ph, const char *name)
{
	cJSON *ev = NULL;

	return tr_find_all(r, ph, name, &ev, 1) ? ev : NULL;
}

cJSON *tr_find_pid(const struct trace_run *r, const char *ph, const char *name,
		   double pid)
{
	cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
		if (str_is(ev, "ph", ph) && str_is(ev, "name", name) &&
		    tr_num(ev, "pid") == pid)
			return ev;
	return NULL;
}

cJSON *tr_find_meta(const struct trace_run *r, const char *what, double pid,
		    double tid)
{
	cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
		if (str_is(ev, "ph", "M") && str_is(ev, "name", what) &&
		    tr_num(ev, "pid") == pid && tr_num(ev, "tid") == tid)
			return ev;
	return NULL;
}

size_t tr_count(const struct trace_run *r, const char *ph)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events)
		n += str_is(ev, "ph", ph);
	return n;
}

void tr_assert_inside(const cJSON *inner, const cJSON *outer)
{
	double ts = tr_num(inner, "ts"), end = ts + tr_num(inner, "dur");
	double o_ts = tr_num(outer, "ts"), o_end = o_ts + tr_num(outer, "dur");

	if (!(ts >= o_ts && end <= o_end))
		fail_msg("%s [%.3f, %.3f] not inside %s [%.3f, %.3f]", tr_str(inner, "name"), ts, end,
			 tr_str(outer, "name"), o_ts, o_end);
}

cJSON *tr_meta(const struct trace_run *r)
{
	return cJSON_GetObjectItemCaseSensitive(r->trace, "metadata");
}

double tr_meta_num(const struct trace_run *r, const char *key)
{
	return tr_num(tr_meta(r), key);
}

static int by_ts(const void *a, const void *b)
{
	double x = tr_num(*(cJSON *const *)a, "ts"), y = tr_num(*(cJSON *const *)b, "ts");

	return x < y ? -1 : x > y;
}

size_t tr_counter_values(const struct trace_run *r, const char *name, double pid,
			 double *out, size_t max)
{
	cJSON *all[32], *mine[32];
	size_t n = tr_find_all(r, "C", name, all, 32), k = 0;

	for (size_t i = 0; i < n; i++)
		if (tr_num(all[i], "pid") == pid)
			mine[k++] = all[i];
	qsort(mine, k, sizeof(mine[0]), by_ts);
	for (size_t i = 0; i < k && i < max; i++)
		out[i] = tr_num(cJSON_GetObjectItem(mine[i], "args"), "value");
	return k;
}

double tr_num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

const char *tr_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *tr_arg(const cJSON *ev, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(ev, "args"), key);
}

bool tr_valid_utf8(const char *s, size_t n)
{
	return json_strict_utf8(s, n, NULL);
}

bool tr_check_time_fields(const char *text, char *why, size_t why_len)
{
	return json_strict_time_fields(text, strlen(text), why, why_len);
}

/* ---- privileges and the checker ------------------------------------------ */

bool tr_in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && (!strcmp(ci, "true") || !strcmp(ci, "1"));
}

void tr_require_root(void)
{
	if (geteuid() == 0)
		return;
	if (tr_in_ci())
		fail_msg("BPF tests need root (CI=true: not skipping); run ./tests/run-integration, which uses sudo");
	print_message("SKIP: BPF tests need root; run ./tests/run-integration (it uses sudo)\n");
	skip();
}

char *tr_convert_begin(const char *how)
{
	const char *given = getenv("CTRACE_CONVERT");
	char *was = given ? strdup(given) : NULL;

	setenv("CTRACE_CONVERT", how, 1);
	return was;
}

void tr_convert_end(char *was)
{
	if (was)
		setenv("CTRACE_CONVERT", was, 1);
	else
		unsetenv("CTRACE_CONVERT");
	free(was);
}

int tr_start_tracer_converting(struct trace_run *r, const char *const *tracer_args, const char *how)
{
	char *was = tr_convert_begin(how);
	int started = tr_start_tracer(r, tracer_args);

	tr_convert_end(was);
	return started;
}

bool tr_converts_behind(void)
{
	const char *how = getenv("CTRACE_CONVERT");

	return how && !strcmp(how, "behind"); /* the trace command's default: live */
}

void tr_require_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, cmd);
		if (access(buf, X_OK) == 0)
			return;
		path += len + (path[len] == ':');
	}
	if (tr_in_ci())
		fail_msg("%s is not installed (CI=true: not skipping); scripts/install-deps test installs it", cmd);
	print_message("SKIP: %s is not installed (scripts/install-deps test)\n", cmd);
	skip();
}

bool tr_checker_available(char *why, size_t why_len)
{
	const char *const node[] = { "node", "--version", NULL };
	struct tr_cmd c;
	bool ok;

	if (access(TR_CHECKER, R_OK) != 0) {
		snprintf(why, why_len, "%s is missing", TR_CHECKER);
		return false;
	}
	if (access("tests/devtools/node_modules/@paulirish/trace_engine/package.json", R_OK) != 0) {
		snprintf(why, why_len, "the checker's node_modules are not installed (scripts/install-devtools-checker)");
		return false;
	}
	if (tr_cmd_run(&c, node, 10000) < 0)
		return false;
	ok = c.exit == 0;
	if (!ok)
		snprintf(why, why_len, "node does not run: %s", c.err);
	tr_cmd_free(&c);
	return ok;
}

cJSON *tr_checker_run(const char *trace_path, char *why, size_t why_len)
{
	const char *const argv[] = { "node", TR_CHECKER, trace_path, NULL };
	struct tr_cmd c;
	cJSON *summary = NULL;

	if (tr_cmd_run(&c, argv, 60000) < 0) {
		snprintf(why, why_len, "cannot run node: %s", strerror(errno));
		return NULL;
	}
	if (c.exit != 0)
		snprintf(why, why_len, "the checker exited %d: %s", c.exit, c.err);
	else if (!(summary = cJSON_ParseWithOpts(c.out, NULL, 1)))
		snprintf(why, why_len, "the checker's output is not one JSON value: %.200s", c.out);
	tr_cmd_free(&c);
	return summary;
}

cJSON *tr_checker_summary(const char *trace_path)
{
	char why[512];
	cJSON *sum;

	if (!tr_checker_available(why, sizeof(why))) {
		if (tr_in_ci())
			fail_msg("DevTools checker unavailable (CI=true: not skipping): %s", why);
		print_message("SKIP: DevTools checker unavailable: %s\n", why);
		skip();
	}
	sum = tr_checker_run(trace_path, why, sizeof(why));
	if (!sum)
		fail_msg("%s", why);
	return sum;
}

long tr_tracer_peak_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	bool tracer = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5))
			tracer = strstr(line, "ctrace-bpf") != NULL;
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return tracer ? kib : -1;
}
