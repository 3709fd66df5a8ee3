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

int main(int argc, char **argv)
{
	struct bench_case c[] = {
		{ .key = "getppid", .fn = run_getppid },
		{ .key = "sdt_instant", .fn = run_sdt_instant },
	};
	int rounds = 15, cpu = -1, wait = 0;
	long n = 20000;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else {
			fputs("usage: sdt_peer [--wait] [--cpu C] [-n N] [-r ROUNDS]\n", stderr);
			return 2;
		}
	}
	bench_pin(cpu);
	for (int i = 0; wait && !bench_instant_semaphore; i++) {
		if (i > 20000) {
			fputs("sdt_peer: no tracer attached within 20 s\n", stderr);
			return 3;
		}
		usleep(1000);
	}
	for (int i = 0; i < 2; i++)
		c[i].fn(1000); /* warm up, as probe_cost does */
	bench_rounds(c, 2, rounds, n);
	for (int i = 0; i < 2; i++)
		printf("%s %.1f\n", c[i].key, c[i].median);
	printf("still_traced %d\n", bench_instant_semaphore != 0);
	return 0;
}
