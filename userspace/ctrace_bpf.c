// SPDX-License-Identifier: MIT
/*
 * ctrace-bpf - main(): picks the subcommand. Tracing (`ctrace-bpf -p PID`)
 * is the default; the others are named by their first argument.
 *
 * The journey of one event: include/ctrace.h (the probe site) ->
 * bpf/ctrace.bpf.c (a ring-buffer record) -> record_decode.c ->
 * trace_model.c -> chrome_trace.c and json_writer.c (the output).
 */
#include <string.h>
#include "commands.h"

const char commands_usage[] =
	"\nOther commands:\n"
	"  ctrace-bpf list -p PID | PATH   list the USDT probes of a process or an ELF file\n"
	"  ctrace-bpf fix FILE             close a trace that was cut short (tracer killed,\n"
	"                                  disk full) so that viewers open it\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} commands[] = {
		{ "trace", cmd_trace },
		{ "list", cmd_list },
		{ "fix", cmd_fix },
	};

	if (argc > 1)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
	return cmd_trace(argc, argv);
}
