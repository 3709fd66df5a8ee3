/* SPDX-License-Identifier: MIT */
/*
 * test_trace_sink.c - gzip output (trace_sink.c under json_writer.c), read
 * back with zlib's gzread as an independent reader: the same bytes as
 * written, with and without the writer thread; a file cut after a piece
 * was handed on reads back up to that piece whole; the size bound
 * --max-size relies on is never below the file's size.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "encode/json/json_writer.h"

/* A temp file's name and an fd open on it. */
static int temp_file(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/test_trace_sink.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

/* The whole of path through gzread (a plain file reads as it is); *n bytes. */
static char *gunzip_file(const char *path, size_t *n)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	int got;

	assert_non_null(f);
	assert_non_null(buf);
	while ((got = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)got;
		if (len == cap) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	gzclose(f);
	*n = len;
	return buf;
}

static long size_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (long)st.st_size;
}

/* Lines like a trace's events, numbered, so that a repeat would not compress to nothing. */
static void write_lines(struct json_writer *w, int from, int to)
{
	for (int i = from; i < to; i++) {
		jw_lit(w, "{\"ph\":\"I\",\"pid\":42,\"tid\":43,\"ts\":");
		jw_u64(w, 1000000u + (unsigned)i * 37u);
		jw_lit(w, ",\"name\":\"tick\",\"args\":{\"i\":");
		jw_u64(w, (unsigned)i);
		jw_lit(w, "}},\n");
	}
}

static void expected_lines(char **out, size_t *n, int from, int to)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	for (int i = from; i < to; i++)
		fprintf(f, "{\"ph\":\"I\",\"pid\":42,\"tid\":43,\"ts\":%u,\"name\":\"tick\",\"args\":{\"i\":%d}},\n",
			1000000u + (unsigned)i * 37u, i);
	fclose(f);
	*out = s;
	*n = len;
}

static void round_trip(bool thread)
{
	char path[64], *got, *want;
	size_t got_n, want_n;
	struct json_writer w;
	int fd = temp_file(path, sizeof(path));

	assert_int_equal(jw_init(&w, fd, 4096), 0);
	assert_int_equal(jw_gzip(&w), 0);
	if (thread)
		jw_write_behind(&w);
	write_lines(&w, 0, 20000);
	assert_true(jw_size_bound(&w) >= (unsigned long long)size_of(fd));
	assert_int_equal(jw_finish(&w), 0);
	/* once finished, the bound is the size itself */
	assert_int_equal(jw_size_bound(&w), (unsigned long long)size_of(fd));
	assert_int_equal(w.written, (unsigned long long)size_of(fd));
	jw_free(&w);
	got = gunzip_file(path, &got_n);
	expected_lines(&want, &want_n, 0, 20000);
	assert_int_equal(got_n, want_n);
	assert_memory_equal(got, want, want_n);
	/* and it is gzip, much smaller than the text */
	assert_true(size_of(fd) * 5 < (long)want_n);
	close(fd);
	unlink(path);
	free(got);
	free(want);
}

static void test_gzip_round_trip(void **state)
{
	(void)state;
	round_trip(false);
}

static void test_gzip_round_trip_with_the_writer_thread(void **state)
{
	(void)state;
	round_trip(true);
}

/* Killed after a flush: the file has no trailer, and reads back whole up to what was flushed. */
static void test_cut_file_reads_up_to_the_flush(void **state)
{
	char path[64], *got, *want;
	size_t got_n, want_n;
	struct json_writer w;
	int fd = temp_file(path, sizeof(path));

	(void)state;
	assert_int_equal(jw_init(&w, fd, 1 << 20), 0);
	assert_int_equal(jw_gzip(&w), 0);
	jw_write_behind(&w);
	write_lines(&w, 0, 3000);
	assert_int_equal(jw_flush(&w), 0); /* as every 50 ms */
	write_lines(&w, 3000, 3100);       /* still in the buffer when the tracer dies */
	jw_free(&w);                       /* no finish: no trailer */
	got = gunzip_file(path, &got_n);
	expected_lines(&want, &want_n, 0, 3000);
	assert_int_equal(got_n, want_n);
	assert_memory_equal(got, want, want_n);
	close(fd);
	unlink(path);
	free(got);
	free(want);
}

/* Plain output: the bound is exact, before and after the flush. */
static void test_plain_bound_is_exact(void **state)
{
	char path[64];
	struct json_writer w;
	int fd = temp_file(path, sizeof(path));

	(void)state;
	assert_int_equal(jw_init(&w, fd, 4096), 0);
	jw_write_behind(&w);
	write_lines(&w, 0, 1000);
	unsigned long long bound = jw_size_bound(&w);

	assert_int_equal(jw_flush(&w), 0);
	assert_int_equal(bound, (unsigned long long)size_of(fd));
	assert_int_equal(jw_size_bound(&w), (unsigned long long)size_of(fd));
	jw_free(&w);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip_round_trip),
		cmocka_unit_test(test_gzip_round_trip_with_the_writer_thread),
		cmocka_unit_test(test_cut_file_reads_up_to_the_flush),
		cmocka_unit_test(test_plain_bound_is_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
