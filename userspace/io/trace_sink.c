// SPDX-License-Identifier: MIT
/* trace_sink.c - see trace_sink.h. */
#include "io/trace_sink.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "encode/perfetto/pftrace.h"
#include "io/write_behind.h"

#define ZBUF_CAP (256 * 1024)

int trace_sink_init(struct trace_sink *s, bool gzip)
{
	memset(s, 0, sizeof(*s));
	s->json_fd = -1;
	if (!gzip)
		return 0;
	s->z = calloc(1, sizeof(*s->z));
	s->zbuf = malloc(ZBUF_CAP);
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream. */
	if (!s->z || !s->zbuf ||
	    deflateInit2(s->z, TRACE_SINK_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s->z);
		free(s->zbuf);
		s->z = NULL;
		s->zbuf = NULL;
		return -ENOMEM;
	}
	s->zcap = ZBUF_CAP;
	return 0;
}

int trace_sink_init_pftrace(struct trace_sink *s, int json_fd)
{
	trace_sink_init(s, false);
	s->pf = pftrace_stream_new();
	s->json_fd = json_fd;
	return s->pf ? 0 : -ENOMEM;
}

/* Whole records to fd, in one write: a file cut after it is still a whole trace. */
static int write_whole(int fd, const void *p, size_t n, unsigned long long *written)
{
	unsigned long long done = 0;
	off_t at;
	int err;

	if (!n)
		return 0;
	at = lseek(fd, 0, SEEK_CUR);
	err = write_fully(fd, p, n, &done);
	/* A disk full mid-packet: a regular file cut back to its last whole packet (a pipe keeps what went) */
	if (err && done && at >= 0 && ftruncate(fd, at) == 0)
		done = 0;
	*written += done;
	return err;
}

/* The packets made so far to fd. */
static int pftrace_out(struct trace_sink *s, int fd, unsigned long long *written)
{
	size_t n;
	const void *p = pftrace_stream_take(s->pf, &n);

	return write_whole(fd, p, n, written);
}

/* Runs deflate over what is in s->z with `flush`, writing its output as it comes. */
static int deflate_out(struct trace_sink *s, int fd, int flush, unsigned long long *written)
{
	int zr, err;

	do {
		s->z->next_out = s->zbuf;
		s->z->avail_out = (uInt)s->zcap;
		zr = deflate(s->z, flush);
		if (zr == Z_STREAM_ERROR)
			return EIO;
		err = write_fully(fd, (const char *)s->zbuf, s->zcap - s->z->avail_out, written);
		if (err)
			return err;
		/* A full output buffer may mean more is pending; Z_BUF_ERROR: nothing was left to do. */
	} while (s->z->avail_out == 0 && zr != Z_STREAM_END);
	return 0;
}

int trace_sink_write(struct trace_sink *s, int fd, const char *p, size_t n,
		     unsigned long long *written)
{
	if (s->finished)
		return EIO;
	if (s->pf) {
		unsigned long long json_written = 0;
		int err = s->json_fd >= 0 ? write_fully(s->json_fd, p, n, &json_written) : 0;

		pftrace_stream_feed(s->pf, p, n);
		return err ? err : pftrace_out(s, fd, written);
	}
	if (s->whole_pieces)
		return write_whole(fd, p, n, written);
	if (!s->z)
		return write_fully(fd, p, n, written);
	while (n > 0) {
		/* avail_in is a uInt: large pieces go in slices. */
		size_t slice = n < (1u << 30) ? n : (1u << 30);
		int err;

		s->z->next_in = (unsigned char *)(uintptr_t)p;
		s->z->avail_in = (uInt)slice;
		err = deflate_out(s, fd, Z_SYNC_FLUSH, written);
		if (err)
			return err;
		p += slice;
		n -= slice;
	}
	return 0;
}

int trace_sink_finish(struct trace_sink *s, int fd, unsigned long long *written)
{
	int err;

	if (s->pf && !s->finished) {
		pftrace_stream_end(s->pf, NULL);
		err = pftrace_out(s, fd, written);
		if (!err)
			s->finished = true;
		return err;
	}
	if (!s->z || s->finished)
		return 0;
	s->z->next_in = NULL;
	s->z->avail_in = 0;
	err = deflate_out(s, fd, Z_FINISH, written);
	if (!err)
		s->finished = true;
	return err;
}

void trace_sink_free(struct trace_sink *s)
{
	pftrace_stream_free(s->pf);
	s->pf = NULL;
	if (s->z) {
		deflateEnd(s->z);
		free(s->z);
	}
	free(s->zbuf);
	s->z = NULL;
	s->zbuf = NULL;
}

bool trace_sink_path_is_gzip(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz");
}
