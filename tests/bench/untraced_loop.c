// SPDX-License-Identifier: MIT
/*
 * untraced_loop - what a ctrace site costs while nobody traces.
 *
 * The same loop (one step of a 64-bit LCG: a multiply-add dependency chain,
 * a few cycles of real work) is compiled several times: without a site, with
 * one instant, with four sites (span begin, counter add, instant, span end)
 * and with one CTRACE_SCOPE when the header has it. Every site's arguments
 * call expensive_text(), which counts its calls: while untraced it must never
 * run ("nothing evaluated").
 *
 *   untraced_loop count N          run each loop once, N iterations: under
 *                                  valgrind --tool=callgrind the difference in
 *                                  Ir between two loops / N is the instructions
 *                                  a site adds (exact, deterministic)
 *   untraced_loop time N ROUNDS    ns per iteration of each loop, interleaved
 *                                  rounds, median (bench.h); loop_plain_copy is
 *                                  the control: plain vs its identical copy is
 *                                  what this method cannot resolve
 *
 * The loops are extern and noinline so that callgrind and objdump find each
 * one under its own name (scripts/bench reads their hot-path bytes too).
 */
#include "bench.h"

#include <ctrace.h>

/* noipa: gcc would otherwise fold identical loops into one (-fipa-icf). */
#if defined(__GNUC__) && !defined(__clang__)
#define NOIPA __attribute__((noinline, noipa))
#else
#define NOIPA __attribute__((noinline))
#endif
#define LOOP_FN NOIPA unsigned long long

long expensive_calls;

/* What a careless argument costs when evaluated: a call and a formatting. */
__attribute__((noinline)) const char *expensive_text(unsigned long long x)
{
	static char buf[32];

	expensive_calls++;
	snprintf(buf, sizeof(buf), "{\"x\":%llu}", x);
	return buf;
}

/* The work: x = a*x + c; the empty asm keeps gcc from reshaping the loop. */
#define STEP(x)                                                                \
	do {                                                                   \
		x = x * 6364136223846793005ull + 1442695040888963407ull;       \
		__asm__ __volatile__("" : "+r"(x));                            \
	} while (0)

LOOP_FN loop_plain(long n)
{
	unsigned long long x = 1;

	for (long i = 0; i < n; i++)
		STEP(x);
	return x;
}

LOOP_FN loop_plain_copy(long n)
{
	unsigned long long x = 1;

	for (long i = 0; i < n; i++)
		STEP(x);
	return x;
}

LOOP_FN loop_instant(long n)
{
	unsigned long long x = 1;

	for (long i = 0; i < n; i++) {
		STEP(x);
		CTRACE_INSTANT(NULL, expensive_text(x), CTRACE_SCOPE_THREAD,
			       expensive_text(x + 1));
	}
	return x;
}

LOOP_FN loop_sites4(long n)
{
	unsigned long long x = 1;

	for (long i = 0; i < n; i++) {
		struct ctrace_span sp;

		CTRACE_SPAN_BEGIN(NULL, &sp, expensive_text(x), expensive_text(i));
		STEP(x);
		CTRACE_COUNTER_ADD(NULL, expensive_text(i), (double)x / 3.0);
		CTRACE_INSTANT(NULL, expensive_text(x), CTRACE_SCOPE_THREAD, NULL);
		CTRACE_SPAN_END(&sp, expensive_text(x));
	}
	return x;
}

#ifdef CTRACE_SCOPE
LOOP_FN loop_scope(long n)
{
	unsigned long long x = 1;

	for (long i = 0; i < n; i++) {
		CTRACE_SCOPE(NULL, expensive_text(x), expensive_text(i));
		STEP(x);
	}
	return x;
}
#endif

/*
 * Real sites sit in functions, not loops: a site can also cost the function
 * around it (registers saved in the prologue for the armed path). So the
 * same step as a small function, called once per iteration, with and
 * without a site, the usual way (literal name) and with computed arguments.
 */
NOIPA unsigned long long fn_plain(unsigned long long x)
{
	STEP(x);
	return x;
}

NOIPA unsigned long long fn_instant(unsigned long long x)
{
	STEP(x);
	CTRACE_INSTANT(NULL, "step", CTRACE_SCOPE_THREAD, NULL);
	return x;
}

NOIPA unsigned long long fn_instant_args(unsigned long long x)
{
	STEP(x);
	CTRACE_INSTANT(NULL, expensive_text(x), CTRACE_SCOPE_THREAD,
		       expensive_text(x + 1));
	return x;
}

#define CALLS(fn)                                                              \
	LOOP_FN calls_##fn(long n)                                             \
	{                                                                      \
		unsigned long long x = 1;                                      \
		for (long i = 0; i < n; i++)                                   \
			x = fn(x);                                             \
		return x;                                                      \
	}
CALLS(fn_plain)
CALLS(fn_instant)
CALLS(fn_instant_args)

static unsigned long long sink;

#define WRAP(loop)                                                             \
	static void run_##loop(long n) { sink += loop(n); }
WRAP(loop_plain)
WRAP(loop_plain_copy)
WRAP(loop_instant)
WRAP(loop_sites4)
WRAP(calls_fn_plain)
WRAP(calls_fn_instant)
WRAP(calls_fn_instant_args)
#ifdef CTRACE_SCOPE
WRAP(loop_scope)
#endif

int main(int argc, char **argv)
{
	struct bench_case c[] = {
		{ .key = "loop_plain", .fn = run_loop_plain },
		{ .key = "loop_plain_copy", .fn = run_loop_plain_copy },
		{ .key = "loop_instant", .fn = run_loop_instant },
		{ .key = "loop_sites4", .fn = run_loop_sites4 },
		{ .key = "calls_fn_plain", .fn = run_calls_fn_plain },
		{ .key = "calls_fn_instant", .fn = run_calls_fn_instant },
		{ .key = "calls_fn_instant_args", .fn = run_calls_fn_instant_args },
#ifdef CTRACE_SCOPE
		{ .key = "loop_scope", .fn = run_loop_scope },
#endif
	};
	int nc = sizeof(c) / sizeof(c[0]);
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	if (argc < 3 || (strcmp(argv[1], "count") && strcmp(argv[1], "time"))) {
		fputs("usage: untraced_loop count N | time N ROUNDS\n", stderr);
		return 2;
	}
	if (!strcmp(argv[1], "count")) {
		for (int i = 0; i < nc; i++)
			c[i].fn(n);
	} else {
		bench_rounds(c, nc, argc > 3 ? atoi(argv[3]) : 11, n);
		for (int i = 0; i < nc; i++)
			printf("%s %.4f\n", c[i].key, c[i].median);
	}
#ifndef CTRACE_SCOPE
	printf("loop_scope n/a\n");
#endif
	/* A tracer attached meanwhile would make the figures meaningless. */
	printf("traced %d\n", CTRACE_ENABLED());
	printf("args_evaluated %ld\n", expensive_calls);
	return 0;
}
