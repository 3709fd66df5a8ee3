/* SPDX-License-Identifier: MIT */
/*
 * batch_discover.h - finds the batch buffers a process has already
 * (usdt/ctrace_batch.h): a thread announces its buffer once, when it takes
 * it, so a trace that starts after an earlier one (or after the thread's
 * first events) would not know of it until it fills. Each object's list of
 * buffers sits beside its batch semaphore (struct ctrace__batch_anchor),
 * whose file offset the probe's note gives.
 */
#ifndef CTRACE_BATCH_DISCOVER_H
#define CTRACE_BATCH_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

/* Buffers read from one list at most: a list a hostile process made endless ends here. */
#define BATCH_DISCOVER_MAX 65536

/*
 * Where `pid` has the byte at `file_offset` of the file {dev, inode}
 * mapped: 0 with *addr set, -ENOENT if no mapping of it holds that
 * offset, -ESRCH if the process is gone.
 */
int batch_anchor_address(int pid, unsigned dev_major, unsigned dev_minor, unsigned long long inode,
			 uint64_t file_offset, uint64_t *addr);

/*
 * Walks the list of buffers at the anchor `anchor_addr` of process `pid`,
 * handing each buffer's address and 64-byte header to `found`. Returns the
 * buffers found, or -1 when the anchor is not one (a header older than
 * the list) or unreadable.
 */
long batch_discover(int pid, uint64_t anchor_addr,
		    void (*found)(void *ctx, uint64_t buf, const unsigned char *header), void *ctx);

#endif
