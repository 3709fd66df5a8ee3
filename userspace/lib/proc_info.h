/* SPDX-License-Identifier: MIT */
/*
 * proc_info.h - what /proc says about the traced process: names, command
 * line, start time, and late reads of its memory. The one reader of
 * process and thread names.
 */
#ifndef CTRACE_PROC_INFO_H
#define CTRACE_PROC_INFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_facts {
	int pid;
	int ns_pid;      /* the pid inside its own PID namespace (NSpid) */
	char comm[32];
	char exe[PATH_MAX];
	char cwd[PATH_MAX];
	char *cmdline;   /* arguments separated by NULs */
	size_t cmdline_len;
	uint64_t start_boottime_ns; /* from /proc/PID/stat, CLOCK_BOOTTIME */
};

/* 0, or -ESRCH when the process does not exist. Missing facts stay empty. */
int proc_facts_read(int pid, struct proc_facts *f);
void proc_facts_free(struct proc_facts *f);

/* True when the process is gone or a zombie (exited, not yet reaped). */
bool proc_exited(int pid);

/* The process's real uid (/proc/PID/status); false if it is gone. */
bool proc_real_uid(int pid, unsigned *uid);
/* Its parent's pid (0: none); false if it is gone. */
bool proc_parent_pid(int pid, unsigned *ppid);

/* The thread's name (comm); false if the thread is gone. */
bool proc_thread_comm(int pid, int tid, char *buf, size_t len);
/* The process's name: its main thread's. */
static inline bool proc_comm(int pid, char *buf, size_t len)
{
	return proc_thread_comm(pid, pid, buf, len);
}
/*
 * Calls fn with each thread of the process and its name, as /proc lists
 * them now; false if the process is gone.
 */
bool proc_each_thread(int pid, void (*fn)(void *ctx, int tid, const char *comm), void *ctx);

/*
 * Reads a NUL-terminated string of at most `max` bytes at `addr` in the
 * process (process_vm_readv). Returns its length, or -1 when unreadable;
 * *truncated says it went on past max, or ran into an unreadable page
 * before its NUL (the bytes up to that page are returned).
 */
ssize_t proc_read_str(int pid, uint64_t addr, char *buf, size_t max,
		      bool *truncated);

#endif
