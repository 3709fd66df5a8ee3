// SPDX-License-Identifier: MIT
#include "ingest/file_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "capture/capture_files.h"
#include "capture/capture_journal.h"
#include "lib/grow_array.h"
#include "attach/exec_image.h"
#include "lib/fd_limit.h"
#include "attach/proc_maps.h"
#include "ingest/remote_read.h"
#include "ingest/target_file.h"

/*
 * Enough for a program and its libraries many times over, and at most a
 * quarter of the fds the tracer may have (its links need the rest);
 * beyond, no more files are held.
 */
static size_t max_open_files(void)
{
	size_t quarter = fd_limit_now() / 4;

	return quarter < 1024 ? quarter : 1024;
}

struct file_range {
	uint64_t start, end, offset;
	int fd;
	/*
	 * The file's size and mtime at the snapshot: a file rewritten in place
	 * keeps its inode (and our fd) but not these, and its bytes are then
	 * not those the process had mapped. Not its ctime: an unlink moves it
	 * (a library a package upgrade replaced, a copy the process removed
	 * before it exited) and leaves every byte as it was.
	 */
	uint64_t ident[2];
	/*
	 * Mapped from the process's executable: no dlopen() or dlclose() can
	 * put another object at these addresses (only an exec, which forgets
	 * the snapshot), so a string here is readable whatever changed since.
	 */
	bool program;
};

/* What tells the contents apart under one inode (see file_range). */
static void file_ident(int fd, uint64_t ident[2])
{
	struct stat st;

	memset(ident, 0, 2 * sizeof(*ident));
	if (fstat(fd, &st) != 0)
		return;
	ident[0] = (uint64_t)st.st_size;
	ident[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
}

/* One look at a process: its ranges, and the epoch it was taken in. */
struct file_maps_snap {
	struct file_range *v;
	size_t n, cap;
	uint32_t epoch;
	bool exact; /* the epoch did not move on while it was taken */
};

/*
 * A process's snapshots, oldest first. More than one only while the
 * records of a change (dlopen, dlclose, exec) are on their way: the events
 * before those records are the older snapshot's, those after the newer's.
 */
struct file_maps_proc {
	struct bound_entry e;
	uint64_t key; /* tgid */
	struct file_maps_snap snaps[FILE_MAPS_SNAPSHOTS];
	size_t n_snaps;
};

/* Epochs wrap: a before b. */
static bool epoch_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Until the model says (trace_model_limit_memory()). */
#define FILE_MAPS_DEFAULT_LIMIT (8u << 20)

void file_maps_init(struct file_maps *fm)
{
	memset(fm, 0, sizeof(*fm));
	key_map_init(&fm->procs);
	key_map_init(&fm->files);
	key_map_init(&fm->parents);
	fm->max_open_files = max_open_files();
	fm->files_from = -1;
	tb_init(&fm->bound, "file_maps",
		"the snapshot of a process's mappings taken longest ago is forgotten: a string of that process, once gone, is then unreadable (counted)",
		FILE_MAPS_DEFAULT_LIMIT);
}

static void free_proc(const void *key, size_t len, void *value, void *ctx)
{
	struct file_maps_proc *p = value;

	(void)key, (void)len, (void)ctx;
	for (size_t i = 0; i < p->n_snaps; i++)
		free(p->snaps[i].v);
	free(p);
}

/* Its snapshots [from, from + n) forgotten. */
static void drop_snaps(struct file_maps_proc *p, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++)
		free(p->snaps[i].v);
	memmove(&p->snaps[from], &p->snaps[from + n], (p->n_snaps - from - n) * sizeof(p->snaps[0]));
	p->n_snaps -= n;
}

static size_t proc_cost(const struct file_maps_proc *p)
{
	size_t cost = tb_alloc_cost(sizeof(*p)) + tb_slot_cost(sizeof(p->key));

	for (size_t i = 0; i < p->n_snaps; i++)
		cost += tb_alloc_cost(p->snaps[i].cap * sizeof(*p->snaps[i].v));
	return cost;
}

/* Counted again after a change, as the newest: a process looked at or read from now. */
static void recount(struct file_maps *fm, struct file_maps_proc *p)
{
	tb_remove(&fm->bound, &p->e);
	tb_add(&fm->bound, &p->e, &p->key, sizeof(p->key), proc_cost(p));
}

/* A process with no snapshot left is forgotten. */
static void forget_if_empty(struct file_maps *fm, struct file_maps_proc *p)
{
	if (p->n_snaps)
		return;
	key_map_del(&fm->procs, &p->key, sizeof(p->key));
	tb_remove(&fm->bound, &p->e);
	free_proc(NULL, 0, p, NULL);
}

static void close_file(const void *key, size_t len, void *value, void *ctx)
{
	(void)key, (void)len, (void)ctx;
	close((int)(uintptr_t)value - 1);
}

void file_maps_free(struct file_maps *fm)
{
	key_map_each(&fm->procs, free_proc, NULL);
	key_map_each(&fm->files, close_file, NULL);
	key_map_free(&fm->procs);
	key_map_free(&fm->files);
	key_map_free_with_values(&fm->parents);
}

/* The files map's key of a file: its device and inode. */
static void file_key(unsigned long long key[2], unsigned dev_major, unsigned dev_minor, uint64_t ino)
{
	key[0] = ((unsigned long long)dev_major << 32) | dev_minor;
	key[1] = ino;
}

/* The fd, open from now on, is the file of key: held (and closed) by fm. */
static void hold_fd(struct file_maps *fm, const unsigned long long key[2], int fd)
{
	key_map_put(&fm->files, key, 2 * sizeof(key[0]), (void *)(uintptr_t)(fd + 1));
	fm->open_files++;
	if (!fm->offline)
		capture_files_note(key, fd); /* for a conversion behind the capture, if there is one */
}

/* A file the tracer handed over (capture_files.h): held as if opened here, unless one is. */
static void take_handed(void *ctx, const unsigned long long key[2], int fd)
{
	struct file_maps *fm = ctx;

	if (key_map_get(&fm->files, key, 2 * sizeof(key[0])) || fm->open_files >= fm->max_open_files)
		close(fd);
	else
		hold_fd(fm, key, fd);
}

static void take_handed_files(struct file_maps *fm)
{
	if (fm->files_from >= 0)
		capture_files_take(fm->files_from, take_handed, fm);
}

/*
 * The mapped file, opened once: through its map_files entry (the mapping's
 * own file, whatever is at its name now), else through the process's root
 * by the name maps gives (only that very file: a FIFO or another file put
 * there is refused, and the open cannot block).
 */
static int file_fd(struct file_maps *fm, int pid, const struct proc_maps_entry *e)
{
	const struct target_file_id id = { e->dev_major, e->dev_minor, e->inode };
	unsigned long long key[2];
	void *have;
	char path[PATH_MAX + 64];
	int fd;

	file_key(key, e->dev_major, e->dev_minor, e->inode);
	have = key_map_get(&fm->files, key, sizeof(key));
	if (have)
		return (int)(uintptr_t)have - 1;
	if (fm->open_files >= fm->max_open_files)
		return -1;
	/* The kernel names map_files entries with %lx, no leading zeros. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, e->start, e->end);
	fd = target_file_open(path, true, &id, NULL);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/root%.*s", pid, (int)e->path_len, e->path);
		fd = target_file_open(path, false, &id, NULL);
	}
	if (fd < 0)
		return -1;
	hold_fd(fm, key, fd);
	return fd;
}

/*
 * A conversion's open of a mapped file (file_maps_replay): by the name
 * maps gave, only if it is that very file (device and inode).
 */
static int file_fd_by_name(struct file_maps *fm, const struct proc_maps_entry *e)
{
	const struct target_file_id id = { e->dev_major, e->dev_minor, e->inode };
	unsigned long long key[2];
	void *have;
	char path[PATH_MAX + 1];
	int fd;

	file_key(key, e->dev_major, e->dev_minor, e->inode);
	have = key_map_get(&fm->files, key, sizeof(key));
	if (have)
		return (int)(uintptr_t)have - 1;
	if (fm->open_files >= fm->max_open_files)
		return -1;
	snprintf(path, sizeof(path), "%.*s", (int)e->path_len, e->path);
	fd = target_file_open(path, false, &id, NULL);
	if (fd < 0)
		return -1;
	hold_fd(fm, key, fd);
	return fd;
}

/*
 * The text of /proc/PID/maps into snap: its read-only file ranges. exe:
 * the process's program (dev, inode; have_exe false: not known). idents:
 * in a conversion, each range's size and mtime as the capture saw them,
 * in order (n_idents); NULL: live, taken now. 0, or -ESRCH (none).
 */
static int parse_ranges(struct file_maps *fm, int pid, const char *text, size_t text_len, bool have_exe,
			uint64_t exe_dev, uint64_t exe_ino, const uint64_t *idents, size_t n_idents,
			struct file_maps_snap *snap)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fmemopen((void *)text, text_len, "r");

	if (!f)
		return -ENOMEM;
	while (getline(&line, &cap, f) > 0) {
		struct proc_maps_entry e;
		int fd;

		if (proc_maps_parse_line(line, &e) < 0 || e.perms[0] != 'r' || e.perms[1] == 'w' ||
		    !e.inode || !e.path_len || e.path[0] != '/')
			continue;
		fd = fm->offline ? file_fd_by_name(fm, &e) : file_fd(fm, pid, &e);
		if (fd < 0)
			continue;
		if (GROW_ARRAY(snap->v, snap->cap, snap->n, 32))
			break;
		snap->v[snap->n] = (struct file_range){ e.start, e.end, e.offset, fd, { 0 },
							have_exe && e.inode == exe_ino &&
								e.dev_major == major(exe_dev) &&
								e.dev_minor == minor(exe_dev) };
		if (!fm->offline)
			file_ident(fd, snap->v[snap->n].ident);
		else if (snap->n < n_idents)
			memcpy(snap->v[snap->n].ident, idents + 2 * snap->n, sizeof(snap->v[0].ident));
		snap->n++;
	}
	free(line);
	fclose(f);
	if (!snap->n) {
		/*
		 * An exited process (a zombie) has an empty maps file: what it
		 * mapped is what the last look saw, or (a child never looked
		 * at) its parent's (its batched events, and their literals, may
		 * still be on their way). A live process maps its program.
		 */
		free(snap->v);
		snap->v = NULL;
		return -ESRCH;
	}
	return 0;
}

/* Reads /proc/PID/maps into snap (*text: its text, for a capture). 0, or -errno (-ESRCH: none). */
static int read_ranges(struct file_maps *fm, int pid, struct file_maps_snap *snap, char **text, size_t *text_len,
		       struct stat *exe, bool *have_exe)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	*have_exe = stat(path, exe) == 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	/* Made behind the process's mmap lock, which it may hold: read by remote_read. */
	*text = remote_read_file(pid, path, text_len);
	if (!*text)
		return -errno;
	if (!*text_len) { /* an exited process (a zombie) maps nothing */
		free(*text);
		*text = NULL;
		return -ESRCH;
	}
	return parse_ranges(fm, pid, *text, *text_len, *have_exe, *have_exe ? exe->st_dev : 0,
			    *have_exe ? exe->st_ino : 0, NULL, 0, snap);
}

/* The process's entry, made if it has none; NULL without memory. */
static struct file_maps_proc *proc_entry(struct file_maps *fm, uint64_t key)
{
	struct file_maps_proc *p = key_map_get(&fm->procs, &key, sizeof(key));

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->key = key;
	key_map_put(&fm->procs, &p->key, sizeof(p->key), p);
	tb_add(&fm->bound, &p->e, &p->key, sizeof(p->key), 0);
	return p;
}

/* p grew: counted again, and the processes looked at longest ago forgotten while over budget. */
static void budget_kept(struct file_maps *fm, struct file_maps_proc *p)
{
	recount(fm, p);
	while (tb_over(&fm->bound))
		free_proc(NULL, 0, tb_evict(&fm->bound, &fm->procs), NULL);
}

/* snap as the newest of p, then the budget kept. */
static void push_snap(struct file_maps *fm, struct file_maps_proc *p, struct file_maps_snap snap)
{
	/*
	 * Full: the oldest stays (the events being read now are its), the
	 * one after it goes (the events of its epoch, still to come, will be
	 * read from the program's ranges only: counted if unreadable).
	 */
	if (p->n_snaps == FILE_MAPS_SNAPSHOTS)
		drop_snaps(p, 1, 1);
	p->snaps[p->n_snaps++] = snap;
	free(key_map_del(&fm->parents, &p->key, sizeof(p->key)));
	budget_kept(fm, p);
}

/*
 * snap in its epoch's place: before the looks of later epochs (taken
 * already, the records of the exec it is of read only now). Full: the
 * newest goes (a live process is looked at again).
 */
static void insert_snap(struct file_maps *fm, struct file_maps_proc *p, struct file_maps_snap snap)
{
	size_t at = p->n_snaps;

	while (at && epoch_before(snap.epoch, p->snaps[at - 1].epoch))
		at--;
	if (at == p->n_snaps) {
		push_snap(fm, p, snap);
		return;
	}
	if (p->n_snaps == FILE_MAPS_SNAPSHOTS)
		drop_snaps(p, p->n_snaps - 1, 1);
	memmove(&p->snaps[at + 1], &p->snaps[at], (p->n_snaps - at) * sizeof(p->snaps[0]));
	p->snaps[at] = snap;
	p->n_snaps++;
	budget_kept(fm, p);
}

/* A look's snap kept as the process's newest of its epoch (see below). 0 or -errno. */
static int keep_snap(struct file_maps *fm, int pid, struct file_maps_snap snap)
{
	struct file_maps_proc *p = proc_entry(fm, (uint32_t)pid);

	if (!p) {
		free(snap.v);
		return -ENOMEM;
	}
	/*
	 * A look again in the same epoch replaces the last one, unless this
	 * one is inexact and that one is not: the epoch moved on while it was
	 * taken, so it may show the next epoch's objects (an exec under way:
	 * the new image's), and the true look of this epoch would be lost
	 * (the look again after an attach, session_attach_process, comes
	 * just as the process, armed, runs on).
	 */
	if (p->n_snaps && p->snaps[p->n_snaps - 1].epoch == snap.epoch) {
		if (!snap.exact && p->snaps[p->n_snaps - 1].exact) {
			free(snap.v);
			return 0;
		}
		drop_snaps(p, p->n_snaps - 1, 1);
	}
	push_snap(fm, p, snap);
	return 0;
}

int file_maps_snapshot(struct file_maps *fm, int pid, const struct process_epochs *pe)
{
	struct process_look look = process_look_begin(pe, (uint32_t)pid);
	struct file_maps_snap snap = { .epoch = look.epoch };
	struct stat exe;
	bool have_exe, whole;
	char *text = NULL;
	size_t text_len = 0;
	int err = read_ranges(fm, pid, &snap, &text, &text_len, &exe, &have_exe);

	if (err < 0) {
		free(text);
		return err;
	}
	/*
	 * An exec touched the look: it may have seen the new image, which
	 * under this epoch would stand for the old one (its events' literals
	 * read from the wrong file, or unreadable). The next look, in the
	 * exec's own epoch, sees it as it is.
	 */
	whole = process_look_whole(pe, (uint32_t)pid, &look);
	snap.exact = whole && process_look_exact(pe, (uint32_t)pid, &look);
	if (capture_journal) {
		uint64_t *idents = calloc(snap.n ? snap.n : 1, 2 * sizeof(uint64_t));

		for (size_t i = 0; idents && i < snap.n; i++)
			memcpy(idents + 2 * i, snap.v[i].ident, sizeof(snap.v[i].ident));
		capture_files_flush(); /* the files this look opened, before the look itself */
		if (idents)
			capture_note_maps((uint32_t)pid, snap.epoch, whole, snap.exact, text, text_len,
					  have_exe ? exe.st_dev : 0, have_exe ? exe.st_ino : 0, idents, snap.n);
		free(idents);
	}
	free(text);
	if (!whole) {
		free(snap.v);
		return -EAGAIN;
	}
	return keep_snap(fm, pid, snap);
}

int file_maps_replay(struct file_maps *fm, uint32_t pid, uint32_t epoch, bool whole, bool exact, const char *text,
		     size_t len, uint64_t exe_dev, uint64_t exe_ino, const uint64_t *idents, size_t n_idents)
{
	struct file_maps_snap snap = { .epoch = epoch, .exact = exact };
	int err;

	fm->offline = true;
	take_handed_files(fm);
	err = parse_ranges(fm, (int)pid, text, len, exe_ino != 0, exe_dev, exe_ino, idents, n_idents, &snap);
	if (err < 0)
		return err;
	if (!whole) {
		free(snap.v);
		return -EAGAIN;
	}
	return keep_snap(fm, (int)pid, snap);
}

/*
 * The exec'd program's file: through the process while it lives (its exe
 * link; its cwd, for a relative path), else the path as the loader sees
 * it. Each is taken only if it is the file the kernel mapped (inode and
 * device), so a path that names another file here is harmless.
 */
static int open_image(uint32_t tgid, const char *path, uint64_t ino, uint32_t kdev)
{
	char exe[64], in_cwd[PATH_MAX + 64];
	const char *tries[3];
	size_t n = 0;

	snprintf(exe, sizeof(exe), "/proc/%u/exe", tgid);
	tries[n++] = exe;
	if (path[0] != '/') {
		snprintf(in_cwd, sizeof(in_cwd), "/proc/%u/cwd/%s", tgid, path);
		tries[n++] = in_cwd;
	}
	tries[n++] = path;
	for (size_t i = 0; i < n; i++) {
		const struct target_file_id id = { kdev >> 20, kdev & 0xfffff, ino };
		/* The kernel's exe link is followed; a symlink at a name the process chose is not. */
		int fd = target_file_open(tries[i], i == 0, &id, NULL);

		if (fd >= 0)
			return fd;
	}
	return -1;
}

int file_maps_hold_program(struct file_maps *fm, const char *path)
{
	unsigned long long key[2];
	struct stat st;
	int fd = target_file_open(path, true, NULL, &st);

	if (fd < 0)
		return fd;
	if (fm->open_files >= fm->max_open_files) {
		close(fd);
		return -EMFILE;
	}
	file_key(key, major(st.st_dev), minor(st.st_dev), st.st_ino);
	if (key_map_get(&fm->files, key, sizeof(key))) {
		close(fd);
		return 0;
	}
	hold_fd(fm, key, fd);
	return 0;
}

int file_maps_exec_image(struct file_maps *fm, uint32_t tgid, uint32_t epoch, const char *path,
			 uint64_t ino, uint32_t kdev, uint64_t start_code)
{
	unsigned long long key[2];
	struct exec_image_range ranges[16];
	struct file_maps_snap snap = { .epoch = epoch };
	struct file_maps_proc *p = key_map_get(&fm->procs, &(uint64_t){ tgid }, sizeof(uint64_t));
	void *have;
	int fd, n;

	/*
	 * A look at the process in this very epoch saw more than the program.
	 * One in a later epoch may be of a later exec (a loader behind a
	 * process that execs again at once): the events of this one's epochs
	 * are read from this image, set before it.
	 */
	for (size_t i = 0; p && i < p->n_snaps; i++)
		if (p->snaps[i].epoch == epoch)
			return 0;
	file_key(key, kdev >> 20, kdev & 0xfffff, ino);
	take_handed_files(fm);
	have = key_map_get(&fm->files, key, sizeof(key));
	fd = have ? (int)(uintptr_t)have - 1 : -1;
	if (fd < 0) {
		if (fm->open_files >= fm->max_open_files)
			return -EMFILE;
		fd = open_image(tgid, path, ino, kdev);
		if (fd < 0)
			return -ENOENT;
		hold_fd(fm, key, fd);
	}
	n = exec_image_ranges(fd, start_code, ranges, sizeof(ranges) / sizeof(ranges[0]));
	if (n <= 0)
		return -ENOEXEC;
	snap.v = calloc((size_t)n, sizeof(*snap.v));
	p = snap.v ? proc_entry(fm, tgid) : NULL;
	if (!p) {
		free(snap.v);
		return -ENOMEM;
	}
	snap.n = snap.cap = (size_t)n;
	for (int i = 0; i < n; i++) {
		snap.v[i] = (struct file_range){ ranges[i].start, ranges[i].end, ranges[i].offset, fd,
						  { 0 }, true };
		file_ident(fd, snap.v[i].ident);
	}
	insert_snap(fm, p, snap); /* not exact: a real look at this epoch replaces it */
	return 0;
}

bool file_maps_has_exact(const struct file_maps *fm, uint32_t tgid, uint32_t epoch)
{
	uint64_t key = tgid;
	const struct file_maps_proc *p = key_map_get(&fm->procs, &key, sizeof(key));
	const struct file_maps_snap *last = p && p->n_snaps ? &p->snaps[p->n_snaps - 1] : NULL;

	return last && last->exact && last->epoch == epoch;
}

void file_maps_read_up_to(struct file_maps *fm, uint32_t tgid, uint32_t epoch)
{
	uint64_t key = tgid;
	struct file_maps_proc *p = key_map_get(&fm->procs, &key, sizeof(key));
	size_t keep = 0;

	if (!p)
		return;
	/* The newest snapshot not after the epoch, and those after it. */
	while (keep + 1 < p->n_snaps && !epoch_before(epoch, p->snaps[keep + 1].epoch))
		keep++;
	if (keep) {
		drop_snaps(p, 0, keep);
		recount(fm, p);
	}
}

/* A child not looked at yet: whose fork it is, and the two epochs then. */
struct fork_of {
	uint32_t parent, parent_epoch, child_epoch;
};

void file_maps_fork(struct file_maps *fm, uint32_t parent, uint32_t parent_epoch, uint32_t child,
		    uint32_t child_epoch)
{
	uint64_t key = child;
	struct fork_of *f;

	/* Children forked and never looked at: past an eighth of the budget, forgotten at once. */
	if (fm->parents.count * tb_slot_cost(sizeof(key) + sizeof(*f)) > fm->bound.limit / 8) {
		tb_count_evicted(&fm->bound, fm->parents.count);
		key_map_free_with_values(&fm->parents);
	}
	if (key_map_get(&fm->procs, &key, sizeof(key)) || !(f = malloc(sizeof(*f))))
		return;
	*f = (struct fork_of){ parent, parent_epoch, child_epoch };
	free(key_map_put(&fm->parents, &key, sizeof(key), f));
}

void file_maps_exec(struct file_maps *fm, uint32_t tgid, uint32_t epoch)
{
	uint64_t key = tgid;
	struct file_maps_proc *p = key_map_get(&fm->procs, &key, sizeof(key));
	size_t old = 0;

	free(key_map_del(&fm->parents, &key, sizeof(key)));
	if (!p)
		return;
	/*
	 * The old image's go; one taken in the exec's epoch or later is of
	 * the new image (a child attached from its fork record after it had
	 * exec()d). Forgotten, it could not be taken again once the process
	 * is gone, and its batched literals, which come at its exit, would
	 * be unreadable.
	 */
	while (old < p->n_snaps && epoch_before(p->snaps[old].epoch, epoch))
		old++;
	drop_snaps(p, 0, old);
	if (p->n_snaps)
		recount(fm, p);
	forget_if_empty(fm, p);
}

/*
 * The snapshot an event of the epoch is read from: the one taken in it
 * (*exact when it was exact), else the newest before it, else the oldest.
 * A child not yet looked at: its parent's newest.
 */
static const struct file_maps_snap *find_snap(const struct file_maps *fm, uint32_t tgid,
					      uint32_t epoch, bool *exact)
{
	/*
	 * A child not looked at, in the epoch it was forked in, maps what its
	 * parent did in the parent's epoch then: that snapshot, as exact as
	 * it is. In a later epoch (a dlopen() of its own) only the parent's
	 * newest, and never exact.
	 */
	bool as_forked = true;

	*exact = false;
	for (int hops = 0; hops < 8; hops++) {
		uint64_t key = tgid;
		const struct file_maps_proc *p = key_map_get(&fm->procs, &key, sizeof(key));
		const struct fork_of *f;

		if (p && p->n_snaps) {
			size_t i = 0;

			if (!as_forked)
				return &p->snaps[p->n_snaps - 1];
			while (i + 1 < p->n_snaps && !epoch_before(epoch, p->snaps[i + 1].epoch))
				i++;
			*exact = p->snaps[i].exact && p->snaps[i].epoch == epoch;
			return &p->snaps[i];
		}
		f = key_map_get(&fm->parents, &key, sizeof(key));
		if (!f)
			return NULL;
		as_forked = as_forked && f->child_epoch == epoch;
		tgid = f->parent;
		epoch = f->parent_epoch;
	}
	return NULL;
}

ssize_t file_maps_read_str(const struct file_maps *fm, uint32_t tgid, uint32_t epoch, bool any,
			   uint64_t addr, char *buf, size_t max, bool *truncated)
{
	bool exact;
	const struct file_maps_snap *p = find_snap(fm, tgid, epoch, &exact);
	const struct file_range *r = NULL;
	size_t got = 0;

	*truncated = false;
	for (size_t i = 0; p && i < p->n && !r; i++)
		if (addr >= p->v[i].start && addr < p->v[i].end)
			r = &p->v[i];
	if (!r || !(exact || any || r->program))
		return -1;
	{
		uint64_t now[2];

		file_ident(r->fd, now);
		if (memcmp(now, r->ident, sizeof(now)))
			return -1; /* rewritten since: its bytes would be another file's */
	}
	while (got < max + 1 && addr + got < r->end) {
		char chunk[4096];
		size_t want = max + 1 - got;
		ssize_t n;
		char *nul;

		if (want > sizeof(chunk))
			want = sizeof(chunk);
		if (want > r->end - (addr + got))
			want = r->end - (addr + got);
		n = pread(r->fd, chunk, want, (off_t)(r->offset + addr + got - r->start));
		if (n <= 0)
			return -1; /* past the file's end: the mapping reads zeros, or SIGBUS */
		nul = memchr(chunk, '\0', (size_t)n);
		if (nul) {
			size_t take = (size_t)(nul - chunk);

			if (got + take > max)
				take = max - got;
			memcpy(buf + got, chunk, take);
			return (ssize_t)(got + take);
		}
		if (got + (size_t)n > max) {
			memcpy(buf + got, chunk, max - got);
			*truncated = true;
			return (ssize_t)max;
		}
		memcpy(buf + got, chunk, (size_t)n);
		got += (size_t)n;
	}
	if (!got)
		return -1;
	/* No NUL before the mapping's end: cut there, and said so. */
	*truncated = true;
	return (ssize_t)got;
}

