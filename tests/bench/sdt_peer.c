// SPDX-License-Identifier: MIT
/*
 * sdt_peer - the standard way, for comparison: the same instant as
 * probe_cost's, made with <sys/sdt.h> (SystemTap SDT, what DTrace's -h/-G
 * headers produce) guarded by its own semaphore, timed next to getppid in
 * interleaved rounds (bench.h). scripts/bench traces it with
 *
 *   bpftrace -p PID -e 'usdt:PATH:bench:instant { @ = count(); }'
 *
 * (bpftrace attaches at the note's address: a 1-byte nop, i.e. the int3
 * path of a uprobe; its program only counts.)
 *
 *   sdt_peer [--wait] [--cpu C] [-n N] [-r ROUNDS]
 *
 * Prints "getppid ns" and "sdt_instant ns".
 */
#include "bench.h"

#include <sys/syscall.h>
#include <unistd.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/*
 * The semaphore, named and placed the way sys/sdt.h and dtrace -G expect
 * (provider_name_semaphore in .probes); the tracer increments it. Volatile
 * so that the loop reads it every time, as a real program's would.
 */
__attribute__((section(".probes"))) volatile unsigned short bench_instant_semaphore;

#define BENCH_INSTANT_ENABLED() __builtin_expect(bench_instant_semaphore != 0, 0)

#define NOINLINE __attribute__((noinline))

static NOINLINE void run_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* The same arguments as probe_cost's CTRACE_INSTANT(NULL, "tick", 't', NULL). */
static NOINLINE void run_sdt_instant(long n)
{
	for (long i = 0; i < n; i++)
		if (BENCH_INSTANT_ENABLED())
			DTRACE_PROBE4(bench, instant, (void *)0, "tick", 't', (void *)0);
}

static int sdt_traced(void)
{
	return bench_instant_semaphore != 0;
}

int main(int argc, char **argv)
{
	struct bench_case c[] = {
		{ .key = "getppid", .fn = run_getppid },
		{ .key = "sdt_instant", .fn = run_sdt_instant },
	};

	return bench_peer_main(argc, argv, "sdt_peer", c, 2, sdt_traced);
}
