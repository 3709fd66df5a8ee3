// SPDX-License-Identifier: MIT
#include "attach/kernel_features.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "attach/uprobe_multi_abi.h"

/* The x86-64 number of the uprobe syscall (Linux 6.18); older kernels say ENOSYS. */
#define CTRACE_NR_UPROBE 336

static bool has_kfunc(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux)
		return false;
	found = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return found;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/*
 * Sleepable uprobes (6.0): before, the verifier refuses any sleepable
 * program that is not fentry/fexit/LSM/iter. The program also calls
 * bpf_copy_from_user, which only sleepable programs are given.
 * Returns 0 or the load's errno.
 */
static int try_sleepable_kprobe(void)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0), /* r1 = fp */
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -8),        /* r1 -= 8 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 8),         /* r2 = 8 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),         /* r3 = NULL */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_copy_from_user),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ctrace_probe_s", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &opts);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * BPF links for perf events (5.15), as libbpf probes them: linking to fd -1
 * says EBADF where the attach type is known, EINVAL where it is not. Without
 * them libbpf refuses a nonzero bpf_cookie on a perf uprobe.
 */
static bool has_perf_link(void)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ctrace_probe_l", "GPL", insns, 2, NULL);
	int link, err;

	if (prog < 0)
		return false;
	link = bpf_link_create(prog, -1, BPF_PERF_EVENT, NULL);
	err = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && err == EBADF;
}

/*
 * uprobe_multi links (6.6): a link on "/" (not a regular file) fails with
 * EBADF where the kernel knows them; before, the attach type is unknown
 * (EINVAL). Probed before any program set is tried: a set loaded for these
 * links, then unloaded when the first link fails, attached and detached
 * the batches' syscall tracepoints (death watches) on the way, and Debian
 * 6.1 under qemu TCG locked up in that kernel text patching (both CPUs at
 * an int3 in syscall_trace_enter) about once in ten runs.
 */
static bool has_uprobe_multi(void)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = CTRACE_TRACE_UPROBE_MULTI);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ctrace_probe_m", "GPL", insns, 2, &opts);
	struct uprobe_multi_link_attr attr;
	__u64 offset = 0;
	int link, err;

	if (prog < 0)
		return false;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)prog;
	attr.attach_type = CTRACE_TRACE_UPROBE_MULTI;
	attr.path = (uintptr_t)"/";
	attr.offsets = (uintptr_t)&offset;
	attr.cnt = 1;
	link = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	err = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && err == EBADF;
}

/*
 * The uprobe syscall (6.18) exists for the nop5 optimization; called from
 * outside the kernel's trampoline it fails (ENXIO or EPROTO; a draft of it
 * sent SIGILL, hence the child). ENOSYS: no such optimization.
 */
static bool has_uprobe_syscall(void)
{
	pid_t child = fork();
	int status;

	if (child < 0)
		return false;
	if (child == 0) {
		long r = syscall(CTRACE_NR_UPROBE);

		_exit(r < 0 && errno == ENOSYS ? 1 : 0);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

bool kernel_optimizes_nop5(void)
{
	return has_uprobe_syscall();
}

void kernel_features_probe(struct kernel_features *f)
{
	memset(f, 0, sizeof(*f));
	f->copy_from_user_str = has_kfunc("bpf_copy_from_user_str");
	f->sleepable_error = try_sleepable_kprobe();
	f->sleepable_uprobes = f->sleepable_error == 0;
	f->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	f->perf_link = has_perf_link();
	f->uprobe_multi = has_uprobe_multi();
	f->optimized_nop5 = has_uprobe_syscall();
}

void kernel_features_list(const struct kernel_features *f,
			  struct kernel_feature out[KERNEL_FEATURE_COUNT])
{
	out[0] = (struct kernel_feature){ "bpf_copy_from_user_str", f->copy_from_user_str };
	out[1] = (struct kernel_feature){ "sleepable_uprobes", f->sleepable_uprobes };
	out[2] = (struct kernel_feature){ "task_storage", f->task_storage };
	out[3] = (struct kernel_feature){ "perf_link_cookies", f->perf_link };
	out[4] = (struct kernel_feature){ "uprobe_syscall_nop5", f->optimized_nop5 };
	out[5] = (struct kernel_feature){ "uprobe_multi_links", f->uprobe_multi };
}
