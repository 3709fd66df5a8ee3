/* SPDX-License-Identifier: MIT */
/*
 * file_maps.h - the read-only file mappings of the traced processes, so that
 * a string neither the probe nor the loader could read from the process
 * (probe_read set: a page not yet faulted in; then the process exited before
 * the loader read its memory) is read from the file it was mapped from. Only
 * mappings without write permission count: their bytes are the file's.
 * Each file is held open (once per device and inode), so it can be read
 * after the process and its /proc entries are gone.
 *
 * The snapshot of a process is its mappings when last looked at (every
 * attach round, 100 ms): a mapping replaced after that and before the exit
 * would be read wrong, so strings read this way are counted apart
 * (metadata.file_string_reads).
 *
 * Each snapshot is of an epoch (record_strings.h): the BPF side's count of
 * a process's changes (dlopen, dlclose, exec). The loader reads its events
 * behind the process, so a process looked at again after a change, the
 * records of that change still on their way, keeps the snapshot before it
 * too: the events before those records are read from that one.
 */
#ifndef CTRACE_FILE_MAPS_H
#define CTRACE_FILE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/key_map.h"
#include "ingest/process_epoch.h"
#include "model/table_bound.h"

struct file_maps {
	struct key_map procs;   /* tgid -> struct file_maps_proc * */
	struct key_map files;   /* {dev, inode} -> fd + 1 */
	struct key_map parents; /* child tgid -> parent tgid, until the child's own snapshot */
	size_t open_files, max_open_files;
	/*
	 * The snapshots' budget (trace_model_limit_memory() sets it): the one
	 * taken longest ago goes first (a live target's is taken again every
	 * round, so that is one of a process long gone).
	 */
	struct table_bound bound;
	bool offline; /* a conversion: files opened by the names the capture's looks gave */
	int files_from; /* a conversion behind the capture: the tracer's files come here first (capture_files.h) */
};

/* Snapshots kept per process at most (changes not yet read, with the one being read). */
#define FILE_MAPS_SNAPSHOTS 4

void file_maps_init(struct file_maps *fm);
void file_maps_free(struct file_maps *fm);

/*
 * Takes a snapshot of process `pid`, of its epoch (process_epoch.h: read
 * before and after), exact if it did not move meanwhile. One of the same
 * epoch is replaced. 0 or -errno: -EAGAIN when an exec touched the look
 * (it may have seen the new image: no snapshot is kept).
 */
int file_maps_snapshot(struct file_maps *fm, int pid, const struct process_epochs *pe);
/* Whether the newest snapshot of tgid is an exact one of `epoch` (no need to look again). */
bool file_maps_has_exact(const struct file_maps *fm, uint32_t tgid, uint32_t epoch);
/* The records of tgid are read up to `epoch`: the snapshots of older epochs are not needed. */
void file_maps_read_up_to(struct file_maps *fm, uint32_t tgid, uint32_t epoch);

/*
 * A forked child maps what its parent did (each in its epoch at the fork);
 * an exec (its epoch) maps something else.
 */
void file_maps_fork(struct file_maps *fm, uint32_t parent, uint32_t parent_epoch, uint32_t child,
		    uint32_t child_epoch);
void file_maps_exec(struct file_maps *fm, uint32_t tgid, uint32_t epoch);

/*
 * Keeps the program at `path` open (--exe's), so that an exec of it is
 * found by its inode whatever path the exec named. 0 or -errno.
 */
int file_maps_hold_program(struct file_maps *fm, const char *path);

/*
 * The exec of `epoch` mapped the program at `path` (its inode and the
 * kernel's device number, checked) so that its code begins at start_code
 * (the EXEC record): its read-only ranges become the process's snapshot of
 * that epoch, unless a look was taken in that very epoch (a real look,
 * which also has its libraries, replaces it). Set before the looks of
 * later epochs, which may be of a later exec. For a process gone, or
 * exec()d again, before it was looked at. 0 or -errno.
 */
int file_maps_exec_image(struct file_maps *fm, uint32_t tgid, uint32_t epoch, const char *path,
			 uint64_t ino, uint32_t kdev, uint64_t start_code);

/*
 * Reads the NUL-terminated string at `addr` of process `tgid`, as an event
 * of `epoch` saw it, from its file, at most `max` bytes (more:
 * *truncated). Returns its length, or -1 when the address is in no
 * read-only file mapping that event can trust: any of the snapshot of its
 * epoch if there is an exact one (or `any`: the caller knows nothing
 * changed since), else only where the process maps its own executable
 * (those addresses hold the same bytes for the life of the image, whatever
 * libraries came and went). A string with no NUL before the mapping's end
 * is returned cut (*truncated).
 */
ssize_t file_maps_read_str(const struct file_maps *fm, uint32_t tgid, uint32_t epoch, bool any,
			   uint64_t addr, char *buf, size_t max, bool *truncated);

/*
 * A conversion: a look the capture kept (capture_format.h: MAPS), the
 * files opened by name, only if they are those the process mapped (device,
 * inode) and unchanged since (size, mtime: idents, one a range).
 */
int file_maps_replay(struct file_maps *fm, uint32_t pid, uint32_t epoch, bool whole, bool exact, const char *text,
		     size_t len, uint64_t exe_dev, uint64_t exe_ino, const uint64_t *idents, size_t n_idents);

#endif
