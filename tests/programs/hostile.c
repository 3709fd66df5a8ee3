// SPDX-License-Identifier: MIT
/*
 * hostile - feeds the tracer every kind of bad input a traced process can
 * send: bytes that are not UTF-8, control bytes, JSON metacharacters, a 1 MiB
 * name, args that are not a JSON object, NULL and wild pointers, non-finite
 * counter values, unmatched END, DISCARD of an unknown marker. The last event
 * is a plain instant "after": it proves that the tracer kept going.
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3),
 * then exits 0. Event names are listed in tests/integration/test_hostile.c.
 */
#include <ctrace.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hostile_strings.h"
#include "ready.h"


int main(void)
{
	struct ctrace_span sp, never;
	char *big, *deep;
	int unknown_marker;

	/* Built before tracing starts: the big strings must be fully there. */
	big = big_string('x');
	deep = deep_nesting('[', ']');
	if (!big || !deep)
		return 1;

	if (!ready_and_wait()) {
		fprintf(stderr, "hostile: no tracer attached within 10 s\n");
		return 3;
	}

	/* Names: invalid UTF-8, control bytes, quotes and backslashes. */
	CTRACE_INSTANT(NULL, "bad-utf8 \xff\xfe \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 end",
		       CTRACE_SCOPE_THREAD, "{\"k\":\"\xff\xc0\xaf\"}");
	CTRACE_INSTANT(NULL, "ctl \x01\x02\x1f\x7f\t\n\r end", CTRACE_SCOPE_THREAD,
		       "{\"k\":\"a\\u0001b\"}");
	CTRACE_INSTANT(NULL, "quote\" back\\ slash/ \"}],{\"x\":", CTRACE_SCOPE_THREAD,
		       "{\"q\":\"\\\"\\\\\"}");
	/* U+2028 and U+2029 are valid JSON but break naive JavaScript readers. */
	CTRACE_INSTANT(NULL, "ls \xe2\x80\xa8 ps \xe2\x80\xa9 end", CTRACE_SCOPE_THREAD, NULL);

	/* 1 MiB name and 1 MiB args: truncated, visibly. */
	CTRACE_INSTANT(NULL, big, CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, "big-args", CTRACE_SCOPE_THREAD, big);

	/* Args that are not one JSON object. */
	CTRACE_INSTANT(NULL, "args-invalid", CTRACE_SCOPE_THREAD, "{not json");
	CTRACE_INSTANT(NULL, "args-array", CTRACE_SCOPE_THREAD, "[1,2,3]");
	CTRACE_INSTANT(NULL, "args-number", CTRACE_SCOPE_THREAD, "42");
	CTRACE_INSTANT(NULL, "args-dup", CTRACE_SCOPE_THREAD, "{\"k\":1,\"k\":2}");
	CTRACE_INSTANT(NULL, "args-deep", CTRACE_SCOPE_THREAD, deep);
	CTRACE_INSTANT(NULL, "args-trailing", CTRACE_SCOPE_THREAD, "{\"k\":1} x");
	CTRACE_INSTANT(NULL, "args-bad-utf8", CTRACE_SCOPE_THREAD, "\xff\xfe{");

	/* Pointers the probe cannot read. */
	CTRACE_INSTANT(NULL, NULL, CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, (const char *)1, CTRACE_SCOPE_THREAD, (const char *)8);
	CTRACE_SPAN_BEGIN(NULL, &sp, (const char *)1, (const char *)1);
	CTRACE_SPAN_END(&sp, (const char *)1);

	/* A scope that is not one of the three. */
	CTRACE_INSTANT(NULL, "scope-bogus", 'z', NULL);

	/* Non-finite counter values, then a finite one on the same counter. */
	CTRACE_COUNTER_SET(NULL, "nan", NAN);
	CTRACE_COUNTER_SET(NULL, "inf", INFINITY);
	CTRACE_COUNTER_SET(NULL, "-inf", -INFINITY);
	CTRACE_COUNTER_ADD(NULL, "inf", -INFINITY); /* inf + -inf = NaN */
	CTRACE_COUNTER_SET(NULL, "nan", 1.5);

	/* Pairing and marker mistakes. */
	memset(&never, 0, sizeof(never));
	CTRACE_SPAN_END(&never, NULL);
	CTRACE_DISCARD(&unknown_marker);
	CTRACE_NEW_PID(&unknown_marker, NULL);
	CTRACE_DISCARD(&unknown_marker);
	CTRACE_DISCARD(NULL);

	CTRACE_INSTANT(NULL, "after", CTRACE_SCOPE_THREAD, "{\"ok\":true}");
	free(big);
	free(deep);
	return 0;
}
