// SPDX-License-Identifier: MIT
/* trace_fix.c - see trace_fix.h. */
#include "offline/trace_fix.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow_array.h"
#include "encode/json/json_check.h"
#include "encode/json/json_writer.h"

#define CONTEXT_PREFIX "{\"context\":"
#define EVENTS_LINE "\"traceEvents\":["
#define METADATA_PREFIX "\"metadata\":"

/* One line at a time, without its '\n', never longer than TRACE_FIX_LINE_MAX. */
struct line_reader {
	FILE *in;
	char *buf;
	size_t cap;
	size_t len;      /* bytes kept in buf */
	size_t raw_len;  /* bytes the line had in the file (without '\n') */
	bool newline;    /* it ended with '\n' (else with the end of the file) */
	bool too_long;   /* raw_len > TRACE_FIX_LINE_MAX: buf holds only a start */
	uint64_t read;   /* bytes read from the file so far, '\n's included */
	uint64_t kept;   /* of those, the bytes the repair keeps as they are */
};

/* The line just read goes into the repair unchanged. */
static void keep_line(struct line_reader *r)
{
	r->kept += r->raw_len + r->newline;
}

/* 1: a line; 0: end of file with no byte; -1: read error or out of memory. */
static int read_line(struct line_reader *r)
{
	int c;

	r->len = r->raw_len = 0;
	r->newline = r->too_long = false;
	/* Even an empty line gets a buffer: callers read buf as a string. */
	if (!r->buf) {
		r->buf = malloc(r->cap = 4096);
		if (!r->buf) {
			r->cap = 0;
			errno = ENOMEM;
			return -1;
		}
	}
	while ((c = getc_unlocked(r->in)) != EOF) {
		r->read++;
		if (c == '\n') {
			r->newline = true;
			break;
		}
		r->raw_len++;
		if (r->len >= TRACE_FIX_LINE_MAX) {
			r->too_long = true; /* keep counting, stop storing */
			continue;
		}
		if (GROW_ARRAY(r->buf, r->cap, r->len + 1, 4096)) { /* + 1: the NUL */
			errno = ENOMEM;
			return -1;
		}
		r->buf[r->len++] = (char)c;
	}
	if (ferror(r->in))
		return -1;
	if (r->buf)
		r->buf[r->len] = '\0';
	return r->raw_len || r->newline;
}

bool trace_fix_line_is_object(const char *s, size_t n)
{
	/* 1000: cJSON's nesting limit, which this check replaced (no line kept before is refused). */
	struct json_check c = { .flags = JSON_CHECK_OBJECT | JSON_CHECK_NO_CONTROL, .max_depth = 1000 };

	return n >= 2 && s[0] == '{' && s[n - 1] == '}' && json_check(s, n, &c);
}

static bool is_prefix_of(const char *s, size_t n, const char *whole)
{
	return n <= strlen(whole) && !memcmp(s, whole, n);
}

__attribute__((format(printf, 2, 3)))
static enum trace_fix_status not_ours(struct trace_fix_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return res->status = TRACE_FIX_NOT_OURS;
}

/*
 * After the "]," line: the file is complete if a whole metadata object
 * follows and then nothing but the final newline.
 */
static bool complete_after_events(struct line_reader *lr)
{
	char *obj;
	bool ok;
	int got;

	if (lr->len != 2 || memcmp(lr->buf, "],", 2) || !lr->newline)
		return false;
	if (read_line(lr) <= 0 || lr->too_long ||
	    !is_prefix_of(METADATA_PREFIX, strlen(METADATA_PREFIX), lr->buf))
		return false;
	/* "metadata":{...}} is an object once it gets its opening brace. */
	obj = malloc(lr->len + 2);
	if (!obj)
		return false;
	obj[0] = '{';
	memcpy(obj + 1, lr->buf, lr->len + 1);
	ok = trace_fix_line_is_object(obj, lr->len + 1);
	free(obj);
	while (ok && (got = read_line(lr)) > 0)
		ok = lr->raw_len == strspn(lr->buf ? lr->buf : "", " \t\r");
	return ok && !ferror(lr->in);
}

/* The closing metadata: the context's facts, then what the repair did. */
static void write_closing(struct json_writer *w, const char *ctx, size_t ctx_len,
			  const struct trace_fix_result *res)
{
	jw_lit(w, "\n],\n\"metadata\":{");
	/* ctx is "{members}": copy the members (it was checked to be an object). */
	if (ctx && ctx_len > 2) {
		jw_raw(w, ctx + 1, ctx_len - 2);
		jw_lit(w, ",");
	}
	jw_lit(w, "\"stop_reason\":\"cut short; repaired by ctrace-bpf fix\",\"truncated\":true");
	jw_lit(w, ",\"events_recovered\":");
	jw_u64(w, res->events);
	jw_lit(w, ",\"damaged_lines_dropped\":");
	jw_u64(w, res->damaged_lines);
	jw_lit(w, ",\"bytes_dropped\":");
	jw_u64(w, res->bytes_dropped);
	jw_lit(w, "}}\n");
}

/*
 * Copies the event lines to w until the "]" line or the end of the input.
 * *commas_ok: every event line but the last ended with the separator and
 * the last did not, as in a complete file (else the input is not valid JSON
 * as it stands, even if every line is).
 */
static int copy_events(struct line_reader *lr, struct json_writer *w,
		       struct trace_fix_result *res, bool *end_seen, bool *commas_ok)
{
	bool last_comma = false;
	int got;

	*end_seen = false;
	*commas_ok = true;
	while ((got = read_line(lr)) > 0) {
		size_t len = lr->len;

		if (!lr->too_long && len > 0 && lr->buf[0] == ']') {
			*end_seen = true;
			if (last_comma)
				*commas_ok = false;
			return 0;
		}
		if (lr->raw_len == 0)
			continue; /* the empty line of an empty event list */
		if (len > 0 && lr->buf[len - 1] == ',')
			len--; /* the separator: the cut may fall right after it */
		if (!lr->too_long && trace_fix_line_is_object(lr->buf, len)) {
			if (res->events && !last_comma)
				*commas_ok = false;
			last_comma = len < lr->len;
			jw_lit(w, res->events ? ",\n" : "");
			jw_raw(w, lr->buf, len);
			keep_line(lr);
			res->events++;
		} else if (lr->newline) {
			res->damaged_lines++;
		}
		if (!lr->newline)
			break;
	}
	if (got < 0)
		return -1;
	res->tail_cut = true;
	return 0;
}

enum trace_fix_status trace_fix(FILE *in, int out_fd, struct trace_fix_result *res)
{
	return trace_fix_to(in, out_fd, false, res);
}

enum trace_fix_status trace_fix_to(FILE *in, int out_fd, bool gzip_out, struct trace_fix_result *res)
{
	const size_t sig_len = strlen(TRACE_FIX_SIGNATURE);
	const size_t ctx_prefix = strlen(CONTEXT_PREFIX);
	struct line_reader lr = { .in = in };
	struct json_writer w;
	char *ctx = NULL;
	size_t ctx_len = 0;
	bool end_seen = false, commas_ok = false, ctx_comma = false;
	int got;

	memset(res, 0, sizeof(*res));
	if (jw_init(&w, out_fd, 0) < 0 || (gzip_out && jw_gzip(&w) < 0)) {
		jw_free(&w);
		res->err = ENOMEM;
		return res->status = TRACE_FIX_WRITE_ERROR;
	}

	/* Line 1: the signature, then the context object and a comma. */
	got = read_line(&lr);
	if (got < 0)
		goto read_error;
	if (got == 0) {
		not_ours(res, "the file is empty: the tracer stopped before it wrote anything");
		goto done;
	}
	/* A short first line is a cut only if the file ends there. */
	if (lr.too_long || (lr.newline && lr.len < sig_len) ||
	    !is_prefix_of(lr.buf, lr.len < sig_len ? lr.len : sig_len, TRACE_FIX_SIGNATURE)) {
		not_ours(res, "it is not a ctrace-bpf trace (those begin with %s)", TRACE_FIX_SIGNATURE);
		goto done;
	}
	if (lr.len < sig_len) {
		not_ours(res, "only %zu bytes: the tracer stopped before it wrote its first line",
			 lr.raw_len);
		goto done;
	}
	/* The comma after the context may be missing: the cut fell right before it. */
	ctx_comma = lr.newline && lr.buf[lr.len - 1] == ',';
	ctx_len = lr.len - ctx_prefix - (lr.buf[lr.len - 1] == ',');
	if (!lr.too_long && trace_fix_line_is_object(lr.buf + ctx_prefix, ctx_len)) {
		ctx = malloc(ctx_len);
		if (!ctx) {
			errno = ENOMEM;
			goto read_error;
		}
		memcpy(ctx, lr.buf + ctx_prefix, ctx_len);
		res->context_kept = true;
		keep_line(&lr);
	} else {
		ctx_len = 0;
	}
	if (ctx)
		jw_lit(&w, CONTEXT_PREFIX), jw_raw(&w, ctx, ctx_len), jw_lit(&w, ",\n");
	else
		jw_lit(&w, "{");
	jw_lit(&w, EVENTS_LINE "\n");
	if (!lr.newline) {
		res->tail_cut = true;
		goto close;
	}

	/* Line 2: the start of the event list. */
	got = read_line(&lr);
	if (got < 0)
		goto read_error;
	if (got == 0 || (!lr.newline && is_prefix_of(lr.buf, lr.len, EVENTS_LINE))) {
		res->tail_cut = true;
		goto close;
	}
	if (lr.too_long || strcmp(lr.buf, EVENTS_LINE)) {
		not_ours(res, "its second line is not %s", EVENTS_LINE);
		goto done;
	}
	keep_line(&lr);

	if (copy_events(&lr, &w, res, &end_seen, &commas_ok) < 0)
		goto read_error;
	if (end_seen && commas_ok && ctx_comma && !res->damaged_lines && res->context_kept &&
	    complete_after_events(&lr)) {
		res->status = TRACE_FIX_COMPLETE;
		goto done;
	}
	if (ferror(in))
		goto read_error;
close:
	/*
	 * What was removed is all the input did not keep as it was: the cut
	 * tail, damaged lines, the old closing, and whatever follows it, read
	 * to the end so that the count is the whole of it.
	 */
	while (getc_unlocked(in) != EOF)
		lr.read++;
	if (ferror(in))
		goto read_error;
	res->bytes_dropped = lr.read - lr.kept;
	write_closing(&w, ctx, ctx_len, res);
	if (jw_finish(&w) < 0) {
		res->err = w.err;
		res->status = TRACE_FIX_WRITE_ERROR;
	} else {
		res->status = TRACE_FIX_REPAIRED;
	}
	goto done;
read_error:
	res->err = errno ? errno : EIO;
	res->status = TRACE_FIX_READ_ERROR;
done:
	jw_free(&w);
	free(lr.buf);
	free(ctx);
	return res->status;
}
