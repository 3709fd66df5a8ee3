/* SPDX-License-Identifier: MIT */
/*
 * bpf_load.h - loads the best BPF program set the running kernel takes
 * (bpf/ctrace.bpf.c lists the sets and what each needs), watches the
 * fork/exec tracepoints, and has the caller attach its targets: with
 * uprobe_multi links where the kernel has them, else one perf uprobe per
 * site; with BPF cookies where perf links exist.
 *
 * Hidden switches, to run every fallback on a kernel that has better:
 * CTRACE_PROGRAM_SET=copy_str|copy_user|probe_read, CTRACE_NO_MULTI=1 (perf
 * uprobes), CTRACE_NO_COOKIES=1.
 */
#ifndef CTRACE_BPF_LOAD_H
#define CTRACE_BPF_LOAD_H

#include <stdbool.h>
#include <sys/stat.h>
#include "attach/kernel_features.h"

struct ctrace_bpf;
struct bpf_link;
struct attachment;
struct trace_options;

enum program_set {
	PROGRAM_SET_COPY_STR,   /* sleepable, bpf_copy_from_user_str: 6.12 */
	PROGRAM_SET_COPY_USER,  /* sleepable, bpf_copy_from_user by page: 6.0 */
	PROGRAM_SET_PROBE_READ, /* bpf_probe_read_user_str, per-CPU: 5.8 */
	PROGRAM_SET_COUNT,
};

const char *program_set_name(enum program_set set);

/* 1 and *set when CTRACE_PROGRAM_SET names a set, 0 when unset, -EINVAL (said why) when unknown. */
int program_set_forced(enum program_set *set);

/* What was loaded and why: for -v and the trace's metadata. */
struct bpf_choice {
	enum program_set set;
	bool forced;   /* by CTRACE_PROGRAM_SET */
	bool multi;    /* uprobe_multi links, else perf uprobes */
	bool cookies;  /* BPF cookies passed at attach */
	bool fast;     /* attached at the nop5 (--fast, and the kernel optimizes it) */
	bool renames_told; /* the task_rename tracepoint watched: the kernel tells each rename */
	struct kernel_features feat;
	char why[512]; /* why the better sets were not loaded */
};

/* Where the session keeps what is loaded, and how it attaches its targets. */
struct bpf_load_target {
	struct ctrace_bpf **skel;
	struct bpf_link **exec_link, **fork_link;
	struct attachment *att;
	/* Attaches every starting target; -EOPNOTSUPP: no uprobe_multi links. */
	int (*attach_targets)(void *ctx);
	void *ctx;
};

/*
 * Returns 0, or -errno having said why in one line (-ESRCH, -EACCES and
 * -EPERM from attach_targets are left to the caller to say).
 */
int bpf_load_and_attach(const struct trace_options *o, const struct stat *exe,
			const struct bpf_load_target *t, struct bpf_choice *choice);

/* Puts the choice in the trace's metadata. */
struct trace_facts;
void bpf_choice_facts(const struct bpf_choice *c, struct trace_facts *f);

/* Tears down what bpf_load_and_attach set up in *t (safe on a partial one). */
void bpf_unload(const struct bpf_load_target *t);

#endif
