// SPDX-License-Identifier: MIT
#include "capture_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * 4 MiB: a write a few hundred thousand events, so the syscall's cost per
 * event is a fraction of a nanosecond, and at most this much is lost with
 * a killed tracer between flushes (the loop flushes every 50 ms).
 */
#define CAPTURE_BUF_BYTES (4u << 20)

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -ENOSPC;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int capture_open(struct capture_writer *cw, const char *path)
{
	struct capture_header h = { .version = CAPTURE_VERSION, .header_bytes = CAPTURE_HEADER_BYTES };
	int err;

	memset(cw, 0, sizeof(*cw));
	cw->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cw->fd < 0)
		return -errno;
	cw->cap = CAPTURE_BUF_BYTES;
	cw->buf = malloc(cw->cap);
	if (!cw->buf) {
		close(cw->fd);
		cw->fd = -1;
		return -ENOMEM;
	}
	memcpy(h.magic, CAPTURE_MAGIC, 8);
	err = write_all(cw->fd, (const char *)&h, sizeof(h));
	if (err < 0)
		cw->err = -err;
	else
		cw->written = sizeof(h);
	return err;
}

int capture_flush(struct capture_writer *cw)
{
	int err;

	if (cw->err || !cw->len)
		return cw->err ? -cw->err : 0;
	/*
	 * Whole records only: a short write (a full disk) leaves the file at
	 * its last whole record, so the capture converts up to there.
	 */
	err = write_all(cw->fd, cw->buf, cw->len);
	if (err < 0) {
		cw->err = -err;
		if (ftruncate(cw->fd, (off_t)cw->written) != 0) {
			/* the reader stops at a record cut short anyway, and says so */
		}
		return err;
	}
	cw->written += cw->len;
	cw->len = 0;
	return 0;
}

int capture_close(struct capture_writer *cw)
{
	int err = 0;

	if (cw->fd >= 0) {
		err = capture_flush(cw);
		if (close(cw->fd) != 0 && !err)
			err = -errno;
		cw->fd = -1;
	}
	free(cw->buf);
	cw->buf = NULL;
	return err;
}

void *capture_reserve(struct capture_writer *cw, uint32_t type, size_t len)
{
	size_t need = sizeof(struct capture_record_head) + capture_padded(len);
	struct capture_record_head h = { type, (uint32_t)len };
	char *at;

	if (cw->err || len > CAPTURE_RECORD_MAX)
		return NULL;
	if (cw->len + need > cw->cap && capture_flush(cw) < 0)
		return NULL;
	at = cw->buf + cw->len;
	memcpy(at, &h, sizeof(h));
	/* The padding zeroed: the file holds nothing of the tracer's memory. */
	memset(at + sizeof(h) + len, 0, capture_padded(len) - len);
	cw->len += need;
	cw->records++;
	return at + sizeof(h);
}

void capture_tlv_bytes(struct capture_tlv *t, uint16_t key, const void *p, size_t len)
{
	size_t need = 8 + capture_padded(len);
	uint32_t head[2] = { key, (uint32_t)len };

	if (t->len + need > t->cap) {
		size_t cap = (t->cap ? t->cap * 2 : 1024) + need;
		char *b = realloc(t->buf, cap);

		if (!b)
			return;
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, head, 8);
	if (len)
		memcpy(t->buf + t->len + 8, p, len);
	memset(t->buf + t->len + 8 + len, 0, capture_padded(len) - len);
	t->len += need;
}

void capture_tlv_u64(struct capture_tlv *t, uint16_t key, uint64_t v)
{
	capture_tlv_bytes(t, key, &v, sizeof(v));
}

void capture_tlv_str(struct capture_tlv *t, uint16_t key, const char *s)
{
	if (s)
		capture_tlv_bytes(t, key, s, strlen(s));
}

void capture_tlv_put(struct capture_writer *cw, uint32_t type, struct capture_tlv *t)
{
	capture_put(cw, type, t->buf, t->len);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}
