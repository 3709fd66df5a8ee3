/* SPDX-License-Identifier: MIT */
/*
 * targets.h - the processes being traced: the ones named on the command
 * line, the launched one, and those found later (--follow, --exe). Each is
 * watched through a pidfd, which turns readable when it exits.
 */
#ifndef CTRACE_TARGETS_H
#define CTRACE_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

struct target {
	int pid;
	int pidfd; /* -1 if pidfd_open failed (then kill(pid, 0) tells) */
	bool gone;
};

struct target_set {
	struct target *v;
	size_t n, cap;
};

/* 1 when added, 0 when already there, -errno (-ESRCH: no such process). */
int targets_add(struct target_set *t, int pid);
bool targets_has(const struct target_set *t, int pid);
/* Marks the targets that have exited; true when none is left running. */
bool targets_all_gone(struct target_set *t);
void targets_free(struct target_set *t);

#endif
