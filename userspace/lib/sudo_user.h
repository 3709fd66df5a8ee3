/* SPDX-License-Identifier: MIT */
/*
 * sudo_user.h - the user who ran `sudo ctrace-bpf`: sudo leaves their ids
 * in SUDO_UID/SUDO_GID. A tracer running as root on their behalf gives them
 * the files it makes, runs a launched command as them, and writes over no
 * file they could not have written themselves.
 */
#ifndef CTRACE_SUDO_USER_H
#define CTRACE_SUDO_USER_H

#include <stdbool.h>
#include <sys/types.h>

struct sudo_user {
	bool set; /* running as root via sudo */
	uid_t uid;
	gid_t gid;
};

/*
 * Reads SUDO_UID/SUDO_GID when the effective uid is 0 (elsewhere they mean
 * nothing: u->set stays false). Returns 0, or -EINVAL after one line on
 * stderr when they are set but are not user and group ids.
 */
int sudo_user_get(struct sudo_user *u);

/*
 * The uid whose files this tracer may write over: the sudo user's when run
 * via sudo (root's own files are not theirs), else the effective uid. An
 * invalid SUDO_UID counts as no sudo user (sudo_user_get reports it).
 */
uid_t sudo_user_owner(void);

#endif
