// SPDX-License-Identifier: MIT
/* cli_check.c - see cli_check.h. */
#include "cli_check.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

void cli_run_tracer(struct tr_cmd *res, const char *const *wrapper, const char *command,
		    const char *const *args, int timeout_ms)
{
	if (tr_run_tracer(res, wrapper, command, args, timeout_ms) < 0)
		fail_msg("cannot run %s", tr_tracer());
}

bool cli_one_line(const char *text)
{
	size_t n = strlen(text);

	return n >= 2 && text[n - 1] == '\n' && strchr(text, '\n') == text + n - 1;
}

void cli_assert_one_line(const char *err, const char *what)
{
	if (!what && !cli_one_line(err))
		fail_msg("expected one line on stderr, got:\n%s", err);
	if (what && (!cli_one_line(err) || !strstr(err, what)))
		fail_msg("expected one line with '%s' on stderr, got:\n%s", what, err);
}

int cli_free_pid(void)
{
	for (int pid = 4000000; pid > 1000; pid -= 7919)
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return pid;
	fail_msg("no free pid found");
	return 0;
}
