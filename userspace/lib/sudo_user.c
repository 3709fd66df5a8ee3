// SPDX-License-Identifier: MIT
#include "lib/sudo_user.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A decimal id below 2^32 - 1 ((uid_t)-1 means "no change" to chown). */
static int parse_id(const char *s, unsigned long *v)
{
	char *end;

	if (!s || !*s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || *end || *v >= (unsigned long)UINT32_MAX)
		return -EINVAL;
	return 0;
}

static int read_ids(struct sudo_user *u, bool quiet)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0 || !su || !sg)
		return 0;
	if (parse_id(su, &uid) || parse_id(sg, &gid)) {
		if (!quiet)
			fprintf(stderr, "ctrace-bpf: SUDO_UID/SUDO_GID ('%s', '%s') are not user and group ids; unset them or run ctrace-bpf through sudo\n",
				su, sg);
		return -EINVAL;
	}
	u->set = true;
	u->uid = (uid_t)uid;
	u->gid = (gid_t)gid;
	return 0;
}

int sudo_user_get(struct sudo_user *u)
{
	return read_ids(u, false);
}

uid_t sudo_user_owner(void)
{
	struct sudo_user u;

	return read_ids(&u, true) == 0 && u.set ? u.uid : geteuid();
}
