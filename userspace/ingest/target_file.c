// SPDX-License-Identifier: MIT
#include "ingest/target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool target_file_is(const struct stat *st, const struct target_file_id *id)
{
	return st->st_ino == id->inode && major(st->st_dev) == id->dev_major &&
	       minor(st->st_dev) == id->dev_minor;
}

int target_file_open(const char *path, bool follow, const struct target_file_id *want,
		     struct stat *st_out)
{
	char self[40];
	struct stat st;
	int at, fd;

	at = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (at < 0)
		return -errno;
	if (fstat(at, &st) != 0) {
		fd = -errno;
		close(at);
		return fd;
	}
	if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode) || (want && !target_file_is(&st, want))) {
		close(at);
		return S_ISLNK(st.st_mode) ? -ELOOP : !S_ISREG(st.st_mode) ? -EINVAL : -ESTALE;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		fd = -errno;
	close(at);
	if (fd >= 0 && st_out)
		*st_out = st;
	return fd;
}
