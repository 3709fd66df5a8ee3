// SPDX-License-Identifier: MIT
/* cmd_fix.c - `ctrace-bpf fix`: being written (see commands.h). */
#include <stdio.h>
#include "commands.h"

int cmd_fix(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ctrace-bpf: 'fix' is not available in this build yet\n", stderr);
	return 2;
}
