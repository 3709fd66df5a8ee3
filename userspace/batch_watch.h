/* SPDX-License-Identifier: MIT */
/*
 * batch_watch.h - the kernel side's copies of a thread's event buffer when
 * the thread ends without flushing it: a fatal signal (a crash, SIGKILL,
 * and what every other thread of a process that exits gets), exit() and
 * exit_group(), execve() (bpf/ctrace.bpf.c: batch_rescue).
 */
#ifndef CTRACE_BATCH_WATCH_H
#define CTRACE_BATCH_WATCH_H

#include <stdbool.h>

struct ctrace_bpf;

/*
 * Attaches them (the skeleton keeps the links). Returns how many of the
 * five could not be attached (a kernel without syscall tracepoints): said
 * with -v; their deaths then lose the last batch, counted as dropped.
 */
int batch_watch_deaths(struct ctrace_bpf *skel, bool verbose);

/*
 * Detaches them, each in a thread of its own (each waits for a grace
 * period); returns once all are gone. A pthread start routine: arg is the
 * skeleton.
 */
void *batch_watch_stop(void *skel);

#endif
