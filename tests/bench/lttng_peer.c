// SPDX-License-Identifier: MIT
/*
 * lttng_peer - the fastest in-process peer, for comparison: the same instant
 * as probe_cost's through LTTng-UST (a runtime library in the process, a
 * session daemon, shared-memory ring buffers; no kernel entry per event),
 * timed next to getppid in interleaved rounds (bench.h). scripts/bench
 * starts lttng-sessiond, creates a session enabling bench:instant, then runs
 *
 *   lttng_peer [--wait] [--cpu C] [-n N] [-r ROUNDS]
 *
 * Prints "getppid ns", "lttng_instant ns" and "still_traced 0|1" (the event
 * was still enabled at the end). Built with -llttng-ust -ldl.
 */
#include "bench.h"

#include <sys/syscall.h>
#include <unistd.h>

/* This file is the provider's one definition (its probes and constructor). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_peer_tp.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE void run_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* The arguments of probe_cost's CTRACE_INSTANT(NULL, "tick", 't', NULL). */
static NOINLINE void run_lttng_instant(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracepoint(bench, instant, NULL, "tick", 't', NULL);
}

static int enabled(void)
{
	return lttng_ust_tracepoint_enabled(bench, instant) != 0;
}

int main(int argc, char **argv)
{
	struct bench_case c[] = {
		{ .key = "getppid", .fn = run_getppid },
		{ .key = "lttng_instant", .fn = run_lttng_instant },
	};

	/* The session daemon enables the event shortly after the library registers. */
	return bench_peer_main(argc, argv, "lttng_peer", c, 2, enabled);
}
