/* SPDX-License-Identifier: MIT */
/*
 * uprobe_multi_abi.h - uprobe_multi links (Linux 6.6) postdate the UAPI
 * headers and libbpf of Debian 12 (libbpf 1.1), so the attach type and the
 * BPF_LINK_CREATE layout are spelled out here, as in the kernel's
 * include/uapi/linux/bpf.h. Used by attach.c (the links) and
 * kernel_features.c (whether the kernel has them).
 */
#ifndef CTRACE_UPROBE_MULTI_ABI_H
#define CTRACE_UPROBE_MULTI_ABI_H

#include <linux/types.h>

#define CTRACE_TRACE_UPROBE_MULTI 48 /* enum bpf_attach_type */

struct uprobe_multi_link_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

#endif
