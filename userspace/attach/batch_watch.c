// SPDX-License-Identifier: MIT
#include "attach/batch_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"

static const char *watch_mode;

static struct bpf_link *attach_one(struct bpf_program *prog, bool verbose)
{
	struct bpf_link *link = bpf_program__attach(prog);

	if (!link && verbose)
		fprintf(stderr, "ctrace-bpf: cannot attach %s: %s\n", bpf_program__section_name(prog),
			strerror(errno));
	return link;
}

/*
 * Does this kernel run the exit tracepoint while the thread still has its
 * memory (exit_mm() after it)? ctrace_exit, attached before this, notes
 * any task it sees so; a child of ours that exits at once is one.
 */
static bool exit_sees_memory(struct ctrace_bpf *skel)
{
	pid_t child;

	if (skel->bss->exit_sees_mm)
		return true;
	child = fork();
	if (child == 0)
		_exit(0);
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return false;
	return skel->bss->exit_sees_mm != 0;
}

/*
 * Exits and execs watched by scheduler tracepoints alone: no syscall
 * tracepoint, which while attached sends every thread of the machine
 * down the slow syscall path (getppid of an untraced process: README,
 * Batched events). CTRACE_DEATH_WATCH=syscalls keeps the syscall watch
 * (tests of it, and a kernel whose tracepoints misbehave).
 */
static bool watch_by_sched(struct ctrace_bpf *skel, bool verbose)
{
	const char *force = getenv("CTRACE_DEATH_WATCH");

	if ((force && !strcmp(force, "syscalls")) ||
	    !bpf_program__autoload(skel->progs.ctrace_batch_prepare_exec) || !skel->links.ctrace_exit ||
	    !exit_sees_memory(skel))
		return false;
	skel->links.ctrace_batch_prepare_exec = attach_one(skel->progs.ctrace_batch_prepare_exec, verbose);
	if (!skel->links.ctrace_batch_prepare_exec)
		return false;
	skel->bss->exit_rescue = true;
	watch_mode = "sched_tracepoints";
	if (verbose)
		fputs("ctrace-bpf: exits and execs of batching threads watched by sched_tracepoints (no syscall tracepoint)\n",
		      stderr);
	return true;
}

int batch_watch_deaths(struct ctrace_bpf *skel, bool verbose)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} calls[] = {
		{ skel->progs.ctrace_batch_exit, &skel->links.ctrace_batch_exit },
		{ skel->progs.ctrace_batch_exit_group, &skel->links.ctrace_batch_exit_group },
		{ skel->progs.ctrace_batch_execve, &skel->links.ctrace_batch_execve },
		{ skel->progs.ctrace_batch_execveat, &skel->links.ctrace_batch_execveat },
	};
	size_t got = 0;
	int missing = 0;

	if (!skel->links.ctrace_batch_signal &&
	    !(skel->links.ctrace_batch_signal = attach_one(skel->progs.ctrace_batch_signal, verbose)))
		missing++;
	if (skel->links.ctrace_batch_exit || skel->links.ctrace_batch_sys_enter ||
	    skel->links.ctrace_batch_prepare_exec || watch_by_sched(skel, verbose))
		return missing; /* watched */
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		got += (*calls[i].link = attach_one(calls[i].prog, verbose)) != NULL;
	if (got == sizeof(calls) / sizeof(calls[0])) {
		watch_mode = "syscall_tracepoints";
		if (verbose)
			fputs("ctrace-bpf: exits and execs of batching threads watched by syscall_tracepoints (every syscall of the machine takes the slow path while they are attached)\n",
			      stderr);
		return missing;
	}
	/*
	 * Some or all of the four refused (tracefs not mounted: libbpf reads
	 * their ids there): one program on every syscall's entry instead.
	 */
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		bpf_link__destroy(*calls[i].link);
		*calls[i].link = NULL;
	}
	skel->links.ctrace_batch_sys_enter = attach_one(skel->progs.ctrace_batch_sys_enter, verbose);
	if (skel->links.ctrace_batch_sys_enter) {
		watch_mode = "raw_sys_enter";
		if (verbose)
			fputs("ctrace-bpf: the syscall tracepoints are not reachable (is tracefs mounted?): exits and execs are watched at every syscall's entry instead\n",
			      stderr);
		return missing;
	}
	watch_mode = "none";
	/* Not only with -v: what is lost this way cannot be counted. */
	fputs("ctrace-bpf: cannot watch exit() and execve() (no syscall tracepoints, no raw sys_enter): what a thread appended in its last 20 ms (the loader reads buffers every 20 ms) is lost uncounted when it exits or execs; use --no-batch to keep it\n",
	      stderr);
	return missing + 1;
}

bool batch_watch_execs(struct ctrace_bpf *skel, bool verbose)
{
	if (!bpf_program__autoload(skel->progs.ctrace_batch_prepare_exec))
		return false;
	skel->links.ctrace_batch_prepare_exec = attach_one(skel->progs.ctrace_batch_prepare_exec, verbose);
	return skel->links.ctrace_batch_prepare_exec != NULL;
}

const char *batch_watch_mode(void)
{
	return watch_mode;
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
		&skel->links.ctrace_batch_prepare_exec,
		&skel->links.ctrace_batch_signal, &skel->links.ctrace_batch_exit,
		&skel->links.ctrace_batch_exit_group, &skel->links.ctrace_batch_execve,
		&skel->links.ctrace_batch_execveat, &skel->links.ctrace_batch_sys_enter,
	};
	enum { N = sizeof(links) / sizeof(links[0]) };
	pthread_t t[N];
	bool started[N];

	skel->bss->exit_rescue = false; /* ctrace_exit stays attached (the skeleton's) */

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
