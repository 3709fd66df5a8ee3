// SPDX-License-Identifier: MIT
#include "batch_watch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"

int batch_watch_deaths(struct ctrace_bpf *skel, bool verbose)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} w[] = {
		{ skel->progs.ctrace_batch_signal, &skel->links.ctrace_batch_signal },
		{ skel->progs.ctrace_batch_exit, &skel->links.ctrace_batch_exit },
		{ skel->progs.ctrace_batch_exit_group, &skel->links.ctrace_batch_exit_group },
		{ skel->progs.ctrace_batch_execve, &skel->links.ctrace_batch_execve },
		{ skel->progs.ctrace_batch_execveat, &skel->links.ctrace_batch_execveat },
	};
	int missing = 0;

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (*w[i].link)
			continue;
		*w[i].link = bpf_program__attach(w[i].prog);
		if (!*w[i].link) {
			missing++;
			if (verbose)
				fprintf(stderr, "ctrace-bpf: cannot attach %s (%s): a thread that ends there loses its last batched events (counted)\n",
					bpf_program__section_name(w[i].prog), strerror(errno));
		}
	}
	return missing;
}
