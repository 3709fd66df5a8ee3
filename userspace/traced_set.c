// SPDX-License-Identifier: MIT
#include "traced_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "json_writer.h"
#include "trace_file.h"

/* Fields 3 (state) and 22 (starttime) of /proc/PID/stat; false when it is gone. */
static bool read_stat(int pid, char *state, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces and ')': the fields after it start at the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 state, &start) != 2)
		return false;
	*ticks = start;
	return true;
}

bool traced_set_start_ticks(int pid, uint64_t *ticks)
{
	char state;

	return read_stat(pid, &state, ticks);
}

int traced_set_add(int map_fd, int pid)
{
	__u32 key = (__u32)pid;
	uint64_t start;

	if (!traced_set_start_ticks(pid, &start))
		return -ESRCH;
	if (bpf_map_update_elem(map_fd, &key, &start, BPF_ANY))
		return -errno;
	return 0;
}

bool traced_set_any_alive(int map_fd)
{
	__u32 key, next, *prev = NULL;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		uint64_t start, now;
		char state;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &start))
			continue; /* removed at its exit meanwhile */
		if (read_stat((int)key, &state, &now) && now == start) {
			if (state != 'Z' && state != 'X')
				return true;
			continue; /* exited, not yet reaped */
		}
		/*
		 * Another process has the pid now, or none: the loader put it in
		 * after its exit, when the kernel could no longer remove it.
		 */
		bpf_map_delete_elem(map_fd, &key);
		prev = NULL; /* the walk starts again without it */
	}
	return false;
}

void traced_set_report_full(struct trace_file *tf, uint32_t pid, uint64_t ts_ns,
			    uint64_t count, uint64_t total)
{
	static const char name[] = "ctrace: processes not traced";

	te_begin(tf, "I", pid, pid, ts_ns);
	te_name(tf, name, sizeof(name) - 1, 0);
	jw_lit(tf->w, ",\"cat\":\"ctrace\",\"s\":\"g\",\"args\":{\"count\":");
	jw_u64(tf->w, count);
	jw_lit(tf->w, ",\"total\":");
	jw_u64(tf->w, total);
	jw_lit(tf->w, ",\"why\":\"the table of traced processes was full\"}");
	te_end(tf);
}
