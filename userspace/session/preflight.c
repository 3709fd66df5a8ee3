// SPDX-License-Identifier: MIT
#include "session/preflight.h"

#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "attach/bpf_load.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

bool preflight_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	bool bpf, perfmon, admin, ptrace;

	if (syscall(SYS_capget, &h, d) != 0)
		return true; /* cannot tell: let the kernel say no */
	admin = has_cap(d, CAP_SYS_ADMIN);
	bpf = has_cap(d, CAP_BPF) || admin;
	perfmon = has_cap(d, CAP_PERFMON) || admin;
	ptrace = has_cap(d, CAP_SYS_PTRACE);
	if (bpf && perfmon && ptrace)
		return true;
	fprintf(stderr,
		"ctrace-bpf: missing privileges:%s%s%s; run it as root (sudo ctrace-bpf ...)"
		" or grant cap_bpf,cap_perfmon,cap_sys_ptrace\n",
		bpf ? "" : " CAP_BPF (to load BPF programs)",
		perfmon ? "" : " CAP_PERFMON (to attach uprobes)",
		ptrace ? "" : " CAP_SYS_PTRACE (to read the target's memory and files)");
	return false;
}

bool preflight_kernel(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fputs("ctrace-bpf: this kernel has no BTF (/sys/kernel/btf/vmlinux is missing);"
		      " it needs a kernel built with CONFIG_DEBUG_INFO_BTF=y\n", stderr);
		return false;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
		fputs("ctrace-bpf: this kernel has no uprobes (/sys/bus/event_source/devices/uprobe"
		      " is missing); it needs CONFIG_UPROBE_EVENTS=y\n", stderr);
		return false;
	}
	{
		enum program_set set;

		/* A mistyped forced set is said before a command is launched. */
		if (program_set_forced(&set) < 0)
			return false;
	}
	return true;
}
