/* SPDX-License-Identifier: MIT */
/*
 * test_json_writer.c - the writer's output, byte by byte, read back from a
 * temp file (or a pipe), for every escaping and UTF-8 rule, numbers, buffer
 * boundaries and write errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>
#include "json_strict.h"
#include <cjson/cJSON.h>

#include "encode/json/json_writer.h"

#define FFFD "\xef\xbf\xbd"

/* Strict UTF-8 check, written independently of the code under test (tests/lib). */
static int utf8_valid(const unsigned char *s, size_t n)
{
	return json_strict_utf8((const char *)s, n, NULL);
}

/* A writer into a temp file, read back whole by cap_end(). */
struct cap {
	struct json_writer w;
	FILE *f;
};

static void cap_begin(struct cap *c, size_t bufcap)
{
	c->f = tmpfile();
	assert_non_null(c->f);
	assert_int_equal(jw_init(&c->w, fileno(c->f), bufcap), 0);
}

/* Flushes, checks nothing failed, returns the file (NUL-terminated). */
static char *cap_end(struct cap *c, size_t *len)
{
	struct stat st;
	char *out;
	int fd = fileno(c->f);

	assert_int_equal(jw_flush(&c->w), 0);
	assert_int_equal(c->w.err, 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(c->w.written, (unsigned long long)st.st_size);
	out = malloc((size_t)st.st_size + 1);
	assert_non_null(out);
	assert_int_equal(pread(fd, out, (size_t)st.st_size, 0), st.st_size);
	out[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	jw_free(&c->w);
	fclose(c->f);
	return out;
}

static void expect_bytes(const char *got, size_t glen, const char *want,
			 size_t wlen)
{
	if (glen != wlen || memcmp(got, want, wlen) != 0) {
		print_error("got  (%zu) [%.*s]\nwant (%zu) [%.*s]\n", glen,
			    (int)glen, got, wlen, (int)wlen, want);
		fail();
	}
}

/* jw_str(in) must give exactly want, with a tiny and a big buffer. */
static void check_str_n(const char *in, size_t n, const char *suffix,
			const char *want, size_t wlen)
{
	static const size_t caps[] = { JW_MIN_CAP, 17, 0 };
	size_t i, len;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct cap c;
		char *out;

		cap_begin(&c, caps[i]);
		jw_str(&c.w, in, n, suffix);
		out = cap_end(&c, &len);
		expect_bytes(out, len, want, wlen);
		assert_true(utf8_valid((unsigned char *)out, len));
		free(out);
	}
}
#define check_str(in, want) \
	check_str_n(in, sizeof(in) - 1, NULL, want, sizeof(want) - 1)

static void test_integers(void **state)
{
	struct cap c;
	size_t len;
	char *out;
	static const char want[] =
		"0 18446744073709551615 42 0 -1 9223372036854775807 "
		"-9223372036854775808 raw";

	(void)state;
	cap_begin(&c, JW_MIN_CAP);
	jw_u64(&c.w, 0);
	jw_lit(&c.w, " ");
	jw_u64(&c.w, ULLONG_MAX);
	jw_lit(&c.w, " ");
	jw_u64(&c.w, 42);
	jw_lit(&c.w, " ");
	jw_i64(&c.w, 0);
	jw_lit(&c.w, " ");
	jw_i64(&c.w, -1);
	jw_lit(&c.w, " ");
	jw_i64(&c.w, LLONG_MAX);
	jw_lit(&c.w, " ");
	jw_i64(&c.w, LLONG_MIN);
	jw_raw(&c.w, " raw and not this", 4);
	out = cap_end(&c, &len);
	expect_bytes(out, len, want, sizeof(want) - 1);
	free(out);
}

/* Every ASCII byte, one by one. */
static void test_str_ascii(void **state)
{
	unsigned ch;

	(void)state;
	for (ch = 0; ch < 0x80; ch++) {
		char in = (char)ch, want[16];

		switch (ch) {
		case '"': strcpy(want, "\"\\\"\""); break;
		case '\\': strcpy(want, "\"\\\\\""); break;
		case '\n': strcpy(want, "\"\\n\""); break;
		case '\t': strcpy(want, "\"\\t\""); break;
		case '\r': strcpy(want, "\"\\r\""); break;
		case '\b': strcpy(want, "\"\\b\""); break;
		case '\f': strcpy(want, "\"\\f\""); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				sprintf(want, "\"\\u%04x\"", ch);
			else
				sprintf(want, "\"%c\"", ch);
		}
		check_str_n(&in, 1, NULL, want, strlen(want));
	}
	check_str("", "\"\"");
	check_str("a\"b\\c\x01\x1f\x7f" "d",
		  "\"a\\\"b\\\\c\\u0001\\u001f\\u007fd\"");
	/* embedded NUL is data, not the end */
	check_str("x\0y", "\"x\\u0000y\"");
}

static void test_str_valid_utf8(void **state)
{
	(void)state;
	/* U+0080, U+07FF, U+0800, U+FFFD, U+FEFF, U+E000, U+FFFF,
	 * U+10000, U+1F600, U+10FFFF: all kept as they are */
	check_str("\xc2\x80\xdf\xbf\xe0\xa0\x80" FFFD "\xef\xbb\xbf\xee\x80\x80"
		  "\xef\xbf\xbf\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
		  "\"\xc2\x80\xdf\xbf\xe0\xa0\x80" FFFD "\xef\xbb\xbf\xee\x80\x80"
		  "\xef\xbf\xbf\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
	/* U+2027 and U+202A are neighbours of the escaped pair: kept */
	check_str("\xe2\x80\xa7\xe2\x80\xaa", "\"\xe2\x80\xa7\xe2\x80\xaa\"");
	check_str("a\xe2\x80\xa8" "b\xe2\x80\xa9", "\"a\\u2028b\\u2029\"");
}

static void test_str_invalid_utf8(void **state)
{
	(void)state;
	/* overlong */
	check_str("\xc0\x80", "\"" FFFD FFFD "\"");
	check_str("\xc1\xbf", "\"" FFFD FFFD "\"");
	check_str("\xe0\x80\x80", "\"" FFFD FFFD FFFD "\"");
	check_str("\xe0\x9f\xbf", "\"" FFFD FFFD FFFD "\"");
	check_str("\xf0\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	check_str("\xf0\x8f\xbf\xbf", "\"" FFFD FFFD FFFD FFFD "\"");
	/* surrogates D800-DFFF, alone and as a CESU-8 pair */
	check_str("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");
	check_str("\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");
	check_str("\xed\xa0\xbd\xed\xb8\x80",
		  "\"" FFFD FFFD FFFD FFFD FFFD FFFD "\"");
	check_str("\xed\x9f\xbf", "\"\xed\x9f\xbf\""); /* U+D7FF is fine */
	/* above U+10FFFF, and bytes never valid */
	check_str("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	check_str("\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	check_str("\xf8\x88\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD FFFD "\"");
	check_str("\xfe\xff", "\"" FFFD FFFD "\"");
	/* truncated: one U+FFFD per cut sequence, next byte kept */
	check_str("\xc3", "\"" FFFD "\"");
	check_str("\xe2\x82", "\"" FFFD "\"");
	check_str("\xf0\x9f\x98", "\"" FFFD "\"");
	check_str("\xe2\x82" "A", "\"" FFFD "A\"");
	check_str("\xf0\x9f\x98\"", "\"" FFFD "\\\"\"");
	check_str("\xe2\xe2\x82\xac", "\"" FFFD "\xe2\x82\xac\"");
	/* stray continuation bytes */
	check_str("\x80", "\"" FFFD "\"");
	check_str("a\xbf" "b\x80\x80", "\"a" FFFD "b" FFFD FFFD "\"");
}

static void test_str_suffix(void **state)
{
	(void)state;
	check_str_n("abc", 3, JW_TRUNC_SUFFIX, "\"abc\xe2\x80\xa6[truncated]\"",
		    sizeof("\"abc\xe2\x80\xa6[truncated]\"") - 1);
	/* a cut UTF-8 sequence before the marker is replaced, marker kept */
	check_str_n("ab\xe2\x82", 4, JW_TRUNC_SUFFIX,
		    "\"ab" FFFD "\xe2\x80\xa6[truncated]\"",
		    sizeof("\"ab" FFFD "\xe2\x80\xa6[truncated]\"") - 1);
	check_str_n(NULL, 0, "\"x", "\"\\\"x\"", 5);
	check_str_n(NULL, 0, NULL, "\"\"", 2);
}

/* 1 MiB strings: valid text is kept byte for byte; random bytes give valid
 * JSON whose ASCII is the input's ASCII. */
static void test_str_1mib(void **state)
{
	const size_t n = 1 << 20;
	unsigned char *in = malloc(n);
	uint32_t seed = 12345;
	struct cap c;
	size_t i, len, a, b;
	char *out, *dec;
	cJSON *j;

	(void)state;
	assert_non_null(in);
	for (i = 0; i + 10 <= n; i += 10) /* "é€😀a": 2+3+4+1 bytes */
		memcpy(in + i, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "a", 10);
	memset(in + i, 'z', n - i);
	cap_begin(&c, 4096);
	jw_str(&c.w, (char *)in, n, NULL);
	out = cap_end(&c, &len);
	assert_int_equal(len, n + 2);
	assert_int_equal(out[0], '"');
	assert_memory_equal(out + 1, in, n);
	assert_int_equal(out[n + 1], '"');
	free(out);

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		in[i] = (unsigned char)(seed >> 16);
		if (in[i] == 0) /* cJSON would cut the decoded string at \u0000 */
			in[i] = 1;
	}
	cap_begin(&c, 4096);
	jw_str(&c.w, (char *)in, n, NULL);
	out = cap_end(&c, &len);
	assert_true(utf8_valid((unsigned char *)out, len));
	for (i = 0; i < len; i++)
		assert_true((unsigned char)out[i] >= 0x20);
	j = cJSON_ParseWithOpts(out, NULL, 1);
	assert_non_null(j);
	assert_true(cJSON_IsString(j));
	dec = j->valuestring;
	/* the decoded ASCII bytes, in order, are the input's ASCII bytes */
	for (a = 0, b = 0;; a++, b++) {
		while (a < n && in[a] >= 0x80)
			a++;
		while (dec[b] && (unsigned char)dec[b] >= 0x80)
			b++;
		if (a == n || !dec[b])
			break;
		assert_int_equal(in[a], (unsigned char)dec[b]);
	}
	assert_true(a == n && !dec[b]);
	cJSON_Delete(j);
	free(out);
	free(in);
}

/* The same writes with cap 16 and a big cap give the same bytes: escapes,
 * multibyte sequences and jw_raw() chunks all straddle the flushes. */
static void test_buffer_boundaries(void **state)
{
	static const char piece[] = "ab\xe2\x80\xa8\"\x01\xf0\x9f\x98\x80\xff"
				    "0123456789abcdef\xc3";
	char big[100];
	char *out[2];
	size_t len[2], k, cap_i;

	(void)state;
	memset(big, 'R', sizeof(big));
	for (cap_i = 0; cap_i < 2; cap_i++) {
		struct cap c;

		cap_begin(&c, cap_i == 0 ? JW_MIN_CAP : 1 << 16);
		for (k = 0; k < 40; k++) {
			jw_str(&c.w, piece + k % 7, sizeof(piece) - 1 - k % 7,
			       NULL);
			jw_raw(&c.w, big, k * 2); /* up to 6x the small buffer */
			jw_ts_us(&c.w, k * 123456789ULL);
			jw_double(&c.w, 0.1 * (double)k);
			jw_i64(&c.w, -(long long)k * 1000003);
		}
		out[cap_i] = cap_end(&c, &len[cap_i]);
		assert_true(utf8_valid((unsigned char *)out[cap_i], len[cap_i]));
	}
	expect_bytes(out[0], len[0], out[1], len[1]);
	free(out[0]);
	free(out[1]);

	/* and one exact case across a 16-byte buffer */
	{
		static const char want[] =
			"\"0123456789\\u2028\\u2029" FFFD "x\"" "0123456789abcdef!";
		struct cap c;
		size_t n;
		char *o;

		cap_begin(&c, JW_MIN_CAP);
		jw_str(&c.w, "0123456789\xe2\x80\xa8\xe2\x80\xa9\xc0x", 18, NULL);
		jw_raw(&c.w, "0123456789abcdef!", 17);
		o = cap_end(&c, &n);
		expect_bytes(o, n, want, sizeof(want) - 1);
		free(o);
	}
}

static void test_ts_us(void **state)
{
	static const struct {
		unsigned long long ns;
		const char *want;
	} t[] = {
		{ 0, "0.000" },	       { 5, "0.005" },
		{ 50, "0.050" },       { 999, "0.999" },
		{ 1000, "1.000" },     { 1001, "1.001" },
		{ 1234567, "1234.567" }, { 1000000000, "1000000.000" },
		{ 9007199254740993ULL, "9007199254740.993" }, /* > 2^53 */
		{ ULLONG_MAX, "18446744073709551.615" },
	};
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cap c;
		char *out;

		cap_begin(&c, JW_MIN_CAP);
		jw_ts_us(&c.w, t[i].ns);
		out = cap_end(&c, &len);
		expect_bytes(out, len, t[i].want, strlen(t[i].want));
		free(out);
	}
}

/*
 * Each event's "ts" through the cache of its leading digits: the same text
 * as without, for timestamps that walk on by small and large steps, cross
 * a change of the cached digits (every 10 ms) and of their count, go back,
 * and fall below 10 ms (no cached part), and at the ends of the range.
 */
static void test_ts_us_cached(void **state)
{
	struct jw_ts_cache cache = { 0 };
	unsigned long long ns = 9990000, x = 88172645463325252ULL;
	char a[64], b[64];

	(void)state;
	for (int i = 0; i < 200000; i++) {
		char *ea, *eb;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: the steps */
		switch (i % 5) {
		case 0: ns += x % 1000; break;               /* ns apart */
		case 1: ns += x % 20000000; break;           /* across 10 ms */
		case 2: ns = ns > 5000000 ? ns - x % 5000000 : ns; break; /* back */
		case 3: if (i % 1000 == 3) ns = x % 10000000; break;   /* below 10 ms */
		default: if (i % 5000 == 4) ns = x; break;   /* anywhere */
		}
		ea = jw_put_ts_us(a, ns);
		eb = jw_put_ts_us_cached(&cache, b, ns);
		if (ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)))
			fail_msg("ns %llu: %.*s without the cache, %.*s with", ns, (int)(ea - a), a,
				 (int)(eb - b), b);
	}
	assert_string_equal((*jw_put_ts_us_cached(&cache, b, ULLONG_MAX) = 0, b), "18446744073709551.615");
	assert_string_equal((*jw_put_ts_us_cached(&cache, b, 10000000) = 0, b), "10000.000");
	assert_string_equal((*jw_put_ts_us_cached(&cache, b, 9999999) = 0, b), "9999.999");
}

/* RFC 8259 number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE][+-]?[0-9]+)? */
static int json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return 0;
	if (*s == '.') {
		if (!(*++s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static char *double_text(double v)
{
	struct cap c;
	size_t len;

	cap_begin(&c, JW_MIN_CAP);
	jw_double(&c.w, v);
	return cap_end(&c, &len);
}

static void test_double_roundtrip(void **state)
{
	static const double v[] = {
		0.1, 1e300, 5e-324, -0.0, 0.0, 1.0, -1.0, 42.0, 1e15, 1e16,
		1e21, 123456789012345678.0, 9007199254740993.0, 0.3,
		0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0, DBL_MAX, -DBL_MAX, DBL_MIN,
		DBL_TRUE_MIN, DBL_EPSILON, 3.141592653589793, 1e-7, 123.456,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *s = double_text(v[i]);
		double back = strtod(s, NULL);

		if (!json_number(s) || memcmp(&back, &v[i], sizeof(back)) != 0) {
			print_error("%.17g written as [%s]\n", v[i], s);
			fail();
		}
		free(s);
	}
	/* pseudo-random bit patterns, skipping non-finite ones */
	{
		uint64_t x = 0x9e3779b97f4a7c15ULL;
		int k;

		for (k = 0; k < 20000; k++) {
			double d, back;
			char *s;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memcpy(&d, &x, sizeof(d));
			if (!isfinite(d))
				continue;
			s = double_text(d);
			back = strtod(s, NULL);
			if (!json_number(s) ||
			    memcmp(&back, &d, sizeof(back)) != 0) {
				print_error("%a written as [%s]\n", d, s);
				fail();
			}
			free(s);
		}
	}
}

static void test_double_text(void **state)
{
	static const struct {
		double v;
		const char *want;
	} t[] = {
		{ 0.1, "0.1" },	  { 1e300, "1e+300" }, { -0.0, "-0" },
		{ 0.0, "0" },	  { 42.0, "42" },      { -7.0, "-7" },
		{ 1e21, "1e+21" }, { 0.1 + 0.2, "0.30000000000000004" },
		{ 5e-324, "4.94065645841247e-324" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ NAN, "\"NaN\"" }, { INFINITY, "\"Infinity\"" },
		{ -INFINITY, "\"-Infinity\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *s = double_text(t[i].v);

		expect_bytes(s, strlen(s), t[i].want, strlen(t[i].want));
		free(s);
	}
}

/* A closed pipe: EPIPE remembered, no crash, later writes do nothing. */
static void test_error_epipe(void **state)
{
	struct json_writer w;
	int p[2];
	char big[4096];

	(void)state;
	memset(big, 'x', sizeof(big));
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(jw_init(&w, p[1], JW_MIN_CAP), 0);
	jw_lit(&w, "0123456789");
	assert_int_equal(w.err, 0); /* still buffered */
	jw_lit(&w, "0123456789"); /* overflows: flush fails */
	assert_int_equal(w.err, EPIPE);
	assert_int_equal(w.written, 0);
	jw_str(&w, "abc", 3, NULL);
	jw_raw(&w, big, sizeof(big));
	jw_u64(&w, 1);
	jw_double(&w, 1.5);
	jw_ts_us(&w, 1);
	assert_int_equal(w.len, 0);
	assert_int_equal(jw_flush(&w), -EPIPE);
	assert_int_equal(w.err, EPIPE);
	jw_free(&w);
	close(p[1]);
}

static void test_error_ebadf_enospc(void **state)
{
	struct json_writer w;
	int fd;

	(void)state;
	assert_int_equal(jw_init(&w, -1, 0), 0);
	jw_lit(&w, "x");
	assert_int_equal(jw_flush(&w), -EBADF);
	jw_lit(&w, "y");
	assert_int_equal(jw_flush(&w), -EBADF);
	jw_free(&w);

	fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	assert_int_equal(jw_init(&w, fd, 64), 0);
	jw_str(&w, "abc", 3, NULL);
	assert_int_equal(jw_flush(&w), -ENOSPC);
	assert_int_equal(w.err, ENOSPC);
	assert_int_equal(w.written, 0);
	jw_free(&w);
	close(fd);
	/* flushing an empty writer is fine */
	assert_int_equal(jw_init(&w, -1, 0), 0);
	assert_int_equal(jw_flush(&w), 0);
	jw_free(&w);
}

/* Partial writes and EINTR: a pipe drained late by a reader thread while a
 * timer keeps interrupting write(2) (no SA_RESTART). */
#define PIPE_TOTAL (4u << 20)

static void on_alarm(int sig)
{
	(void)sig;
}

static void *reader(void *arg)
{
	int fd = *(int *)arg;
	size_t got = 0;
	unsigned char b[8192];
	ssize_t r;
	int bad = 0;

	usleep(50 * 1000); /* let the writer block on a full pipe first */
	while ((r = read(fd, b, sizeof(b))) > 0) {
		ssize_t i;

		for (i = 0; i < r; i++)
			if (b[i] != (unsigned char)((got + (size_t)i) % 251))
				bad = 1;
		got += (size_t)r;
	}
	return (void *)(uintptr_t)(bad ? 0 : got);
}

static void test_partial_and_eintr(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct json_writer w;
	sigset_t set;
	pthread_t th;
	void *res;
	int p[2];
	char *data = malloc(PIPE_TOTAL);
	size_t i;

	(void)state;
	assert_non_null(data);
	for (i = 0; i < PIPE_TOTAL; i++)
		data[i] = (char)(i % 251);
	assert_int_equal(pipe(p), 0);
	/* the reader thread blocks SIGALRM, so it hits the writing thread */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	assert_int_equal(pthread_create(&th, NULL, reader, &p[0]), 0);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);

	assert_int_equal(jw_init(&w, p[1], 1 << 16), 0);
	for (i = 0; i < PIPE_TOTAL; i += 100000) /* some buffered, some not */
		jw_raw(&w, data + i,
		       PIPE_TOTAL - i < 100000 ? PIPE_TOTAL - i : 100000);
	assert_int_equal(jw_flush(&w), 0);

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	close(p[1]);
	pthread_join(th, &res);
	close(p[0]);
	assert_int_equal(w.written, PIPE_TOTAL);
	assert_int_equal((uintptr_t)res, PIPE_TOTAL);
	jw_free(&w);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_str_ascii),
		cmocka_unit_test(test_str_valid_utf8),
		cmocka_unit_test(test_str_invalid_utf8),
		cmocka_unit_test(test_str_suffix),
		cmocka_unit_test(test_str_1mib),
		cmocka_unit_test(test_buffer_boundaries),
		cmocka_unit_test(test_ts_us),
		cmocka_unit_test(test_ts_us_cached),
		cmocka_unit_test(test_double_roundtrip),
		cmocka_unit_test(test_double_text),
		cmocka_unit_test(test_error_epipe),
		cmocka_unit_test(test_error_ebadf_enospc),
		cmocka_unit_test(test_partial_and_eintr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
