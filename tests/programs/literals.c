// SPDX-License-Identifier: MIT
/*
 * literals - the same literal names and args, many times, then an exit at
 * once: the BPF program copies a literal only the first time and then
 * sends its address; every event must still carry its strings, although
 * the process is gone by the time the loader reads the last ones. A name
 * built at run time in a buffer that changes is never taken for a literal.
 *
 *   literals [N]   (default 1000) prints "ready pid=P main_tid=T", waits
 *   for the tracer, fires N instants "lit-instant" {"k":1}, N counters
 *   "lit-counter", N instants named "dyn-<i mod 10>", then exits 0.
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ready.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	char dyn[16];

	if (!ready_and_wait())
		return 3;
	for (int i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, "lit-instant", CTRACE_SCOPE_THREAD, "{\"k\":1}");
	for (int i = 0; i < n; i++)
		CTRACE_COUNTER_SET(NULL, "lit-counter", i);
	for (int i = 0; i < n; i++) {
		/* Same address every time, other bytes: must be copied each time. */
		snprintf(dyn, sizeof(dyn), "dyn-%d", i % 10);
		CTRACE_INSTANT(NULL, dyn, CTRACE_SCOPE_THREAD, NULL);
	}
	return 0;
}
