// SPDX-License-Identifier: MIT
/* attach_modes.c - see attach_modes.h. */
#include "attach_modes.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

double am_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void am_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void am_start_tracer(struct trace_run *r, const char *const *args)
{
	const char *argv[40];
	size_t n = 0;

	argv[n++] = tr_tracer();
	argv[n++] = "-o";
	argv[n++] = r->trace_path;
	for (size_t i = 0; args && args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (access(tr_tracer(), X_OK) != 0)
		fail_msg("%s: %s (run make from the repository root)", tr_tracer(), strerror(errno));
	if (tr_spawn(&r->tracer, r->dir, "tracer", argv) < 0)
		fail_msg("cannot start %s: %s", tr_tracer(), strerror(errno));
}

void am_wait_tracer(struct trace_run *r, int timeout_ms)
{
	if (tr_wait_tracer(r, timeout_ms) < 0)
		fail_msg("%s", r->error);
}

void am_finish(struct trace_run *r, int timeout_ms)
{
	am_wait_tracer(r, timeout_ms);
	if (r->tracer_exit != 0)
		fail_msg("the tracer exited %d; stderr:\n%s", r->tracer_exit, r->tracer_stderr);
	if (tr_load_trace(r) < 0)
		fail_msg("%s", r->error);
}

long am_field(const char *text, const char *prefix, const char *key)
{
	char pat[64];
	size_t plen = strlen(prefix);

	snprintf(pat, sizeof(pat), "%s=", key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (!strncmp(line, prefix, plen)) {
			for (const char *p = line; p < line + len; p++) {
				/* KEY= at the start of a word only ("tid=" is not "pid=") */
				if ((p == line || p[-1] == ' ') && !strncmp(p, pat, strlen(pat)))
					return strtol(p + strlen(pat), NULL, 10);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return AM_NONE;
}

long am_need_field(const char *text, const char *prefix, const char *key)
{
	long v = am_field(text, prefix, key);

	if (v == AM_NONE)
		fail_msg("no \"%s...%s=N\" line in the program's output:\n%s", prefix, key,
			 text ? text : "(none)");
	return v;
}

bool am_has_line(const char *text, const char *prefix)
{
	size_t plen = strlen(prefix);

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (!strncmp(line, prefix, plen))
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

char *am_read_out(const struct tr_child *c)
{
	char *s = tr_read_file(c->out_path, NULL);

	return s ? s : strdup("");
}

void am_wait_out_line(const struct tr_child *c, const char *prefix,
				       int timeout_ms)
{
	double deadline = am_now() + timeout_ms / 1000.0;

	for (;;) {
		char *out = am_read_out(c);
		bool found = am_has_line(out, prefix);

		if (found) {
			free(out);
			return;
		}
		if (am_now() >= deadline) {
			fail_msg("no line \"%s\" within %d ms; output so far:\n%s", prefix,
				 timeout_ms, out);
		}
		free(out);
		am_sleep_ms(2);
	}
}

size_t am_find(const struct trace_run *r, const char *ph, const char *name,
				double pid, cJSON **out, size_t max)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events) {
		const char *p = tr_str(ev, "ph"), *nm = tr_str(ev, "name");

		if (ph && (!p || strcmp(p, ph)))
			continue;
		if (name && (!nm || strcmp(nm, name)))
			continue;
		if (!isnan(pid) && tr_num(ev, "pid") != pid)
			continue;
		if (n < max)
			out[n] = (cJSON *)ev;
		n++;
	}
	return n;
}

size_t am_count(const struct trace_run *r, const char *ph, const char *name,
				 double pid)
{
	return am_find(r, ph, name, pid, NULL, 0);
}

cJSON *am_one(const struct trace_run *r, const char *ph, const char *name,
			       double pid)
{
	cJSON *ev = NULL;
	size_t n = am_find(r, ph, name, pid, &ev, 1);

	if (n != 1)
		fail_msg("expected one \"%s\" event \"%s\" in process %.0f, found %zu", ph, name,
			 pid, n);
	return ev;
}

const char *am_process_name(const struct trace_run *r, double pid)
{
	cJSON *m[16];
	size_t n = am_find(r, "M", "process_name", pid, m, 16);

	if (!n)
		return NULL;
	if (n > 16)
		n = 16;
	return tr_str(cJSON_GetObjectItem(m[n - 1], "args"), "name");
}

const char *am_arg_str(const cJSON *ev, const char *key)
{
	cJSON *v = tr_arg(ev, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

double am_arg_num(const cJSON *ev, const char *key)
{
	cJSON *v = tr_arg(ev, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

cJSON *am_target(const struct trace_run *r, const char *which)
{
	cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(r->trace, which), "target");

	if (!cJSON_IsObject(t))
		fail_msg("the trace has no %s.target", which);
	return t;
}

const char *am_stop_reason(const struct trace_run *r)
{
	const char *s = tr_str(tr_meta(r), "stop_reason");

	return s ? s : "(none)";
}

char *am_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long: %s/%s", dir, name);
	return buf;
}

void am_copy_file(const char *src, const char *dst, mode_t mode)
{
	size_t len;
	char *data = tr_read_file(src, &len);
	int fd;

	if (!data)
		fail_msg("cannot read %s: %s", src, strerror(errno));
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		fail_msg("cannot write %s: %s", dst, strerror(errno));
	close(fd);
	chmod(dst, mode);
	free(data);
}
