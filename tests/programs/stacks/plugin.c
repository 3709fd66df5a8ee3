// SPDX-License-Identifier: MIT
/* The plugin stack_chains dlopen()s and dlclose()s before the trace ends (chains.c). */
#include <ctrace.h>
#include "stk.h"

int stk_plugin_armed(void);
void stk_plugin_hit(int k);

static volatile int plugin_sink;

int stk_plugin_armed(void)
{
	return CTRACE_ENABLED();
}

static __attribute__((noinline)) void stk_plugin_leaf(int k)
{
	STK_LINE("site-plugin"); CTRACE_INSTANT(NULL, "in-plugin", CTRACE_SCOPE_THREAD, NULL);
	plugin_sink += k;
}

__attribute__((noinline)) void stk_plugin_hit(int k)
{
	STK_LINE("call-plugin-leaf"); stk_plugin_leaf(k);
	plugin_sink++;
}
