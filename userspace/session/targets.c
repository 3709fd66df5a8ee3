// SPDX-License-Identifier: MIT
#include "lib/grow_array.h"
#include "session/targets.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

bool targets_has(const struct target_set *t, int pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid)
			return true;
	return false;
}

int targets_add(struct target_set *t, int pid)
{
	int fd;

	if (targets_has(t, pid))
		return 0;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ESRCH)
		return -ESRCH;
	if (GROW_ARRAY(t->v, t->cap, t->n, 8) < 0) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	t->v[t->n++] = (struct target){ pid, fd, false };
	return 1;
}

static bool exited(const struct target *t)
{
	struct pollfd p = { t->pidfd, POLLIN, 0 };

	if (t->pidfd >= 0)
		return poll(&p, 1, 0) > 0; /* readable once it exits, zombie or not */
	return kill(t->pid, 0) != 0 && errno == ESRCH;
}

bool targets_all_gone(struct target_set *t)
{
	bool all = true;

	for (size_t i = 0; i < t->n; i++) {
		if (!t->v[i].gone && exited(&t->v[i]))
			t->v[i].gone = true;
		all = all && t->v[i].gone;
	}
	return all;
}

void targets_free(struct target_set *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pidfd >= 0)
			close(t->v[i].pidfd);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
