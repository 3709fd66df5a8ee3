/* SPDX-License-Identifier: MIT */
/*
 * link_map_watch.h - learns of a traced process's dlopen() and dlclose() as
 * they happen. The dynamic linker calls _dl_debug_state() (r_debug.r_brk,
 * the hook debuggers break on) before and after every change to its list
 * of objects; a uprobe there (bpf/ctrace.bpf.c: ctrace_link_map) sends a
 * record that wakes the loader at once, which looks at the process's maps
 * again and attaches a new library before its first use. The maps are
 * still polled as well, for objects mapped some other way.
 */
#ifndef CTRACE_LINK_MAP_WATCH_H
#define CTRACE_LINK_MAP_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/key_map.h"

struct bpf_program;
struct bpf_link;

struct link_map_watch {
	bool global;           /* one uprobe per ld.so file for every process (pid -1) */
	/*
	 * multi: uprobe_multi links (the programs were loaded for them). Else
	 * perf-event uprobes, which for one process also turn on the
	 * scheduler's perf hooks (a cost on every context switch), so they
	 * are used only where the probes' own links are perf events too.
	 */
	bool multi;
	bool verbose;
	const struct bpf_program *prog; /* the program the hooks run (one BPF object) */
	struct key_map seen;   /* {pid (0 when global), inode, dev} of ld.so files hooked -> what was hooked (contents, slot) */
	struct bpf_link **links; /* perf-event uprobes */
	size_t n, cap;
	int *fds;                /* uprobe_multi links */
	size_t n_fds, cap_fds;
};

void link_map_watch_init(struct link_map_watch *w, bool global, bool verbose);
/*
 * Hooks the dynamic linker of `pid` with `prog` unless done before. 1 when
 * hooked now, 0 when already (or the process has no dynamic linker: a static
 * program), -errno when it could not be (the maps are then polled only).
 * Called with the program of another BPF object (the loader reloaded it),
 * it forgets the hooks of the old one and starts again.
 */
int link_map_watch_process(struct link_map_watch *w, struct bpf_program *prog, bool multi,
			   int pid);
/* The process's hook was bound to a task that is gone (attach_forget_process): hook it anew. */
void link_map_watch_forget(struct link_map_watch *w, int pid);
void link_map_watch_free(struct link_map_watch *w);

#endif
