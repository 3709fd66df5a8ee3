// SPDX-License-Identifier: MIT
/*
 * hostile_stack - probe sites hit with a stack no unwinder can trust, for
 * --stacks (tests/integration/test_stacks.c). A ctrace site (the header's
 * own instant site, usdt/ctrace_site.h) inside an asm block that first
 * points %rsp and %rbp elsewhere and puts them back right after the site:
 *
 *   garbage-unmapped  %rsp and %rbp at addresses nothing is mapped at
 *   garbage-random    %rsp and %rbp into a buffer of addresses that cannot
 *                     be code (non-canonical: bit 63 set)
 *
 * then "after", an ordinary instant in main. Prints "ready ...", waits for
 * a tracer, exits 0 (3 when none came).
 */
#include <ctrace.h>
#include <stdint.h>
#include "ready.h"

static uint64_t fake_stack[1024];

static __attribute__((noinline)) void site_with_stack(const char *name, uint64_t sp, uint64_t bp)
{
	if (!CTRACE_ENABLED())
		return;
	/* No memory is touched between the two moves: the site only reads registers. */
	__asm__ __volatile__("mov %%rsp, %%r12\n\t"
			     "mov %%rbp, %%r13\n\t"
			     "mov %[sp], %%rsp\n\t"
			     "mov %[bp], %%rbp\n\t"
			     CTRACE__SITE_ASM(instant, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx 8@%%rax")
			     "mov %%r12, %%rsp\n\t"
			     "mov %%r13, %%rbp\n\t"
			     :
			     : "D"(0ull), "S"(name), "d"((unsigned long long)'t'), "c"(0ull),
			       "a"(1ull), [sp] "r"(sp), [bp] "r"(bp)
			     : "r12", "r13", "memory");
}

int main(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < sizeof(fake_stack) / sizeof(fake_stack[0]); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		fake_stack[i] = x | (1ull << 63);
	}
	if (!ready_and_wait())
		return 3;
	site_with_stack("garbage-unmapped", 0xdead0000ull, 0x1234ull);
	site_with_stack("garbage-random", (uint64_t)&fake_stack[512], (uint64_t)&fake_stack[600]);
	CTRACE_INSTANT(NULL, "after", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}
