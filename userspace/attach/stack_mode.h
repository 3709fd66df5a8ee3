/* SPDX-License-Identifier: MIT */
/*
 * stack_mode.h - --stacks without fp or dwarf: how to take the stacks of a
 * program. The kernel's frame-pointer walk is cheap but gives garbage past
 * the first function built without frame pointers (most distribution
 * builds); the DWARF way (copy the stack's top, unwind from CFI in the
 * loader) works for every object with .eh_frame, at a higher cost. So:
 * fp when the program's own functions keep a frame pointer (their code
 * starts push %rbp; mov %rsp,%rbp, after an endbr64), else dwarf.
 */
#ifndef CTRACE_STACK_MODE_H
#define CTRACE_STACK_MODE_H

#include <stddef.h>

/*
 * CTRACE_STACK_FP or CTRACE_STACK_DWARF for the ELF file at `path`, and
 * in why[] the reason, in words (for metadata.stacks and -v).
 */
unsigned stack_mode_for(const char *path, char *why, size_t why_len);

#endif
