// SPDX-License-Identifier: MIT
#include "remote_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A reader's read, one at a time: the caller sets READING, the reader DONE, or the caller ABANDONED. */
enum { IDLE, READING, DONE, ABANDONED, QUIT };

struct reader {
	pthread_t thread;
	int tid;                   /* set by the thread itself */
	int state;                 /* the enum above; futex word */
	int sleeping;              /* the reader sleeps on state */
	int caller_sleeping;       /* the caller sleeps on state */
	/* The read: the caller's while IDLE, the reader's while READING. */
	pid_t pid;
	struct iovec remote[REMOTE_READ_MAX_IOV];
	unsigned long n_remote;
	size_t len;
	ssize_t got;
	int err;
	char *buf; /* the reader's own: an abandoned read may fill it any time later */
	size_t cap;
};

/* The slow path's state: the stalling processes, the counts. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct reader *current;
static pid_t stalled[REMOTE_READ_MAX_ABANDONED];
static int n_stalled; /* read without mu first: 0 is the common case */
static struct remote_read_counts counts;
static bool said;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void futex_wait(int *word, int val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static void futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int load(int *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* state from `from` to `to`; false if it was something else. */
static bool move(int *state, int from, int to)
{
	return __atomic_compare_exchange_n(state, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void unstall(pid_t pid)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_stalled; i++)
		if (stalled[i] == pid) {
			stalled[i] = stalled[n_stalled - 1];
			__atomic_store_n(&n_stalled, n_stalled - 1, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&mu);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	__atomic_store_n(&r->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;) {
		struct iovec local;
		int s;

		/* No spinning for the next read: on a busy CPU, a futex hand-off was 5x faster. */
		while ((s = load(&r->state)) == IDLE || s == DONE) {
			__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
			if (load(&r->state) == s)
				futex_wait(&r->state, s, 0);
			__atomic_store_n(&r->sleeping, 0, __ATOMIC_RELAXED);
		}
		if (s == QUIT)
			return NULL;
		local = (struct iovec){ r->buf, r->len };
		r->got = process_vm_readv(r->pid, &local, 1, r->remote, r->n_remote, 0);
		r->err = errno;
		if (!move(&r->state, READING, DONE)) {
			/* Abandoned: its caller went on long ago; the process may be read again. */
			unstall(r->pid);
			free(r->buf);
			free(r);
			return NULL;
		}
		if (__atomic_load_n(&r->caller_sleeping, __ATOMIC_SEQ_CST))
			futex_wake(&r->state);
	}
}

/* The current reader, started if there is none. NULL if it cannot be. */
static struct reader *reader(void)
{
	pthread_attr_t attr;
	struct reader *r;
	int err;

	if (current)
		return current;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* it only makes one syscall */
	err = pthread_create(&r->thread, &attr, reader_main, r);
	pthread_attr_destroy(&attr);
	if (err) {
		free(r);
		return NULL;
	}
	current = r;
	return r;
}

/* Whether thread tid is running or waiting for a CPU (R), not blocked. */
static bool runnable(int tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'R';
}

/* Waits for r's read; false once it is to be abandoned. */
static bool wait_read(struct reader *r)
{
	uint64_t start = now_ns(), check = start + REMOTE_READ_DEADLINE_NS, now;

	while (load(&r->state) == READING) {
		now = now_ns();
		if (now >= start + REMOTE_READ_MAX_NS)
			return false;
		if (now >= check) {
			int tid = load(&r->tid);

			/* Blocked in the kernel, not starved of a CPU: the process holds it. */
			if (tid && !runnable(tid))
				return false;
			check = now + REMOTE_READ_DEADLINE_NS / 10;
		}
		__atomic_store_n(&r->caller_sleeping, 1, __ATOMIC_SEQ_CST);
		if (load(&r->state) == READING)
			futex_wait(&r->state, READING, check > now ? check - now : 1);
		__atomic_store_n(&r->caller_sleeping, 0, __ATOMIC_RELAXED);
	}
	return true;
}

static bool is_stalled(pid_t pid)
{
	bool s = false;

	if (!load(&n_stalled))
		return false;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_stalled && !s; i++)
		s = stalled[i] == pid;
	s = s || n_stalled == REMOTE_READ_MAX_ABANDONED; /* no reader to spare */
	pthread_mutex_unlock(&mu);
	return s;
}

/* r's read left to its thread, unless it came meanwhile (false); pid stalling until it returns. */
static bool abandon(struct reader *r, pid_t pid)
{
	pthread_mutex_lock(&mu);
	if (!move(&r->state, READING, ABANDONED)) {
		pthread_mutex_unlock(&mu);
		return false;
	}
	pthread_detach(r->thread); /* it frees itself when its read returns */
	current = NULL;
	stalled[n_stalled] = pid;
	__atomic_store_n(&n_stalled, n_stalled + 1, __ATOMIC_RELEASE);
	counts.abandoned++;
	if (!said)
		fprintf(stderr, "ctrace-bpf: a read of process %d's memory blocked for over %llu ms (a page it does not let be read): its reads are refused while that lasts (counted in metadata.remote_reads)\n",
			(int)pid, REMOTE_READ_DEADLINE_NS / 1000000ull);
	said = true;
	pthread_mutex_unlock(&mu);
	return true;
}

ssize_t remote_readv(pid_t pid, const struct iovec *local, unsigned long n_local,
		     const struct iovec *remote, unsigned long n_remote)
{
	size_t want = 0, have = 0;
	struct reader *r;
	ssize_t got;

	if (n_remote > REMOTE_READ_MAX_IOV) {
		errno = E2BIG;
		return -1;
	}
	for (unsigned long i = 0; i < n_local; i++)
		have += local[i].iov_len;
	for (unsigned long i = 0; i < n_remote; i++)
		want += remote[i].iov_len;
	if (want > have)
		want = have;
	if (is_stalled(pid)) {
		pthread_mutex_lock(&mu);
		counts.refused++;
		pthread_mutex_unlock(&mu);
		errno = EAGAIN;
		return -1;
	}
	r = reader();
	if (r && want > r->cap) { /* the reader is between reads: its buffer is ours */
		char *grown = realloc(r->buf, want);

		if (grown) {
			r->buf = grown;
			r->cap = want;
		}
	}
	if (!r || want > r->cap) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(r->remote, remote, n_remote * sizeof(*remote));
	r->n_remote = n_remote;
	r->pid = pid;
	r->len = want;
	__atomic_store_n(&r->state, READING, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->sleeping, __ATOMIC_SEQ_CST))
		futex_wake(&r->state);
	__atomic_add_fetch(&counts.reads, 1, __ATOMIC_RELAXED);
	if (!wait_read(r) && abandon(r, pid)) {
		errno = ETIMEDOUT;
		return -1;
	}
	got = r->got;
	/* The bytes out of the reader's buffer, spread over the caller's iovecs. */
	for (unsigned long i = 0, at = 0; got > 0 && i < n_local && at < (size_t)got; i++) {
		size_t n = (size_t)got - at < local[i].iov_len ? (size_t)got - at : local[i].iov_len;

		memcpy(local[i].iov_base, r->buf + at, n);
		at += n;
	}
	if (got < 0)
		errno = r->err;
	return got;
}

ssize_t remote_read(pid_t pid, void *to, uint64_t addr, size_t n)
{
	struct iovec local = { to, n };
	struct iovec remote = { (void *)(uintptr_t)addr, n };

	return remote_readv(pid, &local, 1, &remote, 1);
}

struct remote_read_counts remote_read_counts(void)
{
	struct remote_read_counts c;

	pthread_mutex_lock(&mu);
	c = counts;
	pthread_mutex_unlock(&mu);
	return c;
}

int remote_read_stalling(pid_t pid)
{
	return is_stalled(pid);
}

void remote_read_end(void)
{
	struct reader *r = current;

	current = NULL;
	if (!r)
		return;
	__atomic_store_n(&r->state, QUIT, __ATOMIC_SEQ_CST);
	futex_wake(&r->state);
	pthread_join(r->thread, NULL);
	free(r->buf);
	free(r);
}
