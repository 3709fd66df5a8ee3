// SPDX-License-Identifier: MIT
/*
 * exec_chain - a process that execs itself again and again, each image
 * exec()ing the moment a tracer arms it, for test_exec.c.
 *
 *   exec_chain HOPS [HOP]
 *
 * The first image (HOP 0) prints "ready pid=P main_tid=T" and waits up to
 * 10 s for a tracer. Each image, once armed, emits on its main thread
 *
 *   I "hop" {"hop":HOP}   (its name a literal: sent by address when batched)
 *
 * and execs itself with HOP + 1, the last (HOP = HOPS - 1) exits 0 instead;
 * exit 3 if an image was never armed. An image after the first waits for
 * its semaphore without sleeping (sched_yield), so that its exec starts
 * just as the tracer, having armed it, looks at its mappings again: each
 * hop is a try at the tracer's look landing inside an exec, where the
 * process already has its new mappings and the kernel has not yet said so.
 */
#include <ctrace.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "elapsed.h"
#include "ready.h"

static int armed_at_once(void)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!CTRACE_ENABLED()) {
		if (ms_since(&t0) >= 10000)
			return 0;
		sched_yield();
	}
	return 1;
}

int main(int argc, char **argv)
{
	int hops = argc > 1 ? atoi(argv[1]) : 1;
	int hop = argc > 2 ? atoi(argv[2]) : 0;
	char args[32], next[16];

	if (!(hop == 0 ? ready_and_wait() : armed_at_once())) {
		puts("never armed");
		return 3;
	}
	snprintf(args, sizeof(args), "{\"hop\":%d}", hop);
	CTRACE_INSTANT(NULL, "hop", CTRACE_SCOPE_THREAD, args);
	if (hop + 1 >= hops)
		return 0;
	snprintf(next, sizeof(next), "%d", hop + 1);
	execl("/proc/self/exe", argv[0], argv[1], next, (char *)NULL);
	perror("exec_chain: exec");
	return 127;
}
