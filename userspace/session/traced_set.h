/* SPDX-License-Identifier: MIT */
/*
 * traced_set.h - the loader's side of the BPF map of traced processes
 * (bpf/ctrace.bpf.c: traced_tgids, tgid -> the start of the process's
 * /proc clock tick, in ns): puts a process in under its own start time, so that a later
 * process of the same pid is not taken for it, and tells whether any
 * traced process still lives (the kernel adds children the loader may not
 * have heard of yet, and removes each process at its exit).
 */
#ifndef CTRACE_TRACED_SET_H
#define CTRACE_TRACED_SET_H

#include <stdbool.h>
#include <stdint.h>

/* The process's start as /proc/PID/stat gives it (field 22); false when it is gone. */
bool traced_set_start_ticks(int pid, uint64_t *ticks);

/* The length of /proc's clock tick in ns; the map keeps the first ns of the start's tick. */
uint64_t traced_set_ns_per_tick(void);

/* Adds `pid` to the map `map_fd`: 0, -ESRCH (gone), -E2BIG (the map is full) or -errno. */
int traced_set_add(int map_fd, int pid);

/*
 * True when a process in the map still lives, as itself (same start time).
 * Entries of processes gone without the exit tracepoint's notice (added by
 * the loader after the exit) are removed on the way.
 */
bool traced_set_any_alive(int map_fd);

/*
 * Says in the trace, at ts_ns, that `count` more processes (`total` in all)
 * were not traced because the map was full: a global instant "ctrace:
 * processes not traced".
 */
struct trace_fanout;
void traced_set_report_full(const struct trace_fanout *out, uint32_t pid, uint64_t ts_ns,
			    uint64_t count, uint64_t total);

#endif
