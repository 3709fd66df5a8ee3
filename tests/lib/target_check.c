// SPDX-License-Identifier: MIT
/* target_check.c - see target_check.h. */
#include "target_check.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* Compares one mapping [start, end) at file offset off with the file. */
static long diff_mapping(int mem, const char *path, unsigned long start,
			 unsigned long end, unsigned long off)
{
	char a[65536], b[65536];
	long diff = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (unsigned long at = start; at < end; at += sizeof(a)) {
		size_t want = end - at < sizeof(a) ? end - at : sizeof(a);
		ssize_t got_mem = pread(mem, a, want, (off_t)at);
		ssize_t got_file = pread(fd, b, want, (off_t)(off + (at - start)));

		if (got_mem < 0) {
			close(fd);
			return -1;
		}
		/* A mapping may reach past the file's end: compare what both have. */
		for (ssize_t i = 0; i < got_mem && i < got_file; i++)
			diff += a[i] != b[i];
		if (got_file < (ssize_t)want)
			break;
	}
	close(fd);
	return diff;
}

long tc_code_diff(pid_t pid, char *why, size_t why_len)
{
	char path[64], line[4096];
	long total = 0;
	FILE *maps;
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (!maps || mem < 0) {
		snprintf(why, why_len, "cannot read process %d: %s", (int)pid, strerror(errno));
		if (maps)
			fclose(maps);
		if (mem >= 0)
			close(mem);
		return -1;
	}
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, off;
		char perms[8], file[4096] = "";
		long d;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &start, &end, perms, &off,
			   file) < 4)
			continue;
		/* Executable mappings of files; [vdso] and the kernel's uprobe
		 * trampoline page are not files. */
		if (perms[2] != 'x' || file[0] != '/' || strstr(file, " (deleted)"))
			continue;
		d = diff_mapping(mem, file, start, end, off);
		if (d < 0) {
			snprintf(why, why_len, "cannot compare %s with process %d's code: %s", file,
				 (int)pid, strerror(errno));
			total = -1;
			break;
		}
		total += d;
	}
	fclose(maps);
	close(mem);
	return total;
}

bool tc_printed(const struct trace_run *r, const char *prefix)
{
	char *out = tr_read_file(r->prog.out_path, NULL), *l = out;
	bool found = false;

	while (l && *l && !found) {
		char *nl = strchr(l, '\n');

		if (!nl)
			break; /* only complete lines */
		found = !strncmp(l, prefix, strlen(prefix));
		l = nl + 1;
	}
	free(out);
	return found;
}

size_t tc_count_lines(const char *path, const char *prefix)
{
	char *text = tr_read_file(path, NULL), *l = text;
	size_t n = 0;

	while (l && *l) {
		char *nl = strchr(l, '\n');

		if (!nl)
			break;
		n += !strncmp(l, prefix, strlen(prefix));
		l = nl + 1;
	}
	free(text);
	return n;
}

bool tc_wait_file_has(const char *path, const char *needle, int timeout_ms)
{
	for (int waited = 0;; waited += 5) {
		char *text = tr_read_file(path, NULL);
		bool has = text && strstr(text, needle);

		free(text);
		if (has)
			return true;
		if (waited >= timeout_ms)
			return false;
		usleep(5000);
	}
}

int tc_run_fix(struct tr_cmd *res, const char *const *args)
{
	return tr_run_tracer(res, NULL, "fix", args, 20000);
}

void tc_start_faulty(struct trace_run *r, const char *const *prog_args,
		     const char *const *tracer_args)
{
	tr_require_root();
	if (tr_init(r) < 0 || tr_start_program(r, "faulty", prog_args) < 0 ||
	    tr_wait_line(r, "ready", 10000) < 0 || tr_start_tracer(r, tracer_args) < 0 ||
	    tr_wait_line(r, "armed", 10000) < 0)
		fail_msg("%s", r->error);
}

void tc_assert_unharmed(struct trace_run *r)
{
	char why[256];
	long diff;

	if (tr_wait_line(r, "disarmed", 5000) < 0)
		fail_msg("the target still sees a tracer after it went: %s", r->error);
	diff = tc_code_diff(r->prog.pid, why, sizeof(why));
	if (diff != 0)
		fail_msg("the target's code still differs from its files in %ld bytes%s%s", diff,
			 diff < 0 ? ": " : " (a uprobe left behind)", diff < 0 ? why : "");
	if (kill(r->prog.pid, 0) != 0)
		fail_msg("the target is gone");
	if (tr_reap(&r->prog, 10000) < 0)
		fail_msg("the target did not finish on its own");
	if (tr_exit_code(&r->prog) != 0)
		fail_msg("the target exited %d after the tracer went", tr_exit_code(&r->prog));
}

size_t tc_count(const struct trace_run *r, const char *ph, const char *name)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, r->events) {
		const char *p = tr_str(ev, "ph"), *nm = tr_str(ev, "name");

		n += p && nm && !strcmp(p, ph) && !strcmp(nm, name);
	}
	return n;
}
