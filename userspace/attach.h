/* SPDX-License-Identifier: MIT */
/*
 * attach.h - finds the ctrace probe sites of a process (every ELF object it
 * has mapped) and attaches the matching BPF program to each, filtered to
 * that process, at the site's guarded 5-byte nop, with the semaphore as the
 * uprobe's reference counter (so CTRACE_ENABLED() turns true).
 */
#ifndef CTRACE_ATTACH_H
#define CTRACE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

struct ctrace_bpf;
struct bpf_link;

struct attachment {
	struct bpf_link **links;
	size_t n, cap;
	unsigned objects_with_probes; /* ELF objects that had ctrace probes */
	unsigned skipped_sites;       /* ctrace notes whose bytes are not our site */
	char looked_in[4096];         /* objects searched, for the error message */
};

/*
 * 0 when at least one probe is attached; -ENOENT when the process has no
 * ctrace probes (looked_in says where we looked); -ESRCH when it is gone;
 * other -errno when the kernel refused (a message was printed).
 */
int attach_process(struct ctrace_bpf *skel, int pid, struct attachment *a,
		   bool verbose);
void attachment_free(struct attachment *a);

#endif
