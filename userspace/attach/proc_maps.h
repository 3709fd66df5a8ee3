/* SPDX-License-Identifier: MIT */
/*
 * proc_maps.h - which files a process has mapped, and how the tracer can
 * open them.
 *
 * A USDT probe lives in an ELF file (the executable or a shared library), so
 * tracing a process starts from the distinct files in /proc/PID/maps. The
 * target may be in another mount namespace (a container): the path it sees is
 * then resolved under /proc/PID/root, which the tracer (root, host namespace)
 * can open. A file deleted or replaced since it was mapped (a package upgrade)
 * is reached through /proc/PID/map_files/START-END instead, which always names
 * the mapped file itself.
 */
#ifndef PROC_MAPS_H
#define PROC_MAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* One file mapped into the process (all its mappings grouped together). */
struct mapped_object {
	char path[PATH_MAX];           /* as the target sees it, " (deleted)" removed */
	char host_path[PATH_MAX + 32]; /* what the tracer opens: same file */
	unsigned long long inode;
	unsigned int dev_major, dev_minor;
	unsigned long map_start, map_end; /* its first mapping */
	bool deleted;    /* not at `path` any more: host_path is in map_files */
	bool is_exe;     /* the process's executable (/proc/PID/exe) */
};

struct mapped_object_list {
	struct mapped_object *v;
	size_t n;
};

/*
 * Lists the files of process `pid` that can hold probe sites: every file with
 * at least one executable ('x') mapping, one entry per file (path + inode +
 * device; all its mappings grouped), in the order of first appearance. Data
 * files (locale-archive, fonts, ...) are left out. *out is overwritten; free
 * it with mapped_object_list_free (also after an error: it is then empty).
 * Returns 0; -ESRCH if the process does not exist, has exited (a zombie) or
 * maps no file at all (a kernel thread); -EINVAL for a bad pid or an
 * unreadable maps line; -ENOMEM; or another -errno (EACCES).
 */
int proc_maps_objects(int pid, struct mapped_object_list *out);
void mapped_object_list_free(struct mapped_object_list *l);

/*
 * Opens the object's file for reading (target_file.h): host_path, only if
 * it is still that very file (device and inode) and never blocking. An fd,
 * or -errno (-ESTALE: something else is at that name now).
 */
int mapped_object_open(const struct mapped_object *o);

/*
 * The executable of `pid` as the process sees it (readlink /proc/PID/exe; may
 * end in " (deleted)"). 0, -ESRCH, -ENAMETOOLONG (buf too small) or -errno.
 */
int proc_maps_exe(int pid, char *buf, size_t len);

/* One parsed line of /proc/PID/maps. */
struct proc_maps_entry {
	unsigned long start, end;
	char perms[5]; /* "r-xp" */
	unsigned long long offset;
	unsigned int dev_major, dev_minor;
	unsigned long long inode;
	const char *path; /* into the line: not NUL-terminated; "" if none */
	size_t path_len;  /* without any trailing newline */
};

/* Parses one line (with or without its '\n'). 0, or -EINVAL if malformed. */
int proc_maps_parse_line(const char *line, struct proc_maps_entry *e);

#endif /* PROC_MAPS_H */
