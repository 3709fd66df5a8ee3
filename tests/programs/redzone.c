// SPDX-License-Identifier: MIT
/*
 * redzone - does a probe hit corrupt the x86-64 red zone?
 *
 * The SysV x86-64 ABI lets a leaf function keep data in the 128 bytes below
 * %rsp (the red zone) without moving %rsp. A uprobe on a 5-byte nop is turned
 * by the kernel (after its first hit) into a `call` to a trampoline, and a
 * call pushes at -8(%rsp): into the red zone. ctrace's site steps %rsp down
 * by 128 around its 5-byte nop (usdt/ctrace_site.h) so the push lands below.
 *
 * Each leaf below is one asm statement, so that what is in the red zone is
 * not up to the compiler: it stores 16 known quadwords at -8..-128(%rsp),
 * runs a probe site, then counts the quadwords that changed. The pattern
 * depends on the call number, so a stale value cannot pass for a good one.
 *
 *   redzone [guarded|control] [CALLS]      (default: guarded 100000)
 *
 * guarded: the site is a real ctrace site (CTRACE__SITE_ASM, the same text
 *          every CTRACE_INSTANT expands to), CTRACE_INSTANT(NULL, "rz",
 *          CTRACE_SCOPE_THREAD, NULL), behind ctrace_semaphore.
 * control: a deliberately UNGUARDED site: a bare 5-byte nop with its own
 *          stapsdt note (provider "redzone_control", probe "site", no
 *          arguments) and its own semaphore; the note points at the nop5.
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for the site's semaphore
 * to be raised by a tracer (exit 3 if not), makes CALLS calls, prints
 * "calls=N corrupted_calls=K corrupted_slots=S armed_ns=A done_ns=D" (A, D:
 * CLOCK_MONOTONIC when the semaphore was seen raised and after the last
 * call, to compare with the trace's timestamps) and exits 0 if K == 0, else 1.
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

/* The control site's semaphore: raised by a tracer attached to its note. */
__attribute__((used, section(".probes")))
volatile unsigned short redzone_control_semaphore;

/* 16 quadwords at -8(%rsp) .. -128(%rsp): value seed + offset. */
#define RZ_OFFSETS "8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128"

#define RZ_FILL                                                                \
	".irp off," RZ_OFFSETS "\n"                                            \
	"	lea \\off(%[seed]), %%r8\n"                                    \
	"	mov %%r8, -\\off(%%rsp)\n"                                     \
	".endr\n"

/* %[bad] = how many of the 16 quadwords differ from what RZ_FILL stored. */
#define RZ_CHECK                                                               \
	"	xor %k[bad], %k[bad]\n"                                        \
	".irp off," RZ_OFFSETS "\n"                                            \
	"	lea \\off(%[seed]), %%r8\n"                                    \
	"	cmp %%r8, -\\off(%%rsp)\n"                                     \
	"	setne %%r9b\n"                                                 \
	"	movzbl %%r9b, %%r9d\n"                                         \
	"	add %%r9, %[bad]\n"                                            \
	".endr\n"

static const char rz_name[] = "rz";

/* A leaf with live red-zone data across a real ctrace instant site. */
__attribute__((noinline)) static unsigned long leaf_guarded(unsigned long seed)
{
	unsigned long bad;

	__asm__ __volatile__(
		RZ_FILL
		"	cmpw $0, ctrace_semaphore(%%rip)\n"
		"	je 1f\n"
		CTRACE__SITE_ASM(instant, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx")
		"1:\n"
		RZ_CHECK
		: [bad] "=&r"(bad)
		: [seed] "r"(seed), "D"(0ULL), "S"(rz_name),
		  "d"((unsigned long long)CTRACE_SCOPE_THREAD), "c"(0ULL)
		: "r8", "r9", "cc", "memory");
	return bad;
}

/*
 * The same leaf around an unguarded site: the note's address is the 5-byte
 * nop itself, with no lea around it (what a naive nop5 USDT would be).
 */
__attribute__((noinline)) static unsigned long leaf_control(unsigned long seed)
{
	unsigned long bad;

	__asm__ __volatile__(
		RZ_FILL
		"	cmpw $0, redzone_control_semaphore(%%rip)\n"
		"	je 1f\n"
		"990:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* nopl 0x0(%%rax,%%rax,1) */
		"	.pushsection .note.stapsdt,\"?\",\"note\"\n"
		"	.balign 4\n"
		"	.4byte 992f-991f, 994f-993f, 3\n"
		"991:	.asciz \"stapsdt\"\n"
		"992:	.balign 4\n"
		"993:	.8byte 990b\n"
		"	.8byte _.stapsdt.base\n"
		"	.8byte redzone_control_semaphore\n"
		"	.asciz \"redzone_control\"\n"
		"	.asciz \"site\"\n"
		"	.asciz \"\"\n"
		"994:	.balign 4\n"
		"	.popsection\n"
		"1:\n"
		RZ_CHECK
		: [bad] "=&r"(bad)
		: [seed] "r"(seed)
		: "r8", "r9", "cc", "memory");
	return bad;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int armed(int control)
{
	return control ? redzone_control_semaphore != 0 : CTRACE_ENABLED();
}

int main(int argc, char **argv)
{
	int control = argc > 1 && !strcmp(argv[1], "control");
	long calls = argc > 2 ? atol(argv[2]) : 100000;
	unsigned long slots = 0, bad_calls = 0;
	unsigned long long armed_ns;
	int waited_ms = 0;

	if (argc > 1 && !control && strcmp(argv[1], "guarded")) {
		fprintf(stderr, "usage: redzone [guarded|control] [CALLS]\n");
		return 2;
	}
	say_ready();
	while (!armed(control)) {
		if (++waited_ms > 10000) {
			fprintf(stderr, "redzone: no tracer attached within 10 s\n");
			return 3;
		}
		usleep(1000);
	}
	armed_ns = mono_ns();
	for (long i = 0; i < calls; i++) {
		/* A different pattern each call (odd multiplier: all distinct). */
		unsigned long seed = (unsigned long)i * 0x9e3779b97f4a7c15ul;
		unsigned long bad = control ? leaf_control(seed) : leaf_guarded(seed);

		slots += bad;
		bad_calls += bad != 0;
	}
	printf("calls=%ld corrupted_calls=%lu corrupted_slots=%lu armed_ns=%llu done_ns=%llu\n",
	       calls, bad_calls, slots, armed_ns, mono_ns());
	return bad_calls ? 1 : 0;
}
