// SPDX-License-Identifier: MIT
#include "lib/proc_info.h"
#include "attach/proc_maps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ingest/remote_read.h"

/* Reads a whole small /proc file into a malloc'd, NUL-terminated buffer. */
static char *read_file(const char *path, size_t *len_out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		if (len == cap) {
			char *bigger = cap < (1u << 24) ? realloc(buf, cap * 2 + 1) : NULL;

			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	return buf;
}

static void read_link(const char *path, char *out, size_t len)
{
	ssize_t n = readlink(path, out, len - 1);

	out[n > 0 ? n : 0] = '\0';
}

static void trim_newline(char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		s[n - 1] = '\0';
}

/* The first number of /proc/PID/status's line `field` ("\nUid:"; Name: comes first and holds no newline). */
static bool status_number(int pid, const char *field, unsigned *value)
{
	char path[64], *text, *line;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_file(path, NULL);
	if (!text)
		return false;
	line = strstr(text, field);
	found = line && sscanf(line + strlen(field), "%u", value) == 1;
	free(text);
	return found;
}

bool proc_real_uid(int pid, unsigned *uid)
{
	return status_number(pid, "\nUid:", uid); /* "Uid:\treal\teffective\tsaved\tfs" */
}

bool proc_parent_pid(int pid, unsigned *ppid)
{
	return status_number(pid, "\nPPid:", ppid);
}

/*
 * How much of /proc/PID/cmdline's s[0..len) is arguments. A program that
 * retitled itself (setproctitle: redis, nginx, postgres) wrote its title
 * over its argument area, which the kernel returns whole: the title, the
 * NULs it padded with, and after them maybe the tail of the old arguments.
 * The command line ends at its first two empty strings in a row (padding;
 * a command line of real empty arguments so rarely has them that the
 * title matters more), and loses the empty strings at its end.
 */
static size_t cmdline_args_len(const char *s, size_t len)
{
	const char *padding = memmem(s, len, "\0\0\0", 3);

	if (padding)
		len = (size_t)(padding - s) + 1;
	while (len >= 2 && !s[len - 1] && !s[len - 2])
		len--;
	return len;
}

bool proc_exited(int pid)
{
	char path[64], *text, *p;
	bool gone = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = read_file(path, NULL);
	if (!text)
		return true;
	p = strrchr(text, ')'); /* the state follows the comm, which may hold ')' */
	if (p && p[1] == ' ' && p[2] && p[2] != 'Z' && p[2] != 'X')
		gone = false;
	free(text);
	return gone;
}

int proc_facts_read(int pid, struct proc_facts *f)
{
	char path[64], *text, *p;
	long ticks = sysconf(_SC_CLK_TCK);

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->ns_pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = read_file(path, NULL);
	if (!text)
		return -ESRCH;
	/* comm may hold spaces and ')': the fields after it start at the last ')'. */
	p = strrchr(text, ')');
	if (p) {
		unsigned long long start = 0;
		/* after ") ": state(3) ... starttime is field 22 */
		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &start) == 1 && ticks > 0)
			f->start_boottime_ns = start * (1000000000ull / (unsigned long long)ticks);
	}
	free(text);

	if (!proc_comm(pid, f->comm, sizeof(f->comm)))
		f->comm[0] = '\0';
	if (proc_maps_exe(pid, f->exe, sizeof(f->exe)) < 0)
		f->exe[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	read_link(path, f->cwd, sizeof(f->cwd));
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f->cmdline = remote_read_file(pid, path, &f->cmdline_len); /* behind its mmap lock */
	if (f->cmdline)
		f->cmdline_len = cmdline_args_len(f->cmdline, f->cmdline_len);

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_file(path, NULL);
	if (text) {
		/* NSpid lists the pid in each nested namespace; the last is innermost. */
		char *line = strstr(text, "\nNSpid:");
		if (line) {
			char *end = strchr(line + 1, '\n');
			char *tok = line + 7;
			if (end)
				*end = '\0';
			for (char *s; (s = strtok(tok, " \t")); tok = NULL)
				f->ns_pid = atoi(s);
		}
		free(text);
	}
	return 0;
}

void proc_facts_free(struct proc_facts *f)
{
	free(f->cmdline);
	f->cmdline = NULL;
}

bool proc_thread_comm(int pid, int tid, char *buf, size_t len)
{
	char path[80];
	char *text;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	text = read_file(path, NULL);
	if (!text)
		return false;
	trim_newline(text);
	snprintf(buf, len, "%s", text);
	free(text);
	return true;
}

bool proc_each_thread(int pid, void (*fn)(void *ctx, int tid, const char *comm), void *ctx)
{
	char path[48], comm[32];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		int tid = (int)strtol(d->d_name, NULL, 10);

		if (tid > 0 && proc_thread_comm(pid, tid, comm, sizeof(comm)))
			fn(ctx, tid, comm);
	}
	closedir(dir);
	return true;
}

ssize_t proc_read_str(int pid, uint64_t addr, char *buf, size_t max,
		      bool *truncated)
{
	size_t got = 0;

	*truncated = false;
	if (!addr)
		return -1;
	/* Page by page: a string may end just before an unmapped page. */
	while (got < max + 1) {
		size_t page_left = 4096 - ((addr + got) & 4095);
		size_t want = max + 1 - got < page_left ? max + 1 - got : page_left;
		char chunk[4096];
		ssize_t n = remote_read(pid, chunk, addr + got, want); /* never stalls (remote_read.h) */
		char *nul;

		if (n <= 0 && got) {
			/* No NUL before an unreadable page: what we have is cut, not whole. */
			*truncated = true;
			return (ssize_t)got;
		}
		if (n <= 0)
			return -1;
		nul = memchr(chunk, '\0', n);
		if (nul) {
			size_t take = nul - chunk;
			if (got + take > max)
				take = max - got;
			memcpy(buf + got, chunk, take);
			return got + take;
		}
		if (got + n > max) {
			memcpy(buf + got, chunk, max - got);
			*truncated = true;
			return max;
		}
		memcpy(buf + got, chunk, n);
		got += n;
	}
	*truncated = true;
	return max;
}
