// SPDX-License-Identifier: GPL-2.0
/*
 * ctrace.bpf.c - the kernel side: one uprobe program per ctrace probe kind.
 *
 * The loader attaches each program at the 5-byte nop of every site of its
 * kind (usdt/ctrace_site.h), filtered to the traced process. A site pins its
 * arguments to %rdi, %rsi, %rdx, %rcx, so PT_REGS_PARM1..4 read them with no
 * per-site argument table. Each hit becomes one ring-buffer record
 * (bpf/ctrace_record.h); a record that does not fit is counted in `dropped`.
 *
 * Built three times, one object per program set (-DCTRACE_SET=...), best
 * first; the loader (userspace/attach/bpf_load.c) loads the best one the running
 * kernel takes. Every set uses: maps RINGBUF (5.8; bpf_ringbuf_output and
 * bpf_ringbuf_query), PERCPU_ARRAY, HASH and LRU_HASH (preallocated, as
 * sleepable programs need), global data in .rodata/.bss (5.2); helpers
 * bpf_get_current_pid_tgid, bpf_get_current_task, bpf_ktime_get_ns,
 * bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem; the tp_btf
 * fork/exec/exit programs (5.5) with
 * bpf_probe_read_kernel[_str] (5.5) for CO-RE reads. Then, per set:
 *
 *   copy_str   sleepable uprobes (6.0), task storage (5.11) with
 *              bpf_get_current_task_btf (5.11) and bpf_task_storage_get in
 *              kprobe-type programs (5.12), the kfunc bpf_copy_from_user_str
 *              (6.12), which faults a page in and stops at the NUL.
 *   copy_user  the same without the kfunc: bpf_probe_read_user_str, and where
 *              that faults, bpf_copy_from_user (5.10, sleepable programs only)
 *              page by page to fault the string's pages in, then again. So
 *              6.0 or later.
 *   probe_read not sleepable: bpf_probe_read_user_str into a per-CPU record.
 *              A string on a page not yet faulted in comes flagged
 *              CTRACE_STR_FAULT, and the loader reads it from the process
 *              (or the file). 5.8 or later.
 *
 * The batched path (usdt/ctrace_batch.h) adds, in every set: ctrace_batch
 * (a uprobe like the others; bpf_ringbuf_reserve/submit, 5.8), the copies
 * at a thread's death: tp_btf/signal_deliver (5.5), and either
 * tp_btf/sched_prepare_exec (6.10) with the exit tracepoint (where the
 * kernel runs it before the thread's memory goes) or the syscall
 * tracepoints sys_enter_exit, _exit_group, _execve, _execveat (optional:
 * the loader goes on without them, batch_watch.c), and one more use of
 * the dynamic linker's hook.
 *
 * Each object declares the same maps and globals (the loader drives all
 * three through one skeleton; the Makefile checks that their skeletons
 * agree). The kfunc is declared only in the copy_str object: libbpf 1.1
 * leaves an unresolved weak kfunc as a call that verifiers before 6.12
 * reject, so an object meant for them must not mention it at all.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/*
 * libbpf's table of argument specs: one entry per distinct spec of each
 * attach, and --usdt attaches once per traced process (-p PID,PID...):
 * 1024 (208 KiB) where its default 256 would serve a dozen PostgreSQL
 * backends. A process past it is told (usdt_attach.c), not the trace lost.
 */
#define BPF_USDT_MAX_SPEC_CNT 1024
#include <bpf/usdt.bpf.h>
#include "ctrace_record.h"

#define CTRACE_SET_COPY_STR 0
#define CTRACE_SET_COPY_USER 1
#define CTRACE_SET_PROBE_READ 2
#ifndef CTRACE_SET
#error "build with -DCTRACE_SET=CTRACE_SET_COPY_STR, _COPY_USER or _PROBE_READ"
#endif
#define CTRACE_SLEEPABLE (CTRACE_SET != CTRACE_SET_PROBE_READ)
#if CTRACE_SLEEPABLE
#define PROBE_SEC "uprobe.s"
#else
#define PROBE_SEC "uprobe"
#endif

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; the default suits a busy program. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} events SEC(".maps");

/*
 * A record is assembled here, then copied into the ring buffer at its real
 * length: reserving the worst case (over 2 KiB) for every event would waste
 * the ring on the short strings most events carry.
 */
struct record_buf {
	char bytes[CTRACE_RECORD_MAX];
	__u32 sent; /* records this thread sent (for the wake-up policy) */
};

/*
 * Entry 0 for the tracepoints; entry 1 for the probes of the probe_read set.
 * A per-CPU record is safe where that set is the one taken (before 6.0 the
 * kernel runs uprobe programs with preemption off); forced on a later,
 * fully preemptible kernel, a probe preempted mid-record could have it
 * overwritten by another on the same CPU.
 */
#define SCRATCH_TRACEPOINTS 0
#define SCRATCH_PROBES 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct record_buf);
} scratch SEC(".maps");

/*
 * Where the probes' programs are sleepable, a string on a page the program
 * has not touched yet (a literal in a cold .rodata page, any page of a
 * child just forked) is faulted in and read, instead of lost. A sleepable
 * program can be preempted, so its scratch record is per thread, not per
 * CPU. Declared in every set (one skeleton for all); the loader does not
 * create it for probe_read, whose kernels may not know the map type.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct record_buf);
} task_scratch SEC(".maps");

/*
 * --stacks: the same records with room for the stack part (stack_capture()),
 * in maps of their own, so that a trace without stacks keeps the smaller
 * record per thread. Used only when the loader sets stack_how.
 */
const volatile __u32 stack_how = 0; /* 0 (off), CTRACE_STACK_FP or CTRACE_STACK_DWARF */

struct record_buf_stacks {
	char bytes[CTRACE_RECORD_MAX + CTRACE_STACK_TRAILER_MAX];
	__u32 sent;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record_buf_stacks);
} scratch_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct record_buf_stacks);
} task_scratch_stacks SEC(".maps");

#if CTRACE_SET == CTRACE_SET_COPY_STR
extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz,
				  const void *unsafe_ptr__ign, __u64 flags) __weak __ksym;
#endif

/*
 * The processes being traced: tgid -> the process's start time, as the
 * first ns of its clock tick of /proc/PID/stat (start_matches()), so that a
 * pid freed by a traced process and taken by another never matches. The loader puts its
 * targets in; with follow_forks the fork tracepoint adds their children
 * before they run; with exe_ino any process that execs that file is added;
 * the exit tracepoint removes each when its last thread exits. When
 * filter_by_map is set, the probes were attached to every process that maps
 * the file (pid -1) and only these processes are recorded. A process that
 * finds it full is counted in traced_full, never silently left out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} traced_tgids SEC(".maps");

/* Processes not traced because traced_tgids was full; read by the loader. */
__u64 traced_full = 0;

/* The kernel's clock ticks per second for /proc (USER_HZ): set by the loader. */
const volatile __u64 ns_per_tick = 10000000;

/*
 * A process's start: its leader's start_boottime (which a thread that
 * exec()s takes over). /proc/PID/stat gives it in USER_HZ ticks, so the
 * table keeps the first ns of that tick: the probe compares with no
 * division. Two processes of one pid within a tick would need the whole
 * pid space to wrap in 10 ms.
 */
static __always_inline __u64 task_start_ns(struct task_struct *task)
{
	return BPF_CORE_READ(task, group_leader, start_boottime);
}

static __always_inline bool start_matches(const __u64 *tick_ns, __u64 start_ns)
{
	return start_ns - *tick_ns < ns_per_tick;
}

/*
 * The probes' path: where the programs may use BTF pointers (the sleepable
 * sets, 6.0+), plain loads instead of two bpf_probe_read_kernel calls.
 */
static __always_inline __u64 current_start_ns(void)
{
#if CTRACE_SLEEPABLE
	return bpf_get_current_task_btf()->group_leader->start_boottime;
#else
	return task_start_ns((struct task_struct *)bpf_get_current_task());
#endif
}

/* Adds a process (its leader `task`) to the traced set; counts it when full. */
static __always_inline bool trace_process(__u32 tgid, struct task_struct *task)
{
	__u64 start = task_start_ns(task);

	start -= start % ns_per_tick;
	if (!bpf_map_update_elem(&traced_tgids, &tgid, &start, BPF_ANY))
		return true;
	__sync_fetch_and_add(&traced_full, 1);
	return false;
}

/* Is the current process the one traced under its tgid (not a later one of that pid)? */
static __always_inline bool current_traced(__u32 tgid)
{
	__u64 *start = bpf_map_lookup_elem(&traced_tgids, &tgid);

	return start && start_matches(start, current_start_ns());
}

const volatile bool filter_by_map = false;
const volatile bool follow_forks = false;
const volatile __u64 exe_ino = 0; /* --exe: the program's inode and device */
const volatile __u32 exe_dev = 0;
/* --user: only processes of this real uid enter the traced set (a fork, an exec of --exe's program). */
const volatile bool filter_user = false;
const volatile __u32 user_uid = 0;

static __always_inline bool user_wanted(struct task_struct *task)
{
	return !filter_user || BPF_CORE_READ(task, real_cred, uid.val) == user_uid;
}

/*
 * Literals already sent, by process, epoch and address: a literal is copied
 * the first time only (the loader remembers it), then sent by reference.
 * LRU: a forgotten one is simply copied again.
 */
struct literal_key {
	__u32 tgid;
	__u32 epoch; /* literal_epoch(tgid) when it was sent */
	__u64 addr;
};

/*
 * An address names a literal only while the same object stays mapped
 * there. The epoch of a process moves on whenever that may have changed:
 * the dynamic linker's hook (dlopen, dlclose: ctrace_link_map, before it
 * unmaps anything), exec, a new process under a reused pid. Literals sent
 * in an older epoch are then copied again, so a library mapped where
 * another was never gets the old one's strings, even if its probes fire
 * right after. One slot per tgid modulo the size: a shared slot only means
 * a few more copies.
 */
#define LITERAL_EPOCH_SLOTS 4096
__u32 literal_epochs[LITERAL_EPOCH_SLOTS] = {};

static __always_inline __u32 literal_epoch(__u32 tgid)
{
	return literal_epochs[tgid & (LITERAL_EPOCH_SLOTS - 1)];
}

static __always_inline void literal_epoch_bump(__u32 tgid)
{
	__sync_fetch_and_add(&literal_epochs[tgid & (LITERAL_EPOCH_SLOTS - 1)], 1);
}

/*
 * An exec under way. The epoch moves on at sched_process_exec, once the
 * new image is mapped, but the old mappings are gone before that
 * (exec_mmap(), then the ELF loader maps the new program piece by piece):
 * a look at /proc/PID/maps, or a read of the process's memory, in between
 * sees the new image under the old epoch. The exec watch calls
 * exec_begins() at the start of every exec (sched_prepare_exec, or the
 * execve syscall tracepoints), before the old mappings go: the low half
 * is the epoch the exec began in plus one, the high half counts the execs
 * begun, so that a look spanning a whole exec (and the start of the next,
 * which writes the low half again) is told too. The loader trusts no look
 * or read during which it changed or that ends while it names the current
 * epoch (userspace/ingest/process_epoch.h). Per slot, as the epochs: a shared
 * slot only means a look taken again. A failed execve (only the syscall
 * tracepoints see those) leaves its note until the epoch moves on.
 */
__u64 exec_began[LITERAL_EPOCH_SLOTS] = {};

static __always_inline void exec_begins(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *note = &exec_began[tgid & (LITERAL_EPOCH_SLOTS - 1)];

	if (filter_by_map && !current_traced(tgid))
		return;
	/* One 8-byte store (the loader reads both halves at once), before the old mappings go. */
	*note = ((*note >> 32) + 1) << 32 | (__u32)(literal_epoch(tgid) + 1);
}

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct literal_key);
	__type(value, __u8);
} literals_sent SEC(".maps");

/* Records the ring buffer had no room for; read by the loader at the end. */
__u64 dropped = 0;

/*
 * Set by the loader at the stop, before it detaches (which takes a while):
 * nothing is recorded after the stop, and the ring does not fill with
 * records the trace would leave out anyway.
 */
bool stopping = false;

/*
 * Wake the loader only once this many bytes wait in the ring buffer; it
 * also polls on a short timeout, so a quiet program's events are still
 * written promptly. One wake-up per record would cost the loader an
 * epoll round trip per event. Set by the loader before load.
 */
const volatile __u64 wakeup_bytes = 256 * 1024;

static __always_inline struct ctrace_record *record_init(struct ctrace_record *r,
							  __u16 kind)
{
	__u64 pid_tgid;

	if (!r || stopping)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (filter_by_map) {
		__u32 tgid = pid_tgid >> 32;

		if (!current_traced(tgid))
			return 0;
	}
	r->ts_ns = bpf_ktime_get_ns();
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->kind = kind;
	r->flags = 0;
	r->name_len = 0;
	r->args_len = 0;
	r->arg[0] = r->arg[1] = r->arg[2] = r->arg[3] = 0;
	return r;
}

/* For the tracepoints (not sleepable): this CPU's scratch record. */
static __always_inline struct ctrace_record *record_start_cpu(__u16 kind, __u32 entry)
{
	return record_init(bpf_map_lookup_elem(&scratch, &entry), kind);
}

/*
 * Set by the loader when it passes BPF cookies: a site's cookie holds its
 * category's number in bits 48-55 (userspace/lib/categories.h), copied into
 * the record's flags bits 8-15. Off, the helper is never called (kernels
 * before 5.15 do not have it for uprobes; the verifier skips dead code).
 */
const volatile bool site_categories = false;

/* For the probes: this thread's scratch record (sleepable), else this CPU's. */
static __always_inline struct ctrace_record *record_start_site(__u16 kind)
{
#if CTRACE_SLEEPABLE
	void *b;

	if (stack_how)
		b = bpf_task_storage_get(&task_scratch_stacks, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	else
		b = bpf_task_storage_get(&task_scratch, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	return record_init((struct ctrace_record *)b, kind);
#else
	__u32 zero = 0;

	if (stack_how)
		return record_init(bpf_map_lookup_elem(&scratch_stacks, &zero), kind);
	return record_start_cpu(kind, SCRATCH_PROBES);
#endif
}

static __always_inline struct ctrace_record *record_start(void *ctx, __u16 kind)
{
	struct ctrace_record *r = record_start_site(kind);

	if (r && site_categories)
		r->flags = (__u16)((bpf_get_attach_cookie(ctx) >> 48 & 0xff) << 8);
	return r;
}

/* The thread's count of records sent, after the record (of either size). */
static __always_inline __u32 *record_sent(struct ctrace_record *r)
{
	if (stack_how)
		return &((struct record_buf_stacks *)r)->sent;
	return &((struct record_buf *)r)->sent;
}

#if CTRACE_SET == CTRACE_SET_COPY_USER
/*
 * A string on a page not yet faulted in: bpf_copy_from_user faults pages in,
 * but copies a fixed size and fails if any byte of it is unmapped, so it is
 * given one page's share of the window at a time (a short string that ends
 * just before an unmapped page must still be read). After each page,
 * bpf_probe_read_user_str tries again; it finds the NUL. A string of at
 * most CTRACE_ARGS_MAX + 1 bytes spans at most two pages.
 */
static __always_inline long fault_in_and_read(char *dst, __u32 size, __u64 ptr)
{
	__u64 at = ptr;
	long n = -14; /* EFAULT */

	for (int page = 0; page < 2; page++) {
		__u64 chunk = 4096 - (at & 4095);

		if (chunk > ptr + size - at)
			chunk = ptr + size - at;
		barrier_var(chunk);
		if (chunk > size)
			break;
		if (bpf_copy_from_user(dst, chunk, (const void *)at))
			break; /* not mapped at all: a bad pointer */
		n = bpf_probe_read_user_str(dst, size, (const void *)ptr);
		if (n > 0)
			break;
		at += chunk;
		if (at >= ptr + size)
			break;
	}
	return n;
}
#endif

/*
 * Copies at most `size` bytes of a NUL-terminated user string, the NUL
 * included; returns the bytes copied with the NUL, or < 0 when it could not
 * be read (a bad pointer, or for probe_read a page not yet faulted in).
 */
static __always_inline long read_user_str(char *dst, __u32 size, __u64 ptr)
{
#if CTRACE_SET == CTRACE_SET_COPY_STR
	return bpf_copy_from_user_str(dst, size, (const void *)ptr, 0);
#elif CTRACE_SET == CTRACE_SET_COPY_USER
	long n = bpf_probe_read_user_str(dst, size, (const void *)ptr);

	return n > 0 ? n : fault_in_and_read(dst, size, ptr);
#else
	return bpf_probe_read_user_str(dst, size, (const void *)ptr);
#endif
}

/*
 * Copies a NUL-terminated user string of at most `max` bytes to `dst`.
 * Returns its length without the NUL, and sets the status bits: a NULL
 * pointer is "no string" (length 0, no flag); a pointer the probe cannot read
 * (bad, or a page not yet faulted in) is flagged so that the loader can try
 * again from /proc, or say so in the trace.
 */
static __always_inline __u32 copy_str(char *dst, __u32 max, __u64 ptr,
				      __u16 *flags, int shift, bool literal)
{
	long n;

	if (!ptr)
		return 0;
	if (literal) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		struct literal_key key = { tgid, literal_epoch(tgid), ptr };

		if (bpf_map_lookup_elem(&literals_sent, &key)) {
			/* Sent before: the loader has it. */
			*flags |= CTRACE_STR_BYREF << shift;
			return 0;
		}
	}
	/* Read one byte more than we keep, to tell "exactly max" from "longer". */
	n = read_user_str(dst, max + 1, ptr);
	if (n <= 0) {
		*flags |= CTRACE_STR_FAULT << shift;
		return 0;
	}
	n -= 1; /* the NUL */
	if (n >= max) {
		*flags |= CTRACE_STR_TRUNCATED << shift;
		n = max;
	}
	if (literal)
		*flags |= CTRACE_STR_LITERAL << shift;
	return n;
}

static __always_inline void remember_literal(struct ctrace_record *r, __u64 ptr, int shift)
{
	struct literal_key key = { r->tgid, literal_epoch(r->tgid), ptr };
	__u8 one = 1;

	if (r->flags & (CTRACE_STR_LITERAL << shift))
		bpf_map_update_elem(&literals_sent, &key, &one, BPF_ANY);
}

/* ---- --stacks: the user stack where the macro ran (ctrace_record.h) ---- */

/* Set by the loader before load (and stack_how, above). */
const volatile __u32 stack_depth = 32;               /* FP: frames at most */
const volatile __u32 stack_bytes = CTRACE_STACK_BYTES; /* DWARF: bytes copied at most */

/* Stacks that could not be taken at all (bpf_get_stack or the copy failed); read by the loader. */
__u64 stack_errors = 0;

/*
 * Appends the stack part at `off` (the record's length so far); returns its
 * size. FP: the kernel walks the frame pointers (what perf does with
 * --call-graph fp). DWARF: the registers and the stack's top, for the
 * loader's CFI unwinder; copied in pieces, so that a stack whose top is
 * nearer than stack_bytes still gives what lies below it.
 */
static __always_inline __u32 stack_capture(struct pt_regs *ctx, struct ctrace_record *r, __u32 off)
{
	struct ctrace_stack *st;
	__u32 copied = 0;
	long n;

	if (!stack_how)
		return 0;
	barrier_var(off);
	if (off > CTRACE_RECORD_MAX)
		return 0;
	st = (struct ctrace_stack *)((char *)r + off);
	st->how = stack_how;
	st->pad = 0;
	st->pad2 = 0;
	st->err = 0;
	if (stack_how == CTRACE_STACK_FP) {
		__u32 size = stack_depth * 8;

		if (size > CTRACE_STACK_DEPTH_MAX * 8)
			size = CTRACE_STACK_DEPTH_MAX * 8;
		n = bpf_get_stack(ctx, st + 1, size, BPF_F_USER_STACK);
		if (n < 0) {
			st->err = n;
			n = 0;
			__sync_fetch_and_add(&stack_errors, 1);
		}
		n &= 1023; /* at most 127 * 8: a bound the verifier can see */
		st->n = n / 8;
		return sizeof(*st) + (n & ~7);
	}
	{
		__u64 *regs = (__u64 *)(st + 1);
		char *dst = (char *)(regs + CTRACE_STACK_REGS);
		__u64 sp = ctx->sp;

		regs[0] = ctx->ax;
		regs[1] = ctx->dx;
		regs[2] = ctx->cx;
		regs[3] = ctx->bx;
		regs[4] = ctx->si;
		regs[5] = ctx->di;
		regs[6] = ctx->bp;
		regs[7] = sp;
		regs[8] = ctx->r8;
		regs[9] = ctx->r9;
		regs[10] = ctx->r10;
		regs[11] = ctx->r11;
		regs[12] = ctx->r12;
		regs[13] = ctx->r13;
		regs[14] = ctx->r14;
		regs[15] = ctx->r15;
		regs[16] = ctx->ip;
		/* The whole window at once, the common case; in pieces only where that fails. */
		if (stack_bytes == CTRACE_STACK_BYTES &&
		    !bpf_probe_read_user(dst, CTRACE_STACK_BYTES, (const void *)sp)) {
			st->n = CTRACE_STACK_BYTES;
			return sizeof(*st) + CTRACE_STACK_REGS * 8 + CTRACE_STACK_BYTES;
		}
		for (int i = 0; i < CTRACE_STACK_BYTES / CTRACE_STACK_CHUNK; i++) {
			if (copied + CTRACE_STACK_CHUNK > stack_bytes)
				break;
			barrier_var(copied);
			if (copied > CTRACE_STACK_BYTES - CTRACE_STACK_CHUNK)
				break;
			n = bpf_probe_read_user(dst + copied, CTRACE_STACK_CHUNK, (const void *)(sp + copied));
			if (n) {
				if (!copied) {
					st->err = n;
					__sync_fetch_and_add(&stack_errors, 1);
				}
				break;
			}
			copied += CTRACE_STACK_CHUNK;
		}
		st->n = copied;
		return sizeof(*st) + CTRACE_STACK_REGS * 8 + copied;
	}
}

/* n, at most max, in a way the verifier sees at the use (the compiler would drop a C bound it knows). */
#define bounded(n, max) ({                                                     \
	__u32 b_ = (n);                                                        \
	asm volatile("if %[b] <= %[m] goto +1; %[b] = %[m]" : [b] "+r"(b_) : [m] "i"(max)); \
	b_;                                                                    \
})

/*
 * Copies a finished record of `size` bytes into the ring: 0, or -1 when
 * it had no room (counted in `dropped`).
 */
static __always_inline int record_output(struct ctrace_record *r, __u64 size)
{
	__u64 flags;

	/*
	 * Wake the loader only when a batch waits, and look only every 64th
	 * record of a thread: reading the ring's consumer position touches a
	 * cache line the loader writes all the time. The loader also polls
	 * every few ms, so a quiet program's events still arrive.
	 */
	flags = BPF_RB_NO_WAKEUP;
	if ((++*record_sent(r) & 63) == 0 &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, r, size, flags)) {
		__sync_fetch_and_add(&dropped, 1);
		return -1;
	}
	return 0;
}

/*
 * The name and args pointers are in the arg[] the kinds table says (the
 * loader looks for a literal's address there). lit: bit 0 the name is a
 * string literal, bit 1 the args are (the site's %rax).
 */
static __always_inline int record_emit(struct pt_regs *ctx, struct ctrace_record *r,
				       __u16 kind, __u64 lit)
{
	int name_arg = ctrace_kind_name_arg(kind), args_arg = ctrace_kind_args_arg(kind);
	__u64 name_ptr = name_arg >= 0 ? r->arg[name_arg & 3] : 0;
	__u64 args_ptr = args_arg >= 0 ? r->arg[args_arg & 3] : 0;
	__u32 nlen, alen;
	__u64 size;

	nlen = copy_str(r->data, CTRACE_NAME_MAX - 1, name_ptr, &r->flags, 0, lit & 1);
	/* A no-op (copy_str keeps it below 256) that the verifier can see. */
	barrier_var(nlen);
	nlen &= CTRACE_NAME_MAX - 1;
	alen = copy_str(r->data + nlen, CTRACE_ARGS_MAX, args_ptr, &r->flags,
			CTRACE_ARGS_SHIFT, lit & 2);
	barrier_var(alen);
	if (alen > CTRACE_ARGS_MAX)
		alen = CTRACE_ARGS_MAX;
	r->name_len = nlen;
	r->args_len = alen;
	size = sizeof(*r) + nlen + alen;
	size += stack_capture(ctx, r, size);
	/* Keep the check: the compiler knows the bound, the verifier must see it. */
	barrier_var(size);
	if (size > (stack_how ? CTRACE_RECORD_MAX + CTRACE_STACK_TRAILER_MAX : CTRACE_RECORD_MAX))
		return 0;
	if (record_output(r, size))
		return 0;
	/*
	 * Only now, with the copy in the ring, may later events send these
	 * literals by reference: the loader reads records in ring order.
	 */
	remember_literal(r, name_ptr, 0);
	remember_literal(r, args_ptr, CTRACE_ARGS_SHIFT);
	return 0;
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_span_begin, __u64 marker, __u64 span, __u64 name,
	       __u64 args)
{
	struct ctrace_record *r = record_start(ctx, CTRACE_KIND_SPAN_BEGIN);

	if (!r)
		return 0;
	r->arg[0] = marker;
	r->arg[1] = span;
	r->arg[2] = name;
	r->arg[3] = args;
	return record_emit(ctx, r, CTRACE_KIND_SPAN_BEGIN, PT_REGS_RC(ctx));
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_span_end, __u64 span, __u64 args, __u64 lit)
{
	struct ctrace_record *r = record_start(ctx, CTRACE_KIND_SPAN_END);

	if (!r)
		return 0;
	r->arg[0] = span;
	r->arg[1] = args;
	return record_emit(ctx, r, CTRACE_KIND_SPAN_END, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_instant, __u64 marker, __u64 name, __u64 scope,
	       __u64 args)
{
	struct ctrace_record *r = record_start(ctx, CTRACE_KIND_INSTANT);

	if (!r)
		return 0;
	r->arg[0] = marker;
	r->arg[1] = name;
	r->arg[2] = scope;
	r->arg[3] = args;
	return record_emit(ctx, r, CTRACE_KIND_INSTANT, PT_REGS_RC(ctx));
}

static __always_inline int counter(void *ctx, __u16 kind, __u64 marker,
				   __u64 name, __u64 bits, __u64 lit)
{
	struct ctrace_record *r = record_start(ctx, kind);

	if (!r)
		return 0;
	r->arg[0] = marker;
	r->arg[1] = name;
	r->arg[2] = bits;
	return record_emit(ctx, r, kind, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_counter_set, __u64 marker, __u64 name, __u64 bits, __u64 lit)
{
	return counter(ctx, CTRACE_KIND_COUNTER_SET, marker, name, bits, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_counter_add, __u64 marker, __u64 name, __u64 bits, __u64 lit)
{
	return counter(ctx, CTRACE_KIND_COUNTER_ADD, marker, name, bits, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_new_pid, __u64 marker, __u64 pname, __u64 lit)
{
	struct ctrace_record *r = record_start(ctx, CTRACE_KIND_NEW_PID);

	if (!r)
		return 0;
	r->arg[0] = marker;
	r->arg[1] = pname;
	return record_emit(ctx, r, CTRACE_KIND_NEW_PID, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_discard, __u64 marker)
{
	struct ctrace_record *r = record_start(ctx, CTRACE_KIND_DISCARD);

	if (!r)
		return 0;
	r->arg[0] = marker;
	return record_emit(ctx, r, CTRACE_KIND_DISCARD, 0);
}

/* The end of a CTRACE_SCOPE; its strings travel through a struct, never as literals. */
static __always_inline int scope_end(void *ctx, __u16 kind, __u64 marker, __u64 name, __u64 args,
				     __u64 ticks, __u64 tsc)
{
	struct ctrace_record *r = record_start(ctx, kind);

	if (!r)
		return 0;
	r->arg[0] = marker;
	r->arg[1] = name;
	r->arg[2] = args;
	r->arg[3] = ticks;
	r->tsc = tsc;
	return record_emit(ctx, r, kind, 0);
}

/* Header 0.1: its start travels as the ticks it lasted. */
SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_scope, __u64 marker, __u64 name, __u64 args, __u64 ticks)
{
	return scope_end(ctx, CTRACE_KIND_SCOPE, marker, name, args, ticks, 0);
}

/*
 * The same from header 0.2 on: %rax holds the TSC read at the end, so that
 * the loader converts both edges with one mapping (the probe's own entry,
 * later by a varying few hundred ns, no longer stamps the end).
 */
SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_scope_tsc, __u64 marker, __u64 name, __u64 args, __u64 ticks)
{
	return scope_end(ctx, CTRACE_KIND_SCOPE_TSC, marker, name, args, ticks, PT_REGS_RC(ctx));
}

/*
 * Flows, thread names and sort indexes (header 0.3's CTRACE_FLOW_OUT/IN,
 * CTRACE_THREAD_NAME, CTRACE_PROCESS/THREAD_SORT_INDEX): one integer each,
 * or a name; the loader binds a flow to its enclosing span.
 */
static __always_inline int one_word(void *ctx, __u16 kind, __u64 a0, __u64 lit)
{
	struct ctrace_record *r = record_start(ctx, kind);

	if (!r)
		return 0;
	r->arg[0] = a0;
	return record_emit(ctx, r, kind, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_flow_out, __u64 id)
{
	return one_word(ctx, CTRACE_KIND_FLOW_OUT, id, 0);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_flow_in, __u64 id)
{
	return one_word(ctx, CTRACE_KIND_FLOW_IN, id, 0);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_thread_name, __u64 name, __u64 lit)
{
	return one_word(ctx, CTRACE_KIND_THREAD_NAME, name, lit);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_process_sort_index, __u64 n)
{
	return one_word(ctx, CTRACE_KIND_PROCESS_SORT_INDEX, n, 0);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_thread_sort_index, __u64 n)
{
	return one_word(ctx, CTRACE_KIND_THREAD_SORT_INDEX, n, 0);
}

/* The loader's own table of argument reads (bpf/ctrace_record.h, CTRACE_USDT_LOC_COOKIE). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CTRACE_USDT_LOC_SLOTS);
	__type(key, __u32);
	__type(value, struct ctrace_usdt_loc_spec);
} usdt_locs SEC(".maps");

/* The loader's spec of this hit, or NULL: libbpf's. No cookie before 5.15: the loader attaches none then. */
static __always_inline struct ctrace_usdt_loc_spec *usdt_loc_spec(struct pt_regs *ctx)
{
	__u64 c;
	__u32 slot;

	if (!LINUX_HAS_BPF_COOKIE)
		return NULL;
	c = bpf_get_attach_cookie(ctx);
	if (!(c & CTRACE_USDT_LOC_COOKIE))
		return NULL;
	slot = (__u32)c & (CTRACE_USDT_LOC_COOKIE - 1);
	return bpf_map_lookup_elem(&usdt_locs, &slot);
}

/*
 * bpf_usdt_cookie(), bpf_usdt_arg_cnt() and bpf_usdt_arg() for either
 * path: global functions (as libbpf's are), each verified once on its own.
 * Inlined, the two paths doubled the states of ctrace_usdt's loops and
 * 6.1's verifier refused it (E2BIG, make test-kernels).
 */
__noinline __hidden long ctrace_usdt_cookie(struct pt_regs *ctx)
{
	struct ctrace_usdt_loc_spec *spec = usdt_loc_spec(ctx);

	return spec ? (long)spec->cookie : bpf_usdt_cookie(ctx);
}

__noinline __hidden int ctrace_usdt_arg_cnt(struct pt_regs *ctx)
{
	struct ctrace_usdt_loc_spec *spec = usdt_loc_spec(ctx);

	return spec ? (int)spec->arg_cnt : bpf_usdt_arg_cnt(ctx);
}

/* Argument i, as bpf_usdt_arg() reads libbpf's: 0, or -errno and *res 0. */
__noinline __hidden int ctrace_usdt_arg(struct pt_regs *ctx, __u64 i, long *res)
{
	struct ctrace_usdt_loc_spec *spec = usdt_loc_spec(ctx);
	const struct ctrace_usdt_arg_loc *a;
	__u64 val = 0;

	if (!spec)
		return bpf_usdt_arg(ctx, i, res);
	*res = 0;
	if (i >= CTRACE_USDT_ARGS || i >= spec->arg_cnt)
		return -ENOENT;
	a = &spec->arg[i];
	if (a->type == CTRACE_USDT_LOC_CONST) {
		val = a->off;
	} else {
		if (bpf_probe_read_kernel(&val, sizeof(val), (void *)ctx + a->reg_off))
			return -EFAULT;
		if (a->type == CTRACE_USDT_LOC_DEREF &&
		    bpf_probe_read_user(&val, sizeof(val), (void *)(val + a->off)))
			return -EFAULT;
	}
	/* Cut to its size, sign-extended if signed. */
	val <<= a->shift & 63;
	val = a->is_signed ? (__u64)((__s64)val >> (a->shift & 63)) : val >> (a->shift & 63);
	*res = (long)val;
	return 0;
}

/*
 * --usdt: a probe another program ships (PostgreSQL's, the JVM's,
 * libstdc++'s...), attached by libbpf (bpf_program__attach_usdt), which
 * also decodes each note's argument specs (bpf_usdt_arg). Its cookie
 * (bpf_usdt_cookie: libbpf keeps the BPF cookie for itself) says which of
 * the loader's probes it is and how each argument is read
 * (CTRACE_USDT_HOW_*). A probe libbpf 1.1 refuses (an argument read
 * relative to %rip) is attached by the loader, its specs in usdt_locs:
 * bpf_get_attach_cookie (5.15) finds them, behind LINUX_HAS_BPF_COOKIE as
 * in libbpf's usdt.bpf.h, so the object still loads on 5.8 (the loader
 * attaches none there). Not sleepable in any set (libbpf 1.1 has no
 * "usdt.s"): a string on a page not yet faulted in is flagged, and the
 * loader says so. Never batched: each hit is one record.
 */
SEC("usdt")
int ctrace_usdt(struct pt_regs *ctx)
{
	struct ctrace_record *r;
	__u64 *values, how_bits, size;
	__u32 off = 0, vals;
	long cookie, cnt;

	r = record_start_site(CTRACE_KIND_USDT);
	if (!r)
		return 0;
	cookie = ctrace_usdt_cookie(ctx);
	cnt = ctrace_usdt_arg_cnt(ctx);
	if (cnt < 0)
		cnt = 0;
	if (cnt > CTRACE_USDT_ARGS)
		cnt = CTRACE_USDT_ARGS;
	r->arg[0] = cookie;
	r->arg[1] = cnt;
	values = (__u64 *)r->data;
	/* Loops, not unrolled: the verifier's time over this program (~1 s) dropped by a fifth. */
#pragma clang loop unroll(disable)
	for (int i = 0; i < CTRACE_USDT_ARGS; i++) {
		long x;

		if (i >= cnt)
			break;
		if (ctrace_usdt_arg(ctx, i, &x))
			r->arg[2] |= 1ull << i;
		values[i] = x;
	}
	vals = (__u32)cnt * 8;
	barrier_var(vals);
	vals &= 127; /* at most 96: a bound the verifier sees */
	how_bits = (__u64)cookie >> CTRACE_USDT_HOW_SHIFT;
	/*
	 * The bytes written so far live in the record, read back (volatile)
	 * each round: the verifier then sees one unknown offset a round, not
	 * one range per path taken before, which 6.1's verifier could not
	 * prune (over 1 M instructions: E2BIG, with or without a string
	 * argument; make test-kernels' usdt case).
	 */
	r->args_len = 0;
#pragma clang loop unroll(disable)
	for (int i = 0; i < CTRACE_USDT_ARGS; i++) {
		struct ctrace_usdt_str *h;
		__u64 how = how_bits >> (2 * i) & 3, ptr;
		char *dst;
		long n;

		if (i >= cnt)
			break;
		if (!how)
			continue;
		off = *(volatile __u16 *)&r->args_len;
		if (off > CTRACE_ARGS_MAX - sizeof(*h))
			break;
		h = (struct ctrace_usdt_str *)(r->data + bounded(vals + off, 96 + CTRACE_ARGS_MAX - sizeof(*h)));
		h->arg = i;
		h->len = 0;
		off += sizeof(*h);
		r->args_len = off;
		if (off > CTRACE_ARGS_MAX - CTRACE_USDT_STR_MAX) {
			h->status = CTRACE_USDT_STR_NO_ROOM;
			continue;
		}
		ptr = values[i & 15]; /* 16 slots of room in the name part: a bound the verifier sees */
		if (how == CTRACE_USDT_HOW_STR_AT_8 &&
		    bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)(ptr + 8)))
			ptr = 0;
		h->status = CTRACE_USDT_STR_OK;
		/* Where the string goes, bounded so that the verifier sees it (the compiler merged the checks above). */
		dst = r->data + bounded(vals + off, 96 + CTRACE_ARGS_MAX - CTRACE_USDT_STR_MAX);
		if (how == CTRACE_USDT_HOW_STR_LEN) {
			/* Not NUL-terminated: its length is the next argument. */
			__u64 len = i + 1 < cnt ? values[(i + 1) & 15] : 0;

			if (len > CTRACE_USDT_STR_MAX) {
				len = CTRACE_USDT_STR_MAX;
				h->status = CTRACE_USDT_STR_TRUNCATED;
			}
			n = bounded((__u32)len, CTRACE_USDT_STR_MAX);
			if (n && bpf_probe_read_user(dst, n, (const void *)ptr)) {
				h->status = CTRACE_USDT_STR_FAULT;
				continue;
			}
			h->len = n;
			r->args_len = off + n;
			continue;
		}
		/* One byte more than kept, to tell "exactly max" from "longer". */
		n = ptr ? bpf_probe_read_user_str(dst, CTRACE_USDT_STR_MAX + 1, (const void *)ptr) : -14;
		if (n <= 0) {
			h->status = CTRACE_USDT_STR_FAULT;
			continue;
		}
		n -= 1; /* the NUL */
		if (n > CTRACE_USDT_STR_MAX) {
			n = CTRACE_USDT_STR_MAX;
			h->status = CTRACE_USDT_STR_TRUNCATED;
		}
		h->len = n;
		r->args_len = off + n;
	}
	r->name_len = vals;
	off = *(volatile __u16 *)&r->args_len;
	size = sizeof(*r) + vals + off;
	size += stack_capture(ctx, r, size);
	barrier_var(size);
	if (size > (stack_how ? CTRACE_RECORD_MAX + CTRACE_STACK_TRAILER_MAX : CTRACE_RECORD_MAX))
		return 0;
	record_output(r, size);
	return 0;
}

/*
 * A thread of a traced process renamed (pthread_setname_np, prctl
 * PR_SET_NAME, a write to /proc/PID/task/TID/comm, by itself or by another
 * process): its new comm, so that the trace renames it at once instead of
 * at the loader's next look at /proc (a thread may rename and exit in
 * between). The task is the one renamed, not always the current one.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(ctrace_rename, struct task_struct *task, const char *comm)
{
	__u32 entry = SCRATCH_TRACEPOINTS, tgid = BPF_CORE_READ(task, tgid);
	struct ctrace_record *r;
	__u64 *start;
	long n;

	if (stopping)
		return 0;
	start = bpf_map_lookup_elem(&traced_tgids, &tgid);
	if (!start || !start_matches(start, task_start_ns(task)))
		return 0;
	r = bpf_map_lookup_elem(&scratch, &entry);
	if (!r)
		return 0;
	r->ts_ns = bpf_ktime_get_ns();
	r->tgid = tgid;
	r->tid = BPF_CORE_READ(task, pid);
	r->kind = CTRACE_KIND_THREAD_RENAME;
	r->flags = 0;
	r->args_len = 0;
	r->arg[0] = tgid;
	r->arg[1] = r->tid;
	r->arg[2] = literal_epoch(tgid);
	r->arg[3] = 0;
	n = bpf_probe_read_kernel_str(r->data, 16, comm);
	n = n > 0 ? n - 1 : 0;
	r->name_len = n & 15;
	if (bpf_ringbuf_output(&events, r, sizeof(*r) + (n & 15), 0))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

/*
 * Sends a record about a process (no probe strings) right away. comm, if
 * any, goes in the args' place: an exec's new comm, which the loader could
 * not read from /proc once a short-lived program has exited.
 */
/*
 * An exec's new image, where the kernel mapped it: the loader reads a
 * process's batched literals from its program's file when the process is
 * gone before the loader got to them (a short-lived one, a loaded machine).
 */
struct exec_image {
	__u64 start_code; /* mm->start_code: the load bias + the lowest vaddr of an executable segment */
	__u64 ino;
	__u32 dev;        /* the kernel's encoding (MAJOR << 20 | MINOR) */
};

static __always_inline void process_record(__u16 kind, __u64 a0, __u64 a1,
					   const char *path, const char *comm,
					   const struct exec_image *img)
{
	struct ctrace_record *r = record_start_cpu(kind, SCRATCH_TRACEPOINTS);
	long n = 0, c = 0;

	if (!r)
		return;
	r->arg[0] = a0;
	r->arg[1] = a1;
	/* The literal epoch of the process it is about, after any bump: see ctrace_record.h. */
	r->arg[2] = literal_epoch(kind == CTRACE_KIND_FORK ? a1 : a0);
	r->arg[3] = 0;
	r->tsc = 0;
	if (img) {
		r->arg[2] |= (__u64)img->dev << 32;
		r->arg[3] = img->start_code;
		r->tsc = img->ino;
	}
	if (path) {
		n = bpf_probe_read_kernel_str(r->data, CTRACE_NAME_MAX, path);
		n = n > 0 ? n - 1 : 0;
		if (n > CTRACE_NAME_MAX - 1)
			n = CTRACE_NAME_MAX - 1;
	}
	n &= CTRACE_NAME_MAX - 1;
	r->name_len = n;
	if (comm) {
		c = bpf_probe_read_kernel_str(r->data + n, 16, comm);
		c = c > 0 ? (c - 1) & 15 : 0;
	}
	r->args_len = c;
	if (bpf_ringbuf_output(&events, r, sizeof(*r) + n + c, BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&dropped, 1);
}

static __always_inline void batch_fork(__u32 child_tgid, __u32 child_tid);
static __always_inline void batch_forget(__u64 pid_tgid);

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ctrace_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);

	/* A new thread is not a new process; only followed parents count. */
	if (child_tgid == parent_tgid || !follow_forks || !current_traced(parent_tgid) || !user_wanted(child))
		return 0;
	if (!trace_process(child_tgid, child))
		return 0; /* counted: the loader says so */
	literal_epoch_bump(child_tgid); /* its pid may have been another's */
	/*
	 * vfork() and clone(CLONE_VM): the child appends to its parent's very
	 * buffers (one memory, one TLS), which the parent flushes; a copy of
	 * its own would send them twice.
	 */
	if (BPF_CORE_READ(child, mm) != BPF_CORE_READ(parent, mm))
		batch_fork(child_tgid, BPF_CORE_READ(child, pid));
	/* Its name, for a child that may exit before the loader reads /proc. */
	process_record(CTRACE_KIND_FORK, parent_tgid, child_tgid, child->comm, 0, NULL);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ctrace_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct inode *ino = BPF_CORE_READ(bprm, file, f_inode);
	struct exec_image img;

	img.ino = BPF_CORE_READ(ino, i_ino);
	img.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	if (!current_traced(tgid)) {
		if (!exe_ino || img.ino != exe_ino || img.dev != exe_dev || !user_wanted(p))
			return 0;
		if (!trace_process(tgid, p))
			return 0;
	}
	/* Set by the binary's loader (load_elf_binary), before this tracepoint. */
	img.start_code = BPF_CORE_READ(p, mm, start_code);
	literal_epoch_bump(tgid); /* a new image: its literals are elsewhere */
	/* Its buffers went with the old image (copied as the exec began). */
	batch_forget((__u64)tgid << 32 | (__u32)old_pid);
	/* old_pid: the thread that called exec(); not the tgid when another thread did. */
	/* p->comm: the new program's, set before this tracepoint (begin_new_exec). */
	process_record(CTRACE_KIND_EXEC, tgid, (__u32)old_pid, BPF_CORE_READ(bprm, filename), p->comm,
		       &img);
	return 0;
}

/*
 * A traced process is forgotten when its last thread exits (the leader may
 * exit before the others): traced_tgids holds only living processes, so it
 * does not fill over time, and its pid, once reused, is nobody's. Runs for
 * every thread exit of the machine: two reads before the lookup.
 */
static __always_inline void batch_rescue(__u64 why);

/*
 * Set by the loader (userspace/attach/batch_watch.c) when this tracepoint is the
 * batches' exit watch: on kernels that run it before the thread lets go of
 * its memory (exit_mm()), it can still copy the thread's buffers, so no
 * syscall tracepoint is needed (those put every thread of the machine on
 * the slow syscall path while attached). exit_sees_mm says whether this
 * kernel does: a task seen here with its mm still set.
 */
bool exit_rescue = false;
__u32 exit_sees_mm = 0;

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ctrace_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 *start;

	if (BPF_CORE_READ(p, mm)) { /* p is current: do_exit() runs in the dying thread */
		exit_sees_mm = 1;
		if (exit_rescue)
			batch_rescue(CTRACE_BATCH_WHY_EXITING);
	}
	batch_forget(bpf_get_current_pid_tgid()); /* copied by now, at its exit or fatal signal */
	/* signal->live counts the threads not yet in do_exit (this one is). */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	start = bpf_map_lookup_elem(&traced_tgids, &tgid);
	if (start && start_matches(start, task_start_ns(p)))
		bpf_map_delete_elem(&traced_tgids, &tgid);
	return 0;
}

/*
 * The dynamic linker calls _dl_debug_state() (r_debug.r_brk, the debuggers'
 * hook) before and after it changes a process's objects: RT_ADD before it
 * maps a library, RT_DELETE before it unmaps one, RT_CONSISTENT when done.
 * The loader attaches this at that function of each traced process's
 * ld.so (userspace/attach/link_map_watch.c). Each call forgets the literals sent
 * by address (before an unmap, so in time for whatever is mapped there
 * next) and wakes the loader at once, to attach a new library's probes
 * before its first use instead of at its next look at the maps. Plain and
 * non-sleepable: it reads the batch buffers with bpf_probe_read_user.
 */
SEC("uprobe/_dl_debug_state") /* a section of its own in every set: one program order for all */
int BPF_KPROBE(ctrace_link_map)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (filter_by_map && !current_traced(tgid))
		return 0;
	literal_epoch_bump(tgid);
	/* This thread's batched events first: their literals are in what is about to be unmapped. */
	batch_rescue(CTRACE_BATCH_WHY_LINK_MAP);
	process_record(CTRACE_KIND_LINK_MAP, tgid, 0, 0, 0, NULL);
	return 0;
}

/*
 * The batched path (usdt/ctrace_batch.h): a thread appends its events to a
 * buffer of its own and fires ctrace:batch with the buffer once it is full.
 * This program copies the buffer into the ring as one record and does no
 * per-event work (one hash lookup per event would cost more than the event).
 * Not cut off by `stopping`: a batch flushed after the stop may hold events
 * from before it, and the loader cuts by each event's own time.
 *
 * A thread has a buffer in each object it emits events in (the executable,
 * each library), and the kernel side keeps track of them all, so that it
 * can copy each when the thread dies without flushing (a fatal signal,
 * exit(), exec), and the loader can tell, at the stop, how far each thread
 * had numbered each buffer's events (seq_end): the gaps are what was lost.
 *
 *   batch_threads  thread (pid_tgid) -> how many buffers it has, numbered
 *                  0, 1, ... in the order it first flushed them;
 *   batch_slots    (thread, number) -> the buffer: what the copy at its
 *                  death walks;
 *   batch_buffers  (thread, buffer) -> seq_end, set at every flush (one
 *                  lookup a flush: not per event) and at the copy.
 *
 * The first two hold living threads only: a thread's entries go when it
 * exits, or execs (its buffers go with its memory), so they do not fill
 * with thread churn, and a reused tid starts afresh. They are plain hash
 * maps: one full is a buffer not watched, counted in batch_unwatched,
 * never an entry of a living thread pushed out. batch_buffers stays to
 * the stop for the loader (an LRU, as the literals: the oldest entries
 * are of threads long dead, whose copies came).
 *
 * The copy at a thread's death walks its buffers with two nested loops,
 * each calling a global function (verified once on its own, not once per
 * turn of the loop that calls it, as an inlined body would be): a turn
 * costs the verifier a few instructions whatever one buffer's copy costs,
 * and no bpf_loop is needed (5.17). BATCH_BUFFERS_MAX buffers a thread,
 * one an object: an object takes at least 2 mappings (its code, its
 * data), and the default vm.max_map_count (65530) lets no process map
 * more than 32765 objects.
 */
#define BATCH_WALK 256 /* buffers a group, groups a thread */
#define BATCH_BUFFERS_MAX (BATCH_WALK * BATCH_WALK)

struct batch_thread {
	__u32 buffers; /* numbered 0 .. buffers - 1 in batch_slots */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct batch_thread);
} batch_threads SEC(".maps");

struct batch_slot_key {
	__u64 pid_tgid;
	__u32 number;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, struct batch_slot_key);
	__type(value, __u64);
} batch_slots SEC(".maps");

/* The loader reads these (userspace/ingest/batch_path.c: count_unseen). */
struct batch_buffer_key {
	__u64 pid_tgid;
	__u64 buf;
};

struct batch_buffer {
	__u64 seq_end;  /* the sequence number after the last event flushed or copied */
	__u8 inherited; /* a forked child's copy of its parent's buffer (batch_fork) */
	__u8 watched;   /* in batch_slots now: copied at the thread's death */
	__u8 pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 131072);
	__type(key, struct batch_buffer_key);
	__type(value, struct batch_buffer);
} batch_buffers SEC(".maps");

/*
 * Buffers not watched (batch_threads or batch_slots full, or a thread past
 * BATCH_BUFFERS_MAX): at their thread's death, their last events can be
 * neither copied nor counted. Read by the loader.
 */
__u64 batch_unwatched = 0;

/* Batches the ring had no room for (their events: the loader counts them by sequence). */
__u64 batch_dropped = 0;

/* The buffer's header: what the kernel side reads of it (usdt/ctrace_batch.h). */
struct batch_header {
	__u32 magic;
	__u32 tid;
	__u64 first_seq;
	__u32 len;
	__u32 count;
};

#define BATCH_SMALL 256 /* a hello, or a buffer nearly empty: a small reservation */

static __always_inline long batch_read(void *dst, __u32 size, __u64 src, bool may_sleep)
{
#if CTRACE_SLEEPABLE
	if (may_sleep)
		return bpf_copy_from_user(dst, size, (const void *)src);
#endif
	return bpf_probe_read_user(dst, size, (const void *)src);
}

static __always_inline void batch_fill(struct ctrace_record *r, __u64 pid_tgid, __u64 buf,
				       __u64 why, __u64 seq_end, __u64 tsc)
{
	r->ts_ns = bpf_ktime_get_ns();
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->kind = CTRACE_KIND_BATCH;
	r->flags = 0;
	r->name_len = 0;
	r->args_len = 0;
	r->tsc = tsc; /* the site's TSC at the flush (0: a copy by the kernel side) */
	r->arg[0] = buf;
	r->arg[2] = why;
	r->arg[3] = seq_end;
}

/*
 * One BATCH record of `bytes` of the buffer at `buf`: a small reservation
 * for a hello, else the largest (a reservation's size is a constant). Two
 * paths written apart, so that the verifier sees each copy's bound.
 */
static __always_inline bool batch_send(__u64 pid_tgid, __u64 buf, __u64 bytes, __u64 why,
				       __u64 seq_end, __u64 tsc, bool may_sleep)
{
	struct ctrace_record *r;
	__u64 wake;
	__u32 n;

	/*
	 * Wake the loader once an eighth of the ring waits: left to its 10 ms
	 * poll under a flood, it slept half of every round and the ring
	 * overflowed with the loader at a quarter of a CPU. One query a flush
	 * (a batch of events), not one an event.
	 */
	wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;

	if (bytes <= BATCH_SMALL) {
		r = bpf_ringbuf_reserve(&events, sizeof(*r) + BATCH_SMALL, 0);
		if (!r)
			goto full;
		batch_fill(r, pid_tgid, buf, why, seq_end, tsc);
		n = bounded((__u32)bytes, BATCH_SMALL);
		if (batch_read(r->data, n, buf, may_sleep))
			n = 0;
		r->arg[1] = n; /* 0: unreadable */
		bpf_ringbuf_submit(r, wake);
		return n != 0;
	}
	r = bpf_ringbuf_reserve(&events, sizeof(*r) + CTRACE_BATCH_BYTES, 0);
	if (!r)
		goto full;
	batch_fill(r, pid_tgid, buf, why, seq_end, tsc);
	n = bounded(bytes > CTRACE_BATCH_BYTES ? CTRACE_BATCH_BYTES : (__u32)bytes, CTRACE_BATCH_BYTES);
	if (batch_read(r->data, n, buf, may_sleep))
		n = 0;
	r->arg[1] = n;
	bpf_ringbuf_submit(r, wake);
	return n != 0;
full:
	__sync_fetch_and_add(&batch_dropped, 1);
	return false;
}

/* A buffer the thread flushes for the first time: numbered, to be copied at its death. */
static __always_inline bool batch_watch(__u64 pid_tgid, __u64 buf)
{
	struct batch_thread *t = bpf_map_lookup_elem(&batch_threads, &pid_tgid);
	struct batch_thread first = {};
	struct batch_slot_key s = { pid_tgid, 0, 0 };

	if (!t) {
		bpf_map_update_elem(&batch_threads, &pid_tgid, &first, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&batch_threads, &pid_tgid);
	}
	if (!t || t->buffers >= BATCH_BUFFERS_MAX)
		goto unwatched;
	s.number = t->buffers;
	if (bpf_map_update_elem(&batch_slots, &s, &buf, BPF_ANY))
		goto unwatched;
	t->buffers++; /* only the thread itself (or its fork, before it runs) adds its buffers */
	return true;
unwatched:
	__sync_fetch_and_add(&batch_unwatched, 1);
	return false;
}

/* Notes how far a thread's buffer is numbered (one lookup per flush, not per event). */
static __always_inline void batch_note(__u64 pid_tgid, __u64 buf, __u64 seq_end)
{
	struct batch_buffer_key k = { pid_tgid, buf };
	struct batch_buffer *b = bpf_map_lookup_elem(&batch_buffers, &k);
	struct batch_buffer fresh = { .seq_end = seq_end };

	if (b && b->watched) {
		b->seq_end = seq_end;
		return;
	}
	/* New, or of a thread gone whose tid and buffer this one took over (or an image before an exec). */
	fresh.watched = batch_watch(pid_tgid, buf);
	bpf_map_update_elem(&batch_buffers, &k, &fresh, BPF_ANY);
}

/*
 * Whose buffer a flush is: the current thread's, but for a child of
 * vfork() or clone(CLONE_VM) (another process on its parent's memory and
 * TLS) its parent thread's, whose buffers it appends to and which goes on
 * with them after it. 0 if that process is not traced.
 */
static __always_inline __u64 batch_owner(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct task_struct *parent = BPF_CORE_READ(t, real_parent);
	__u32 tgid = BPF_CORE_READ(t, tgid), parent_tgid = BPF_CORE_READ(parent, tgid);
	__u64 *start;

	if (tgid == parent_tgid || BPF_CORE_READ(t, mm) != BPF_CORE_READ(parent, mm))
		return !filter_by_map || current_traced(tgid) ? bpf_get_current_pid_tgid() : 0;
	start = bpf_map_lookup_elem(&traced_tgids, &parent_tgid);
	if (filter_by_map && !(start && start_matches(start, task_start_ns(parent))))
		return 0;
	return (__u64)parent_tgid << 32 | (__u32)BPF_CORE_READ(parent, pid);
}

SEC(PROBE_SEC)
int BPF_KPROBE(ctrace_batch, __u64 buf, __u64 bytes, __u64 why, __u64 seq_end)
{
	__u64 pid_tgid = batch_owner();

	if (!pid_tgid)
		return 0;
	batch_note(pid_tgid, buf, seq_end);
	batch_send(pid_tgid, buf, bytes, why, seq_end, PT_REGS_RC(ctx), true);
	return 0;
}

/* What batch_walk does with each buffer of a thread. */
#define BATCH_COPY 0    /* into the ring: the thread dies or execs (arg: why) */
#define BATCH_INHERIT 1 /* to the forked child (arg: its pid_tgid) */
#define BATCH_FORGET 2  /* the thread is gone: out of batch_slots */

/*
 * The copy of one buffer at its thread's death, and its seq_end for the
 * loader; true when it was its last (sent, and the thread dies or execs).
 */
static __always_inline bool batch_copy(__u64 pid_tgid, __u64 buf, struct batch_buffer *b, __u64 why)
{
	struct batch_header h;

	/*
	 * Not checked against the header's tid: that is the thread's id in its
	 * own pid namespace (a container's), and a forked child's buffers name
	 * its parent. No other thread takes a buffer over while this one lives.
	 */
	/* A death or a certain exec (not an exec's entry, which may fail: execvp's search of PATH). */
	bool last = why == CTRACE_BATCH_WHY_SIGNAL || why == CTRACE_BATCH_WHY_EXITING || why == CTRACE_BATCH_WHY_EXEC;

	if (bpf_probe_read_user(&h, sizeof(h), (const void *)buf) || h.magic != 0x43544231 || (!h.len && !last))
		return false;
	if (b)
		b->seq_end = h.first_seq + h.count;
	/* An empty buffer's too when last: the loader forgets the stream at its last copy. */
	return batch_send(pid_tgid, buf, 64 + (__u64)h.len, why, h.first_seq + h.count, 0, false) && last;
}

/* The forked child has its parent's buffer at the same address: watched under its own pid_tgid too. */
static __always_inline void batch_inherit(__u64 child, __u32 number, __u64 buf, const struct batch_buffer *b)
{
	struct batch_slot_key s = { child, number, 0 };
	struct batch_buffer_key k = { child, buf };
	struct batch_buffer c = { .inherited = 1, .watched = 1 };

	if (b)
		c.seq_end = b->seq_end;
	if (bpf_map_update_elem(&batch_slots, &s, &buf, BPF_ANY)) {
		__sync_fetch_and_add(&batch_unwatched, 1);
		c.watched = 0;
	}
	bpf_map_update_elem(&batch_buffers, &k, &c, BPF_ANY);
}

/* Buffer `number` of a thread: global, so verified once, not once per turn of batch_walk's loops. */
__noinline int batch_buffer_op(__u64 pid_tgid, __u32 number, __u32 op, __u64 arg)
{
	struct batch_slot_key s = { pid_tgid, number, 0 };
	struct batch_buffer_key k = { pid_tgid, 0 };
	struct batch_buffer *b;
	__u64 *buf = bpf_map_lookup_elem(&batch_slots, &s);

	if (!buf)
		return 0;
	k.buf = *buf;
	b = bpf_map_lookup_elem(&batch_buffers, &k);
	if (op == BATCH_COPY) {
		/*
		 * Its last copy sent: nothing of it is left to copy (a fatal
		 * signal's copy is followed by the exit's) or to count. Not
		 * sent: kept, counted by seq_end at the stop.
		 */
		if (batch_copy(pid_tgid, k.buf, b, arg)) {
			bpf_map_delete_elem(&batch_slots, &s);
			bpf_map_delete_elem(&batch_buffers, &k);
		}
	} else if (op == BATCH_INHERIT) {
		batch_inherit(arg, number, k.buf, b);
	} else {
		if (b)
			b->watched = 0; /* kept for the loader's count; a thread taking it over watches it anew */
		bpf_map_delete_elem(&batch_slots, &s);
	}
	return 0;
}

/* Buffers first .. first + BATCH_WALK - 1 (below `buffers`) of a thread. */
__noinline int batch_walk_group(__u64 pid_tgid, __u32 first, __u32 buffers, __u32 op, __u64 arg)
{
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < BATCH_WALK; i++) {
		if (first + i >= buffers)
			break;
		batch_buffer_op(pid_tgid, first + i, op, arg);
	}
	return 0;
}

/* Every buffer of a thread (`buffers` of them, at most BATCH_BUFFERS_MAX). */
static __always_inline void batch_walk(__u64 pid_tgid, __u32 buffers, __u32 op, __u64 arg)
{
#pragma clang loop unroll(disable)
	for (__u32 g = 0; g < BATCH_WALK; g++) {
		if (g * BATCH_WALK >= buffers)
			break;
		batch_walk_group(pid_tgid, g * BATCH_WALK, buffers, op, arg);
	}
}

/* The current thread dies (or execs) with events in its buffers: they go now. */
static __always_inline void batch_rescue(__u64 why)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct batch_thread *t;

	if (filter_by_map && !current_traced(pid_tgid >> 32))
		return;
	t = bpf_map_lookup_elem(&batch_threads, &pid_tgid);
	if (t)
		batch_walk(pid_tgid, t->buffers, BATCH_COPY, why);
}

/*
 * A thread gone (its exit) or its buffers gone (its exec), after its
 * buffers were copied: its entries go (batch_buffers' stay, for the
 * loader's count).
 */
static __always_inline void batch_forget(__u64 pid_tgid)
{
	struct batch_thread *t = bpf_map_lookup_elem(&batch_threads, &pid_tgid);

	if (!t)
		return;
	batch_walk(pid_tgid, t->buffers, BATCH_FORGET, 0);
	bpf_map_delete_elem(&batch_threads, &pid_tgid);
}

/*
 * A signal delivered: a fatal one (SIGKILL, also what every other thread
 * gets when one exits the process or crashes, or a default action that
 * kills) ends the thread without its exit destructor.
 */
SEC("tp_btf/signal_deliver")
int BPF_PROG(ctrace_batch_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	void *handler = BPF_CORE_READ(ka, sa.sa_handler);

	/* SIG_DFL of SIGCHLD, SIGCONT, SIGURG, SIGWINCH ignores; of SIGSTOP & co. stops. */
	if (sig != 9 && (handler != 0 || sig == 17 || sig == 18 || sig == 19 || sig == 20 ||
			 sig == 21 || sig == 22 || sig == 23 || sig == 28))
		return 0;
	batch_rescue(CTRACE_BATCH_WHY_SIGNAL);
	return 0;
}

/*
 * exec(), where the kernel has this tracepoint (6.10): called in the
 * exec()ing thread at the point of no return, before its old memory goes,
 * and only for an exec that will happen (sys_enter_execve also sees the
 * failed tries of execvp's PATH search). With ctrace_exit's exit_rescue,
 * the exit and exec watch without any syscall tracepoint.
 */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(ctrace_batch_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	exec_begins();
	batch_rescue(CTRACE_BATCH_WHY_EXEC);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_exit")
int ctrace_batch_exit(void *ctx)
{
	batch_rescue(CTRACE_BATCH_WHY_EXITING);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_exit_group")
int ctrace_batch_exit_group(void *ctx)
{
	batch_rescue(CTRACE_BATCH_WHY_EXITING);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execve")
int ctrace_batch_execve(void *ctx)
{
	exec_begins();
	batch_rescue(CTRACE_BATCH_WHY_EXEC_TRY);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execveat")
int ctrace_batch_execveat(void *ctx)
{
	exec_begins();
	batch_rescue(CTRACE_BATCH_WHY_EXEC_TRY);
	return 0;
}

/*
 * The same watch where the syscall tracepoints cannot be attached: libbpf
 * finds them by their ids in tracefs, which a fresh machine may not have
 * mounted. The raw sys_enter tracepoint needs no tracefs, but runs on
 * every syscall of the machine, so it is only the fallback
 * (batch_watch.c). Syscall numbers of x86-64, the only target.
 */
SEC("raw_tp/sys_enter")
int ctrace_batch_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	long id = (long)ctx->args[1];

	if (id == 60 || id == 231) /* exit, exit_group */
		batch_rescue(CTRACE_BATCH_WHY_EXITING);
	else if (id == 59 || id == 322) { /* execve, execveat */
		exec_begins();
		batch_rescue(CTRACE_BATCH_WHY_EXEC_TRY);
	}
	return 0;
}

/*
 * The child of a fork has a copy of its parent's buffers (events its
 * parent will flush too: the loader drops them from the child's streams,
 * by time): known under the child's pid_tgid from the start, for
 * batch_rescue().
 */
static __always_inline void batch_fork(__u32 child_tgid, __u32 child_tid)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 child = (__u64)child_tgid << 32 | child_tid;
	struct batch_thread *t = bpf_map_lookup_elem(&batch_threads, &pid_tgid);

	if (!t)
		return;
	if (bpf_map_update_elem(&batch_threads, &child, t, BPF_ANY)) {
		__sync_fetch_and_add(&batch_unwatched, t->buffers);
		return;
	}
	batch_walk(pid_tgid, t->buffers, BATCH_INHERIT, child);
}
