/* SPDX-License-Identifier: MIT */
/*
 * proc_maps.c - the files mapped into a process (see proc_maps.h).
 *
 * A line of /proc/PID/maps, as the kernel prints it:
 *
 *     7f3c1a200000-7f3c1a228000 r-xp 00028000 fd:01 1835023    /usr/lib/x.so
 *
 * start-end perms offset major:minor inode, then padding and the path (which
 * may contain spaces, ends at the newline, and gets " (deleted)" appended once
 * the file is unlinked). The numbers are parsed strictly by hand rather than
 * with sscanf, whose behaviour on out-of-range numbers is undefined.
 */
#include "attach/proc_maps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/grow_array.h"
#include "ingest/remote_read.h"
#include "ingest/target_file.h"

#define DELETED_SUFFIX " (deleted)"

/* Reads a hex number of at most `max`; moves *p past it. */
static int parse_hex(const char **p, unsigned long long max,
		     unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;

	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (x > (max - d) / 16)
			return -EINVAL;
		x = x * 16 + d;
	}
	if (s == *p)
		return -EINVAL;
	*p = s;
	*v = x;
	return 0;
}

/* Reads a decimal number; moves *p past it. */
static int parse_dec(const char **p, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (~0ULL - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	if (s == *p)
		return -EINVAL;
	*p = s;
	*v = x;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int proc_maps_parse_line(const char *line, struct proc_maps_entry *e)
{
	static const char perm_chars[4][3] = { "r-", "w-", "x-", "ps" };
	unsigned long long start, end, major, minor;
	const char *p = line;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, ~0UL, &start) || expect(&p, '-') ||
	    parse_hex(&p, ~0UL, &end) || expect(&p, ' ') || start >= end)
		return -EINVAL;
	for (int i = 0; i < 4; i++, p++) {
		if (*p == '\0' || !strchr(perm_chars[i], *p))
			return -EINVAL;
		e->perms[i] = *p;
	}
	if (expect(&p, ' ') || parse_hex(&p, ~0ULL, &e->offset) ||
	    expect(&p, ' ') || parse_hex(&p, ~0U, &major) || expect(&p, ':') ||
	    parse_hex(&p, ~0U, &minor) || expect(&p, ' ') ||
	    parse_dec(&p, &e->inode))
		return -EINVAL;
	e->start = (unsigned long)start;
	e->end = (unsigned long)end;
	e->dev_major = (unsigned)major;
	e->dev_minor = (unsigned)minor;

	/* Anonymous mappings end after the inode (and maybe one space). */
	if (*p != '\0' && *p != '\n' && expect(&p, ' '))
		return -EINVAL;
	while (*p == ' ')
		p++;
	e->path = p;
	e->path_len = strcspn(p, "\n");
	return 0;
}

void mapped_object_list_free(struct mapped_object_list *l)
{
	if (!l)
		return;
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int mapped_object_open(const struct mapped_object *o)
{
	const struct target_file_id id = { o->dev_major, o->dev_minor, o->inode };

	/* Followed: host_path may be a kernel link (map_files), and only the mapped file is taken. */
	return target_file_open(o->host_path, true, &id, NULL);
}

static bool same_file(const struct stat *st, const struct mapped_object *o)
{
	return st->st_ino == o->inode && major(st->st_dev) == o->dev_major &&
	       minor(st->st_dev) == o->dev_minor;
}

/*
 * Adds one mapping to its object, or makes a new object for it. exec[i] says
 * whether object i has an executable mapping (objects without one are
 * dropped at the end).
 */
static int add_mapping(struct mapped_object_list *l, bool **exec, size_t *cap,
		       const struct proc_maps_entry *e)
{
	struct mapped_object *o;

	for (size_t i = 0; i < l->n; i++) {
		o = &l->v[i];
		if (o->inode == e->inode && o->dev_major == e->dev_major &&
		    o->dev_minor == e->dev_minor &&
		    strlen(o->path) == e->path_len &&
		    memcmp(o->path, e->path, e->path_len) == 0) {
			(*exec)[i] |= e->perms[2] == 'x';
			return 0;
		}
	}
	if (l->n == *cap) {
		size_t cap_v = *cap, cap_x = *cap;

		/* Two arrays, one capacity: it is raised once both have grown. */
		if (GROW_ARRAY(l->v, cap_v, l->n, 32) || GROW_ARRAY(*exec, cap_x, l->n, 32))
			return -ENOMEM;
		*cap = cap_v;
	}
	(*exec)[l->n] = e->perms[2] == 'x';
	o = &l->v[l->n++];
	memset(o, 0, sizeof(*o));
	memcpy(o->path, e->path, e->path_len);
	o->path[e->path_len] = '\0';
	o->inode = e->inode;
	o->dev_major = e->dev_major;
	o->dev_minor = e->dev_minor;
	o->map_start = e->start;
	o->map_end = e->end;
	return 0;
}

/*
 * Chooses the path the tracer opens. /proc/PID/root + path is the file the
 * target would open by that name, also across mount namespaces; it is used
 * only if it is still the mapped file (same inode and device). Otherwise the
 * file was deleted or replaced (or the name was escaped by the kernel), and
 * map_files names the mapped file itself (root only, which the tracer is).
 */
static void resolve_object(int pid, struct mapped_object *o)
{
	static const char suffix[] = DELETED_SUFFIX;
	const size_t slen = sizeof(suffix) - 1;
	size_t len = strlen(o->path);
	struct stat st;

	snprintf(o->host_path, sizeof(o->host_path), "/proc/%d/root%s", pid,
		 o->path);
	if (stat(o->host_path, &st) == 0 && same_file(&st, o))
		return;

	o->deleted = true;
	if (len >= slen && strcmp(o->path + len - slen, suffix) == 0)
		o->path[len - slen] = '\0';
	/* The kernel names map_files entries with %lx, no leading zeros. */
	snprintf(o->host_path, sizeof(o->host_path), "/proc/%d/map_files/%lx-%lx",
		 pid, o->map_start, o->map_end);
}

/* -ESRCH if /proc/PID is gone, else `rc`. */
static int gone_or(int pid, int rc)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return access(dir, F_OK) && errno == ENOENT ? -ESRCH : rc;
}

int proc_maps_objects(int pid, struct mapped_object_list *out)
{
	char fname[48];
	struct stat exe_st;
	bool have_exe;
	char *line = NULL, *text;
	size_t text_len;
	bool *exec = NULL;
	size_t linecap = 0, cap = 0, kept = 0;
	FILE *fp;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (pid <= 0)
		return -EINVAL;
	snprintf(fname, sizeof(fname), "/proc/%d/maps", pid);
	/* Made behind the process's mmap lock, which it may hold: read by remote_read. */
	text = remote_read_file(pid, fname, &text_len);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	if (!text_len) { /* an exited process (a zombie) maps nothing */
		free(text);
		return -ESRCH;
	}
	fp = fmemopen(text, text_len, "r");
	if (!fp) {
		free(text);
		return -ENOMEM;
	}

	while (getline(&line, &linecap, fp) > 0) {
		struct proc_maps_entry e;

		if (proc_maps_parse_line(line, &e)) {
			rc = -EINVAL;
			break;
		}
		/* Anonymous memory and [heap], [vdso], ...: no file to trace. */
		if (e.inode == 0 || e.path_len == 0 || e.path[0] != '/')
			continue;
		if (e.path_len >= sizeof(out->v[0].path))
			continue; /* cannot be named: skip rather than truncate */
		if ((rc = add_mapping(out, &exec, &cap, &e)))
			break;
	}
	if (!rc && ferror(fp))
		rc = gone_or(pid, errno ? -errno : -EIO);
	free(line);
	fclose(fp);
	free(text);
	/*
	 * No file mapped at all: an exited process (a zombie, or one that
	 * exited while we read) or a kernel thread. Nothing to trace either way.
	 */
	if (!rc && out->n == 0)
		rc = -ESRCH;
	/* Keep the files that have executable code, in order. */
	for (size_t i = 0; !rc && i < out->n; i++)
		if (exec[i])
			out->v[kept++] = out->v[i];
	free(exec);
	if (rc) {
		mapped_object_list_free(out);
		return rc;
	}
	out->n = kept;

	snprintf(fname, sizeof(fname), "/proc/%d/exe", pid);
	have_exe = stat(fname, &exe_st) == 0;
	for (size_t i = 0; i < out->n; i++) {
		struct mapped_object *o = &out->v[i];

		resolve_object(pid, o);
		o->is_exe = have_exe && same_file(&exe_st, o);
	}
	return 0;
}

int proc_maps_exe(int pid, char *buf, size_t len)
{
	char fname[32];
	ssize_t n;

	if (pid <= 0 || len == 0)
		return -EINVAL;
	snprintf(fname, sizeof(fname), "/proc/%d/exe", pid);
	n = readlink(fname, buf, len);
	if (n < 0)
		/* ENOENT: gone, or a kernel thread (which has no executable). */
		return errno == ENOENT ? gone_or(pid, -ENOENT) : -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}
