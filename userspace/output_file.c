// SPDX-License-Identifier: MIT
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The user who ran sudo, or -1. */
static uid_t sudo_uid(void)
{
	const char *s = getenv("SUDO_UID");

	return s && *s ? (uid_t)strtoul(s, NULL, 10) : (uid_t)-1;
}

static int refuse(int fd, const char *path, const char *why)
{
	fprintf(stderr, "ctrace-bpf: will not write the trace to %s: %s; choose another path with -o\n",
		path, why);
	if (fd >= 0)
		close(fd);
	return -1;
}

int output_open(const char *path, bool *created_out)
{
	const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	bool created = true;
	struct stat st;
	int fd;

	*created_out = false;
	if (!strcmp(path, "-"))
		return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	/* O_EXCL tells a file we create from one that was there. */
	fd = open(path, flags | O_CREAT | O_EXCL, 0644);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = open(path, flags);
	}
	if (fd < 0) {
		if (errno == ELOOP)
			return refuse(-1, path, "it is a symbolic link");
		fprintf(stderr, "ctrace-bpf: cannot write the trace to %s: %s; choose another path with -o\n",
			path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0)
		return refuse(fd, path, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		if (!created && st.st_uid != geteuid() && st.st_uid != sudo_uid())
			return refuse(fd, path, "it belongs to another user");
		if (!created && st.st_nlink > 1)
			return refuse(fd, path, "it has other hard links");
		/* Truncate only now that it is known to be ours. */
		if (ftruncate(fd, 0) != 0)
			return refuse(fd, path, strerror(errno));
	}
	if (created && geteuid() == 0 && sudo_uid() != (uid_t)-1) {
		const char *g = getenv("SUDO_GID");

		/* Not fatal: the trace is written either way. */
		if (fchown(fd, sudo_uid(), g && *g ? (gid_t)strtoul(g, NULL, 10) : (gid_t)-1) != 0)
			fprintf(stderr, "ctrace-bpf: note: %s stays owned by root: %s\n", path, strerror(errno));
	}
	*created_out = created;
	return fd;
}
