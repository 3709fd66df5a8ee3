/* SPDX-License-Identifier: MIT */
/*
 * write_behind.h - the trace file's write(2)s in a thread of their own.
 *
 * Under a flood the loader spent a fifth of its time in write(2) copying
 * the JSON into the page cache (or a pipe), time taken from reading the
 * ring. A full buffer is handed to this thread instead, and the loader
 * fills a second one meanwhile; bytes reach the file in the order handed.
 * (A library's asynchronous I/O, POSIX aio or io_uring, would do the
 * write as well, but glibc's aio is a thread pool of its own and io_uring
 * is refused by some kernels' policies: one thread and two buffers are
 * all this needs.)
 */
#ifndef CTRACE_WRITE_BEHIND_H
#define CTRACE_WRITE_BEHIND_H

#include <stddef.h>

struct write_behind;

/* How a buffer is written: all of p to fd, adding to *written; 0 or the errno (trace_sink_write). */
typedef int (*write_behind_fn)(void *ctx, int fd, const char *p, size_t n, unsigned long long *written);

/*
 * The thread, writing to fd with write(ctx, ...) (json_writer.c: through
 * its trace sink, so that a gzip sink compresses in this thread too), with
 * a spare buffer of `cap` bytes; NULL if either cannot be had (then write
 * directly).
 */
struct write_behind *write_behind_start(int fd, write_behind_fn write, void *ctx, size_t cap);

/*
 * Hands buf[0, n) over to be written (buf must have been malloc()ed with
 * the capacity given at the start) and returns the buffer to fill next,
 * once the thread is done with the one before. *err gets the first write
 * error so far (0: none), *written the bytes written so far.
 */
char *write_behind_hand(struct write_behind *wb, char *buf, size_t n, int *err,
			unsigned long long *written);

/* Waits until everything handed over is written; *err and *written as above. */
void write_behind_wait(struct write_behind *wb, int *err, unsigned long long *written);

/* Waits, ends the thread and frees what it holds (not the buffer last returned). */
void write_behind_stop(struct write_behind *wb);

/*
 * write(2) all of p, retrying partial writes and EINTR (the fd is
 * blocking: EAGAIN is an error). Returns 0 or the errno; adds the bytes
 * written to *written. Also the writer's own path without a thread.
 */
int write_fully(int fd, const char *p, size_t n, unsigned long long *written);

#endif
