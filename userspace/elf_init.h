/* SPDX-License-Identifier: MIT */
/*
 * elf_init.h - where an ELF object's .init code is in its file: code that
 * runs once, when the object is loaded, and never again. attach.c raises a
 * semaphore with a uprobe there (perf-uprobe mode), where no later hit can
 * happen before its program is bound.
 */
#ifndef CTRACE_ELF_INIT_H
#define CTRACE_ELF_INIT_H

#include <stdint.h>

/* The file offset of the executable .init section of `path`, or 0 if it has none. */
uint64_t elf_init_offset(const char *path);

#endif
