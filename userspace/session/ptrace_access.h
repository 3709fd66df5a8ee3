/* SPDX-License-Identifier: MIT */
/*
 * ptrace_access.h - why the kernel refused to show us a process (its memory
 * map, its memory): the tracer needs the "ptrace read" right over it. Where
 * root with CAP_SYS_PTRACE is refused, what sets the target apart is said:
 * capabilities it holds that the tracer lacks (seen here: a sandbox's init
 * holding CAP_SYS_RESOURCE), or another user namespace.
 */
#ifndef CTRACE_PTRACE_ACCESS_H
#define CTRACE_PTRACE_ACCESS_H

#include <stddef.h>

/*
 * Writes into buf a short clause naming what sets `pid` apart ("process 1
 * holds capabilities ctrace-bpf lacks (cap_sys_resource) ..."; "... is in
 * another user namespace ..."), or the general rule when nothing does.
 */
void ptrace_access_explain(int pid, char *buf, size_t len);

#endif
