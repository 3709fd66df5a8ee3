// SPDX-License-Identifier: MIT
/*
 * chains - call chains known in advance, for --stacks
 * (tests/integration/test_stacks.c). Built twice by the Makefile, gcc -O2
 * -g, with -fno-omit-frame-pointer (stack_chains_fp) and with
 * -fomit-frame-pointer (stack_chains_nofp), each with its own libstk and C++
 * part (template.cpp), and a plugin it dlopen()s.
 *
 *   stack_chains [PLUGIN_SO]
 *     prints "ready ...", waits for a tracer (its probes and libstk's),
 *     then fires, in this order:
 *       in-inline    stk_inlined (always inlined) <- stk_outer <- main
 *       in-static    stk_static_leaf (static) <- stk_outer <- main
 *       in-lib       stk_lib_leaf (static, libstk) <- stk_lib_entry (libstk) <- main
 *       in-template  stk::twice<int> (C++) <- stk_template_entry (C++) <- main
 *     and with PLUGIN_SO: dlopen()s it, waits for its probes, calls its
 *     stk_plugin_hit() (in-plugin: stk_plugin_leaf <- stk_plugin_hit <-
 *     main), dlclose()s it and deletes the file, then fires "after-plugin"; then a span.
 *     Each call's line is printed as "line TAG=N" (the site of each macro,
 *     and the call in each caller), for the test to compare with the
 *     frames' file:line. Exits 0; 3 when no tracer came, 2 when the plugin
 *     would not load or arm.
 */
#include <ctrace.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
#include "../ready.h"
#include "stk.h"

#if defined(__GNUC__) && !defined(__clang__)
#define STK_NOINLINE __attribute__((noinline, noipa))
#else
#define STK_NOINLINE __attribute__((noinline))
#endif

volatile int stk_sink;

static inline __attribute__((always_inline)) void stk_inlined(int k)
{
	STK_LINE("site-inline"); CTRACE_INSTANT(NULL, "in-inline", CTRACE_SCOPE_THREAD, NULL);
	stk_sink += k;
}

static STK_NOINLINE void stk_static_leaf(int k)
{
	STK_LINE("site-static"); CTRACE_INSTANT(NULL, "in-static", CTRACE_SCOPE_THREAD, NULL);
	stk_sink += k;
}

STK_NOINLINE void stk_outer(int k)
{
	STK_LINE("call-inline"); stk_inlined(k);
	STK_LINE("call-static"); stk_static_leaf(k + 1);
	stk_sink++;
}

static int plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	int (*armed)(void);
	void (*hit)(int);

	if (!h) {
		fprintf(stderr, "chains: %s\n", dlerror());
		return 2;
	}
	*(void **)&armed = dlsym(h, "stk_plugin_armed");
	*(void **)&hit = dlsym(h, "stk_plugin_hit");
	if (!armed || !hit)
		return 2;
	for (int waited = 0; !armed(); waited++) {
		if (waited == 5000)
			return 2;
		usleep(1000);
	}
	STK_LINE("call-plugin"); hit(5);
	stk_sink++;
	dlclose(h);
	unlink(path); /* only the tracer's open file is left of it */
	return 0;
}

int main(int argc, char **argv)
{
	if (!ready_and_wait())
		return 3;
	for (int waited = 0; !stk_lib_armed(); waited++) {
		if (waited == 5000)
			return 3;
		usleep(1000);
	}
	STK_LINE("call-outer"); stk_outer(1);
	STK_LINE("call-lib"); stk_lib_entry(2);
	STK_LINE("call-template"); stk_template_entry(3);
	stk_sink++;
	if (argc > 1) {
		STK_LINE("call-plugin-fn"); int rc = plugin(argv[1]);

		if (rc)
			return rc;
		CTRACE_INSTANT(NULL, "after-plugin", CTRACE_SCOPE_THREAD, NULL);
	}
	{
		void stk_spanned(void); /* below: the lines above stay where the README quotes them */

		STK_LINE("call-spanned"); stk_spanned();
	}
	fflush(stdout);
	return 0;
}

/* A span: its X carries the stack of its begin. */
STK_NOINLINE void stk_spanned(void)
{
	struct ctrace_span sp;

	STK_LINE("site-span"); CTRACE_SPAN_BEGIN(NULL, &sp, "spanned", NULL);
	stk_sink++;
	CTRACE_SPAN_END(&sp, NULL);
}
