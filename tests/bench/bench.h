/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what every benchmark program under tests/bench shares: clocks
 * in ns, pinning to one CPU, and "interleaved rounds":
 * every case is timed once per round, cases alternate within a round, and
 * each case's figure is the median over rounds. Interleaving puts slow drift
 * (frequency, a noisy neighbour, the tracer's consumer waking up) on every
 * case alike, and the median ignores a round hit by an interrupt storm, so
 * ratios between cases measured in one run are honest.
 *
 * Rounds are timed in the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID),
 * not wall time: on a shared machine another process that takes the CPU
 * meanwhile is not charged to the case. What the thread pays is all in it:
 * user time, the kernel's work on its behalf (syscall, uprobe, BPF
 * program) and, on a kernel without IRQ time accounting (this one), the
 * interrupts it takes, such as the tracer's wake-up IPIs.
 *
 * Output convention: one "key value" line per figure on stdout, read by
 * scripts/bench; nothing else goes to stdout.
 */
#ifndef CTRACE_BENCH_H
#define CTRACE_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* CPU time of the calling thread, ns. */
static inline double bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Pins the calling thread; cpu < 0 leaves it where it is. */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("bench: sched_setaffinity");
}

/* One timed case: fn runs the operation n times. */
struct bench_case {
	const char *key;
	void (*fn)(long n);
	double ns[64]; /* per round */
	double median;
};

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Times every case `rounds` times (at most 64), interleaved, n operations a
 * time, and sets each case's median CPU ns per operation.
 */
static inline void bench_rounds(struct bench_case *c, int ncases, int rounds,
				long n)
{
	double tmp[64];

	if (rounds > 64)
		rounds = 64;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < ncases; i++) {
			double t0 = bench_cpu_ns();

			c[i].fn(n);
			c[i].ns[r] = (bench_cpu_ns() - t0) / (double)n;
		}
	}
	for (int i = 0; i < ncases; i++) {
		memcpy(tmp, c[i].ns, sizeof(double) * rounds);
		qsort(tmp, rounds, sizeof(double), bench_cmp_double);
		c[i].median = rounds % 2 ? tmp[rounds / 2] :
					   (tmp[rounds / 2 - 1] + tmp[rounds / 2]) / 2;
	}
}

/*
 * main() of a peer (sdt_peer, lttng_peer): the same instant as
 * probe_cost's through another tracer, timed next to getppid.
 *
 *   NAME [--wait] [--cpu C] [-n N] [-r ROUNDS]
 *
 * --wait: until traced() says the peer's tracer is on (20 s at most).
 * Prints each case's "key ns" and "still_traced 0|1".
 */
static inline int bench_peer_main(int argc, char **argv, const char *name, struct bench_case *c,
				  int ncases, int (*traced)(void))
{
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
			fprintf(stderr, "usage: %s [--wait] [--cpu C] [-n N] [-r ROUNDS]\n", name);
			return 2;
		}
	}
	bench_pin(cpu);
	for (int i = 0; wait && !traced(); i++) {
		if (i > 20000) {
			fprintf(stderr, "%s: its tracer did not come within 20 s\n", name);
			return 3;
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	for (int i = 0; i < ncases; i++)
		c[i].fn(1000); /* warm up, as probe_cost does */
	bench_rounds(c, ncases, rounds, n);
	for (int i = 0; i < ncases; i++)
		printf("%s %.1f\n", c[i].key, c[i].median);
	printf("still_traced %d\n", traced());
	return 0;
}

#endif /* CTRACE_BENCH_H */
