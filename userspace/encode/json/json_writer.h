/* SPDX-License-Identifier: MIT */
/*
 * json_writer.h - buffered JSON output over a file descriptor.
 *
 * The trace file is written one event at a time, at up to ~10M events/s, so
 * this writer appends straight into one fixed buffer: no allocation per event,
 * no intermediate tree. (cJSON's printer would be the obvious choice, but it
 * builds a cJSON tree and mallocs a string for every event; we use cJSON only
 * for the args object, see args_json.h.)
 *
 * Every text the traced process sends is untrusted: jw_str() always emits a
 * valid JSON string literal holding valid UTF-8, whatever the input bytes.
 *
 * Errors: the first failing write(2) is remembered in w->err; from then on
 * every call is a no-op, so callers check once, at jw_flush().
 * The writer does not touch SIGPIPE: the loader must ignore it (or the
 * process dies on a closed pipe before EPIPE can be reported).
 */
#ifndef CTRACE_JSON_WRITER_H
#define CTRACE_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "io/trace_sink.h"

struct json_writer {
	int fd;
	struct trace_sink sink;      /* the file's bytes: plain, or gzip (jw_gzip()) */
	char *buf;
	size_t len, cap;
	int err;                     /* first errno, 0 if fine */
	unsigned long long written;  /* bytes written out (with a thread: as of its last news) */
	/* The trace file's writer thread (write_behind.h), or NULL: written here. */
	struct write_behind *behind;
	unsigned long long written_here; /* with a thread: what went past it (larger than a buffer) */
	/* Bytes before the sink (uncompressed) handed on, and of those, the ones `written` covers. */
	unsigned long long in_handed, in_done;
	char *scratch;               /* reusable print buffer of jw_cjson() */
	/*
	 * Instead of a file, bytes may go to a taker (the flight recorder's
	 * ring, flight_recorder.h): called with what is buffered when the
	 * buffer is full, it takes the bytes it wants from the front and
	 * returns how many; the rest stays buffered. With `all` (what is left
	 * does not make room), it must take them all. NULL: the fd (through
	 * the sink above).
	 */
	size_t (*take)(void *ctx, const char *p, size_t n, int all);
	void *take_ctx;
	size_t scratch_cap;
};

/* Appended inside a string whose source was cut short by the probe. */
#define JW_TRUNC_SUFFIX "\xe2\x80\xa6[truncated]" /* "…[truncated]" */

/* Smallest buffer: the longest unit written at once (an escape) must fit. */
#define JW_MIN_CAP 16
/* Buffer used when jw_init() is given cap == 0. */
#define JW_DEFAULT_CAP (256 * 1024)

int jw_init(struct json_writer *w, int fd, size_t cap); /* 0 or -errno */
/*
 * Full buffers go to a thread of their own that writes them (best effort:
 * without one, the writer writes itself). jw_flush() waits for it; stop
 * it with jw_free().
 */
void jw_write_behind(struct json_writer *w);
/* The output is gzip (trace_sink.h): before anything is written or handed to a thread. 0 or -ENOMEM. */
int jw_gzip(struct json_writer *w);
/*
 * The output is Perfetto's protobuf (trace_sink.h), made from the JSON as it
 * goes out; json_fd (-1: none) gets the JSON too. As jw_gzip(). 0 or -ENOMEM.
 */
int jw_pftrace(struct json_writer *w, int json_fd);
/*
 * The bytes are whole records (pftrace_encode.c's packets, each handed in
 * one jw_raw()): a write the disk cuts short is taken back to the piece's
 * start (trace_sink.h), so the file ends on a whole one.
 */
void jw_packets(struct json_writer *w);
/* What is buffered goes out, without waiting for a writer thread (jw_flush() waits); 0 or -errno. */
int jw_hand_on(struct json_writer *w);
void jw_free(struct json_writer *w); /* frees buffers, stops the writer thread; does not flush or close */

/* The buffer-full (or error) path of jw_raw(). */
void jw_raw_slow(struct json_writer *w, const char *s, size_t n);

/*
 * Bytes as they are. Inline: most calls write a few bytes of a literal into
 * a buffer with room, and the loader makes several per event.
 */
static inline void jw_raw(struct json_writer *w, const char *s, size_t n)
{
	/* n - 1: a zero length (maybe with a NULL s) takes the slow path. */
	if (__builtin_expect(!w->err && n - 1 < w->cap - w->len, 1)) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
		return;
	}
	jw_raw_slow(w, s, n);
}

/* A C string as it is; for a literal the compiler folds strlen(). */
static inline void jw_lit(struct json_writer *w, const char *s)
{
	jw_raw(w, s, strlen(s));
}

/*
 * A JSON string literal, quotes included. Invalid UTF-8 (overlong forms,
 * surrogates, > U+10FFFF, truncated sequences, stray continuation bytes)
 * becomes U+FFFD, one per maximal ill-formed subpart (Unicode's recommended
 * practice); control chars and 0x7f are escaped; U+2028/U+2029 are escaped
 * so the output is also valid JavaScript. suffix, if not NULL, is appended
 * inside the quotes (it goes through the same escaping).
 */
void jw_str(struct json_writer *w, const char *s, size_t n, const char *suffix);

/*
 * Room for n bytes written in place (an event's head at once, with no
 * check per piece): a pointer into the buffer, or NULL (too little room,
 * or an error: write through the calls above and below instead).
 * jw_commit() says where the writing ended.
 */
static inline char *jw_reserve(struct json_writer *w, size_t n)
{
	return !w->err && w->cap - w->len >= n ? w->buf + w->len : NULL;
}

static inline void jw_commit(struct json_writer *w, char *end)
{
	w->len = (size_t)(end - w->buf);
}

/* In reserved room: v's digits (at most 20), or ns as microseconds with 3 decimals (at most 24); the end. */
char *jw_put_u64(char *q, unsigned long long v);
char *jw_put_ts_us(char *q, unsigned long long ns);

/*
 * jw_put_ts_us() for a stream of close timestamps (each event's "ts"):
 * the digits above the last four of the microseconds are kept from the
 * last call and copied while they stay the same (they change every 10 ms),
 * so that most calls format 7 digits instead of 13. Zero it to start.
 */
struct jw_ts_cache {
	unsigned long long hi; /* microseconds / 10000 */
	unsigned len;          /* of s; 0: empty */
	char s[24];
};
char *jw_put_ts_us_cached(struct jw_ts_cache *c, char *q, unsigned long long ns);

void jw_u64(struct json_writer *w, unsigned long long v);
void jw_i64(struct json_writer *w, long long v);

/*
 * The shortest of %.15g/%.16g/%.17g that reads back to the same double.
 * Non-finite values are not JSON numbers: they are written as the strings
 * "NaN", "Infinity", "-Infinity". Assumes the C locale (the loader never
 * calls setlocale), so the decimal point is '.'.
 */
void jw_double(struct json_writer *w, double v);
/* In reserved room (24 bytes): v as jw_double() writes it if it is a whole number up to 2^53; the end, else NULL. */
char *jw_put_whole(char *q, double v);
/* A finite v as the shortest of %.15g/%.16g/%.17g that reads back to it, into b; its length. */
int jw_shortest_g(double v, char *b, size_t cap);

/* Nanoseconds as microseconds with exactly 3 decimals: 5 -> 0.005. */
void jw_ts_us(struct json_writer *w, unsigned long long ns);

/*
 * JSON text made by another printer (cJSON) whose string contents may hold
 * raw bytes: copied with invalid UTF-8 replaced by U+FFFD, and U+2028/U+2029
 * and DEL escaped, as jw_str() does. Safe because JSON structure is ASCII
 * without DEL, so any byte changed is inside a string literal. Any other
 * ASCII is copied as it is.
 */
void jw_json_text(struct json_writer *w, const char *s, size_t n);

/*
 * At most the size the file would have if everything written so far went
 * out now: exact for plain output once flushed; for gzip, what is known
 * written plus a bound for what is not compressed yet (--max-size).
 */
unsigned long long jw_size_bound(const struct json_writer *w);
/*
 * The same writer on a new file (rotation, trace_rotation.h), after
 * jw_finish() on the old one: the same kind (plain or gzip), a thread if
 * it had one; counts start again. 0 or -ENOMEM.
 */
int jw_reopen(struct json_writer *w, int fd);

/* Writes everything out (partial writes, EINTR). 0 or -errno. */
int jw_flush(struct json_writer *w);
/*
 * jw_flush(), then the end of the output (gzip's trailer): the last call,
 * when the document is complete. 0 or -errno.
 */
int jw_finish(struct json_writer *w);

/*
 * One UTF-8 step over s[0..n), n >= 1. Returns the bytes consumed (>= 1) and
 * sets *cp to the code point, or to -1 if those bytes are an ill-formed
 * subpart to be replaced by one U+FFFD.
 */
size_t jw_utf8_next(const unsigned char *s, size_t n, int32_t *cp);

#endif /* CTRACE_JSON_WRITER_H */
