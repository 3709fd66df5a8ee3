// SPDX-License-Identifier: MIT
#include "capture/capture_files.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The kernel's limit of descriptors in one message (SCM_MAX_FD). */
#define FILES_PER_MESSAGE 253

struct file_key {
	unsigned long long key[2];
};

int capture_files_to = -1;
static struct file_key queued_keys[FILES_PER_MESSAGE];
static int queued_fds[FILES_PER_MESSAGE];
static unsigned n_queued;

/* One message: n keys as its bytes, their descriptors as its SCM_RIGHTS. */
union fds_control {
	struct cmsghdr h;
	char buf[CMSG_SPACE(FILES_PER_MESSAGE * sizeof(int))];
};

void capture_files_flush(void)
{
	union fds_control ctl;
	struct iovec iov = { queued_keys, n_queued * sizeof(queued_keys[0]) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *c;

	if (!n_queued)
		return;
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_controllen = CMSG_SPACE(n_queued * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n_queued * sizeof(int));
	memcpy(CMSG_DATA(c), queued_fds, n_queued * sizeof(int));
	/*
	 * Never waits for the conversion (on idle CPU only, it may not read
	 * for long). Not sent (the socket full), the files are opened by name.
	 */
	(void)sendmsg(capture_files_to, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	n_queued = 0;
}

void capture_files_note(const unsigned long long key[2], int fd)
{
	if (capture_files_to < 0)
		return;
	memcpy(queued_keys[n_queued].key, key, sizeof(queued_keys[0].key));
	queued_fds[n_queued++] = fd;
	if (n_queued == FILES_PER_MESSAGE)
		capture_files_flush();
}

void capture_files_take(int sock, void (*take)(void *ctx, const unsigned long long key[2], int fd), void *ctx)
{
	for (;;) {
		struct file_key keys[FILES_PER_MESSAGE];
		union fds_control ctl;
		struct iovec iov = { keys, sizeof(keys) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				      .msg_controllen = sizeof(ctl.buf) };
		ssize_t got = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		size_t n_keys, n_fds = 0;
		int fds[FILES_PER_MESSAGE];

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return;
		n_keys = (size_t)got / sizeof(keys[0]);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			size_t n;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
				continue;
			n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (n > FILES_PER_MESSAGE - n_fds)
				n = FILES_PER_MESSAGE - n_fds;
			memcpy(fds + n_fds, CMSG_DATA(c), n * sizeof(int));
			n_fds += n;
		}
		/* Each descriptor with its key; one without (a message cut: MSG_CTRUNC) is closed. */
		for (size_t i = 0; i < n_fds; i++) {
			if (i < n_keys)
				take(ctx, keys[i].key, fds[i]);
			else
				close(fds[i]);
		}
	}
}
