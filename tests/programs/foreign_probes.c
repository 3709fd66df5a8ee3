// SPDX-License-Identifier: MIT
/*
 * foreign_probes - USDT probes made with <sys/sdt.h> (systemtap-sdt-dev), as
 * PostgreSQL's or the JVM's are, no ctrace probe at all: what --usdt traces
 * (tests/integration/test_usdt.c).
 *
 *   foreign_probes [wait]
 *
 * With "wait" it prints the ready line and waits (10 s at most) for a
 * tracer to raise the semaphores (the notes', not ctrace's) of
 * demo:message, demo:enter and demo:leave: the probes of a program built
 * with <sys/sdt.h> fire whether traced or not, and each one's own
 * semaphore says when its probe is attached.
 * Then, once, on the main thread:
 *   demo:leave("orphan")                 an end whose begin never fired
 *   demo:values(-5, 65535, -100000, -1234567890123 in registers of their
 *               width, 7, 18446744073709551615, -1)
 *   demo:global(-(pid * 1000 + 7) and pid + 5, read from memory relative
 *               to %rip: "-8@demo_global(%rip) -4@8+demo_stats(%rip)", an
 *               exported global and a static struct's field, set at run
 *               time; specs libbpf 1.1 cannot decode, read by ctrace-bpf)
 *   demo:message("hello from demo")
 *   demo:enter("outer") demo:enter("inner") demo:leave("inner") demo:leave("outer")
 *   demo:twelve(1..10, 11 and -22 read through a pointer)
 *   demo:enter("left open")             never left: open at the stop
 * and prints "fired".
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The semaphores the notes name: a tracer raises each (the uprobe's reference counter). */
#define SEMAPHORE(name) unsigned short demo_##name##_semaphore __attribute__((section(".probes"), used))
SEMAPHORE(message);
SEMAPHORE(leave);
SEMAPHORE(enter);
SEMAPHORE(values);
SEMAPHORE(twelve);
SEMAPHORE(global);

/* Read from memory by the probe (sym(%rip), N+sym(%rip) argument specs). */
volatile int64_t demo_global = 4242;
static volatile struct {
	int64_t a;
	int32_t b;
} demo_stats;

/* Read through a pointer: an N(%reg) argument spec. */
struct pair {
	int64_t a;
	int32_t b;
};
static struct pair demo_pair = { 11, -22 };
struct pair *volatile demo_pair_at = &demo_pair;

/* Values the compiler cannot fold into constants: they come in registers of each width. */
volatile int8_t v_small = -5;
volatile uint16_t v_word = 65535;
volatile int32_t v_neg = -100000;
volatile int64_t v_big = -1234567890123LL;

int main(int argc, char **argv)
{
	int8_t small = v_small;
	uint16_t word = v_word;
	int32_t neg = v_neg;
	int64_t big = v_big;
	uint64_t all_ones = UINT64_MAX;
	int minus_one = -1;
	struct pair *pp = demo_pair_at;

	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("ready pid=%d main_tid=%d\n", (int)getpid(), (int)syscall(SYS_gettid));
		fflush(stdout);
		for (int ms = 0; !demo_message_semaphore || !demo_enter_semaphore || !demo_leave_semaphore; ms++) {
			if (ms == 10000) {
				fprintf(stderr, "foreign_probes: no tracer raised the semaphores of demo:message, enter and leave\n");
				return 1;
			}
			usleep(1000);
		}
	}
	DTRACE_PROBE1(demo, leave, "orphan");
	DTRACE_PROBE7(demo, values, small, word, neg, big, 7, all_ones, minus_one);
	/* Values the file does not hold: only the process's memory has them. */
	demo_global = -((int64_t)getpid() * 1000 + 7);
	demo_stats.b = (int32_t)getpid() + 5;
	DTRACE_PROBE2(demo, global, demo_global, demo_stats.b);
	DTRACE_PROBE1(demo, message, "hello from demo");
	DTRACE_PROBE1(demo, enter, "outer");
	DTRACE_PROBE1(demo, enter, "inner");
	usleep(1000);
	DTRACE_PROBE1(demo, leave, "inner");
	DTRACE_PROBE1(demo, leave, "outer");
	DTRACE_PROBE12(demo, twelve, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, pp->a, pp->b);
	DTRACE_PROBE1(demo, enter, "left open");
	printf("fired\n");
	fflush(stdout);
	return 0;
}
