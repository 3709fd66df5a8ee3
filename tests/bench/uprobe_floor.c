// SPDX-License-Identifier: MIT
/*
 * uprobe_floor - the cost of the mechanism under a ctrace event, without
 * ctrace's BPF program: a site laid out as ctrace's (nop, lea, nop5, lea;
 * see usdt/ctrace_site.h) in this program, with nothing attached, then with
 * a uprobe_multi link (as ctrace-bpf attaches) running an empty BPF program
 * at the nop5 (what --fast attaches to: the kernel turns it into a call),
 * one that only calls bpf_ktime_get_ns() and bpf_get_current_pid_tgid()
 * (what every ctrace record starts with) there, and the empty program at
 * the 1-byte nop (ctrace-bpf's default: an int3 every hit). getppid is
 * timed in every phase.
 *
 * For comparison, another way a site could reach a BPF program: a syscall
 * with a number no kernel has (ENOSYS: the kernel calls
 * __x64_sys_ni_syscall()), timed bare and with an empty fentry program on
 * that function: the floor of "an event costs one syscall".
 *
 *   uprobe_floor [--cpu C] [-n N] [-r ROUNDS]     (root)
 *   uprobe_floor --spin SECONDS [--cpu C]         the empty program only, the
 *                                                 site hit flat out (for perf)
 *
 * Prints "phase.case ns" lines: none.getppid, none.site (armed, no uprobe),
 * none.enosys, empty.site, helpers.site, int3.site, fentry.enosys, and each
 * phase's getppid. The programs are built from raw instructions
 * (no clang, no object file) and attached with a raw BPF_LINK_CREATE: the
 * uprobe_multi attach type (Linux 6.6) postdates Debian 12's UAPI headers
 * and libbpf, as in userspace/attach/attach.c.
 */
#include "bench.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#define UPROBE_MULTI_ATTACH 48 /* BPF_TRACE_UPROBE_MULTI */

struct uprobe_multi_link_attr {
	__u32 prog_fd, target_fd, attach_type, flags;
	__aligned_u64 path, offsets, ref_ctr_offsets, cookies;
	__u32 cnt, multi_flags, pid;
};

static volatile int armed; /* this program's own "semaphore" */
extern const char floor_nop1[], floor_nop5[];

#define NOINLINE __attribute__((noinline))

static NOINLINE void run_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* A syscall number past the table: the kernel's ni_syscall, ENOSYS. */
#define NR_NONE 1000

static NOINLINE void run_enosys(long n)
{
	for (long i = 0; i < n; i++)
		syscall(NR_NONE, 1, 2, 3, 4);
}

/*
 * The site: ctrace's guard and layout, the nop and the nop5 under global
 * labels so that their file offsets can be found. The loop must not be unrolled (the
 * label would be defined twice): noinline, and gcc does not unroll at -O2.
 */
static NOINLINE void run_site(long n)
{
	for (long i = 0; i < n; i++)
		if (__builtin_expect(armed, 0))
			__asm__ __volatile__(".globl floor_nop1\n"
					     "floor_nop1: nop\n"
					     "lea -128(%%rsp), %%rsp\n"
					     ".globl floor_nop5\n"
					     "floor_nop5: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
					     "lea 128(%%rsp), %%rsp\n" ::: "memory");
}

/* The file offset of an address of this program's text, from /proc/self/maps. */
static long file_offset(const void *addr, char *path, size_t len)
{
	unsigned long lo, hi, off;
	char line[4096], p[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	long ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi, &off, p) == 4 &&
		    (unsigned long)addr >= lo && (unsigned long)addr < hi) {
			snprintf(path, len, "%s", p);
			ret = (long)((unsigned long)addr - lo + off);
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

/* Loads a kprobe-type program for uprobe_multi links from raw instructions. */
static int load(const struct bpf_insn *insns, size_t n)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = UPROBE_MULTI_ATTACH);

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "floor", "GPL", insns, n, &opts);
}

static int attach(int prog, const char *path, uint64_t offset)
{
	struct uprobe_multi_link_attr a = { 0 };

	a.prog_fd = (__u32)prog;
	a.attach_type = UPROBE_MULTI_ATTACH;
	a.path = (uintptr_t)path;
	a.offsets = (uintptr_t)&offset;
	a.cnt = 1;
	a.pid = (__u32)getpid();
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

static void phase(const char *name, int rounds, long n, void (*third)(long))
{
	struct bench_case c[] = {
		{ .key = "getppid", .fn = run_getppid },
		{ .key = "site", .fn = run_site },
		{ .key = "enosys", .fn = third },
	};
	int nc = third ? 3 : 2;

	for (int i = 0; i < nc; i++)
		c[i].fn(1000); /* the first hit turns the int3 into a call */
	bench_rounds(c, nc, rounds, n);
	for (int i = 0; i < nc; i++)
		printf("%s.%s %.1f\n", name, c[i].key, c[i].median);
}

/*
 * An empty fentry program on sys_ni_syscall (called by __x64_sys_ni_syscall, which has no BTF). The link is returned;
 * -1 (and a note on stderr) if this kernel does not allow it.
 */
static int attach_fentry(const struct bpf_insn *insns, size_t n)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, "sys_ni_syscall", BTF_KIND_FUNC) : -1;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)id);
	int prog, link = -1;

	btf__free(vmlinux);
	prog = id < 0 ? -1 : bpf_prog_load(BPF_PROG_TYPE_TRACING, "floor_fentry", "GPL", insns, n, &opts);
	if (prog >= 0)
		link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, NULL);
	if (link < 0)
		fprintf(stderr, "uprobe_floor: no fentry on sys_ni_syscall: %s\n", strerror(errno));
	if (prog >= 0)
		close(prog); /* the link holds it */
	return link;
}

#define INSN(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV0 INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, (f))

int main(int argc, char **argv)
{
	static const struct bpf_insn empty[] = { MOV0, EXIT };
	static const struct bpf_insn helpers[] = {
		CALL(BPF_FUNC_ktime_get_ns), CALL(BPF_FUNC_get_current_pid_tgid), MOV0, EXIT,
	};
	const struct {
		const char *name;
		const struct bpf_insn *insns;
		size_t n;
		const char *at;
	} progs[] = {
		{ "empty", empty, 2, floor_nop5 },
		{ "helpers", helpers, 4, floor_nop5 },
		{ "int3", empty, 2, floor_nop1 },
	};
	char path[4096];
	int rounds = 21, cpu = -1;
	long n = 20000;
	double spin = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--spin") && i + 1 < argc)
			spin = atof(argv[++i]);
		else {
			fputs("usage: uprobe_floor [--cpu C] [-n N] [-r ROUNDS] [--spin SECONDS]\n", stderr);
			return 2;
		}
	}
	bench_pin(cpu);
	armed = 1;
	if (!spin)
		phase("none", rounds, n, run_enosys);
	for (size_t i = 0; i < (spin ? 1 : sizeof(progs) / sizeof(progs[0])); i++) {
		long offset = file_offset(progs[i].at, path, sizeof(path));
		int prog = load(progs[i].insns, progs[i].n), link;

		if (offset < 0) {
			fputs("uprobe_floor: cannot find the site in /proc/self/maps\n", stderr);
			return 1;
		}
		link = prog < 0 ? -1 : attach(prog, path, (uint64_t)offset);
		if (link < 0) {
			fprintf(stderr, "uprobe_floor: %s program: %s\n", progs[i].name, strerror(errno));
			return 1;
		}
		if (spin) {
			double end = bench_now_ns() + spin * 1e9;

			while (bench_now_ns() < end)
				run_site(1000);
		} else {
			phase(progs[i].name, rounds, n, NULL);
		}
		close(link); /* waits for a grace period: tens of ms */
		close(prog);
	}
	if (!spin) {
		int link = attach_fentry(empty, 2);

		if (link >= 0) {
			phase("fentry", rounds, n, run_enosys);
			close(link);
		}
	}
	return 0;
}
