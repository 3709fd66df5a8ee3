// SPDX-License-Identifier: MIT
#include "session/ptrace_access.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

/* The "Cap...:" mask of /proc/PID/status (pid 0: ourselves); false if unreadable. */
static bool status_caps(int pid, const char *field, uint64_t *mask)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	bool found = false;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			*mask = strtoull(line + flen + 1, NULL, 16);
			found = true;
		}
	fclose(f);
	return found;
}

/* The user namespace of pid (0: ours), by inode; 0 if it cannot be told. */
static ino_t user_ns(int pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/user");
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

void ptrace_access_explain(int pid, char *buf, size_t len)
{
	uint64_t theirs, ours, extra;
	size_t n = 0;

	/*
	 * The kernel's rule (security/commoncap.c): a tracer passes when the
	 * target's permitted capabilities are a subset of its own, in the same
	 * user namespace, or with CAP_SYS_PTRACE there. /proc/PID/status stays
	 * readable when its maps are not, so the first part can be checked.
	 */
	if (status_caps(pid, "CapPrm", &theirs) && status_caps(0, "CapEff", &ours) &&
	    (ours & (1ull << CAP_SYS_PTRACE)) && (extra = theirs & ~ours) != 0) {
		n = (size_t)snprintf(buf, len, "process %d holds capabilities ctrace-bpf lacks (", pid);
		for (int cap = 0; cap < 64 && n < len; cap++) {
			char *name;

			if (!(extra & (1ull << cap)))
				continue;
			name = cap_to_name((cap_value_t)cap);
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n && buf[n - 1] != '(' ? " " : "",
					      name ? name : "?");
			cap_free(name);
		}
		if (n < len)
			snprintf(buf + n, len - n, "), and the kernel refused to show it to us although we hold CAP_SYS_PTRACE; run ctrace-bpf with at least the target's capabilities, e.g. as root on the host");
		return;
	}
	if (user_ns(pid) && user_ns(0) && user_ns(pid) != user_ns(0)) {
		snprintf(buf, len, "process %d is in another user namespace: run ctrace-bpf as root of the namespace that owns it (the host)", pid);
		return;
	}
	snprintf(buf, len, "it needs root in the process's own PID and user namespace, or CAP_SYS_PTRACE");
}
