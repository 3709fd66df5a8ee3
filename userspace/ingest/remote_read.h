/* SPDX-License-Identifier: MIT */
/*
 * remote_read.h - reads of a traced process's memory that cannot stall the
 * loader.
 *
 * process_vm_readv() can block for as long as the process likes (and so
 * can a read of its /proc/PID/maps or cmdline, behind its mmap lock): a page
 * registered with userfaultfd and never served, a FUSE or NFS file it
 * mapped, its mmap lock held by one of its threads that the CPUs starve.
 * Those waits are killable only, or not at all (the mmap lock), so no
 * signal, watchdog or timer gets the reading thread out. So every read is
 * made by a reader, a process that shares the tracer's memory (not a
 * thread: a thread blocked there would hold the tracer's exit), into the
 * reader's own buffer; the caller waits for it until a deadline
 * (REMOTE_READ_DEADLINE_NS of the read blocked in the kernel: a reader
 * only starved of CPU is waited for, up to REMOTE_READ_MAX_NS). Past it the
 * read is abandoned to its reader (which ends when the read does: the
 * process serves the fault, or exits; or with the tracer), a new reader
 * takes the next reads, and the process is "stalling": its reads are
 * refused at once until the abandoned one returns. The first abandoned
 * read is said once on stderr; abandoned and refused reads are counted
 * (metadata.remote_reads).
 *
 * One thread calls these (the loader's loop), or several one at a time.
 */
#ifndef CTRACE_REMOTE_READ_H
#define CTRACE_REMOTE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* A read blocked in the kernel this long is abandoned. */
#define REMOTE_READ_DEADLINE_NS (100 * 1000000ull)
/* However it waits (a reader starved of CPU), no read is waited for longer. */
#define REMOTE_READ_MAX_NS (1000 * 1000000ull)
/* Readers left blocked at once at most: past it every read is refused. */
#define REMOTE_READ_MAX_ABANDONED 16
/* The remote iovecs of one read at most. */
#define REMOTE_READ_MAX_IOV 64

/*
 * process_vm_readv(pid, local, n_local, remote, n_remote, 0) through the
 * reader: the bytes read (as process_vm_readv: a partial read stops at the
 * first unreadable remote iovec), or -1 with errno: process_vm_readv's,
 * ETIMEDOUT (abandoned now), EAGAIN (refused: the process is stalling),
 * E2BIG (more than REMOTE_READ_MAX_IOV remote iovecs), ENOMEM.
 */
ssize_t remote_readv(pid_t pid, const struct iovec *local, unsigned long n_local,
		     const struct iovec *remote, unsigned long n_remote);

/*
 * A file of process pid that its own state can hold (/proc/PID/maps,
 * cmdline, environ: the kernel takes its mmap lock to make them), read
 * whole by the reader the same way (at most REMOTE_READ_FILE_MAX bytes):
 * malloc'd, NUL-terminated, *len its length (len may be NULL); NULL with
 * errno as remote_readv's, or open's and read's.
 */
char *remote_read_file(pid_t pid, const char *path, size_t *len);
#define REMOTE_READ_FILE_MAX (64u << 20)

/* remote_readv of n bytes at addr into to. */
ssize_t remote_read(pid_t pid, void *to, uint64_t addr, size_t n);

struct remote_read_counts {
	uint64_t reads;     /* made by a reader */
	uint64_t abandoned; /* past the deadline */
	uint64_t refused;   /* of a stalling process, or with every reader blocked */
};

struct remote_read_counts remote_read_counts(void);

/* Whether a read of pid would be refused now (it is stalling). */
int remote_read_stalling(pid_t pid);

/*
 * Waits until a read of pid is no longer refused (its abandoned read
 * returned: the process served the fault, or the thread holding its memory
 * map ran), or until CLOCK_MONOTONIC until_ns: 0, or -1 still stalling.
 */
int remote_read_wait(pid_t pid, uint64_t until_ns);

/*
 * The stop's last reads, on: a stalling process is read all the same (each
 * read still abandoned at the deadline, while readers to spare remain).
 * What blocked one read of it (one page, its memory map held a while) need
 * not block the others, and past the stop they cannot be made again.
 */
void remote_read_last_chance(bool on);

/* The reader stopped (the abandoned ones are left to end with the process). */
void remote_read_end(void);

#endif
