/* SPDX-License-Identifier: MIT */
/*
 * ctrace_record.h - the one record format shared by the BPF program
 * (bpf/ctrace.bpf.c) and the loader (userspace/ingest/record_decode.c).
 *
 * One probe hit = one ring-buffer record: a fixed header, then the strings the
 * probe points to, copied by the BPF program (bounded), back to back without
 * NULs. Nothing else crosses the kernel/user boundary, except the drop counter
 * in the BPF object's .bss.
 */
#ifndef CTRACE_RECORD_H
#define CTRACE_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Longest name copied per event; a longer one is truncated (and flagged). */
#define CTRACE_NAME_MAX 256
/* Longest args text copied per event; a longer one is truncated (and flagged). */
#define CTRACE_ARGS_MAX 2048

/*
 * The kinds of record: the one table every part reads (the enum here, the
 * BPF programs' string positions, record_decode.c's, attach.c's programs[],
 * cmd_list.c's known probe names). The numbering is the record format:
 * append only, with the next free number.
 *
 * CTRACE_PROBE_KINDS: a probe site of provider "ctrace" named NAME, traced
 * by the BPF program ctrace_NAME. NAME_ARG and ARGS_ARG: which arg[] holds
 * the pointer to its name and to its args (-1: none).
 *   X(ENUM, number, NAME, NAME_ARG, ARGS_ARG)  arg[] in note order
 */
#define CTRACE_PROBE_KINDS(X)                                                  \
	X(SPAN_BEGIN, 1, span_begin, 2, 3)   /* marker, span, name*, args* */  \
	X(SPAN_END, 2, span_end, -1, 1)      /* span, args* */                 \
	X(INSTANT, 3, instant, 1, 3)         /* marker, name*, scope, args* */ \
	X(COUNTER_SET, 4, counter_set, 1, -1) /* marker, name*, double bits */ \
	X(COUNTER_ADD, 5, counter_add, 1, -1) /* marker, name*, double bits */ \
	X(NEW_PID, 6, new_pid, 1, -1)        /* marker, pname* */              \
	X(DISCARD, 7, discard, -1, -1)       /* marker */                      \
	X(SCOPE, 8, scope, 1, 2) /* marker, name*, args*, TSC ticks since its start */ \
	X(SCOPE_TSC, 11, scope_tsc, 1, 2) /* as SCOPE; tsc: the end's TSC (header 0.2+) */ \
	X(BATCH, 13, batch, -1, -1) /* buffer, bytes, why, seq end: events of one thread (header 0.3+, usdt/ctrace_batch.h) */ \
	X(FLOW_OUT, 14, flow_out, -1, -1) /* id: links the enclosing span to the one of its FLOW_IN (0.4+) */ \
	X(FLOW_IN, 15, flow_in, -1, -1)   /* id */                           \
	X(THREAD_NAME, 16, thread_name, 0, -1) /* name*: the calling thread's name in the trace */ \
	X(PROCESS_SORT_INDEX, 17, process_sort_index, -1, -1) /* n: the process's place among tracks */ \
	X(THREAD_SORT_INDEX, 18, thread_sort_index, -1, -1)   /* n: the thread's, in its process */

/*
 * Not probes: what the kernel tells about the traced processes. Their
 * strings come from the kernel, never from a user pointer. Their arg[2] is
 * the literal epoch (bpf/ctrace.bpf.c) of the process they are about, as
 * it is from then on: the loader knows from it which mappings an event
 * read later in the ring saw.
 *   X(ENUM, number, NAME)
 */
#define CTRACE_PROCESS_KINDS(X)                                                \
	X(FORK, 9, fork)       /* arg: parent tgid, child tgid; name: its comm */ \
	X(EXEC, 10, exec)      /* arg: tgid, exec()ing tid; name: the new path; args: its comm; */ \
	                       /* arg[2] bits 32-63: the image's device (MAJOR << 20 | MINOR), */ \
	                       /* arg[3]: its mm->start_code, tsc: its inode */ \
	X(LINK_MAP, 12, link_map) /* arg: tgid; ld.so changed its objects */ \
	X(THREAD_RENAME, 19, thread_rename) /* arg: tgid, tid; name: its new comm (pthread_setname_np, prctl) */

/*
 * Not ctrace's: a USDT probe another program ships (--usdt, e.g.
 * postgresql:query__start), traced by the one BPF program ctrace_usdt
 * through libbpf's USDT support, which decodes its argument specs. A table
 * of its own: attach.c's programs[] is built from the probe kinds above,
 * which are sites of provider "ctrace".
 *   arg[0]: the cookie (userspace/attach/usdt_spec.h: the probe's index, and how
 *           each argument is read); arg[1]: the arguments' count (<= 12);
 *   arg[2]: bit i set: argument i's value could not be read.
 *   name:   the arguments' values, 8 bytes each (native order), arg[1] of them;
 *   args:   the strings read (CTRACE_USDT_STR_*), one after the other.
 *   X(ENUM, number, NAME)
 */
#define CTRACE_FOREIGN_KINDS(X)                                                \
	X(USDT, 20, usdt)

/* Its size is the highest number of the table (no padding: char arrays). */
union ctrace__kind_numbers {
#define CTRACE__KIND_NUMBER(kind, num, ...) char kind##_[num];
	CTRACE_PROBE_KINDS(CTRACE__KIND_NUMBER)
	CTRACE_PROCESS_KINDS(CTRACE__KIND_NUMBER)
	CTRACE_FOREIGN_KINDS(CTRACE__KIND_NUMBER)
#undef CTRACE__KIND_NUMBER
};

enum ctrace_kind {
#define CTRACE__KIND_ENUM(kind, num, ...) CTRACE_KIND_##kind = num,
	CTRACE_PROBE_KINDS(CTRACE__KIND_ENUM)
	CTRACE_PROCESS_KINDS(CTRACE__KIND_ENUM)
	CTRACE_FOREIGN_KINDS(CTRACE__KIND_ENUM)
#undef CTRACE__KIND_ENUM
	/* The highest number above (record_decode.c checks). */
	CTRACE_KIND_MAX = sizeof(union ctrace__kind_numbers),
};

/*
 * Which arg[] of a kind holds the pointer to its name, and to its args (-1:
 * none): where the BPF program copies the strings from and where the
 * loader finds a literal's address. A constant for a constant kind.
 */
static inline __attribute__((always_inline)) int ctrace_kind_name_arg(unsigned kind)
{
	switch (kind) {
#define CTRACE__NAME_ARG(kind, num, probe, name_arg, args_arg) case num: return name_arg;
	CTRACE_PROBE_KINDS(CTRACE__NAME_ARG)
#undef CTRACE__NAME_ARG
	}
	return -1;
}

static inline __attribute__((always_inline)) int ctrace_kind_args_arg(unsigned kind)
{
	switch (kind) {
#define CTRACE__ARGS_ARG(kind, num, probe, name_arg, args_arg) case num: return args_arg;
	CTRACE_PROBE_KINDS(CTRACE__ARGS_ARG)
#undef CTRACE__ARGS_ARG
	}
	return -1;
}

/* Whether a record is one event of the trace: not a batch of them, not news of a process. */
static inline __attribute__((always_inline)) int ctrace_kind_is_event(unsigned kind)
{
	switch (kind) {
#define CTRACE__IS_EVENT(kind, num, ...) case num: return num != CTRACE_KIND_BATCH;
	CTRACE_PROBE_KINDS(CTRACE__IS_EVENT)
	CTRACE_FOREIGN_KINDS(CTRACE__IS_EVENT)
#undef CTRACE__IS_EVENT
	}
	return 0;
}

/* Per-string status bits; the name's are in flags bits 0-3, args' in 4-7. */
#define CTRACE_STR_TRUNCATED 0x1 /* longer than the copy limit */
#define CTRACE_STR_FAULT 0x2     /* the pointer could not be read in the probe */
#define CTRACE_STR_LITERAL 0x4   /* a string literal, copied this once: the
				    loader remembers it by its address (arg[]) */
#define CTRACE_STR_BYREF 0x8     /* the same literal again: not copied */
#define CTRACE_NAME_FLAGS(f) ((f) & 0xf)
#define CTRACE_ARGS_FLAGS(f) (((f) >> 4) & 0xf)
#define CTRACE_ARGS_SHIFT 4

struct ctrace_record {
	__u64 ts_ns;    /* CLOCK_MONOTONIC, from bpf_ktime_get_ns() */
	__u32 tgid;     /* the real process id (kernel tgid) */
	__u32 tid;      /* the real thread id (kernel pid) */
	__u64 arg[4];   /* the probe's raw arguments, in note order */
	__u16 kind;     /* enum ctrace_kind */
	__u16 flags;    /* CTRACE_STR_* bits for name and args; bits 8-15: the site's category number (userspace/lib/categories.h) */
	__u16 name_len; /* bytes of name at data[0] */
	__u16 args_len; /* bytes of args at data[name_len] */
	__u64 tsc;      /* SCOPE_TSC: the TSC at the scope's end; else not set */
	char data[];    /* name bytes, then args bytes; no NULs */
};

/*
 * A USDT record's strings (its args part): for each argument read as a
 * string, a struct ctrace_usdt_str, then `len` bytes (no NUL). A string
 * is read up to CTRACE_USDT_STR_MAX bytes; one that no longer fits in the
 * record comes with status NO_ROOM and no bytes.
 */
#define CTRACE_USDT_ARGS 12 /* libbpf's BPF_USDT_MAX_ARG_CNT */
#define CTRACE_USDT_STR_MAX 1020 /* two whole strings in CTRACE_ARGS_MAX */
#define CTRACE_USDT_STR_OK 0
#define CTRACE_USDT_STR_FAULT 1     /* the pointer could not be read */
#define CTRACE_USDT_STR_TRUNCATED 2 /* longer than CTRACE_USDT_STR_MAX */
#define CTRACE_USDT_STR_NO_ROOM 3   /* the record was full */
/* How the probe reads argument i: 2 bits at CTRACE_USDT_HOW_SHIFT + 2 * i of the cookie. */
#define CTRACE_USDT_HOW_VALUE 0
#define CTRACE_USDT_HOW_STR 1      /* a char * */
#define CTRACE_USDT_HOW_STR_AT_8 2 /* a pointer to a char * at +8 (std::type_info's name) */
#define CTRACE_USDT_HOW_STR_LEN 3  /* a char * whose length is the next argument (the JVM's) */
#define CTRACE_USDT_HOW_SHIFT 16

/*
 * A --usdt probe whose argument specs libbpf 1.1 cannot decode (one read
 * relative to %rip: "-4@NBuffers(%rip)") is attached by the loader itself
 * (userspace/attach/usdt_attach.c), one uprobe per note, its BPF cookie
 * CTRACE_USDT_LOC_COOKIE | a slot of the usdt_locs map, which holds how
 * each argument is read. A %rip-relative argument is a DEREF of the IP:
 * in a uprobe the IP is the note's address, and the symbol is in the same
 * object, so its address is the IP + (symbol - note address) in every
 * process, PIE or not.
 */
#define CTRACE_USDT_LOC_COOKIE (1ull << 31) /* a negative spec id to libbpf's bpf_usdt_*(): none of its */
#define CTRACE_USDT_LOC_SLOTS 256
#define CTRACE_USDT_LOC_CONST 0 /* the value is off */
#define CTRACE_USDT_LOC_REG 1   /* the register at reg_off of struct pt_regs */
#define CTRACE_USDT_LOC_DEREF 2 /* the memory at that register + off */

struct ctrace_usdt_arg_loc {
	__s64 off;
	__s16 reg_off;
	__u8 type;  /* CTRACE_USDT_LOC_* */
	__u8 shift; /* 64 - 8 * its size in bytes: the bits cleared (or sign-extended) */
	__u8 is_signed;
	__u8 pad[3];
};

struct ctrace_usdt_loc_spec {
	__u64 cookie; /* what bpf_usdt_cookie() gives on libbpf's path (userspace/attach/usdt_spec.h) */
	__u32 arg_cnt;
	__u32 pad;
	struct ctrace_usdt_arg_loc arg[CTRACE_USDT_ARGS];
};

struct ctrace_usdt_str {
	__u8 arg;    /* which argument */
	__u8 status; /* CTRACE_USDT_STR_* */
	__u16 len;
};

/*
 * A BATCH record: the header above (arg[]: the buffer's address, the bytes
 * copied, why: CTRACE_BATCH_WHY_*, the thread's sequence number after its
 * last event) and the buffer's bytes, at most CTRACE_BATCH_BYTES
 * (usdt/ctrace_batch.h's CTRACE__BATCH_BYTES). userspace/ingest/batch_split.c reads it.
 */
#define CTRACE_BATCH_BYTES 16384
#define CTRACE_BATCH_WHY_FULL 0
#define CTRACE_BATCH_WHY_HELLO 1
#define CTRACE_BATCH_WHY_SIGNAL 3   /* copied by the kernel side: a fatal signal */
#define CTRACE_BATCH_WHY_EXITING 4  /* copied by the kernel side: exit() or exit_group() */
#define CTRACE_BATCH_WHY_EXEC 5     /* copied by the kernel side: execve() */
#define CTRACE_BATCH_WHY_LINK_MAP 6 /* copied by the kernel side: dlopen(), dlclose() */
#define CTRACE_BATCH_WHY_EXEC_TRY 7 /* copied by the kernel side: an execve() that may yet fail (its syscall's entry) */

#define CTRACE_RECORD_MAX                                                      \
	(sizeof(struct ctrace_record) + CTRACE_NAME_MAX + CTRACE_ARGS_MAX)

/*
 * --stacks: an event's record may end in the user stack where its macro
 * ran, after its name and args (what follows them is that part: no flag,
 * the flags' bits are the strings' and the category's): a struct
 * ctrace_stack, then for CTRACE_STACK_FP `n` return addresses (u64, the
 * kernel's frame-pointer walk, the site's own pc first), for
 * CTRACE_STACK_DWARF the registers then `n` bytes copied from the stack
 * pointer up, which the loader unwinds from the objects' CFI
 * (userspace/ingest/stack_unwind.c). A trailing part, so that a record without it
 * is the same as before. Not 8-byte aligned: read it with memcpy.
 */
#define CTRACE_STACK_FP 1
#define CTRACE_STACK_DWARF 2
#define CTRACE_STACK_DEPTH_MAX 127 /* the kernel's sysctl_perf_event_max_stack default */
#define CTRACE_STACK_BYTES 8192    /* DWARF: stack bytes copied at most (as perf) */
#define CTRACE_STACK_CHUNK 512     /* ... in pieces: a piece past the stack's top fails alone */
/* x86-64 DWARF register numbers 0-16: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
#define CTRACE_STACK_REGS 17

struct ctrace_stack {
	__u16 how;  /* CTRACE_STACK_* */
	__u16 pad;
	__s32 err;  /* < 0: the capture failed (bpf_get_stack's or the first copy's error) */
	__u32 n;    /* FP: addresses; DWARF: stack bytes */
	__u32 pad2;
};

#define CTRACE_STACK_TRAILER_MAX                                               \
	(sizeof(struct ctrace_stack) + CTRACE_STACK_REGS * 8 + CTRACE_STACK_BYTES)

#endif /* CTRACE_RECORD_H */
