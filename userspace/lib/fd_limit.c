// SPDX-License-Identifier: MIT
#include "lib/fd_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* Enough for what ends a trace: the ring buffer's epoll, the output and its temporary, a dump. */
#define RESERVE 16

static struct rlimit at_start;
static bool raised;
static int reserve[RESERVE];
static size_t reserved;
static bool reached;

void fd_limit_start(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		at_start = rl;
		rl.rlim_cur = rl.rlim_max;
		raised = setrlimit(RLIMIT_NOFILE, &rl) == 0;
	}
	while (reserved < RESERVE) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			break;
		reserve[reserved++] = fd;
	}
}

void fd_limit_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &at_start);
}

size_t fd_limit_now(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	return (size_t)rl.rlim_cur;
}

bool fd_limit_hit(int err)
{
	if (err != -EMFILE && err != -ENFILE)
		return false;
	while (reserved)
		close(reserve[--reserved]);
	if (!reached)
		fprintf(stderr, "ctrace-bpf: open files: %s is reached: no more objects are attached, the trace goes on with those that are; raise %s to trace them all\n",
			err == -ENFILE ? "the system's limit" : "the limit of this process (ulimit -n)",
			err == -ENFILE ? "fs.file-max" : "the hard limit (ulimit -Hn)");
	reached = true;
	return true;
}

bool fd_limit_reached(void)
{
	return reached;
}
