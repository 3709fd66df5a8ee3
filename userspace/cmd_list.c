// SPDX-License-Identifier: MIT
/* cmd_list.c - `ctrace-bpf list`: being written (see commands.h). */
#include <stdio.h>
#include "commands.h"

int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ctrace-bpf: 'list' is not available in this build yet\n", stderr);
	return 2;
}
