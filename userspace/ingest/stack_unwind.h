/* SPDX-License-Identifier: MIT */
/*
 * stack_unwind.h - the traced processes' address spaces as elfutils'
 * libdwfl sees them, for --stacks: one Dwfl per process, its objects (read
 * through /proc/PID/root, or /proc/PID/map_files for a file deleted since)
 * reported at their load addresses, so that a pc finds its object, and a
 * DWARF sample (registers and the stack's top, copied by the BPF program)
 * is unwound by libdwfl from the objects' .eh_frame / .debug_frame: no
 * unwinder of ours.
 *
 * Objects are only added, never taken out: a library dlclose()d after an
 * event keeps its module (libdwfl holds the file open), so the event's
 * stack is still symbolized when it is decoded later. The objects are
 * looked at each time the process is attached (its start, every dlopen:
 * stack_unwind_objects(), before any of the objects' probes rises) and
 * when a pc is in none of them.
 * An object mapped where another was (dlopen after dlclose at the same
 * address) replaces the process's modules: stacks of the old one decoded
 * after that are written as addresses.
 */
#ifndef CTRACE_STACK_UNWIND_H
#define CTRACE_STACK_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>
#include "ctrace_record.h"
#include "lib/key_map.h"

struct stack_unwind {
	struct key_map procs; /* tgid -> struct stack_proc * */
	uint64_t objects_reported; /* modules opened, all processes */
	uint64_t objects_failed;   /* objects libdwfl could not open */
	uint64_t rebuilds;         /* a process's modules started over (a mapping replaced) */
	uint64_t evicted;          /* processes whose Dwfl was let go (STACK_UNWIND_PROCS_MAX) */
	uint64_t uses;
};

/* Processes with a Dwfl (and their objects open) at once, at most. */
#define STACK_UNWIND_PROCS_MAX 128

/* A DWARF sample, as the record's stack part carries it. */
struct stack_sample {
	uint32_t tid;
	uint64_t regs[CTRACE_STACK_REGS];
	const unsigned char *stack; /* copied from regs[7] (rsp) up */
	size_t stack_len;
};

void stack_unwind_init(struct stack_unwind *u);
void stack_unwind_free(struct stack_unwind *u);
/* Process tgid maps these objects (proc_maps.h), as the attach found them. */
struct mapped_object_list;
void stack_unwind_objects(struct stack_unwind *u, uint32_t tgid, const struct mapped_object_list *l);
/* The module holding pc in process tgid (its mappings looked at again once if none does), or NULL. */
Dwfl_Module *stack_unwind_module(struct stack_unwind *u, uint32_t tgid, uint64_t pc);
/*
 * Unwinds a DWARF sample of process tgid: up to max pcs, innermost first;
 * activation[i] is false for a return address (look up pc - 1). Returns
 * how many, and *complete: the unwind reached the stack's end (or max)
 * rather than stopping at an error.
 */
size_t stack_unwind_dwarf(struct stack_unwind *u, uint32_t tgid, const struct stack_sample *s,
			  uint64_t *pcs, bool *activation, size_t max, bool *complete);

#endif
