// SPDX-License-Identifier: MIT
/*
 * ctrace-bpf - main(): picks the subcommand. Tracing (`ctrace-bpf -p PID`)
 * is the default; the others are named by their first argument (--help
 * lists them: trace_options.c).
 *
 * The journey of one event: include/ctrace.h (the probe site) ->
 * bpf/ctrace.bpf.c (a ring-buffer record) -> session_loop.c (the ring
 * buffer's callback) -> record_decode.c (decoded) -> record_strings.c
 * (strings resolved: literal cache, late reads) -> model_facts.c (the
 * names of a thread shown for the first time, read through proc_info.c)
 * -> trace_model.c (contexts, ids, pairing, counters; no I/O: typed
 * events, trace_event.h) -> the encoders asked for: chrome_trace.c (JSON),
 * pftrace_encode.c (Perfetto), trace_summary.c, through json_writer.c ->
 * session_output.c (the file).
 */
#include <string.h>
#include "cli/commands.h"
#include "lib/fd_limit.h"
#include "session/tracer_priority.h"

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} commands[] = {
		{ "trace", cmd_trace },
		{ "list", cmd_list },
		{ "fix", cmd_fix },
		{ "report", cmd_report },
		{ "convert", cmd_convert },
	};

	/* A target decides how many files and objects there are: all the fds this user may have. */
	fd_limit_start();
	tracer_priority_raise(); /* the start is bounded work, however busy the CPUs (tracer_priority.h) */
	if (argc > 1)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
	return cmd_trace(argc, argv);
}
