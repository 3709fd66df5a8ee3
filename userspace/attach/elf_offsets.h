/* SPDX-License-Identifier: MIT */
/*
 * elf_offsets.h - where things are in an ELF object's file, as uprobes want
 * them (file offsets): its .init code, and a function of its symbol tables.
 */
#ifndef CTRACE_ELF_OFFSETS_H
#define CTRACE_ELF_OFFSETS_H

#include <stdint.h>

/*
 * The file offset of the executable .init section of `path`, or 0 if it has
 * none: code that runs once, when the object is loaded, and never again.
 * attach.c raises a semaphore with a uprobe there (perf-uprobe mode), where
 * no later hit can happen before its program is bound.
 */
uint64_t elf_init_offset(const char *path);

/*
 * The file offset of function `name` in the ELF file at `path` (its symbol
 * tables, the loadable segment that holds it); 0 if none. link_map_watch.c
 * hooks the dynamic linker's _dl_debug_state there.
 */
uint64_t elf_function_offset(const char *path, const char *name);

/*
 * The link-time address of the symbol `name` defined in the ELF file at
 * `path` (.symtab, else .dynsym: a stripped program keeps its exported
 * data there, as PostgreSQL's NBuffers). 0, or -ENOENT (no such symbol,
 * or an unreadable file).
 */
int elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr);

#endif
