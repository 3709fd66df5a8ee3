// SPDX-License-Identifier: MIT
/*
 * old_scope - CTRACE_SCOPE's end site as headers before 0.2 made it (probe
 * "scope", the ticks since the start only), for programs built before the
 * end's TSC was carried: they must still be traced. "old outer" (~6 ms)
 * holds two "old inner" (~2 ms each), 1 ms apart. Prints "ready pid=N
 * main_tid=N", waits for the tracer, runs, exits 0.
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

struct old_scope {
	const char *name;
	unsigned long long tsc;
};

static void old_scope_end(struct old_scope *s)
{
	if (s->tsc) {
		unsigned long long ticks = ctrace__rdtsc() - s->tsc;

		CTRACE__SITE4(scope, 0ull, CTRACE__PTR(s->name), 0ull, ticks);
	}
}

#define OLD_SCOPE(var, name)                                                   \
	struct old_scope var __attribute__((cleanup(old_scope_end))) = {      \
		name, CTRACE_ENABLED() ? ctrace__rdtsc() : 0                   \
	}

static void inner(void)
{
	OLD_SCOPE(s, "old inner");
	sleep_ms(2);
}

int main(void)
{
	if (!ready_and_wait())
		return 3;
	{
		OLD_SCOPE(s, "old outer");
		sleep_ms(1);
		inner();
		sleep_ms(1);
		inner();
		sleep_ms(1);
	}
	return 0;
}
