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
 * Attaches them (the skeleton keeps the links): where the kernel has
 * tp_btf/sched_prepare_exec and runs the exit tracepoint before the
 * thread's memory goes, those two (ctrace_exit copies at exit); else the
 * four syscall tracepoints, or where libbpf cannot reach them (tracefs
 * not mounted) the raw sys_enter tracepoint. Returns how many watches are missing:
 * the signal one said with -v; no exit/exec watch at all is said on
 * stderr always, as what a thread appended in its last 20 ms is then
 * lost uncounted.
 */
int batch_watch_deaths(struct ctrace_bpf *skel, bool verbose);

/*
 * Without batches: the start of each exec alone, where the kernel has
 * tp_btf/sched_prepare_exec (6.10; it runs at execs only), for the exec
 * note the loader's looks at a process need (process_epoch.h): a look
 * inside an exec would otherwise take the new image, half mapped, for the
 * process's objects, and detach the probes of those it does not show yet.
 * False where there is none (the syscall tracepoints are not attached for
 * this alone: on the kernels without it that keep one probe per event,
 * attaching them locked a 6.1 guest; bpf_load.c).
 */
bool batch_watch_execs(struct ctrace_bpf *skel, bool verbose);

/*
 * How exits and execs are watched: "sched_tracepoints", "syscall_tracepoints",
 * "raw_sys_enter", "none"; NULL before.
 */
const char *batch_watch_mode(void);

/*
 * Detaches them, each in a thread of its own (each waits for a grace
 * period); returns once all are gone. A pthread start routine: arg is the
 * skeleton.
 */
void *batch_watch_stop(void *skel);

#endif
