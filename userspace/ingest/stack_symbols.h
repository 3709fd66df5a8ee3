/* SPDX-License-Identifier: MIT */
/*
 * stack_symbols.h - a pc in a module, as the frames a reader wants: the
 * function (C++ names demangled by libstdc++'s __cxa_demangle) and
 * "file:line" where the object or its separate debug file (found by libdwfl
 * by build-id) has DWARF, the functions inlined at that pc each as a frame
 * of its own (from libdw's scopes, as eu-addr2line -i), the symbol alone
 * where there is no line table, "object+0xoff" where there is not even a
 * symbol.
 */
#ifndef CTRACE_STACK_SYMBOLS_H
#define CTRACE_STACK_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>

/* Frames of one pc, innermost first. */
#define STACK_SYMBOLS_MAX_INLINE 8
struct stack_symbols {
	size_t n;
	char *names[STACK_SYMBOLS_MAX_INLINE]; /* malloc()ed */
	bool symbolized; /* false: "object+0xoff" only */
};

/*
 * Fills *out for `pc` of module `mod` (return_address: pc follows a call,
 * so pc - 1 is looked up). The object's name is the module's.
 */
void stack_symbols_of(Dwfl_Module *mod, Dwarf_Addr pc, bool return_address,
		      struct stack_symbols *out);
void stack_symbols_free(struct stack_symbols *s);

#endif
