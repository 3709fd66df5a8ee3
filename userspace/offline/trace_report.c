// SPDX-License-Identifier: MIT
#include "offline/trace_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/key_map.h"
#include "offline/trace_fix.h"
#include "encode/perfetto/pftrace.h"

/* One line of the file, at most TRACE_FIX_LINE_MAX bytes (else *too_long, its bytes skipped). */
struct line_reader {
	gzFile gz;
	char *buf;
	size_t cap;
};

/* The next line without its '\n': its length, or -1 at the end (or a read error: gzerror). */
static long next_line(struct line_reader *lr, bool *too_long)
{
	size_t len = 0;

	*too_long = false;
	for (;;) {
		if (lr->cap - len < 2) {
			size_t cap = lr->cap ? lr->cap * 2 : 65536;
			char *p;

			if (cap > TRACE_FIX_LINE_MAX) {
				*too_long = true; /* the rest of this line is read and forgotten */
				len = 0;
				cap = lr->cap;
			}
			if (cap != lr->cap) {
				if (!(p = realloc(lr->buf, cap)))
					return -1;
				lr->buf = p;
				lr->cap = cap;
			}
		}
		if (!gzgets(lr->gz, lr->buf + len, (int)(lr->cap - len)))
			return len || *too_long ? (long)len : -1;
		len += strlen(lr->buf + len);
		if (len && lr->buf[len - 1] == '\n') {
			lr->buf[--len] = 0;
			return (long)len;
		}
	}
}

static double number_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *string_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Microseconds as written (three decimals) back to nanoseconds. */
static uint64_t us_to_ns(double us)
{
	return us > 0 ? (uint64_t)llround(us * 1000.0) : 0;
}

/* "b": its time kept under pid/id/name until its "e". */
static void async_begin(struct trace_report *r, struct key_map *open, const cJSON *ev, const char *key,
			size_t key_len)
{
	double *ts;

	if (open->count >= REPORT_OPEN_ASYNC_MAX || !(ts = malloc(sizeof(*ts)))) {
		r->async_unpaired++;
		return;
	}
	*ts = number_of(ev, "ts");
	free(key_map_put(open, key, key_len, ts));
}

static void async_end(struct trace_report *r, struct key_map *open, const cJSON *ev, const char *name,
		      const char *key, size_t key_len)
{
	double *begin = key_map_del(open, key, key_len);
	double end = number_of(ev, "ts");

	if (!begin) {
		r->async_unpaired++;
		return;
	}
	trace_summary_span(&r->summary, name, strlen(name), end > *begin ? us_to_ns(end - *begin) : 0, false);
	free(begin);
}

/* A "C": its "value", or each number of its args as a series "NAME KEY" (other writers). */
static void counter(struct trace_report *r, const char *name, const cJSON *args)
{
	const cJSON *v;
	char series[SUMMARY_NAME_MAX + 1];

	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(args, "value"))) {
		trace_summary_counter(&r->summary, name, strlen(name), v->valuedouble);
		return;
	}
	cJSON_ArrayForEach(v, args) {
		if (!cJSON_IsNumber(v) || !v->string)
			continue;
		snprintf(series, sizeof(series), "%s %s", name, v->string);
		trace_summary_counter(&r->summary, series, strlen(series), v->valuedouble);
	}
}

/* One event of traceEvents, given to the summary by its phase. */
static void event(struct trace_report *r, struct key_map *open, const cJSON *ev)
{
	const char *ph = string_of(ev, "ph"), *name = string_of(ev, "name"), *cat = string_of(ev, "cat");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	double ts = number_of(ev, "ts");
	char key[200];
	int key_len;

	if (!ph || !name)
		return;
	if (isfinite(ts) && strcmp(ph, "M")) {
		double end = ts + (isfinite(number_of(ev, "dur")) ? number_of(ev, "dur") : 0);

		if (!r->timed_events || ts < r->first_ts_us)
			r->first_ts_us = ts;
		if (!r->timed_events || end > r->last_ts_us)
			r->last_ts_us = end;
		r->timed_events++;
	}
	r->events++;
	switch (ph[0] && !ph[1] ? ph[0] : 0) {
	case 'X':
		trace_summary_span(&r->summary, name, strlen(name), us_to_ns(number_of(ev, "dur")),
				   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "unfinished")));
		break;
	case 'b':
	case 'e':
		key_len = snprintf(key, sizeof(key), "%.0f/%s/%.120s", number_of(ev, "pid"),
				   string_of(ev, "id") ? string_of(ev, "id") : "", name);
		if (key_len >= (int)sizeof(key))
			key_len = sizeof(key) - 1;
		if (ph[0] == 'b')
			async_begin(r, open, ev, key, (size_t)key_len);
		else
			async_end(r, open, ev, name, key, (size_t)key_len);
		break;
	case 'I':
	case 'i':
		/* ctrace's own notices (drops, forks, execs) are not the program's instants. */
		if (cat && !strcmp(cat, "ctrace") && !strncmp(name, "ctrace: ", 8))
			break;
		trace_summary_instant(&r->summary, name, strlen(name));
		break;
	case 'C':
		counter(r, name, args);
		break;
	}
}

/* The last line, "metadata":{...}}: what the trace lost. */
static void metadata(struct trace_report *r, char *line, size_t len)
{
	static const char head[] = "\"metadata\":";
	cJSON *m;
	const cJSON *mem;

	if (len < sizeof(head) || line[len - 1] != '}')
		return;
	m = cJSON_ParseWithLength(line + sizeof(head) - 1, len - (sizeof(head) - 1) - 1);
	if (!cJSON_IsObject(m)) {
		cJSON_Delete(m);
		return;
	}
	r->losses.known = true;
	r->losses.dropped = (uint64_t)fmax(0, number_of(m, "dropped_events"));
	r->losses.unfinished_spans = (uint64_t)fmax(0, number_of(m, "unfinished_spans"));
	r->losses.unmatched_ends = (uint64_t)fmax(0, number_of(m, "unmatched_span_ends"));
	mem = cJSON_GetObjectItemCaseSensitive(m, "memory");
	r->losses.evicted = (uint64_t)fmax(0, number_of(mem, "evicted"));
	r->losses.truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "truncated"));
	mem = cJSON_GetObjectItemCaseSensitive(m, "flight_recorder"); /* a dump of --ring's */
	r->losses.ring = cJSON_IsObject(mem);
	r->losses.overwritten = (uint64_t)fmax(0, number_of(mem, "events_overwritten"));
	cJSON_Delete(m);
}

static void free_value(const void *key, size_t len, void *value, void *ctx)
{
	(void)key, (void)len, (void)ctx;
	free(value);
}

/*
 * A Perfetto trace (-o FILE.pftrace) as the JSON it was made from, in an
 * unnamed temp file: its fd (for gzdopen), -2 when path is no Perfetto
 * trace, or -1 with r->why said.
 */
static int pftrace_as_json(const char *path, struct trace_report *r)
{
	unsigned char head[2];
	FILE *in = fopen(path, "rb"), *json;
	char why[160];
	int fd;

	if (!in)
		return -2; /* gzopen() says why */
	if (fread(head, 1, sizeof(head), in) != sizeof(head) || !pftrace_looks_like(head, sizeof(head))) {
		fclose(in);
		return -2;
	}
	rewind(in);
	json = tmpfile();
	if (!json || pftrace_to_json(in, json, why, sizeof(why)) < 0) {
		snprintf(r->why, sizeof(r->why), "%s: %s", path, json ? why : "no temp file for its JSON");
		fclose(in);
		if (json)
			fclose(json);
		return -1;
	}
	fclose(in);
	fd = dup(fileno(json));
	fclose(json);
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	return fd;
}

int trace_report_read(const char *path, struct trace_report *r)
{
	struct line_reader lr = { 0 };
	int pf_fd;
	struct key_map open;
	bool too_long, in_events = false;
	long len;
	int errnum = 0;

	memset(r, 0, sizeof(*r));
	trace_summary_init(&r->summary);
	pf_fd = pftrace_as_json(path, r);
	if (pf_fd == -1)
		return -1;
	if (!(lr.gz = pf_fd >= 0 ? gzdopen(pf_fd, "rb") : gzopen(path, "rb"))) {
		snprintf(r->why, sizeof(r->why), "cannot open %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(lr.gz, 1 << 17);
	key_map_init(&open);
	len = next_line(&lr, &too_long);
	if (len < 0 || strncmp(lr.buf, TRACE_FIX_SIGNATURE, strlen(TRACE_FIX_SIGNATURE))) {
		snprintf(r->why, sizeof(r->why), "%s is not a trace written by ctrace-bpf (it does not begin with %s)",
			 path, TRACE_FIX_SIGNATURE);
		goto fail;
	}
	while ((len = next_line(&lr, &too_long)) >= 0) {
		char *line = lr.buf;
		size_t n = (size_t)len;

		if (!in_events) {
			in_events = !strcmp(line, "\"traceEvents\":[");
			continue;
		}
		if (!strcmp(line, "],")) {
			in_events = false;
			if ((len = next_line(&lr, &too_long)) >= 0 && !too_long)
				metadata(r, lr.buf, (size_t)len);
			break;
		}
		if (n && line[n - 1] == ',')
			n--;
		cJSON *ev = too_long ? NULL : cJSON_ParseWithLength(line, n);

		if (cJSON_IsObject(ev))
			event(r, &open, ev);
		else
			r->damaged_lines++;
		cJSON_Delete(ev);
	}
	gzerror(lr.gz, &errnum);
	if (errnum && errnum != Z_STREAM_END && errnum != Z_BUF_ERROR) {
		snprintf(r->why, sizeof(r->why), "reading %s failed: %s", path,
			 errnum == Z_ERRNO ? strerror(errno) : gzerror(lr.gz, &errnum));
		goto fail;
	}
	r->async_unpaired += open.count;
	key_map_each(&open, free_value, NULL);
	key_map_free(&open);
	gzclose(lr.gz);
	free(lr.buf);
	return 0;
fail:
	key_map_each(&open, free_value, NULL);
	key_map_free(&open);
	gzclose(lr.gz);
	free(lr.buf);
	return -1;
}

void trace_report_free(struct trace_report *r)
{
	trace_summary_free(&r->summary);
}
