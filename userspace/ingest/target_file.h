/* SPDX-License-Identifier: MIT */
/*
 * target_file.h - opening a file whose name the traced process controls (a
 * path from its /proc/PID/maps, its exe or cwd) without letting it block,
 * bloat or redirect the tracer.
 *
 * The name is first opened O_PATH: no driver's open() runs, so a FIFO, a
 * tty or a device at that name can neither block nor be touched. Only a
 * regular file, and when the caller knows which file the kernel mapped
 * (device and inode) only that one, is then opened for reading, through
 * /proc/self/fd (the very inode looked at, whatever the name names by then).
 */
#ifndef CTRACE_TARGET_FILE_H
#define CTRACE_TARGET_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Which file the kernel mapped: its device (major, minor) and inode. */
struct target_file_id {
	unsigned dev_major, dev_minor;
	uint64_t inode;
};

/*
 * Opens `path` O_RDONLY | O_CLOEXEC | O_NONBLOCK: a regular file, and when
 * `want` is given that very file (else -ESTALE). follow: a symlink at the
 * last component is followed (the kernel's links: /proc/PID/exe,
 * /proc/PID/map_files/...); else it is refused (-ELOOP). st (may be NULL)
 * gets the file's stat. An fd, or -errno.
 */
int target_file_open(const char *path, bool follow, const struct target_file_id *want,
		     struct stat *st);

/* Whether st is the file of `id`. */
bool target_file_is(const struct stat *st, const struct target_file_id *id);

#endif
