/* SPDX-License-Identifier: MIT */
/*
 * ctrace_site.h - how one ctrace probe site and its ELF note are made.
 *
 * Included by include/ctrace.h; applications never include it directly.
 *
 * A site is a standard SystemTap SDT (USDT) probe, provider "ctrace", so that
 * readelf -n, bpftrace -l, BCC's tplist and libbpf's USDT support all see it.
 * What differs from <sys/sdt.h> is the instructions at the site:
 *
 *     990: nop                       <- the note's address (what other tools use)
 *          lea  -128(%rsp), %rsp     <- step over the x86-64 red zone
 *     991: nopl 0x0(%rax,%rax,1)     <- 5-byte nop: where ctrace-bpf attaches
 *          lea  128(%rsp), %rsp
 *
 * Why: the kernel turns a uprobe on a 5-byte nop into a call to a trampoline
 * after its first hit (~1.4 us a hit instead of ~5.6 us for the int3 path on a
 * 1-byte nop). That call pushes onto the user stack, i.e. into the 128-byte red
 * zone below %rsp where a leaf function may keep live data. Moving %rsp down by
 * 128 first makes the push land below the red zone. The note still points at
 * the 1-byte nop, which is always probed with int3 (no stack writes), and it is
 * not directly followed by a 5-byte nop (libbpf >= 1.7 would otherwise move its
 * probe onto the unguarded nop5). Our loader knows this layout and attaches
 * at note address + CTRACE_SITE_NOP5_OFFSET, after checking the bytes.
 *
 * Arguments are pinned to fixed registers (see the "D", "S", "d", "c"
 * constraints below): the note's argument specs are then plain %reg specs,
 * which read the same at the nop and at the nop5 (lea changes neither
 * registers nor flags, only %rsp), and the BPF program reads them straight
 * from pt_regs without a per-site spec table. A N(%rsp) spec would be read 128
 * bytes off at the nop5, so memory operands are never used.
 *
 * Every site of a program (or of one shared library) shares one semaphore,
 * ctrace_semaphore, in section .probes. The kernel increments it for every
 * attached uprobe that names it (uprobe ref_ctr_offset), so while anyone traces
 * any ctrace probe it is non-zero and CTRACE_ENABLED() is true. Hidden
 * visibility gives each executable and DSO its own copy, as the kernel's
 * per-file reference counter expects; weak lets every translation unit define
 * it without a library to link.
 */
#ifndef CTRACE_SITE_H
#define CTRACE_SITE_H

#if !defined(__x86_64__)
#error "ctrace probe sites are implemented for x86-64 only"
#endif

/* Byte offset of the 5-byte nop from the note's address: nop (1) + lea (5). */
#define CTRACE_SITE_NOP5_OFFSET 6
/* The exact bytes of a site, from the note's address on. */
#define CTRACE_SITE_BYTES                                                      \
	{ 0x90, 0x48, 0x8d, 0x64, 0x24, 0x80, 0x0f, 0x1f, 0x44, 0x00, 0x00,    \
	  0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 }
#define CTRACE_SITE_LEN 19

/* The loader includes this file for the layout above only. */
#ifndef CTRACE_SITE_LAYOUT_ONLY

#ifdef __cplusplus
extern "C" {
#endif

/*
 * `used`: the notes name the semaphore only inside asm strings, which link
 * time optimization cannot see; without it LTO drops the definition and the
 * link fails (undefined reference to ctrace_semaphore). The extern
 * declaration first keeps -Wmissing-variable-declarations quiet.
 */
extern volatile unsigned short ctrace_semaphore;
__attribute__((weak, used, visibility("hidden"), section(".probes")))
volatile unsigned short ctrace_semaphore;

#ifdef __cplusplus
}
#endif

#define CTRACE__CAT2(a, b) a##b
#define CTRACE__CAT(a, b) CTRACE__CAT2(a, b)
#ifdef __COUNTER__
#define CTRACE__UNIQUE(prefix) CTRACE__CAT(prefix, __COUNTER__)
#else
#define CTRACE__UNIQUE(prefix) CTRACE__CAT(prefix, __LINE__)
#endif

/*
 * The guard of every site: two instructions, `cmpw $0, sem(%rip)` and a
 * not-taken `jne` to the site's out-of-line block, where the arguments are
 * computed (never while untraced). A volatile load in C would cost gcc a
 * third instruction (load, test, branch), so the compare is asm, with the
 * semaphore as a memory operand: a reference the compiler and LTO see (for a
 * hidden symbol, %rip-relative in PIE, non-PIE and shared objects alike).
 * asm volatile: read again at every site, never hoisted out of a loop.
 *
 * ctrace__armed(): the flags are the asm's result ("=@ccne"), so the
 * compiler branches on ZF directly (no setne/test) wherever it tests it.
 */
static __inline__ __attribute__((always_inline)) int ctrace__armed(void)
{
	int armed;

	__asm__ __volatile__("cmpw $0, %1" : "=@ccne"(armed) : "m"(ctrace_semaphore));
	return armed;
}

/* The semaphore as a value (CTRACE_ENABLED()). */
#define CTRACE__ARMED() __builtin_expect(ctrace__armed(), 0)


/*
 * Categories (include/ctrace.h: CTRACE_CATEGORY, CTRACE_IN). A category
 * is an identifier; the default one, ctrace, keeps the semaphore and the
 * guard above exactly as they were (older tracers and other tools trace
 * default-only programs as before). Any other category `cat` has its own
 * semaphore, ctrace_semaphore_cat, so that a tracer can arm some
 * categories and not others: a site of a category nobody traces reads a
 * zero, like an untraced site, and evaluates nothing.
 *
 * Its semaphore is defined by the guard's own asm (a site may give its
 * category inside a function, where C cannot define a variable): a 2-byte
 * slot in .probes, weak and hidden like ctrace_semaphore, in a COMDAT
 * group of its own so that exactly one copy is kept per executable or DSO
 * whatever the compiler keeps of the functions that named it (inline
 * functions, templates, LTO partitions). `.ifndef` emits it once per
 * assembly file. With it goes a non-allocated note (owner "ctrace", type
 * 1, in .note.ctrace, same group): the semaphore's link-time address and
 * the category's name, which the tracer reads (stripped files keep it: no
 * symbol table needed). A semaphore no note describes is of category
 * ctrace.
 */
#define CTRACE__XSTR(x) CTRACE__STR(x)
#define CTRACE__SECOND_(a, b, ...) b
#define CTRACE__SECOND(...) CTRACE__SECOND_(__VA_ARGS__)
#define CTRACE__DEFAULT_CAT_ctrace ~, 1
/* 1 for the default category, 0 for any other. */
#define CTRACE__IS_DEFAULT(cat) CTRACE__SECOND(CTRACE__CAT(CTRACE__DEFAULT_CAT_, cat), 0, ~)
/* The semaphore's symbol, as a string. */
#define CTRACE__SEM_NAME(cat) CTRACE__CAT(CTRACE__SEM_NAME_, CTRACE__IS_DEFAULT(cat))(cat)
#define CTRACE__SEM_NAME_1(cat) "ctrace_semaphore"
#define CTRACE__SEM_NAME_0(cat) "ctrace_semaphore_" CTRACE__XSTR(cat)
/* The definition and the note of a category's semaphore (nothing for the default). */
#define CTRACE__SEM_DEF(cat) CTRACE__CAT(CTRACE__SEM_DEF_, CTRACE__IS_DEFAULT(cat))(cat)
#define CTRACE__SEM_DEF_1(cat) ""
#define CTRACE__SEM_DEF_0(cat) CTRACE__SEM_DEF_ASM(CTRACE__SEM_NAME_0(cat), CTRACE__XSTR(cat))
#define CTRACE__SEM_DEF_ASM(sem, name)                                         \
	"	.ifndef " sem "\n"                                             \
	"	.pushsection .probes,\"awG\",@progbits," sem ",comdat\n"      \
	"	.weak " sem "\n"                                               \
	"	.hidden " sem "\n"                                             \
	"	.type " sem ",@object\n"                                       \
	"	.balign 2\n"                                                   \
	sem ":	.2byte 0\n"                                                    \
	"	.size " sem ",2\n"                                             \
	"	.popsection\n"                                                 \
	"	.pushsection .note.ctrace,\"G\",@note," sem ",comdat\n"       \
	"	.balign 4\n"                                                   \
	"	.4byte 996f-995f, 998f-997f, 1\n"                              \
	"995:	.asciz \"ctrace\"\n"                                           \
	"996:	.balign 4\n"                                                   \
	"997:	.8byte " sem "\n"                                              \
	"	.asciz \"" name "\"\n"                                         \
	"998:	.balign 4\n"                                                   \
	"	.popsection\n"                                                 \
	"	.endif\n"

/*
 * The guard of a category other than the default: the same compare, with
 * its semaphore named in the asm text (there is no C declaration of it),
 * which defines it too. Sets `armed` to the flag (a statement).
 */
#define CTRACE__ARMED_SET_0(cat, armed)                                        \
	__asm__ __volatile__("cmpw $0, " CTRACE__SEM_NAME_0(cat) "(%%rip)\n"  \
			     CTRACE__SEM_DEF_0(cat) : "=@ccne"(armed))
/* CTRACE__ARMED() of a category: an expression (the default's is CTRACE__ARMED() itself). */
#define CTRACE__ARMED_IN(cat) CTRACE__CAT(CTRACE__ARMED_IN_, CTRACE__IS_DEFAULT(cat))(cat)
#define CTRACE__ARMED_IN_1(cat) CTRACE__ARMED()
#define CTRACE__ARMED_IN_0(cat)                                                \
	__extension__({                                                        \
		int ctrace__on;                                                \
		CTRACE__ARMED_SET_0(cat, ctrace__on);                          \
		__builtin_expect(ctrace__on, 0);                               \
	})

/*
 * CTRACE__WHEN_ARMED(statements): runs them only while armed, an if on
 * ctrace__armed(). Not asm goto: clang before 19 (at least 14 and 16) takes
 * every asm goto label of a function as a possible target of every asm
 * goto, and refuses one that could cross a cleanup (a CTRACE_SCOPE, a C++
 * destructor): "cannot jump from this asm goto statement to one of its
 * possible targets". (gcc, too, does better with the if: around an asm goto
 * it copies a live register back and forth, two instructions more.)
 */
#define CTRACE__WHEN_ARMED(...)                                                \
	do {                                                                   \
		if (CTRACE__ARMED()) {                                         \
			__VA_ARGS__                                            \
		}                                                              \
	} while (0)

/* The same for a category's sites. */
#define CTRACE__WHEN_ARMED_IN(cat, ...)                                        \
	CTRACE__CAT(CTRACE__WHEN_ARMED_IN_, CTRACE__IS_DEFAULT(cat))(cat, __VA_ARGS__)
#define CTRACE__WHEN_ARMED_IN_1(cat, ...) CTRACE__WHEN_ARMED(__VA_ARGS__)
#define CTRACE__WHEN_ARMED_IN_0(cat, ...)                                      \
	do {                                                                   \
		int ctrace__on;                                                \
		CTRACE__ARMED_SET_0(cat, ctrace__on);                          \
		if (__builtin_expect(ctrace__on, 0)) {                         \
			__VA_ARGS__                                            \
		}                                                              \
	} while (0)

/*
 * The same for CTRACE_SCOPE's start. gcc, given the flag as a value, merges
 * the start's test with the end's (tsc != 0) by keeping the flag in a
 * register (setne, test: seven instructions a scope); asm goto's branch
 * cannot be moved, and gcc threads the end's test away (two). gcc checks
 * only an asm goto's real targets. clang: the if (as above).
 */
#if defined(__clang__)
#define CTRACE__SCOPE_WHEN_ARMED CTRACE__WHEN_ARMED
#define CTRACE__SCOPE_WHEN_ARMED_IN CTRACE__WHEN_ARMED_IN
#else
#define CTRACE__SCOPE_WHEN_ARMED(...) CTRACE__GOTO_WHEN_ARMED(CTRACE__UNIQUE(ctrace__armed_), __VA_ARGS__)
#define CTRACE__GOTO_WHEN_ARMED(label, ...)                                    \
	do {                                                                   \
		__asm__ goto("cmpw $0, %0\n\tjne %l1"                          \
			     : : "m"(ctrace_semaphore) : "cc" : label);        \
		if (0) {                                                       \
		label: {                                                       \
				__VA_ARGS__                                    \
			}                                                      \
		}                                                              \
	} while (0)
#define CTRACE__SCOPE_WHEN_ARMED_IN(cat, ...)                                  \
	CTRACE__CAT(CTRACE__SCOPE_WHEN_ARMED_IN_, CTRACE__IS_DEFAULT(cat))(cat, __VA_ARGS__)
#define CTRACE__SCOPE_WHEN_ARMED_IN_1(cat, ...) CTRACE__SCOPE_WHEN_ARMED(__VA_ARGS__)
#define CTRACE__SCOPE_WHEN_ARMED_IN_0(cat, ...)                                \
	CTRACE__GOTO_WHEN_ARMED_IN(cat, CTRACE__UNIQUE(ctrace__armed_), __VA_ARGS__)
#define CTRACE__GOTO_WHEN_ARMED_IN(cat, label, ...)                            \
	do {                                                                   \
		__asm__ goto("cmpw $0, " CTRACE__SEM_NAME_0(cat) "(%%rip)\n\tjne %l0\n" \
			     CTRACE__SEM_DEF_0(cat) : : : "cc" : label);       \
		if (0) {                                                       \
		label: {                                                       \
				__VA_ARGS__                                    \
			}                                                      \
		}                                                              \
	} while (0)
#endif


/*
 * Every argument travels as a 64-bit unsigned integer. In C++ the
 * conversions must keep -Wold-style-cast and -Wuseless-cast (a cast to the
 * type a value already has) quiet in users' builds: named casts, and
 * overloads that take a value already of the wanted type as it is. The
 * explicit conversions stay (no implicit ones): -Wconversion is quiet too.
 */
#ifdef __cplusplus
#define CTRACE__CAST(type, x) static_cast<type>(x)
#define CTRACE__PCAST(type, x) reinterpret_cast<type>(x) /* pointer <-> integer */
extern "C++" {
template <typename T>
static __inline__ __attribute__((always_inline)) unsigned long long ctrace__u64(T v)
{
	return static_cast<unsigned long long>(v);
}
static __inline__ __attribute__((always_inline)) unsigned long long ctrace__u64(unsigned long long v)
{
	return v;
}
template <typename T>
static __inline__ __attribute__((always_inline)) double ctrace__double(T v)
{
	return static_cast<double>(v);
}
static __inline__ __attribute__((always_inline)) double ctrace__double(double v)
{
	return v;
}
static __inline__ __attribute__((always_inline)) unsigned long long ctrace__ptr(const volatile void *p)
{
	return reinterpret_cast<unsigned long long>(p);
}
}
#define CTRACE__U64(x) ctrace__u64(x)
#define CTRACE__DOUBLE(x) ctrace__double(x)
#define CTRACE__PTR(p) ctrace__ptr(p)
#else
#define CTRACE__CAST(type, x) ((type)(x))
#define CTRACE__PCAST(type, x) ((type)(x))
#define CTRACE__U64(x) ((unsigned long long)(x))
#define CTRACE__DOUBLE(x) ((double)(x))
#define CTRACE__PTR(p) CTRACE__U64((__UINTPTR_TYPE__)(const volatile void *)(p))
#endif

#define CTRACE__STR(x) #x

/*
 * The note: namesz, descsz, type 3, "stapsdt", then the site address, the
 * .stapsdt.base address (lets tools detect prelink-style relocation), the
 * semaphore address, provider, name and argument specs. The note section is
 * not allocated, so these are link-time addresses with no run-time relocation.
 * The .stapsdt.base block is emitted once per object file (.ifndef).
 */
#define CTRACE__SITE_ASM(name, argspec) CTRACE__SITE_ASM_SEM(name, argspec, "ctrace_semaphore")
/* A site of category `cat`: its note names the category's semaphore (defined here too). */
#define CTRACE__SITE_ASM_IN(cat, name, argspec)                                \
	CTRACE__SITE_ASM_SEM(name, argspec, CTRACE__SEM_NAME(cat)) CTRACE__SEM_DEF(cat)
/* The same, with the semaphore `sem` (a symbol's name, as a string) in the note. */
#define CTRACE__SITE_ASM_SEM(name, argspec, sem)                               \
	"990:	nop\n"                                                         \
	"	.pushsection .note.stapsdt,\"?\",\"note\"\n"                   \
	"	.balign 4\n"                                                   \
	"	.4byte 992f-991f, 994f-993f, 3\n"                              \
	"991:	.asciz \"stapsdt\"\n"                                          \
	"992:	.balign 4\n"                                                   \
	"993:	.8byte 990b\n"                                                 \
	"	.8byte _.stapsdt.base\n"                                       \
	"	.8byte " sem "\n"                                              \
	"	.asciz \"ctrace\"\n"                                           \
	"	.asciz \"" CTRACE__STR(name) "\"\n"                            \
	"	.asciz \"" argspec "\"\n"                                      \
	"994:	.balign 4\n"                                                   \
	"	.popsection\n"                                                 \
	"	lea -128(%%rsp), %%rsp\n"                                      \
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                          \
	"	lea 128(%%rsp), %%rsp\n"                                       \
	"	.ifndef _.stapsdt.base\n"                                      \
	"	.pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	"	.weak _.stapsdt.base\n"                                        \
	"	.hidden _.stapsdt.base\n"                                      \
	"_.stapsdt.base: .space 1\n"                                           \
	"	.size _.stapsdt.base, 1\n"                                     \
	"	.popsection\n"                                                 \
	"	.endif\n"

/*
 * The "memory" clobber makes the compiler finish every store to the strings
 * it passes before the site: the BPF program reads them from memory, and
 * without it a store to a buffer that is dead after the probe could be
 * dropped. It only costs anything inside the traced branch.
 */
#define CTRACE__SITE1_IN(cat, name, a0)                                                \
	__asm__ __volatile__(CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi")                 \
			     : : "D"(a0) : "memory")
#define CTRACE__SITE2_IN(cat, name, a0, a1)                                            \
	__asm__ __volatile__(CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi")         \
			     : : "D"(a0), "S"(a1) : "memory")
#define CTRACE__SITE3_IN(cat, name, a0, a1, a2)                                        \
	__asm__ __volatile__(CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx") \
			     : : "D"(a0), "S"(a1), "d"(a2) : "memory")
#define CTRACE__SITE4_IN(cat, name, a0, a1, a2, a3)                                    \
	__asm__ __volatile__(                                                  \
		CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx")      \
		: : "D"(a0), "S"(a1), "d"(a2), "c"(a3) : "memory")

/* Five arguments: the fifth in %rax, as for the literal flags below. */
#define CTRACE__SITE5_IN(cat, name, a0, a1, a2, a3, a4)                                \
	__asm__ __volatile__(                                                  \
		CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx 8@%%rax") \
		: : "D"(a0), "S"(a1), "d"(a2), "c"(a3), "a"(a4) : "memory")

/*
 * Sites whose strings may be literals carry one more argument, after the
 * others: bit 0 set when the name is a string literal, bit 1 when the args
 * are (__builtin_constant_p, true for literals only, known at compile
 * time). A literal never changes, so the BPF program copies it once and
 * then sends its address (the loader keeps the first copy). The flags cost
 * one `mov $n, %reg` in the traced branch. They go in the next free
 * argument register; only 4-argument sites need %rax, which can cost a
 * function returning a value computed before the site one `mov`.
 */
#define CTRACE__LIT(s) CTRACE__CAST(unsigned long long, __builtin_constant_p(s))
#define CTRACE__SITE2L_IN(cat, name, a0, a1, lit)                                      \
	__asm__ __volatile__(CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx") \
			     : : "D"(a0), "S"(a1), "d"(lit) : "memory")
#define CTRACE__SITE3L_IN(cat, name, a0, a1, a2, lit)                                  \
	__asm__ __volatile__(                                                  \
		CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx")      \
		: : "D"(a0), "S"(a1), "d"(a2), "c"(lit) : "memory")
#define CTRACE__SITE4L_IN(cat, name, a0, a1, a2, a3, lit)                              \
	__asm__ __volatile__(                                                  \
		CTRACE__SITE_ASM_IN(cat, name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx 8@%%rax") \
		: : "D"(a0), "S"(a1), "d"(a2), "c"(a3), "a"(lit) : "memory")

/* Sites of the default category (the macros of other kinds use these). */
#define CTRACE__SITE1(name, a0) CTRACE__SITE1_IN(ctrace, name, a0)
#define CTRACE__SITE2(name, a0, a1) CTRACE__SITE2_IN(ctrace, name, a0, a1)
#define CTRACE__SITE3(name, a0, a1, a2) CTRACE__SITE3_IN(ctrace, name, a0, a1, a2)
#define CTRACE__SITE4(name, a0, a1, a2, a3) CTRACE__SITE4_IN(ctrace, name, a0, a1, a2, a3)
#define CTRACE__SITE5(name, a0, a1, a2, a3, a4) CTRACE__SITE5_IN(ctrace, name, a0, a1, a2, a3, a4)
#define CTRACE__SITE2L(name, a0, a1, lit) CTRACE__SITE2L_IN(ctrace, name, a0, a1, lit)
#define CTRACE__SITE3L(name, a0, a1, a2, lit) CTRACE__SITE3L_IN(ctrace, name, a0, a1, a2, lit)
#define CTRACE__SITE4L(name, a0, a1, a2, a3, lit) CTRACE__SITE4L_IN(ctrace, name, a0, a1, a2, a3, lit)

/* The batch probe (usdt/ctrace_batch.h): five arguments, its own semaphore. */
#define CTRACE__SITE5_SEM(name, sem, a0, a1, a2, a3, a4)                       \
	__asm__ __volatile__(                                                  \
		CTRACE__SITE_ASM_SEM(name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx 8@%%rax", sem) \
		: : "D"(a0), "S"(a1), "d"(a2), "c"(a3), "a"(a4) : "memory")

#include "ctrace_batch.h"

#endif /* CTRACE_SITE_LAYOUT_ONLY */
#endif /* CTRACE_SITE_H */
