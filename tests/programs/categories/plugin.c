// SPDX-License-Identifier: MIT
/* A shared library of category plugin (built with -DCTRACE_CATEGORY=plugin). */
#include <ctrace.h>
#include "cats.h"

static unsigned evals;

static const char *args_of(int round)
{
	static char buf[32];

	evals++;
	__builtin_snprintf(buf, sizeof(buf), "{\"round\":%d}", round);
	return buf;
}

void plugin_fire(int round)
{
	CTRACE_INSTANT(NULL, "plugin-instant", CTRACE_SCOPE_THREAD, args_of(round));
}

int plugin_armed(void) { return CTRACE_ENABLED(); }
unsigned plugin_sem_value(void) { return __extension__ CAT_SEMAPHORE_VALUE(plugin); }
unsigned plugin_evals(void) { return evals; }
