/* SPDX-License-Identifier: MIT */
/*
 * test_proc_maps.c - proc_maps_objects() on live processes: this test itself
 * (its executable and libc), and a child that maps a library whose name has
 * spaces, a library deleted after loading, a file whose name really ends in
 * " (deleted)" and a plain data file. Also processes that are gone, and the
 * line parser on good and malformed lines.
 *
 * Runs from the repository root (as `make unit-test` does) and needs cc; the
 * map_files checks need root (which the tracer is), else they are skipped.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "attach/proc_maps.h"
#include "attach/usdt_notes.h"

static char dir[64]; /* mkdtemp: the child's files */

/* The child's files: the libraries are tests/programs/probe_sites.c. */
#define LIB_SPACE "lib with space.so"
#define LIB_GONE "gone lib.so"
#define LIB_FAKE "fake lib.so (deleted)" /* not deleted at all */
#define DATA_FILE "data.bin"

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctrace-maps-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (run("cc -O2 -Iinclude -shared -fPIC tests/programs/probe_sites.c "
		"-o '%s/" LIB_SPACE "' && cp '%s/" LIB_SPACE "' '%s/" LIB_GONE
		"' && cp '%s/" LIB_SPACE "' '%s/" LIB_FAKE "' && "
		"head -c 8192 /dev/zero > '%s/" DATA_FILE "'",
		dir, dir, dir, dir, dir, dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (strncmp(dir, "/tmp/ctrace-maps-", 17) == 0)
		run("rm -rf '%s'", dir);
	return 0;
}

static const struct mapped_object *find_path(const struct mapped_object_list *l,
					     const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].path, path) == 0)
			return &l->v[i];
	return NULL;
}

/* host_path opens, and is the very file the maps line names. */
static void assert_same_file(const struct mapped_object *o)
{
	struct stat st;
	int fd = open(o->host_path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, o->inode);
	assert_int_equal(major(st.st_dev), o->dev_major);
	assert_int_equal(minor(st.st_dev), o->dev_minor);
	close(fd);
}

/* Every entry names a file once, by an absolute path. */
static void assert_well_formed(const struct mapped_object_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		assert_true(l->v[i].path[0] == '/');
		assert_true(l->v[i].inode != 0);
		assert_true(l->v[i].map_start < l->v[i].map_end);
		for (size_t j = i + 1; j < l->n; j++)
			assert_false(l->v[i].inode == l->v[j].inode &&
				     l->v[i].dev_major == l->v[j].dev_major &&
				     l->v[i].dev_minor == l->v[j].dev_minor &&
				     !strcmp(l->v[i].path, l->v[j].path));
	}
}

static void test_self(void **state)
{
	struct mapped_object_list l = { 0 };
	const struct mapped_object *exe = NULL, *libc = NULL;
	char self[PATH_MAX], buf[PATH_MAX], want[PATH_MAX + 32];
	ssize_t n;
	int pid = (int)getpid();

	(void)state;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_int_equal(proc_maps_exe(pid, buf, sizeof(buf)), 0);
	assert_string_equal(buf, self);
	assert_int_equal(proc_maps_exe(pid, buf, 4), -ENAMETOOLONG);

	assert_int_equal(proc_maps_objects(pid, &l), 0);
	assert_true(l.n >= 2);
	assert_well_formed(&l);
	for (size_t i = 0; i < l.n; i++) {
		const char *base = strrchr(l.v[i].path, '/') + 1;

		if (l.v[i].is_exe) {
			assert_null(exe); /* exactly one */
			exe = &l.v[i];
		}
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5))
			libc = &l.v[i];
		assert_false(l.v[i].deleted);
		snprintf(want, sizeof(want), "/proc/%d/root%s", pid, l.v[i].path);
		assert_string_equal(l.v[i].host_path, want);
		assert_same_file(&l.v[i]);
	}
	assert_non_null(exe);
	assert_string_equal(exe->path, self);
	assert_ptr_equal(exe, &l.v[0]); /* mapped first, listed first */
	assert_non_null(libc);
	assert_false(libc->is_exe);

	/* What the tracer does next: read the notes through host_path. */
	{
		struct usdt_note_list notes;
		char err[256];
		int fd = open(libc->host_path, O_RDONLY);

		assert_int_equal(usdt_notes_read(libc->host_path, &notes, err,
						 sizeof(err)),
				 0);
		for (size_t i = 0; i < notes.n; i++) /* glibc's own SDT probes */
			assert_false(usdt_is_ctrace_site(fd, notes.v[i].site_offset));
		close(fd);
		usdt_note_list_free(&notes);
	}
	mapped_object_list_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
	mapped_object_list_free(NULL);
}

static void test_no_such_process(void **state)
{
	struct mapped_object_list l = { 0 };
	char buf[PATH_MAX];
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(proc_maps_objects(INT_MAX, &l), -ESRCH);
	assert_null(l.v);
	assert_int_equal(proc_maps_exe(INT_MAX, buf, sizeof(buf)), -ESRCH);
	assert_int_equal(proc_maps_objects(0, &l), -EINVAL);
	assert_int_equal(proc_maps_objects(-1, &l), -EINVAL);

	/* A zombie: /proc/PID is there, the memory is not. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	for (int i = 0; i < 1000; i++) {
		char path[64], line[256] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_non_null(fgets(line, sizeof(line), f));
		fclose(f);
		if (strstr(line, ") Z "))
			break;
		usleep(1000);
	}
	assert_int_equal(proc_maps_objects((int)child, &l), -ESRCH);
	assert_int_equal(proc_maps_exe((int)child, buf, sizeof(buf)), -ENOENT);

	/* Reaped: gone entirely. */
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(proc_maps_objects((int)child, &l), -ESRCH);
	assert_int_equal(proc_maps_exe((int)child, buf, sizeof(buf)), -ESRCH);
}

/* The child: maps everything, reports, waits for the parent to finish. */
static void child_main(int ready_fd, int done_fd)
{
	static const char *libs[] = { LIB_SPACE, LIB_GONE, LIB_FAKE };
	char path[PATH_MAX], c = 0;
	int fd;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, libs[i]);
		if (!dlopen(path, RTLD_NOW))
			_exit(2);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, DATA_FILE);
	fd = open(path, O_RDONLY);
	if (fd < 0 || mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		_exit(3);
	if (write(ready_fd, &c, 1) != 1)
		_exit(4);
	/* Returns when the parent closes its end. */
	while (read(done_fd, &c, 1) > 0)
		;
	_exit(0);
}

static void test_child_objects(void **state)
{
	struct mapped_object_list l = { 0 };
	const struct mapped_object *o;
	char path[PATH_MAX], want[PATH_MAX + 32], c;
	int ready[2], done[2], status;
	pid_t child;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(ready[0]);
		close(done[1]);
		child_main(ready[1], done[0]);
	}
	close(ready[1]);
	close(done[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);

	/* Deleted after it was mapped, as a package upgrade does. */
	snprintf(path, sizeof(path), "%s/%s", dir, LIB_GONE);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(proc_maps_objects((int)child, &l), 0);
	assert_well_formed(&l);

	/* A name with spaces, reached through the child's root. */
	snprintf(path, sizeof(path), "%s/%s", dir, LIB_SPACE);
	o = find_path(&l, path);
	assert_non_null(o);
	assert_false(o->deleted);
	assert_false(o->is_exe);
	snprintf(want, sizeof(want), "/proc/%d/root%s", (int)child, path);
	assert_string_equal(o->host_path, want);
	assert_same_file(o);

	/* A name that only looks deleted keeps its suffix. */
	snprintf(path, sizeof(path), "%s/%s", dir, LIB_FAKE);
	o = find_path(&l, path);
	assert_non_null(o);
	assert_false(o->deleted);
	assert_same_file(o);

	/* The deleted one: its old name, reached through map_files. */
	snprintf(path, sizeof(path), "%s/%s", dir, LIB_GONE);
	o = find_path(&l, path);
	assert_non_null(o);
	assert_true(o->deleted);
	snprintf(want, sizeof(want), "/proc/%d/map_files/%lx-%lx", (int)child,
		 o->map_start, o->map_end);
	assert_string_equal(o->host_path, want);
	if (geteuid() == 0) {
		struct usdt_note_list notes;
		char err[256];
		int fd;

		assert_same_file(o);
		/* Its probes are still readable, and still ctrace sites. */
		assert_int_equal(usdt_notes_read(o->host_path, &notes, err,
						 sizeof(err)),
				 0);
		assert_true(notes.n >= 7);
		fd = open(o->host_path, O_RDONLY);
		for (size_t i = 0; i < notes.n; i++)
			assert_true(usdt_is_ctrace_site(fd, notes.v[i].site_offset));
		close(fd);
		usdt_note_list_free(&notes);
	}

	/* A data file has no executable mapping: not listed. */
	snprintf(path, sizeof(path), "%s/%s", dir, DATA_FILE);
	assert_null(find_path(&l, path));

	/* The child's executable is this test binary. */
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].is_exe) {
			char self[PATH_MAX];
			ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

			assert_true(n > 0);
			self[n] = '\0';
			assert_string_equal(l.v[i].path, self);
		}

	mapped_object_list_free(&l);
	close(done[1]);
	close(ready[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_parse_line(void **state)
{
	struct proc_maps_entry e;
	static const char *bad[] = {
		"",
		"\n",
		"7f00-7f10",
		"7f00-7f10 r-xp",
		"7f00-7f10 r-xp 00000000 08:01",
		"7f00-7f10 r-xp 00000000 08:01 \n",
		"7f00 7f10 r-xp 00000000 08:01 5 /x",
		"7f10-7f00 r-xp 00000000 08:01 5 /x",      /* start > end */
		"7f00-7f00 r-xp 00000000 08:01 5 /x",      /* empty */
		"7f00-7f10 rwxq 00000000 08:01 5 /x",      /* bad perm */
		"7f00-7f10 r-x 00000000 08:01 5 /x",       /* short perms */
		"7f00-7f10 r-xp 0000000g 08:01 5 /x",
		"7f00-7f10 r-xp 00000000 08-01 5 /x",
		"7f00-7f10 r-xp 00000000 08:01 5x /x",
		"7f00-7f10 r-xp 00000000 08:01 -5 /x",
		"7f00-7f10 r-xp 00000000 108000000:01 5 /x", /* major > 32 bits */
		"7f00-7f10 r-xp 00000000 08:01 99999999999999999999 /x",
		"17f00000000000000-27f00000000000000 r-xp 0 08:01 5 /x",
		"-7f00-7f10 r-xp 00000000 08:01 5 /x",
		" 7f00-7f10 r-xp 00000000 08:01 5 /x",
	};

	(void)state;
	assert_int_equal(proc_maps_parse_line(
				 "5581a9a00000-5581a9a28000 r-xp 00028000 fd:01 1835023"
				 "                    /usr/lib/a b  c.so (deleted)\n",
				 &e),
			 0);
	assert_int_equal(e.start, 0x5581a9a00000UL);
	assert_int_equal(e.end, 0x5581a9a28000UL);
	assert_string_equal(e.perms, "r-xp");
	assert_int_equal(e.offset, 0x28000);
	assert_int_equal(e.dev_major, 0xfd);
	assert_int_equal(e.dev_minor, 1);
	assert_int_equal(e.inode, 1835023);
	assert_int_equal(e.path_len, strlen("/usr/lib/a b  c.so (deleted)"));
	assert_memory_equal(e.path, "/usr/lib/a b  c.so (deleted)", e.path_len);

	/* Anonymous: ends after the inode, with or without a space. */
	assert_int_equal(proc_maps_parse_line("7f00-7f10 rw-p 00000000 00:00 0 \n", &e), 0);
	assert_int_equal(e.path_len, 0);
	assert_int_equal(proc_maps_parse_line("7f00-7f10 rw-p 00000000 00:00 0", &e), 0);
	assert_int_equal(e.path_len, 0);
	assert_int_equal(proc_maps_parse_line(
				 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				 "                  [vsyscall]",
				 &e),
			 0);
	assert_int_equal(e.path_len, strlen("[vsyscall]"));
	/* Device minors over 255 print with more digits. */
	assert_int_equal(proc_maps_parse_line("1000-2000 r--s 0 00:1a5 7 /dev/shm/x", &e), 0);
	assert_int_equal(e.dev_minor, 0x1a5);
	assert_string_equal(e.perms, "r--s");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (proc_maps_parse_line(bad[i], &e) != -EINVAL)
			fail_msg("accepted: \"%s\"", bad[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_no_such_process),
		cmocka_unit_test(test_child_objects),
		cmocka_unit_test(test_parse_line),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
