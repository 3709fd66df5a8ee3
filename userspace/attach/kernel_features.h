/* SPDX-License-Identifier: MIT */
/*
 * kernel_features.h - what the running kernel offers the BPF side, found by
 * trying each thing (a BTF lookup, a tiny program load, a syscall), never
 * by the version number: distributions backport BPF features (RHEL 9 is
 * "5.14" with much of 6.x).
 */
#ifndef CTRACE_KERNEL_FEATURES_H
#define CTRACE_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct kernel_features {
	bool copy_from_user_str; /* the kfunc is in the kernel's BTF (6.12) */
	bool sleepable_uprobes;  /* a sleepable kprobe-type program that calls
				    bpf_copy_from_user loads (6.0) */
	bool task_storage;       /* BPF_MAP_TYPE_TASK_STORAGE (5.11) */
	bool perf_link;          /* BPF links for perf events, so BPF cookies on
				    perf uprobes (5.15) */
	bool uprobe_multi;       /* uprobe_multi links (6.6) */
	bool optimized_nop5;     /* the uprobe syscall: a uprobe on a 5-byte nop
				    becomes a call after its first hit (6.18) */
	int sleepable_error;     /* errno of the sleepable probe's load, or 0 */
};

void kernel_features_probe(struct kernel_features *f);
/* The uprobe syscall alone (optimized_nop5), for the command line's check of --fast. */
bool kernel_optimizes_nop5(void);

/* The features as name/value pairs, for the trace's metadata. */
struct kernel_feature {
	const char *name;
	bool present;
};
enum { KERNEL_FEATURE_COUNT = 6 };
void kernel_features_list(const struct kernel_features *f,
			  struct kernel_feature out[KERNEL_FEATURE_COUNT]);

#endif
