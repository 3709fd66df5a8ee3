// SPDX-License-Identifier: MIT
/* Category net: every kind of site, a scope included. */
#define CTRACE_CATEGORY net
#include <ctrace.h>
#include "cats.h"

static unsigned evals;

/* The args of every site: counts its evaluations (none while net is not traced). */
static const char *args_of(int round)
{
	static char buf[32];

	evals++;
	__builtin_snprintf(buf, sizeof(buf), "{\"round\":%d}", round);
	return buf;
}

void net_fire(int round)
{
	struct ctrace_span sp;

	CTRACE_SPAN_BEGIN(NULL, &sp, "net-span", args_of(round));
	CTRACE_INSTANT(NULL, "net-instant", CTRACE_SCOPE_THREAD, args_of(round));
	CTRACE_COUNTER_SET(NULL, "net-counter", (evals++, round + 1));
	{
		CTRACE_SCOPE(NULL, "net-scope", args_of(round));
	}
	CTRACE_SPAN_END(&sp, NULL);
}

void net_order(int i)
{
	CTRACE_COUNTER_SET(NULL, "order", i);
}

int net_armed(void) { return CTRACE_ENABLED(); }
unsigned net_sem_value(void) { return __extension__ CAT_SEMAPHORE_VALUE(net); }
unsigned net_evals(void) { return evals; }
