// SPDX-License-Identifier: MIT
/*
 * probe_cost - what one ctrace event costs the thread that fires it, next to
 * one bare syscall (getppid) timed in the same run, in interleaved rounds
 * (bench.h). Run it under ctrace-bpf (--wait) for the traced cost; the
 * untraced cost of a site is untraced_loop's job (callgrind, exact).
 *
 *   probe_cost [--wait] [--arm] [--breakdown] [--delay MS] [--cpu C] [-n N] [-r ROUNDS]
 *   probe_cost --spin SECONDS [--wait] [--cpu C]
 *
 * --wait       wait (up to 10 s) until a tracer is attached before timing
 * --arm        raise our own semaphore, nobody attached: what the armed site
 *              costs without any uprobe (arguments + nop/lea/nop5/lea)
 * --breakdown  also time instants without a name, with long names and with
 *              args: the differences are the BPF program's string copies
 * --delay MS   once traced, wait MS milliseconds before timing (lets a
 *              script pause the tracer's consumer first)
 * --cpu C      pin the timing thread to CPU C
 * --spin S     fire instants back to back for S seconds (for perf and
 *              bpf_stats while traced), print how many and the thread's CPU
 *              ns per event
 *
 * Prints "key ns_per_event" lines: getppid, rdtsc (the TSC alone), burst (instants after 3 ms
 * idle), instant, counter, span (begin + end on one thread), scope
 * (CTRACE_SCOPE, or n/a when the header has none), instant_args40 (an
 * instant whose args are 40 bytes of JSON built at run time), instant_kv4
 * (an instant with four typed pairs: int, uint, double, a 14-byte string),
 * instant_cat and span_cat (instant and span of a category, net, not the
 * default: the batched event carries its category); then "hits" (probe hits timed) and, with --cpu, "irq_work_per_hit".
 */
#include "bench.h"

#include <ctrace.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Each case is its own function so that no loop body leaks into another. */
#define NOINLINE __attribute__((noinline))

static NOINLINE void run_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* The time stamp counter alone: the floor of a batched event, which reads it once. */
static NOINLINE void run_rdtsc(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned int lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		__asm__ __volatile__("" : : "r"(lo), "r"(hi));
	}
}

static NOINLINE void run_instant(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
}

static NOINLINE void run_counter(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_COUNTER_SET(NULL, "counter", i);
}

static NOINLINE void run_span(long n)
{
	for (long i = 0; i < n; i++) {
		struct ctrace_span sp;

		CTRACE_SPAN_BEGIN(NULL, &sp, "span", NULL);
		CTRACE_SPAN_END(&sp, NULL);
	}
}

#ifdef CTRACE_IN
/* The same instant and span in a category of their own (net) rather than the default. */
static NOINLINE void run_instant_cat(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_IN(net, INSTANT, NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
}

static NOINLINE void run_span_cat(long n)
{
	for (long i = 0; i < n; i++) {
		struct ctrace_span sp;

		CTRACE_IN(net, SPAN_BEGIN, NULL, &sp, "span", NULL);
		CTRACE_IN(net, SPAN_END, &sp, NULL);
	}
}

/* Defined by the sites' asm above; named here for --arm. */
extern volatile unsigned short ctrace_semaphore_net;
#endif

/*
 * Instants in a burst after 3 ms of quiet (the sleep is not CPU time, so
 * it is not counted): meanwhile the tracer drains the ring buffer and goes
 * to sleep, and a burst is what wakes it. This case comes right after
 * getppid (itself 3 ms without events), so that the cases after it find
 * the tracer awake, as in a steady stream.
 */
static NOINLINE void run_burst(long n)
{
	usleep(3000);
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, "burst", CTRACE_SCOPE_THREAD, NULL);
}

#ifdef CTRACE_SCOPE
static NOINLINE void run_scope(long n)
{
	for (long i = 0; i < n; i++) {
		/* The block is the scope: it ends, and the span with it, every iteration. */
		CTRACE_SCOPE(NULL, "scope", NULL);
		__asm__ __volatile__("" ::: "memory");
	}
}
#endif

/* Breakdown cases: the same instant with more or fewer bytes to copy. */
static const char name63[] =
	"a name of sixty-three bytes, typical of a function and its obj";
static const char args64[] =
	"{\"bytes\":4096,\"file\":\"/var/lib/app/data/segment-0001.bin\"}";
static char name255[256];
/* 40 bytes of JSON built at run time: not a literal (the batched path copies it inline). */
static char args40[41];
/* The file name of args40, as a typed pair's string. */
static char file14[15];

static NOINLINE void run_instant_noname(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, NULL, CTRACE_SCOPE_THREAD, NULL);
}

static NOINLINE void run_instant_name63(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, name63, CTRACE_SCOPE_THREAD, NULL);
}

static NOINLINE void run_instant_name255(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, name255, CTRACE_SCOPE_THREAD, NULL);
}

static NOINLINE void run_instant_args40(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, args40);
}

#ifdef CTRACE_INSTANT_ARGS
/* Four typed pairs (header 0.3+): what a user writes instead of snprintf()ing args40. */
static NOINLINE void run_instant_kv4(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT_ARGS(NULL, "tick", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("fd", i),
				    CTRACE_ARG_UINT("bytes", 4096u), CTRACE_ARG_DOUBLE("ms", 0.25),
				    CTRACE_ARG_STR("file", file14));
}
#endif

static NOINLINE void run_instant_args64(long n)
{
	for (long i = 0; i < n; i++)
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, args64);
}

/*
 * IRQ work interrupts so far on one CPU (/proc/interrupts "IWI"): how the
 * BPF program's ring-buffer wake-ups of the tracer show up on the traced
 * thread's CPU (a self-IPI each, a VM exit under virtualization). -1 if
 * unknown.
 */
static long long irq_work_count(int cpu)
{
	char line[4096];
	long long v = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && cpu >= 0 && fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "IWI:", 4))
			continue;
		p += 4;
		for (int i = 0; i <= cpu; i++, p = end)
			v = strtoll(p, &end, 10);
		break;
	}
	if (f)
		fclose(f);
	return v;
}

static void wait_for_tracer(void)
{
	for (int i = 0; !CTRACE_ENABLED(); i++) {
		if (i > 10000) {
			fputs("probe_cost: no tracer attached within 10 s\n", stderr);
			exit(3);
		}
		usleep(1000);
	}
}

static void spin(double seconds)
{
	double end = bench_now_ns() + seconds * 1e9, cpu0 = bench_cpu_ns();
	long fired = 0;

	while (bench_now_ns() < end) {
		run_instant(1000);
		fired += 1000;
	}
	printf("fired %ld\ncpu_ns_per_event %.1f\n", fired,
	       (bench_cpu_ns() - cpu0) / fired);
}

int main(int argc, char **argv)
{
	struct bench_case cases[16];
	int hits_per_op[16];
	int ncases = 0, rounds = 15, cpu = -1, wait = 0, breakdown = 0, delay_ms = 0;
	long n = 20000;
	long long iwi;
	double spin_secs = 0, hits = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--arm"))
			ctrace_semaphore = 1; /* as if a tracer were attached */
		else if (!strcmp(argv[i], "--arm-batch"))
			ctrace_semaphore = ctrace_batch_semaphore.semaphore = 1; /* the append and its flush site, no probe */
		else if (!strcmp(argv[i], "--breakdown"))
			breakdown = 1;
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
			delay_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--spin") && i + 1 < argc)
			spin_secs = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: probe_cost [--wait] [--arm] [--breakdown] [--delay MS] [--cpu C] [-n N] [-r ROUNDS] [--spin SECONDS]\n");
			return 2;
		}
	}
#ifdef CTRACE_IN
	ctrace_semaphore_net = ctrace_semaphore; /* --arm, --arm-batch: the category too */
#endif
	memset(name255, 'n', sizeof(name255) - 1);
	snprintf(args40, sizeof(args40), "{\"bytes\":%d,\"file\":\"segment-%02d.bin\"}", 4096, 1);
	snprintf(file14, sizeof(file14), "segment-%02d.bin", 1);
	bench_pin(cpu);
	if (wait)
		wait_for_tracer();
	if (delay_ms)
		usleep(delay_ms * 1000);
	if (spin_secs > 0) {
		spin(spin_secs);
		return 0;
	}

	/* Each case, and how many probe hits one of its operations makes. */
#define CASE(k, f, h)                                                          \
	do {                                                                   \
		hits_per_op[ncases] = h;                                       \
		cases[ncases++] = (struct bench_case){ .key = k, .fn = f };    \
	} while (0)
	CASE("getppid", run_getppid, 0);
	CASE("rdtsc", run_rdtsc, 0);
	CASE("burst", run_burst, 1);
	CASE("instant", run_instant, 1);
	CASE("counter", run_counter, 1);
	CASE("span", run_span, 2);
#ifdef CTRACE_SCOPE
	CASE("scope", run_scope, 1);
#endif
	CASE("instant_args40", run_instant_args40, 1);
#ifdef CTRACE_IN
	CASE("instant_cat", run_instant_cat, 1);
	CASE("span_cat", run_span_cat, 2);
#endif
#ifdef CTRACE_INSTANT_ARGS
	CASE("instant_kv4", run_instant_kv4, 1);
#endif
	if (breakdown) {
		CASE("instant_noname", run_instant_noname, 1);
		CASE("instant_name63", run_instant_name63, 1);
		CASE("instant_name255", run_instant_name255, 1);
		CASE("instant_args64", run_instant_args64, 1);
	}
#undef CASE
	/*
	 * Warm up: the kernel replaces the int3 of a uprobe on a nop5 by a call
	 * only after its first hit, and the first hits fault pages in.
	 */
	for (int i = 0; i < ncases; i++)
		cases[i].fn(1000);
	iwi = irq_work_count(cpu);
	bench_rounds(cases, ncases, rounds, n);
	if (iwi >= 0)
		iwi = irq_work_count(cpu) - iwi;
	for (int i = 0; i < ncases; i++) {
		printf("%s %.1f\n", cases[i].key, cases[i].median);
		hits += (double)hits_per_op[i] * n * (rounds > 64 ? 64 : rounds);
	}
	printf("hits %.0f\n", hits);
	if (iwi >= 0)
		printf("irq_work_per_hit %.3f\n", iwi / hits);
#ifndef CTRACE_SCOPE
	printf("scope n/a\n");
#endif
	printf("still_traced %d\n", CTRACE_ENABLED());
	return 0;
}
