/* SPDX-License-Identifier: MIT */
/*
 * fd_limit.h - the tracer's file descriptors against RLIMIT_NOFILE. A
 * target decides how many objects the tracer attaches (a link or more per
 * object) and how many files it maps (file_maps.h holds one fd per file),
 * so the soft limit is raised to the hard one at the start, a few fds are
 * set aside, and once the limit is reached anyway those are given back for
 * what finishes the trace (the ring buffer, the output), no more objects
 * are attached, and one line says so.
 */
#ifndef CTRACE_FD_LIMIT_H
#define CTRACE_FD_LIMIT_H

#include <stdbool.h>
#include <stddef.h>

/* Raises the soft RLIMIT_NOFILE to the hard one and sets the reserve aside. */
void fd_limit_start(void);

/* The soft limit back to what it was (a launched command's, before its exec: async-signal-safe). */
void fd_limit_restore(void);

/* The soft limit now (after fd_limit_start: the hard one). */
size_t fd_limit_now(void);

/*
 * err (-errno) is the limit reached (-EMFILE, -ENFILE): the reserve is
 * given back and, the first time, one line says that no more objects are
 * attached. True if it was.
 */
bool fd_limit_hit(int err);

/* Whether the limit was reached: attach nothing more. */
bool fd_limit_reached(void);

#endif
