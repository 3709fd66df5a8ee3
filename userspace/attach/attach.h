/* SPDX-License-Identifier: MIT */
/*
 * attach.h - finds the ctrace probe sites of a process (every ELF object it
 * has mapped) and attaches the matching BPF program to each (the kinds
 * table of bpf/ctrace_record.h), filtered to that process, at the site's
 * nop (its guarded 5-byte nop with `fast`), with the semaphore as the
 * uprobe's reference counter (so CTRACE_ENABLED() turns true).
 */
#ifndef CTRACE_ATTACH_H
#define CTRACE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/key_map.h"
#include "ingest/process_epoch.h"
#include "attach/usdt_attach.h"

struct ctrace_bpf;
struct bpf_link;
struct bpf_program;
struct category_filter;

struct mapped_object;
struct mapped_object_list;
struct usdt_specs;

struct attachment {
	/*
	 * Told each process's mapped objects before any probe of theirs is
	 * attached (--stacks: stack_unwind.c opens them then, so an event from
	 * an object is never decoded before its symbols are at hand, even if
	 * it is unmapped right after). NULL: nobody asked.
	 */
	void (*objects_seen)(void *ctx, int pid, const struct mapped_object_list *objs);
	void *objects_ctx;
	/*
	 * Told of each object of a process with a batch probe, with its
	 * semaphore's file offset: the buffers the process had before are
	 * found from there (batch_discover.c). Before the probe is attached
	 * for a process of its own; for one attached in global mode (-f,
	 * --exe), at each look at the process after. NULL: nobody asked.
	 */
	void (*batch_object)(void *ctx, int pid, const struct mapped_object *obj, uint64_t sema_offset);
	void *batch_ctx;
	struct key_map batch_semas; /* {dev, inode} of objects with ctrace:batch attached -> its semaphore's file offset */
	/*
	 * The BPF side's epochs (process_epoch.h): a look at a process's
	 * maps that an exec or a dlopen may have cut short detaches nothing.
	 * Zeroed (no arrays): every look is exact.
	 */
	struct process_epochs epochs;
	/*
	 * multi: the programs were loaded for uprobe_multi links (kernel >= 6.6):
	 * one link per probe kind and object, attached and detached in one step
	 * each, and the program is bound before the uprobes are registered.
	 * Otherwise one perf-event uprobe per site (libbpf's way).
	 */
	bool multi;
	bool verbose;
	/*
	 * global: attach to every process that maps an object (pid -1), the BPF
	 * side keeping only the traced tgids (--follow, --exe): a child is
	 * traced from its first instruction, with no attach to wait for.
	 */
	bool global;
	/*
	 * fast: attach at each site's guarded 5-byte nop, which the kernel
	 * turns into a call after the first hit (faster than the int3 of the
	 * 1-byte nop). Off by default: Linux 6.18 does not copy the call's
	 * trampoline into a child at fork(), so a child that runs a site its
	 * parent had hit dies of SIGSEGV (tests/integration/test_follow_parent_site.c),
	 * so trace_options.c refuses it where the kernel optimizes the nop5.
	 */
	bool fast;
	/*
	 * cookies: each site's address goes with its uprobe as the BPF cookie
	 * (for bpftool and for programs that want it). libbpf refuses a
	 * nonzero cookie on a perf uprobe where the kernel has no BPF links for
	 * perf events (before 5.15): then none is passed.
	 */
	bool cookies;
	/*
	 * no_batch (--no-batch): ctrace:batch is not attached, so its
	 * semaphore stays down and every site fires its own probe. Else each
	 * object's batch sites are attached with ctrace_batch_semaphore, and
	 * counted in batch_sites, not in sites.
	 */
	bool no_batch;
	unsigned batch_sites;
	/* --categories (categories.h); NULL: every category. */
	const struct category_filter *categories;
	unsigned filtered_sites;  /* sites of categories left out: not attached */
	/* --usdt: other programs' probes to attach too (usdt_attach.c); NULL: none. */
	struct usdt_specs *usdt;
	struct usdt_attach_state usdt_state; /* keeps their links in `links` */
	bool other_categories;    /* a site of a category other than the default was attached */
	struct bpf_link **links; /* perf-event uprobes */
	size_t n_links, cap_links;
	int *link_fds;           /* uprobe_multi links */
	size_t n_fds, cap_fds;
	struct key_map seen;     /* {pid, dev, inode, size, mtime, ctime} of objects searched -> their links */
	unsigned sites;          /* probe sites attached */
	uint64_t first_armed_ns; /* CLOCK_MONOTONIC when the first semaphore rose (-d counts from it) */
	unsigned objects_with_probes; /* ELF objects that had ctrace probes */
	unsigned skipped_sites;       /* ctrace notes whose bytes are not our site */
	char looked_in[4096];         /* objects searched, for the error message (path_list.h) */
	bool looked_in_full;
};

void attachment_init(struct attachment *a, bool multi, bool verbose);

/*
 * Attaches the ctrace sites of every object `pid` has mapped that was not
 * searched before (call again to pick up libraries loaded later). Returns
 * the number of sites newly attached (0: none new), -ESRCH when the
 * process is gone, -EOPNOTSUPP when uprobe_multi links are refused (reload
 * the programs without multi and start again), -ECANCELED when perf uprobes
 * were refused for want of a capability, other -errno when the kernel
 * refused (a message was printed for both).
 */
int attach_process(struct ctrace_bpf *skel, int pid, struct attachment *a);

/*
 * The process's links were bound to a task that is gone: an exec() called by
 * a thread other than the main one makes that thread the process's leader
 * (its pid the process's) and ends the old one, and a per-process uprobe
 * filters on the task it was attached for, so the new image never gets its
 * sites. Detaches what was attached for `pid` and forgets its objects, so
 * that the next attach_process() attaches them anew, for the new task (the
 * old links, left, would fire as well once the new ones put the
 * breakpoints back in). In global mode nothing is bound to a task.
 */
void attach_forget_process(struct attachment *a, int pid);

/*
 * Takes out of a `seen` map every key whose first u64 is `pid` (keys of up
 * to six u64), handing each value to drop (if not NULL).
 */
void seen_forget_pid(struct key_map *seen, int pid, void (*drop)(void *value, void *ctx), void *ctx);

/* --exe: attaches the sites of the ELF file at `path` for every process (global mode). */
int attach_file(struct ctrace_bpf *skel, const char *path, struct attachment *a);

/* Detaches everything: the semaphores drop, CTRACE_ENABLED() turns false. */
void attachment_free(struct attachment *a);

/* Prepares the programs of an opened (not yet loaded) skeleton for uprobe_multi links. */
void attach_prepare_multi(struct ctrace_bpf *skel);

/*
 * One uprobe_multi link of `prog` (prepared as above) at file offset
 * `offset` of `path`, for process `pid` (-1: every process): its fd, or
 * -errno.
 */
int attach_multi_one(const struct bpf_program *prog, const char *path, uint64_t offset, int pid);

#endif
