// SPDX-License-Identifier: MIT
/* gzip_input.c - see gzip_input.h. */
#include "io/gzip_input.h" /* fopencookie: _GNU_SOURCE comes from the Makefile */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

struct gz_cookie {
	gzFile gz;
	FILE *raw;
};

static ssize_t gz_cookie_read(void *c, char *buf, size_t n)
{
	struct gz_cookie *g = c;
	int got, zerr;

	if (n > (1u << 30))
		n = 1u << 30;
	got = gzread(g->gz, buf, (unsigned)n);
	if (got >= 0)
		return got;
	gzerror(g->gz, &zerr);
	/* "unexpected end of file": a stream cut short; what came before it was given. */
	if (zerr == Z_BUF_ERROR)
		return 0;
	errno = zerr == Z_ERRNO ? errno : EIO;
	return -1;
}

/* Only rewind(): the repair reads a file twice. */
static int gz_cookie_seek(void *c, off64_t *off, int whence)
{
	struct gz_cookie *g = c;

	if (*off != 0 || whence != SEEK_SET || gzrewind(g->gz) != 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int gz_cookie_close(void *c)
{
	struct gz_cookie *g = c;

	gzclose_r(g->gz);
	fclose(g->raw);
	free(g);
	return 0;
}

FILE *gzip_input_open(FILE *in, bool *is_gzip)
{
	static const cookie_io_functions_t io = {
		.read = gz_cookie_read, .seek = gz_cookie_seek, .close = gz_cookie_close,
	};
	unsigned char magic[2];
	struct gz_cookie *g;
	size_t got;
	FILE *f;
	int fd;

	*is_gzip = false;
	got = fread(magic, 1, 2, in);
	rewind(in);
	if (got < 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return in;
	*is_gzip = true;
	g = calloc(1, sizeof(*g));
	/* zlib reads (and closes) its own descriptor; the FILE keeps in's. */
	fd = fcntl(fileno(in), F_DUPFD_CLOEXEC, 0);
	if (!g || fd < 0 || !(g->gz = gzdopen(fd, "rb"))) {
		int err = errno ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(g);
		fclose(in);
		errno = err;
		return NULL;
	}
	g->raw = in;
	f = fopencookie(g, "r", io);
	if (!f) {
		gz_cookie_close(g);
		errno = ENOMEM;
	}
	return f;
}
