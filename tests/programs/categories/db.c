// SPDX-License-Identifier: MIT
/* Category db: an instant, with its args built under CTRACE_ENABLED(). */
#define CTRACE_CATEGORY db
#include <ctrace.h>
#include <stdio.h>
#include "cats.h"

static unsigned evals;

void db_fire(int round)
{
	char args[32] = "";

	if (CTRACE_ENABLED()) {
		evals++;
		snprintf(args, sizeof(args), "{\"round\":%d}", round);
	}
	CTRACE_INSTANT(NULL, "db-instant", CTRACE_SCOPE_PROCESS, args[0] ? args : NULL);
}

int db_armed(void) { return CTRACE_ENABLED(); }
unsigned db_sem_value(void) { return __extension__ CAT_SEMAPHORE_VALUE(db); }
unsigned db_evals(void) { return evals; }
