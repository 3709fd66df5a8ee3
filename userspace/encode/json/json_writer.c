/* SPDX-License-Identifier: MIT */
/*
 * json_writer.c - buffered JSON output over a file descriptor.
 *
 * Written by hand instead of printing with cJSON: at ~10M events/s a tree and
 * a malloc'd string per event would cost more than the rest of the loader.
 * Everything here appends into w->buf, which is written out when full.
 */
#include "encode/json/json_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/write_behind.h"

int jw_init(struct json_writer *w, int fd, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	if (cap == 0)
		cap = JW_DEFAULT_CAP;
	if (cap < JW_MIN_CAP) /* an escape ("\u2028") must fit after a flush */
		cap = JW_MIN_CAP;
	w->buf = malloc(cap);
	if (!w->buf)
		return -ENOMEM;
	w->cap = cap;
	return trace_sink_init(&w->sink, false);
}

int jw_gzip(struct json_writer *w)
{
	trace_sink_free(&w->sink);
	return trace_sink_init(&w->sink, true);
}

void jw_packets(struct json_writer *w)
{
	w->sink.whole_pieces = true;
}

int jw_pftrace(struct json_writer *w, int json_fd)
{
	trace_sink_free(&w->sink);
	return trace_sink_init_pftrace(&w->sink, json_fd);
}

/* The write-behind thread's writes: through the sink (write_behind.h). */
static int sink_write(void *ctx, int fd, const char *p, size_t n, unsigned long long *written)
{
	return trace_sink_write(ctx, fd, p, n, written);
}

void jw_write_behind(struct json_writer *w)
{
	if (!w->behind && w->fd >= 0)
		w->behind = write_behind_start(w->fd, sink_write, &w->sink, w->cap);
}

void jw_free(struct json_writer *w)
{
	write_behind_stop(w->behind);
	w->behind = NULL;
	trace_sink_free(&w->sink);
	free(w->buf);
	free(w->scratch);
	w->buf = w->scratch = NULL;
	w->len = w->cap = w->scratch_cap = 0;
}

/* The thread's news: its first error, what it has written. */
static void behind_news(struct json_writer *w, int err, unsigned long long written)
{
	if (err && !w->err)
		w->err = err;
	w->written = written + w->written_here;
}

/* write(2) all of p now (after what the thread holds); errors go to w->err. */
static void write_all(struct json_writer *w, const char *p, size_t n)
{
	unsigned long long written;
	int err;

	if (w->err)
		return;
	if (w->take) {
		w->take(w->take_ctx, p, n, 1);
		return;
	}
	if (!w->behind) {
		err = trace_sink_write(&w->sink, w->fd, p, n, &w->written);
		if (err)
			w->err = err;
		w->in_done = w->in_handed += n;
		return;
	}
	write_behind_wait(w->behind, &err, &written);
	behind_news(w, err, written);
	if (w->err)
		return;
	err = trace_sink_write(&w->sink, w->fd, p, n, &w->written_here);
	behind_news(w, err, written);
	w->in_done = w->in_handed += n;
}

int jw_hand_on(struct json_writer *w)
{
	if (!w->err && w->len > 0) {
		size_t n = w->len;
		unsigned long long written;
		int err;

		if (w->take) {
			size_t took = w->take(w->take_ctx, w->buf, n, 0);

			memmove(w->buf, w->buf + took, n - took);
			w->len = n - took;
			return 0;
		}
		w->len = 0;
		if (w->behind) {
			w->buf = write_behind_hand(w->behind, w->buf, n, &err, &written);
			behind_news(w, err, written);
			/* The news is of all handed before this buffer. */
			w->in_done = w->in_handed;
			w->in_handed += n;
		} else {
			write_all(w, w->buf, n);
		}
	}
	if (w->err)
		w->len = 0; /* nothing more will be written anyway */
	return -w->err;
}

int jw_flush(struct json_writer *w)
{
	jw_hand_on(w);
	if (w->behind) {
		unsigned long long written;
		int err;

		write_behind_wait(w->behind, &err, &written);
		behind_news(w, err, written);
		w->in_done = w->in_handed;
	}
	if (w->err)
		w->len = 0;
	return -w->err;
}

unsigned long long jw_size_bound(const struct json_writer *w)
{
	unsigned long long pending = w->in_handed - w->in_done + w->len;

	/*
	 * deflate never grows data by more than its stored blocks' 5 bytes in
	 * 16K, plus a sync flush's 5 and the trailer's 8 (zlib's deflateBound
	 * says as much, for a stream not yet begun): n/1024 + 64 is above it.
	 */
	if (w->sink.z && !w->sink.finished)
		pending += (pending >> 10) + 64;
	return w->written + pending;
}

int jw_reopen(struct json_writer *w, int fd)
{
	bool threaded = w->behind != NULL, gzip = w->sink.z != NULL;

	write_behind_stop(w->behind);
	w->behind = NULL;
	trace_sink_free(&w->sink);
	w->fd = fd;
	w->len = 0;
	w->err = 0;
	w->written = w->written_here = w->in_handed = w->in_done = 0;
	if (trace_sink_init(&w->sink, gzip) < 0)
		return -ENOMEM;
	if (threaded)
		jw_write_behind(w);
	return 0;
}

int jw_finish(struct json_writer *w)
{
	int err;

	if (jw_flush(w) < 0)
		return -w->err;
	/* The thread is idle (jw_flush waited): the sink is ours. */
	if (w->behind) {
		unsigned long long before = w->written_here;

		err = trace_sink_finish(&w->sink, w->fd, &w->written_here);
		w->written += w->written_here - before;
	} else {
		err = trace_sink_finish(&w->sink, w->fd, &w->written);
	}
	if (err && !w->err)
		w->err = err;
	return -w->err;
}

void jw_raw_slow(struct json_writer *w, const char *s, size_t n)
{
	if (w->err || n == 0)
		return;
	if (n > w->cap - w->len) {
		if (jw_hand_on(w))
			return;
		if (w->take && n > w->cap - w->len) { /* what the taker left does not make room */
			w->take(w->take_ctx, w->buf, w->len, 1);
			w->len = 0;
		}
		if (n >= w->cap) { /* bigger than the buffer: skip the copy */
			write_all(w, s, n);
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}


/* Unicode 15, table 3-7 (well-formed byte sequences). On a bad byte the
 * bytes before it form the maximal subpart that one U+FFFD replaces. */
size_t jw_utf8_next(const unsigned char *s, size_t n, int32_t *cp)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;
	int32_t v;

	if (c < 0x80) {
		*cp = (int32_t)c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates D800-DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* > U+10FFFF */
	} else { /* stray continuation, C0/C1 (overlong), F5-FF */
		*cp = -1;
		return 1;
	}
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*cp = -1;
			return i;
		}
		v = (v << 6) | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return need + 1;
}

static const char hexdig[] = "0123456789abcdef";

/* The escape for an ASCII byte that cannot appear raw in a JSON string. */
static void put_ascii_escape(struct json_writer *w, unsigned c)
{
	char e[6] = { '\\', 'u', '0', '0', hexdig[c >> 4], hexdig[c & 15] };

	switch (c) {
	case '"': jw_raw(w, "\\\"", 2); return;
	case '\\': jw_raw(w, "\\\\", 2); return;
	case '\n': jw_raw(w, "\\n", 2); return;
	case '\t': jw_raw(w, "\\t", 2); return;
	case '\r': jw_raw(w, "\\r", 2); return;
	case '\b': jw_raw(w, "\\b", 2); return;
	case '\f': jw_raw(w, "\\f", 2); return;
	}
	jw_raw(w, e, sizeof(e));
}

/*
 * The body of a string: runs of bytes that need no change are copied in one
 * jw_raw(). json_text: the text is already JSON (cJSON's output), so only
 * bytes >= 0x80 and DEL are looked at (cJSON escapes the rest of ASCII, and
 * prints DEL raw); otherwise all ASCII is escaped as needed.
 */
static void put_body(struct json_writer *w, const char *s, size_t n,
		     int json_text)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n && !w->err) {
		unsigned c = p[i];
		int32_t cp;
		size_t k;

		if (c < 0x80) {
			if (json_text ? c != 0x7f
				      : (c >= 0x20 && c != 0x7f && c != '"' &&
					 c != '\\')) {
				i++;
				continue;
			}
			jw_raw(w, s + run, i - run);
			put_ascii_escape(w, c);
			run = ++i;
			continue;
		}
		k = jw_utf8_next(p + i, n - i, &cp);
		if (cp >= 0 && cp != 0x2028 && cp != 0x2029) {
			i += k;
			continue;
		}
		jw_raw(w, s + run, i - run);
		if (cp < 0)
			jw_raw(w, "\xef\xbf\xbd", 3); /* U+FFFD */
		else /* line/paragraph separators break JavaScript parsers */
			jw_raw(w, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
		i += k;
		run = i;
	}
	jw_raw(w, s + run, i - run);
}

void jw_str(struct json_writer *w, const char *s, size_t n, const char *suffix)
{
	jw_raw(w, "\"", 1);
	if (s)
		put_body(w, s, n, 0);
	if (suffix)
		put_body(w, suffix, strlen(suffix), 0);
	jw_raw(w, "\"", 1);
}

void jw_json_text(struct json_writer *w, const char *s, size_t n)
{
	put_body(w, s, n, 1);
}

static const char pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of v, right-aligned ending at end; returns the first. */
/* Two digits a step (a pid, a tid and a timestamp per event: it adds up). */
static char *fmt_u64(char *end, unsigned long long v)
{

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		end -= 2;
		end[0] = pairs[2 * r];
		end[1] = pairs[2 * r + 1];
	}
	if (v >= 10) {
		end -= 2;
		end[0] = pairs[2 * v];
		end[1] = pairs[2 * v + 1];
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* Decimal digits of v (1 for 0): log2 to log10 by 1233/4096, then one compare. */
static unsigned digits_u64(unsigned long long v)
{
	static const unsigned long long p10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned t = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12;

	return t + (v >= p10[t]) + (v == 0);
}

/*
 * Written in place where the buffer has room (nearly always): a pid, a
 * tid and a timestamp an event, and a copy of each through memcpy() was
 * a tenth of the loader's time under a flood.
 */
char *jw_put_u64(char *q, unsigned long long v)
{
	unsigned d = digits_u64(v);

	fmt_u64(q + d, v);
	return q + d;
}

void jw_u64(struct json_writer *w, unsigned long long v)
{
	char b[24], *p, *q = jw_reserve(w, 24);

	if (__builtin_expect(q != NULL, 1)) {
		jw_commit(w, jw_put_u64(q, v));
		return;
	}
	p = fmt_u64(b + sizeof(b), v);
	jw_raw(w, p, (size_t)(b + sizeof(b) - p));
}

void jw_i64(struct json_writer *w, long long v)
{
	char b[24], *p;

	/* negate in unsigned arithmetic: -LLONG_MIN overflows a long long */
	if (v < 0) {
		p = fmt_u64(b + sizeof(b), 0ULL - (unsigned long long)v);
		*--p = '-';
	} else {
		p = fmt_u64(b + sizeof(b), (unsigned long long)v);
	}
	jw_raw(w, p, (size_t)(b + sizeof(b) - p));
}

int jw_shortest_g(double v, char *b, size_t cap)
{
	int n = 0;

	/* %.17g always round-trips; the shorter forms read better when exact */
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(b, cap, "%.*g", prec, v);
		if (prec == 17 || strtod(b, NULL) == v)
			break;
	}
	return n;
}

char *jw_put_whole(char *q, double v)
{
	/*
	 * Whole numbers (most counters) up to 2^53 print as integers, exact,
	 * without snprintf and strtod (1e15 as 1000000000000000, not 1e+15).
	 */
	if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0 && v == (double)(long long)v &&
	      !(v == 0 && signbit(v))))
		return NULL;
	if (v < 0)
		*q++ = '-';
	return jw_put_u64(q, (unsigned long long)(v < 0 ? -v : v));
}

void jw_double(struct json_writer *w, double v)
{
	char b[40], *end = jw_put_whole(b, v);

	if (end) {
		jw_raw(w, b, (size_t)(end - b));
		return;
	}
	if (isnan(v)) {
		jw_lit(w, "\"NaN\"");
		return;
	}
	if (isinf(v)) {
		jw_lit(w, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	jw_raw(w, b, (size_t)jw_shortest_g(v, b, sizeof(b)));
}

char *jw_put_ts_us(char *q, unsigned long long ns)
{
	unsigned frac = (unsigned)(ns % 1000); /* integer arithmetic: ns does not fit a double's 53 bits exactly */

	q = jw_put_u64(q, ns / 1000);
	q[0] = '.';
	q[1] = (char)('0' + frac / 100);
	q[2] = (char)('0' + frac / 10 % 10);
	q[3] = (char)('0' + frac % 10);
	return q + 4;
}

char *jw_put_ts_us_cached(struct jw_ts_cache *c, char *q, unsigned long long ns)
{
	unsigned long long us = ns / 1000, hi = us / 10000;
	unsigned lo = (unsigned)(us % 10000), frac = (unsigned)(ns % 1000);

	if (!hi) /* fewer than 5 digits: no leading zeros to write */
		return jw_put_ts_us(q, ns);
	if (hi != c->hi || !c->len) {
		c->hi = hi;
		c->len = (unsigned)(jw_put_u64(c->s, hi) - c->s);
	}
	memcpy(q, c->s, sizeof(c->s)); /* whole: a constant size; the end is c->len */
	q += c->len;
	memcpy(q, pairs + 2 * (lo / 100), 2);
	memcpy(q + 2, pairs + 2 * (lo % 100), 2);
	q[4] = '.';
	q[5] = (char)('0' + frac / 100);
	memcpy(q + 6, pairs + 2 * (frac % 100), 2);
	return q + 8;
}

void jw_ts_us(struct json_writer *w, unsigned long long ns)
{
	char b[32], *end = b + sizeof(b), *p, *q = jw_reserve(w, 32);
	unsigned frac = (unsigned)(ns % 1000);

	if (__builtin_expect(q != NULL, 1)) {
		jw_commit(w, jw_put_ts_us(q, ns));
		return;
	}
	*--end = (char)('0' + frac % 10);
	*--end = (char)('0' + frac / 10 % 10);
	*--end = (char)('0' + frac / 100);
	*--end = '.';
	p = fmt_u64(end, ns / 1000);
	jw_raw(w, p, (size_t)(b + sizeof(b) - p));
}
