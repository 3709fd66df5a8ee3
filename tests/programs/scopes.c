// SPDX-License-Identifier: MIT
/*
 * scopes - CTRACE_SCOPE under the tracer: "outer" (about 20 ms) holds two
 * "inner" scopes of about 5 ms each, one with args; a scope left by an
 * early return still ends. Prints "ready pid=N main_tid=N", waits for the
 * tracer, runs, exits 0.
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

static int inner(int i)
{
	CTRACE_SCOPE(NULL, "inner", i ? "{\"i\":1}" : NULL);
	sleep_ms(5);
	if (i)
		return 1; /* the scope ends on this way out too */
	sleep_ms(0);
	return 0;
}

static void outer(void)
{
	CTRACE_SCOPE(NULL, "outer", NULL);
	sleep_ms(5);
	inner(0);
	inner(1);
	sleep_ms(5);
}

int main(void)
{
	if (!ready_and_wait())
		return 3;
	outer();
	return 0;
}
