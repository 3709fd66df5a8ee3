// SPDX-License-Identifier: MIT
#include "io/write_behind.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

struct write_behind {
	int fd;
	write_behind_fn write;
	void *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *pending;  /* handed over, not yet written (NULL: the thread is idle) */
	size_t pending_len;
	char *spare;    /* written out: the next to fill */
	int err;
	unsigned long long written;
	bool stopping;
};

int write_fully(int fd, const char *p, size_t n, unsigned long long *written)
{
	while (n > 0) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno ? errno : EIO;
		}
		if (r == 0) /* no progress and no errno: do not spin */
			return EIO;
		p += r;
		n -= (size_t)r;
		*written += (unsigned long long)r;
	}
	return 0;
}

static void *run(void *arg)
{
	struct write_behind *wb = arg;

	pthread_mutex_lock(&wb->lock);
	for (;;) {
		char *buf;
		size_t n;
		unsigned long long written = 0;
		int err = 0;

		while (!wb->pending && !wb->stopping)
			pthread_cond_wait(&wb->cond, &wb->lock);
		if (!wb->pending)
			break; /* stopping, and nothing left */
		buf = wb->pending;
		n = wb->pending_len;
		if (!wb->err) {
			pthread_mutex_unlock(&wb->lock);
			/* Compressing (gzip output) is done here too: off the loop as well. */
			err = wb->write(wb->ctx, wb->fd, buf, n, &written);
			pthread_mutex_lock(&wb->lock);
		}
		wb->written += written;
		if (err && !wb->err)
			wb->err = err; /* the first; later buffers are not written (as the writer's own path) */
		wb->spare = buf;
		wb->pending = NULL;
		pthread_cond_broadcast(&wb->cond);
	}
	pthread_mutex_unlock(&wb->lock);
	return NULL;
}

struct write_behind *write_behind_start(int fd, write_behind_fn write, void *ctx, size_t cap)
{
	struct write_behind *wb = calloc(1, sizeof(*wb));
	sigset_t all, old;
	int err;

	if (!wb)
		return NULL;
	wb->fd = fd;
	wb->write = write;
	wb->ctx = ctx;
	wb->spare = malloc(cap);
	if (!wb->spare) {
		free(wb);
		return NULL;
	}
	pthread_mutex_init(&wb->lock, NULL);
	pthread_cond_init(&wb->cond, NULL);
	/* Signals (Ctrl-C, SIGTERM, SIGCHLD) stay the main thread's: its poll must see them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&wb->thread, NULL, run, wb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(wb->spare);
		pthread_mutex_destroy(&wb->lock);
		pthread_cond_destroy(&wb->cond);
		free(wb);
		return NULL;
	}
	return wb;
}

/* With the lock held: until the thread is idle. */
static void idle(struct write_behind *wb, int *err, unsigned long long *written)
{
	while (wb->pending)
		pthread_cond_wait(&wb->cond, &wb->lock);
	*err = wb->err;
	*written = wb->written;
}

char *write_behind_hand(struct write_behind *wb, char *buf, size_t n, int *err,
			unsigned long long *written)
{
	char *next;

	pthread_mutex_lock(&wb->lock);
	idle(wb, err, written);
	next = wb->spare;
	wb->spare = NULL;
	wb->pending = buf;
	wb->pending_len = n;
	pthread_cond_broadcast(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
	return next;
}

void write_behind_wait(struct write_behind *wb, int *err, unsigned long long *written)
{
	pthread_mutex_lock(&wb->lock);
	idle(wb, err, written);
	pthread_mutex_unlock(&wb->lock);
}

void write_behind_stop(struct write_behind *wb)
{
	if (!wb)
		return;
	pthread_mutex_lock(&wb->lock);
	wb->stopping = true;
	pthread_cond_broadcast(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
	free(wb->spare);
	pthread_mutex_destroy(&wb->lock);
	pthread_cond_destroy(&wb->cond);
	free(wb);
}
