// SPDX-License-Identifier: MIT
/* The C++ part of stack_chains (chains.c): a function template's instance. */
#include <ctrace.h>
#include "stk.h"

static volatile int tmpl_sink;

namespace stk {
template <typename T> __attribute__((noinline)) T twice(T v)
{
	STK_LINE("site-template"); CTRACE_INSTANT(NULL, "in-template", CTRACE_SCOPE_THREAD, NULL);
	tmpl_sink = tmpl_sink + 1;
	return v * 2;
}
} // namespace stk

extern "C" __attribute__((noinline)) int stk_template_entry(int k)
{
	STK_LINE("call-twice"); int r = stk::twice<int>(k);
	tmpl_sink = tmpl_sink + 1;
	return r + 1;
}
