/* SPDX-License-Identifier: MIT */
/*
 * process_epoch.h - the BPF side's count of each traced process's changes
 * to its objects (bpf/ctrace.bpf.c: literal_epochs and exec_began), read
 * live in the skeleton's mmapped .bss. The epoch moves on at every dlopen,
 * dlclose and exec. exec_began is noted at the start of every exec: the
 * epoch it began in, plus one (low half), and a count of execs begun (high).
 *
 * What the loader sees of a process (its maps, its memory) is of the image
 * it ran in the epoch read before looking if no exec began in that epoch
 * nor during the look: the kernel maps the new image before the epoch
 * moves on (sched_process_exec comes after the ELF loader), so a look in
 * between sees the new image, half mapped, under the old epoch. It is
 * exact if the epoch did not move either (no dlopen or dlclose meanwhile).
 */
#ifndef CTRACE_PROCESS_EPOCH_H
#define CTRACE_PROCESS_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

/* As many as the BPF side's (bpf/ctrace.bpf.c: LITERAL_EPOCH_SLOTS); a process's is tgid % slots. */
#define PROCESS_EPOCH_SLOTS 4096

struct process_epochs {
	const volatile uint32_t *epoch;      /* NULL until the programs are loaded: all 0 */
	const volatile uint64_t *exec_began; /* NULL: no exec watch, none known */
};

/* What the BPF side said of a process as a look at it began. */
struct process_look {
	uint32_t epoch;
	uint64_t exec_began;
};

uint32_t process_epoch_slot(uint32_t tgid);
/* The epoch of tgid now. */
uint32_t process_epoch_now(const struct process_epochs *pe, uint32_t tgid);
/* Before looking at tgid. */
struct process_look process_look_begin(const struct process_epochs *pe, uint32_t tgid);
/* After: the look saw the image of look->epoch (no exec touched it). */
bool process_look_whole(const struct process_epochs *pe, uint32_t tgid,
			const struct process_look *look);
/* After: whole, and nothing else changed (the epoch did not move). */
bool process_look_exact(const struct process_epochs *pe, uint32_t tgid,
			const struct process_look *look);

#endif
