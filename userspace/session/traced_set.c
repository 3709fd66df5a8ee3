// SPDX-License-Identifier: MIT
#include "session/traced_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "model/trace_event.h"

#define PF_EXITING 0x00000004 /* include/linux/sched.h: not in the uapi headers */

/*
 * Fields 3 (state), 9 (flags) and 22 (starttime) of /proc/PID/stat; false
 * when it is gone. A leader that exited while other threads run shows as a
 * zombie: its state is then 'R' here (field 20, num_threads, counts it and
 * them). A process inside its exit (PF_EXITING, its last thread) is 'X':
 * its exit notice may have gone by, and on 6.18 freeing its memory comes
 * after that notice and lasts milliseconds.
 */
static bool read_stat(int pid, char *state, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	unsigned int flags;
	long threads;
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
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld %*d %llu",
			 state, &flags, &threads, &start) != 4)
		return false;
	if (*state == 'Z' && threads > 1)
		*state = 'R';
	else if ((flags & PF_EXITING) && threads <= 1)
		*state = 'X';
	*ticks = start;
	return true;
}

bool traced_set_start_ticks(int pid, uint64_t *ticks)
{
	char state;

	return read_stat(pid, &state, ticks);
}

uint64_t traced_set_ns_per_tick(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000;
}

/* Living (not a zombie) with the start `start` (first ns of its tick), or any start if 0. */
static bool alive_as(int pid, uint64_t *start)
{
	uint64_t ticks;
	char state;

	if (!read_stat(pid, &state, &ticks) || state == 'Z' || state == 'X')
		return false;
	ticks *= traced_set_ns_per_tick();
	if (*start && *start != ticks)
		return false;
	*start = ticks;
	return true;
}

int traced_set_add(int map_fd, int pid)
{
	__u32 key = (__u32)pid;
	uint64_t start = 0;

	if (!alive_as(pid, &start))
		return -ESRCH;
	if (bpf_map_update_elem(map_fd, &key, &start, BPF_ANY))
		return -errno;
	/*
	 * It may have exited in between, its exit tracepoint gone by before
	 * the entry was in: then the entry is ours to take out, or it would
	 * stay (and fill the table) until the pid's next owner.
	 */
	if (!alive_as(pid, &start)) {
		bpf_map_delete_elem(map_fd, &key);
		return -ESRCH;
	}
	return 0;
}

bool traced_set_any_alive(int map_fd)
{
	__u32 key, next, *prev = NULL;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		uint64_t start;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &start))
			continue; /* removed at its exit meanwhile */
		if (start && alive_as((int)key, &start))
			return true;
		/*
		 * Exited, or another process has the pid now: an entry the exit
		 * tracepoint could not remove (put in after it ran).
		 */
		bpf_map_delete_elem(map_fd, &key);
		prev = NULL; /* the walk starts again without it */
	}
	return false;
}

void traced_set_report_full(const struct trace_fanout *out, uint32_t pid, uint64_t ts_ns,
			    uint64_t count, uint64_t total)
{
	const struct ct_arg args[] = {
		CT_U64("count", count),
		CT_U64("total", total),
		CT_CSTR("why", "the table of traced processes was full"),
	};

	trace_emit_notice(out, pid, pid, ts_ns, "ctrace: processes not traced", 'g', args,
			  sizeof(args) / sizeof(args[0]));
}
