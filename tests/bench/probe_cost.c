// SPDX-License-Identifier: MIT
/*
 * probe_cost - what one probe costs, untraced and traced, next to one bare
 * syscall (getppid) measured in the same run.
 *
 *   probe_cost [--wait] [ITERATIONS]
 *
 * --wait: wait until a tracer is attached (CTRACE_ENABLED()) before measuring.
 * Prints one line per measurement: "name ns_per_op ratio_to_syscall".
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define MEASURE(label, n, body)                                                \
	do {                                                                   \
		double t0 = now();                                             \
		for (long i = 0; i < (n); i++) {                               \
			body;                                                  \
		}                                                              \
		results[count].name = label;                                   \
		results[count++].ns = (now() - t0) / (n);                      \
	} while (0)

int main(int argc, char **argv)
{
	struct { const char *name; double ns; } results[8];
	int count = 0, wait = 0;
	long n = 200000;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else
			n = atol(argv[i]);
	}
	if (wait) {
		printf("ready pid=%d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0; !CTRACE_ENABLED(); i++) {
			if (i > 10000)
				return 3;
			usleep(1000);
		}
	}
	/* Warm up: the kernel optimizes a uprobe on a nop5 after its first hit. */
	for (int i = 0; i < 1000; i++)
		CTRACE_INSTANT(NULL, "warm", CTRACE_SCOPE_THREAD, NULL);

	MEASURE("getppid syscall", n, syscall(SYS_getppid));
	MEASURE("instant", n, CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL));
	MEASURE("counter_set", n, CTRACE_COUNTER_SET(NULL, "n", i));
	MEASURE("span begin+end", n, {
		struct ctrace_span sp;
		CTRACE_SPAN_BEGIN(NULL, &sp, "span", NULL);
		CTRACE_SPAN_END(&sp, NULL);
	});
	for (int i = 0; i < count; i++)
		printf("%-16s %9.1f ns  %5.2fx syscall\n", results[i].name,
		       results[i].ns, results[i].ns / results[0].ns);
	return 0;
}
