// SPDX-License-Identifier: MIT
#include "ingest/remote_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * A reader is a process of its own that shares the tracer's memory
 * (clone(CLONE_VM), not a thread): a read blocked uninterruptibly (the
 * process's mmap lock held by one of its starved threads) or killably (a
 * userfaultfd page) then holds neither the tracer's exit nor a sanitizer's
 * stop of its threads. It dies with the thread that started it
 * (PR_SET_PDEATHSIG), or when its read returns if the tracer is gone. It
 * runs no C library code (no TLS of its own, so no errno): raw system
 * calls and atomics only.
 */
#define READER_STACK (64 * 1024)

/* A reader's read, one at a time: the caller sets READING, the reader DONE, or the caller ABANDONED. */
enum { IDLE, READING, DONE, ABANDONED, QUIT };

struct reader {
	pid_t pid_of_reader;
	pid_t parent;
	void *stack;
	int state;           /* the enum above; futex word */
	int sleeping;        /* the reader sleeps on state */
	int caller_sleeping; /* the caller sleeps on state */
	int finished;        /* an abandoned reader whose read returned: it has ended */
	int ready;           /* it has a fd table of its own */
	struct reader *next; /* in the abandoned list */
	/* The read: the caller's while IDLE or DONE, the reader's while READING. */
	bool of_file;        /* the file at path (remote_read_file), else the memory at remote */
	char path[96];
	pid_t pid;
	struct iovec remote[REMOTE_READ_MAX_IOV];
	unsigned long n_remote;
	size_t len;
	long got; /* bytes, or -errno */
	char *buf; /* the reader's own: an abandoned read may fill it any time later */
	size_t cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* one caller at a time */
static struct reader *current;
static struct reader *abandoned; /* each stalls the process it reads */
static bool last_chance;         /* remote_read_last_chance(): a stalling process is read all the same */
static size_t n_abandoned;
static struct remote_read_counts counts;
static bool said;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reader's system calls, without the C library (x86-64). */
static inline long raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
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

/* The reader's: the file's bytes into buf, at most cap: how many, or -errno. */
__attribute__((no_sanitize_address, no_stack_protector)) static long read_whole(const char *path, char *buf,
										 size_t cap)
{
	long fd = raw_syscall(SYS_open, (long)path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0, 0);
	size_t len = 0;

	if (fd < 0)
		return fd;
	while (len < cap) {
		long n = raw_syscall(SYS_read, fd, (long)(buf + len), (long)(cap - len), 0, 0, 0);

		if (n == -EINTR)
			continue;
		if (n < 0) {
			raw_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	raw_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	return (long)len;
}

__attribute__((no_sanitize_address, no_stack_protector)) static int reader_main(void *arg)
{
	struct reader *r = arg;

	raw_syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
	if (raw_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0) != r->parent)
		return 0; /* the tracer ended before it could be told */
	/*
	 * Started sharing the tracer's fd table (no reference to any of its
	 * files): now a table of its own, empty. A reference to the tracer's
	 * BPF links would keep the probes up as long as a read blocks.
	 */
	if (raw_syscall(SYS_close_range, 0, ~0u, CLOSE_RANGE_UNSHARE, 0, 0, 0) < 0)
		return 0;
	__atomic_store_n(&r->ready, 1, __ATOMIC_SEQ_CST);
	raw_syscall(SYS_futex, (long)&r->ready, FUTEX_WAKE_PRIVATE, INT_MAX, 0, 0, 0);
	for (;;) {
		struct iovec local;
		int s;

		while ((s = load(&r->state)) == IDLE || s == DONE) {
			__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
			if (load(&r->state) == s)
				raw_syscall(SYS_futex, (long)&r->state, FUTEX_WAIT_PRIVATE, s, 0, 0, 0);
			__atomic_store_n(&r->sleeping, 0, __ATOMIC_RELAXED);
		}
		if (s == QUIT)
			return 0;
		local = (struct iovec){ r->buf, r->len };
		if (r->of_file)
			r->got = read_whole(r->path, r->buf, r->len);
		else
			r->got = raw_syscall(SYS_process_vm_readv, r->pid, (long)&local, 1, (long)r->remote,
					     (long)r->n_remote, 0);
		if (!move(&r->state, READING, DONE)) {
			/* Abandoned: its caller went on; it frees this reader once it has ended. */
			__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
			return 0;
		}
		if (__atomic_load_n(&r->caller_sleeping, __ATOMIC_SEQ_CST))
			raw_syscall(SYS_futex, (long)&r->state, FUTEX_WAKE_PRIVATE, INT_MAX, 0, 0, 0);
	}
}

static void futex_wait(int *word, int val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void free_reader(struct reader *r)
{
	if (r->stack)
		munmap(r->stack, READER_STACK);
	free(r->buf);
	free(r);
}

/* The current reader, started if there is none. NULL if it cannot be. */
static struct reader *reader(void)
{
	sigset_t all, was;
	struct reader *r;

	if (current)
		return current;
	r = calloc(1, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->parent = getpid();
	r->stack = mmap(NULL, READER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			-1, 0);
	if (r->stack == MAP_FAILED) {
		r->stack = NULL;
		free_reader(r);
		errno = ENOMEM;
		return NULL;
	}
	/* No signal handler of the tracer's may run on the reader (it has no TLS): all blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	r->pid_of_reader = clone(reader_main, (char *)r->stack + READER_STACK, CLONE_VM | CLONE_FILES, r);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (r->pid_of_reader < 0) {
		free_reader(r);
		return NULL;
	}
	/* Until it has left the tracer's fd table, the tracer's exit would not close its files. */
	for (uint64_t until = now_ns() + REMOTE_READ_MAX_NS; !load(&r->ready) && now_ns() < until;)
		futex_wait(&r->ready, 0, REMOTE_READ_DEADLINE_NS / 10);
	if (!load(&r->ready)) {
		kill(r->pid_of_reader, SIGKILL);
		waitpid(r->pid_of_reader, NULL, __WCLONE);
		free_reader(r);
		errno = EAGAIN;
		return NULL;
	}
	current = r;
	return r;
}

/* Whether process pid is running or waiting for a CPU (R), not blocked. */
static bool runnable(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
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
			/* Blocked in the kernel, not starved of a CPU: the process holds it. */
			if (!runnable(r->pid_of_reader))
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

/* The abandoned readers whose read has returned: reaped and freed, their processes readable again. */
static void reap_finished(void)
{
	for (struct reader **at = &abandoned; *at;) {
		struct reader *r = *at;

		if (!load(&r->finished) || waitpid(r->pid_of_reader, NULL, __WCLONE | WNOHANG) != r->pid_of_reader) {
			at = &r->next;
			continue;
		}
		*at = r->next;
		n_abandoned--;
		free_reader(r);
	}
}

/* Whether pid's reads are refused: a read of it is still blocked, or every reader to spare is. */
static bool refused(pid_t pid)
{
	if (!abandoned)
		return false;
	reap_finished();
	if (n_abandoned == REMOTE_READ_MAX_ABANDONED)
		return true;
	if (last_chance)
		return false;
	for (struct reader *r = abandoned; r; r = r->next)
		if (r->pid == pid)
			return true;
	return false;
}

/* r's read left to its reader, unless it came meanwhile (false); pid stalling until it returns. */
static bool abandon(struct reader *r, pid_t pid)
{
	if (!move(&r->state, READING, ABANDONED))
		return false;
	current = NULL;
	r->next = abandoned;
	abandoned = r;
	n_abandoned++;
	counts.abandoned++;
	if (!said)
		fprintf(stderr, "ctrace-bpf: a read of process %d's memory blocked for over %llu ms (a page it does not serve, or its memory map held by one of its threads while the CPUs are busy): its reads are put off until that read returns (counted in metadata.remote_reads)\n",
			(int)pid, REMOTE_READ_DEADLINE_NS / 1000000ull);
	said = true;
	return true;
}

/* Under mu: the current reader with room for want bytes, or NULL (errno set: refused, no memory). */
static struct reader *reader_for(pid_t pid, size_t want)
{
	struct reader *r;

	if (refused(pid)) {
		counts.refused++;
		errno = EAGAIN;
		return NULL;
	}
	r = reader();
	if (r && want > r->cap) { /* the reader is between reads: its buffer is ours */
		char *grown = realloc(r->buf, want);

		if (grown) {
			r->buf = grown;
			r->cap = want;
		}
	}
	if (!r)
		return NULL; /* errno: why it could not start */
	if (want > r->cap) {
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/* Under mu: r's read, set up, made; its result (bytes, or -1 with errno). */
static long run_read(struct reader *r, pid_t pid)
{
	r->pid = pid;
	__atomic_store_n(&r->state, READING, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->sleeping, __ATOMIC_SEQ_CST))
		futex_wake(&r->state);
	counts.reads++;
	if (!wait_read(r) && abandon(r, pid)) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (r->got < 0) {
		errno = (int)-r->got;
		return -1;
	}
	return r->got;
}

/* remote_readv under mu. */
static ssize_t read_locked(pid_t pid, const struct iovec *local, unsigned long n_local,
			   const struct iovec *remote, unsigned long n_remote)
{
	size_t want = 0, have = 0;
	struct reader *r;
	long got;

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
	r = reader_for(pid, want);
	if (!r)
		return -1;
	memcpy(r->remote, remote, n_remote * sizeof(*remote));
	r->n_remote = n_remote;
	r->len = want;
	r->of_file = false;
	got = run_read(r, pid);
	/* The bytes out of the reader's buffer, spread over the caller's iovecs. */
	for (unsigned long i = 0, at = 0; got > 0 && i < n_local && at < (size_t)got; i++) {
		size_t n = (size_t)got - at < local[i].iov_len ? (size_t)got - at : local[i].iov_len;

		memcpy(local[i].iov_base, r->buf + at, n);
		at += n;
	}
	return (ssize_t)got;
}

/* remote_read_file under mu. */
static char *file_locked(pid_t pid, const char *path, size_t *len_out)
{
	size_t cap = 16384;

	if (strlen(path) >= sizeof(((struct reader *)0)->path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	for (;;) {
		struct reader *r = reader_for(pid, cap);
		char *copy;
		long got;

		if (!r)
			return NULL;
		strcpy(r->path, path);
		r->len = cap;
		r->of_file = true;
		got = run_read(r, pid);
		if (got < 0)
			return NULL;
		if ((size_t)got == cap && cap < REMOTE_READ_FILE_MAX) {
			cap *= 4; /* more than that: read again into more room */
			continue;
		}
		copy = malloc((size_t)got + 1);
		if (!copy) {
			errno = ENOMEM;
			return NULL;
		}
		memcpy(copy, r->buf, (size_t)got);
		copy[got] = '\0';
		if (len_out)
			*len_out = (size_t)got;
		return copy;
	}
}

char *remote_read_file(pid_t pid, const char *path, size_t *len)
{
	char *text;
	int err;

	pthread_mutex_lock(&mu);
	text = file_locked(pid, path, len);
	err = errno;
	pthread_mutex_unlock(&mu);
	errno = err;
	return text;
}

ssize_t remote_readv(pid_t pid, const struct iovec *local, unsigned long n_local,
		     const struct iovec *remote, unsigned long n_remote)
{
	ssize_t got;
	int err;

	pthread_mutex_lock(&mu);
	got = read_locked(pid, local, n_local, remote, n_remote);
	err = errno;
	pthread_mutex_unlock(&mu);
	errno = err;
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
	bool s;

	pthread_mutex_lock(&mu);
	s = refused(pid);
	pthread_mutex_unlock(&mu);
	return s;
}

int remote_read_wait(pid_t pid, uint64_t until_ns)
{
	const struct timespec step = { 0, 5 * 1000000L };

	while (remote_read_stalling(pid)) {
		if (now_ns() >= until_ns)
			return -1;
		nanosleep(&step, NULL);
	}
	return 0;
}

void remote_read_last_chance(bool on)
{
	pthread_mutex_lock(&mu);
	last_chance = on;
	pthread_mutex_unlock(&mu);
}

void remote_read_end(void)
{
	struct reader *r;

	pthread_mutex_lock(&mu);
	r = current;
	current = NULL;
	if (r) {
		__atomic_store_n(&r->state, QUIT, __ATOMIC_SEQ_CST);
		futex_wake(&r->state);
		while (waitpid(r->pid_of_reader, NULL, __WCLONE) < 0 && errno == EINTR)
			;
		free_reader(r);
	}
	/* The abandoned ones end with their reads, or with us (PR_SET_PDEATHSIG). */
	pthread_mutex_unlock(&mu);
}
