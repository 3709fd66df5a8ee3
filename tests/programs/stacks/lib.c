// SPDX-License-Identifier: MIT
/* libstk - the shared-library part of stack_chains (chains.c). */
#include <ctrace.h>
#include "stk.h"

static volatile int lib_sink;

/* The library's own semaphore: its sites may be armed a moment after the program's. */
int stk_lib_armed(void)
{
	return CTRACE_ENABLED();
}

static __attribute__((noinline)) void stk_lib_leaf(int k)
{
	STK_LINE("site-lib"); CTRACE_INSTANT(NULL, "in-lib", CTRACE_SCOPE_THREAD, NULL);
	lib_sink += k;
}

__attribute__((noinline)) void stk_lib_entry(int k)
{
	STK_LINE("call-lib-leaf"); stk_lib_leaf(k);
	lib_sink++;
}
