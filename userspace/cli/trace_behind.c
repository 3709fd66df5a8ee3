// SPDX-License-Identifier: MIT
#include "cli/trace_behind.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "capture/capture_files.h"
#include "capture/capture_journal.h"
#include "io/output_file.h"
#include "lib/term_safe.h"

bool trace_capture_takes(const struct trace_options *o)
{
	return !o->stack_depth && !o->usdt && !o->ring_size && !o->otlp_file && !o->otlp_url && !o->max_size;
}

bool trace_behind_wanted(const struct trace_options *o)
{
	const char *how = getenv("CTRACE_CONVERT");

	/*
	 * CTRACE_CONVERT=behind: not the default yet, while the README's
	 * "Converted behind a capture" lists cases that still differ.
	 */
	if (!how || strcmp(how, "behind"))
		return false;
	if (!o->output || !strcmp(o->output, "-") || capture_path(o->output))
		return false;
	/*
	 * The protobuf by its name only (the conversion picks the format
	 * from it), and without the JSON kept beside it, a second output
	 * whose checks belong before the attach.
	 */
	if (o->perfetto && (!output_is_pftrace(o->output) || (getenv("CTRACE_PFTRACE_JSON") &&
								 *getenv("CTRACE_PFTRACE_JSON"))))
		return false;
	return trace_capture_takes(o);
}

/*
 * The conversion's process: idle CPU only, deaf to the Ctrl-C that stops
 * the tracing. Forked from a process with threads (the capture's writer):
 * only calls safe after fork() until the exec.
 */
static void exec_converter(const char *const *argv)
{
	struct sched_param none = { 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &none) != 0)
		(void)nice(19); /* not fatal: a lower priority still */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	execv("/proc/self/exe", (char *const *)argv);
	_exit(127);
}

static void stop_handing_files(void)
{
	if (capture_files_to >= 0)
		close(capture_files_to);
	capture_files_to = -1;
}

int trace_behind_start(struct trace_behind *b, const struct trace_options *o)
{
	char dir_buf[4096];
	int pipefd[2], files[2], err;

	memset(b, 0, sizeof(*b));
	b->alive = -1;
	b->output = o->output;
	/* Before attaching: a bad output path must not touch the target at all (output_open says why). */
	b->out_fd = output_open(o->output, &b->created);
	if (b->out_fd < 0)
		return b->out_fd;
	snprintf(dir_buf, sizeof(dir_buf), "%s", o->output);
	err = capture_open_temp(&b->cap, dirname(dir_buf));
	if (err < 0) {
		fprintf(stderr, "ctrace-bpf: cannot write the capture the trace is converted from, next to %s: %s\n",
			TERM_SAFE(o->output), strerror(-err));
		trace_behind_abandon(b);
		return err;
	}
	/* A quiet process's events reach the trace within a few of the loop's rounds, as live. */
	b->cap.push_every_ns = 100 * 1000000ull;
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		err = -errno;
		capture_close(&b->cap);
		trace_behind_abandon(b);
		return err;
	}
	b->alive = pipefd[1];
	/* The mapped files the tracer opens go to the conversion by descriptor (capture_files.h). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, files) != 0) {
		err = -errno;
		close(pipefd[0]);
		capture_close(&b->cap);
		trace_behind_abandon(b);
		return err;
	}
	capture_files_to = files[0];
	{
		/* The conversion's ends of the files: inherited (no O_CLOEXEC), closed here after the fork. */
		int give[4] = { dup(b->cap.fd), dup(pipefd[0]), dup(files[1]), dup(b->out_fd) };
		char fds[64], mode[16];
		const char *argv[] = { "ctrace-bpf", "convert", "--behind", fds, "--mode", mode, "-o", o->output,
				       o->quiet ? "-q" : NULL, NULL };

		snprintf(fds, sizeof(fds), "%d,%d,%d,%d", give[0], give[1], give[2], give[3]);
		snprintf(mode, sizeof(mode), "%o", o->output_mode);
		b->converter = give[0] < 0 || give[1] < 0 || give[2] < 0 || give[3] < 0 ? -1 : fork();
		if (b->converter == 0)
			exec_converter(argv);
		err = -errno;
		for (int i = 0; i < 4; i++)
			if (give[i] >= 0)
				close(give[i]);
	}
	close(pipefd[0]);
	close(files[1]);
	if (b->converter < 0) {
		b->converter = 0;
		fprintf(stderr, "ctrace-bpf: cannot start the conversion: %s\n", strerror(-err));
		capture_close(&b->cap);
		trace_behind_abandon(b);
		return err;
	}
	return 0;
}

int trace_behind_finish(struct trace_behind *b)
{
	int status = 0;

	if (b->alive >= 0)
		close(b->alive);
	b->alive = -1;
	stop_handing_files();
	if (b->out_fd >= 0)
		close(b->out_fd);
	b->out_fd = -1;
	if (!b->converter)
		return 1;
	/*
	 * Tracing is over: the conversion is what the user waits for now,
	 * at an ordinary priority (on idle CPU only it would wait for the
	 * application to rest, which a busy one never does).
	 */
	if (sched_setscheduler(b->converter, SCHED_OTHER, &(struct sched_param){ 0 }) == 0)
		setpriority(PRIO_PROCESS, (id_t)b->converter, 0);
	while (waitpid(b->converter, &status, 0) < 0 && errno == EINTR)
		;
	b->converter = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		fprintf(stderr, "ctrace-bpf: the conversion could not start (no exec of /proc/self/exe): %s holds nothing; trace without CTRACE_CONVERT=behind\n",
			TERM_SAFE(b->output));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "ctrace-bpf: the conversion ended by signal %d: %s may be incomplete\n",
		WIFSIGNALED(status) ? WTERMSIG(status) : 0, TERM_SAFE(b->output));
	return 1;
}

void trace_behind_abandon(struct trace_behind *b)
{
	if (b->converter) {
		kill(b->converter, SIGKILL);
		waitpid(b->converter, NULL, 0);
		b->converter = 0;
	}
	if (b->alive >= 0)
		close(b->alive);
	b->alive = -1;
	stop_handing_files();
	if (b->out_fd >= 0) {
		close(b->out_fd);
		if (b->created)
			unlink(b->output);
	}
	b->out_fd = -1;
}
