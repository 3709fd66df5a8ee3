// SPDX-License-Identifier: MIT
/*
 * typed_args - CTRACE_INSTANT_ARGS, CTRACE_SPAN_BEGIN_ARGS and
 * CTRACE_SPAN_END_ARGS as programs use them, for test_typed_args. After
 * the tracer armed the probes (exit 3 if none came), on the main thread:
 *
 *   instant "read"   fd=-3 (int), bytes=2^64-1 (uint), ms=0.25 (double),
 *                    path=argv[1] (string)
 *   span "op"        begun with id=7 and name="op \"one\"", ended with
 *                    ratio=NaN and res=NULL
 *   instant "long"   text: 1000 x's (cut: too long for the pairs' buffer),
 *                    n=INT64_MIN, whole=2 (a double)
 *   instant "plain"  the same site kinds with a JSON text, for comparison
 *
 * Prints "typed done" at the end.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ready.h"

int main(int argc, char **argv)
{
	struct ctrace_span sp;
	static char x1000[1001];
	const char *none = NULL;
	const char *path = argc > 1 ? argv[1] : "/etc/hosts";
	int fd = -3;

	if (!ready_and_wait()) {
		puts("no tracer");
		return 3;
	}
	memset(x1000, 'x', 1000);
	CTRACE_INSTANT_ARGS(NULL, "read", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("fd", fd),
			    CTRACE_ARG_UINT("bytes", UINT64_MAX), CTRACE_ARG_DOUBLE("ms", 0.25),
			    CTRACE_ARG_STR("path", path));
	CTRACE_SPAN_BEGIN_ARGS(NULL, &sp, "op", CTRACE_ARG_INT("id", 7), CTRACE_ARG_STR("name", "op \"one\""));
	CTRACE_SPAN_END_ARGS(&sp, CTRACE_ARG_DOUBLE("ratio", NAN), CTRACE_ARG_STR("res", none));
	CTRACE_INSTANT_ARGS(NULL, "long", CTRACE_SCOPE_PROCESS, CTRACE_ARG_STR("text", x1000),
			    CTRACE_ARG_INT("n", INT64_MIN), CTRACE_ARG_DOUBLE("whole", 2));
	CTRACE_INSTANT(NULL, "plain", CTRACE_SCOPE_THREAD, "{\"fd\":-3}");
	puts("typed done");
	return 0;
}
