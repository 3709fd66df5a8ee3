// SPDX-License-Identifier: MIT
#include "capture/capture_read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "lib/term_safe.h"

/* Read this far, the file gives back what lies before (following). */
#define PUNCH_EVERY (8ull << 20) /* well below --max-backlog's least: the tracer measures the file's blocks */

/*
 * Following: waits for the writer to add to the file, up to 50 ms; false
 * once it is done (its pipe closed: everything it will write is there).
 */
static bool wait_for_writer(struct capture_reader *cr)
{
	struct pollfd pfd = { cr->writer_alive, POLLIN, 0 };

	if (cr->writer_alive < 0)
		return false;
	if (cr->idle)
		cr->idle(cr->idle_ctx);
	if (poll(&pfd, 1, 50) > 0) {
		char c;

		/* Nothing is ever written to the pipe: readable means closed. */
		if (read(cr->writer_alive, &c, 1) <= 0) {
			close(cr->writer_alive);
			cr->writer_alive = -1;
			return true; /* one more look: the last write came before the close */
		}
	}
	return true;
}

/* n bytes into dst: what the file has, waiting for more while following. Returns bytes read. */
static size_t fill(struct capture_reader *cr, void *dst, size_t n)
{
	size_t got = fread(dst, 1, n, cr->f);

	while (got < n && feof(cr->f) && wait_for_writer(cr)) {
		clearerr(cr->f);
		got += fread((char *)dst + got, 1, n - got, cr->f);
	}
	return got;
}

/* Following: what was read goes back to the file system, a whole stretch at a time. */
static void punch_behind(struct capture_reader *cr)
{
	uint64_t upto = cr->offset & ~(PUNCH_EVERY - 1);

	if (!cr->following || upto <= cr->punched)
		return;
	/* A file system without holes keeps the file whole: only room is lost. */
	(void)fallocate(fileno(cr->f), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)cr->punched,
			(off_t)(upto - cr->punched));
	cr->punched = upto;
}

static int open_checked(struct capture_reader *cr, const char *path, const char *mode);

int capture_reader_open(struct capture_reader *cr, const char *path)
{
	memset(cr, 0, sizeof(*cr));
	cr->writer_alive = -1;
	return open_checked(cr, path, "rb");
}

int capture_reader_open_following(struct capture_reader *cr, const char *path, int writer_alive)
{
	memset(cr, 0, sizeof(*cr));
	cr->writer_alive = writer_alive;
	cr->following = true;
	return open_checked(cr, path, "r+b");
}

static int open_checked(struct capture_reader *cr, const char *path, const char *mode)
{
	struct capture_header h;

	cr->path = path;
	cr->f = fopen(path, mode);
	if (!cr->f) {
		int err = -errno;

		fprintf(stderr, "ctrace-bpf: cannot open %s: %s\n", TERM_SAFE(path), strerror(-err));
		return err;
	}
	if (fill(cr, &h, sizeof(h)) != sizeof(h) || memcmp(h.magic, CAPTURE_MAGIC, 8)) {
		fprintf(stderr, "ctrace-bpf: %s is not a ctrace-bpf capture (no capture header)\n", TERM_SAFE(path));
		return -EINVAL;
	}
	if (h.version > CAPTURE_VERSION) {
		fprintf(stderr, "ctrace-bpf: %s is a capture of format version %u; this ctrace-bpf reads up to version %u: convert it with a newer ctrace-bpf\n",
			TERM_SAFE(path), h.version, CAPTURE_VERSION);
		return -EPROTO;
	}
	if (h.version == 0 || h.header_bytes < CAPTURE_HEADER_BYTES || h.header_bytes > 4096 ||
	    fseeko(cr->f, (off_t)h.header_bytes, SEEK_SET) != 0) {
		fprintf(stderr, "ctrace-bpf: %s: the capture's header is damaged\n", TERM_SAFE(path));
		return -EINVAL;
	}
	cr->version = h.version;
	cr->offset = h.header_bytes;
	return 0;
}

int capture_reader_next(struct capture_reader *cr, uint32_t *type, const unsigned char **p, size_t *len)
{
	struct capture_record_head h;
	size_t got, padded;

	if (cr->cut[0])
		return 0;
	punch_behind(cr);
	got = fill(cr, &h, sizeof(h));
	if (got == 0 && feof(cr->f))
		return 0; /* its end, between records */
	if (got != sizeof(h)) {
		snprintf(cr->cut, sizeof(cr->cut), "cut short at byte %llu, in a record's head",
			 (unsigned long long)cr->offset);
		return 0;
	}
	if (h.len > CAPTURE_RECORD_MAX) {
		snprintf(cr->cut, sizeof(cr->cut), "damaged at byte %llu: a record of %u bytes (at most %u)",
			 (unsigned long long)cr->offset, h.len, CAPTURE_RECORD_MAX);
		return 0;
	}
	padded = (h.len + 7u) & ~7u;
	if (padded > cr->cap) {
		unsigned char *b = realloc(cr->buf, padded);

		if (!b) {
			snprintf(cr->cut, sizeof(cr->cut), "out of memory at byte %llu",
				 (unsigned long long)cr->offset);
			return 0;
		}
		cr->buf = b;
		cr->cap = padded;
	}
	if (padded && fill(cr, cr->buf, padded) != padded) {
		snprintf(cr->cut, sizeof(cr->cut), "cut short at byte %llu, in a record of %u bytes",
			 (unsigned long long)cr->offset, h.len);
		return 0;
	}
	cr->offset += sizeof(h) + padded;
	cr->records++;
	*type = h.type;
	*p = cr->buf;
	*len = h.len;
	return 1;
}

void capture_reader_close(struct capture_reader *cr)
{
	if (cr->writer_alive >= 0)
		close(cr->writer_alive);
	cr->writer_alive = -1;
	if (cr->f)
		fclose(cr->f);
	free(cr->buf);
	cr->f = NULL;
	cr->buf = NULL;
}

int capture_tlv_next(struct capture_tlv_iter *it, uint16_t *key, const unsigned char **p, size_t *len)
{
	uint32_t head[2];
	size_t padded;

	if (it->left < 8)
		return 0;
	memcpy(head, it->p, 8);
	if (head[1] > it->left - 8)
		return 0;
	padded = ((size_t)head[1] + 7) & ~(size_t)7;
	*key = (uint16_t)head[0];
	*p = it->p + 8;
	*len = head[1];
	if (padded > it->left - 8)
		padded = it->left - 8;
	it->p += 8 + padded;
	it->left -= 8 + padded;
	return 1;
}

uint64_t capture_tlv_as_u64(const unsigned char *p, size_t len)
{
	uint64_t v = 0;

	if (len == sizeof(v))
		memcpy(&v, p, sizeof(v));
	return v;
}
