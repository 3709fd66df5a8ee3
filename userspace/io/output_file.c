// SPDX-License-Identifier: MIT
#include "io/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/sudo_user.h"

static mode_t output_mode = OUTPUT_MODE_DEFAULT;

void output_file_set_mode(mode_t mode)
{
	output_mode = mode;
}

/*
 * The mode asked for, exactly: creating with it leaves what the umask
 * takes away (--mode 0640 under umask 077 would be 0600), and a file
 * written over keeps the mode it had (0644: anyone reads the new trace).
 * Not fatal: the trace is written either way, and the line says so.
 */
static void set_mode(int fd, const char *path)
{
	if (fchmod(fd, output_mode) != 0)
		fprintf(stderr, "ctrace-bpf: note: cannot make %s mode %04o: %s\n", path,
			(unsigned)output_mode, strerror(errno));
}

/* -EPERM: a refusal of ours, whatever the cause the line gives. */
static int refuse(int fd, const char *path, const char *why)
{
	fprintf(stderr, "ctrace-bpf: will not write the trace to %s: %s; choose another path with -o\n",
		path, why);
	if (fd >= 0)
		close(fd);
	return -EPERM;
}

/*
 * Kernel file systems whose "files" are interfaces (a process's memory,
 * kernel tunables, cgroup controls): writing a trace there does harm or
 * fails half-way, so their files are no place for one.
 */
static bool on_kernel_fs(const struct statfs *fs)
{
	switch ((unsigned long)fs->f_type) {
	case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC: case SECURITYFS_MAGIC: case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC: case BPF_FS_MAGIC: case EFIVARFS_MAGIC:
	case PSTOREFS_MAGIC: case DEVPTS_SUPER_MAGIC:
		return true;
	}
	return false;
}

/*
 * What is already at `path`, judged before it is opened: opening a FIFO
 * blocks until a reader comes, opening some devices has effects of its own
 * (a watchdog starts counting), and /proc/PID/mem is a "regular" file.
 * NULL if a trace may go there.
 */
static const char *unfit_existing(const char *path, const struct stat *st)
{
	struct statfs fs;

	if (S_ISLNK(st->st_mode))
		return "it is a symbolic link";
	/* /dev/null (char 1:3) takes everything and does nothing: a trace thrown away. */
	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3)
		return NULL;
	if (!S_ISREG(st->st_mode))
		return S_ISFIFO(st->st_mode) ? "not a plain file (a FIFO; for a pipe use -o - | ...)" :
		       S_ISDIR(st->st_mode)  ? "it is a directory" :
					       "not a plain file (a device or socket)";
	if (statfs(path, &fs) == 0 && on_kernel_fs(&fs))
		return "not a plain file (a kernel interface under /proc, /sys or the like)";
	if (st->st_uid != sudo_user_owner())
		return "it belongs to another user";
	if (st->st_nlink > 1)
		return "it has other hard links";
	return NULL;
}

/*
 * One tracer per file: two writing one file interleave into invalid JSON.
 * The lock is held as long as the file is open (our whole run).
 */
static int lock_output(int fd, const char *path)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK)
		return refuse(fd, path, "another ctrace-bpf is writing it");
	return refuse(fd, path, strerror(errno));
}

bool output_is_pftrace(const char *path)
{
	size_t n = strlen(path);

	return n >= 8 && !strcmp(path + n - 8, ".pftrace");
}

static const char *given_path;
static int given_fd = -1;

void output_file_give(const char *path, int fd)
{
	given_path = path;
	given_fd = fd;
}

int output_open(const char *path, bool *created_out)
{
	const int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	struct sudo_user su;
	struct stat st, fst;
	const char *why;
	int fd;

	*created_out = false;
	if (given_fd >= 0 && given_path && !strcmp(path, given_path)) {
		fd = given_fd;
		given_fd = -1;
		return fd;
	}
	if (!strcmp(path, "-"))
		return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	if (sudo_user_get(&su) < 0)
		return -EINVAL; /* sudo_user_get said why */
	/* O_EXCL tells a file we create from one that was there. */
	fd = open(path, flags | O_CREAT | O_EXCL, output_mode);
	if (fd >= 0) {
		if (su.set && fchown(fd, su.uid, su.gid) != 0) /* not fatal: the trace is written either way */
			fprintf(stderr, "ctrace-bpf: note: %s stays owned by root: %s\n", path, strerror(errno));
		set_mode(fd, path);
		*created_out = true;
		return lock_output(fd, path);
	}
	if (errno != EEXIST) {
		int err = -errno;

		fprintf(stderr, "ctrace-bpf: cannot write the trace to %s: %s; choose another path with -o\n",
			path, strerror(-err));
		return err;
	}
	if (lstat(path, &st) != 0)
		return refuse(-1, path, strerror(errno));
	why = unfit_existing(path, &st);
	if (why)
		return refuse(-1, path, why);
	fd = open(path, flags);
	if (fd < 0)
		return refuse(-1, path, strerror(errno));
	/* The file judged above must be the file opened. */
	if (fstat(fd, &fst) != 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev)
		return refuse(fd, path, "it changed while being opened");
	if (!S_ISREG(fst.st_mode))
		return fd; /* /dev/null */
	fd = lock_output(fd, path);
	/* Truncate only now that it is known to be ours and no one else's output. */
	if (fd >= 0 && ftruncate(fd, 0) != 0)
		return refuse(fd, path, strerror(errno));
	if (fd >= 0)
		set_mode(fd, path);
	return fd;
}
