// SPDX-License-Identifier: MIT
#include "attach/batch_discover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/batch_split.h"
#include "attach/proc_maps.h"
#include "ingest/remote_read.h"

/* usdt/ctrace_batch.h: struct ctrace__batch_anchor and the header's `next`. */
#define ANCHOR_MAGIC 0x41544243u
#define ANCHOR_BYTES 16
#define ANCHOR_LIST_AT 8
#define HEADER_NEXT_AT 40

int batch_anchor_address(int pid, unsigned dev_major, unsigned dev_minor, unsigned long long inode,
			 uint64_t file_offset, uint64_t *addr)
{
	char fname[48], *text, *line, *end;
	size_t len;
	int rc = -ENOENT;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", pid);
	/* Made behind the process's mmap lock, which it may hold: read by remote_read. */
	text = remote_read_file(pid, fname, &len);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	for (line = text, end = text + len; rc == -ENOENT && line < end; line = strchr(line, '\n') + 1) {
		struct proc_maps_entry e;

		if (!memchr(line, '\n', (size_t)(end - line)))
			break; /* the read ends in a line cut short */
		if (proc_maps_parse_line(line, &e) || e.inode != inode || e.dev_major != dev_major ||
		    e.dev_minor != dev_minor || file_offset < e.offset ||
		    file_offset - e.offset >= e.end - e.start)
			continue;
		*addr = e.start + (file_offset - e.offset);
		rc = 0;
	}
	free(text);
	return rc;
}

static int read_remote(int pid, void *to, uint64_t at, size_t n)
{
	return remote_read(pid, to, at, n) == (ssize_t)n ? 0 : -1;
}

long batch_discover(int pid, uint64_t anchor_addr,
		    void (*found)(void *ctx, uint64_t buf, const unsigned char *header), void *ctx)
{
	unsigned char anchor[ANCHOR_BYTES], header[BATCH_HEADER_BYTES];
	uint32_t magic, hmagic;
	uint64_t buf;
	long n = 0;

	if (read_remote(pid, anchor, anchor_addr, sizeof(anchor)))
		return -1;
	memcpy(&magic, anchor + 4, 4);
	if (magic != ANCHOR_MAGIC)
		return -1;
	memcpy(&buf, anchor + ANCHOR_LIST_AT, 8);
	while (buf && n < BATCH_DISCOVER_MAX && !read_remote(pid, header, buf, sizeof(header))) {
		memcpy(&hmagic, header, 4);
		if (hmagic != BATCH_MAGIC)
			break; /* not a buffer: the list ends here */
		found(ctx, buf, header);
		n++;
		memcpy(&buf, header + HEADER_NEXT_AT, 8);
	}
	return n;
}
