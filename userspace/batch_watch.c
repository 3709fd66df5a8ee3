// SPDX-License-Identifier: MIT
#include "batch_watch.h"

#include <errno.h>
#include <pthread.h>
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

static void *destroy_link(void *link)
{
	bpf_link__destroy(*(struct bpf_link **)link);
	*(struct bpf_link **)link = NULL;
	return NULL;
}

void *batch_watch_stop(void *arg)
{
	struct ctrace_bpf *skel = arg;
	struct bpf_link **links[] = {
		&skel->links.ctrace_batch_signal, &skel->links.ctrace_batch_exit,
		&skel->links.ctrace_batch_exit_group, &skel->links.ctrace_batch_execve,
		&skel->links.ctrace_batch_execveat,
	};
	enum { N = sizeof(links) / sizeof(links[0]) };
	pthread_t t[N];
	bool started[N];

	for (size_t i = 0; i < N; i++) {
		started[i] = *links[i] && pthread_create(&t[i], NULL, destroy_link, links[i]) == 0;
		if (!started[i] && *links[i])
			destroy_link(links[i]);
	}
	for (size_t i = 0; i < N; i++)
		if (started[i])
			pthread_join(t[i], NULL);
	return NULL;
}
