/* SPDX-License-Identifier: MIT */
/*
 * ctrace_record.h - the one record format shared by the BPF program
 * (bpf/ctrace.bpf.c) and the loader (userspace/record_decode.c).
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

/* Which probe fired. The numbering is the record format: append only. */
enum ctrace_kind {
	CTRACE_KIND_SPAN_BEGIN = 1, /* arg: marker, span, name*, args* */
	CTRACE_KIND_SPAN_END = 2,   /* arg: span, args* */
	CTRACE_KIND_INSTANT = 3,    /* arg: marker, name*, scope, args* */
	CTRACE_KIND_COUNTER_SET = 4, /* arg: marker, name*, double bits */
	CTRACE_KIND_COUNTER_ADD = 5, /* arg: marker, name*, double bits */
	CTRACE_KIND_NEW_PID = 6,    /* arg: marker, pname* */
	CTRACE_KIND_DISCARD = 7,    /* arg: marker */
	CTRACE_KIND_SCOPE = 8,      /* arg: marker, name*, args*, TSC ticks since its start */
	/* Not probes: what the kernel tells about the traced processes. */
	CTRACE_KIND_FORK = 9,       /* arg: parent tgid, child tgid */
	CTRACE_KIND_EXEC = 10,      /* arg: old tgid; name: the new program's path */
	CTRACE_KIND_SCOPE_TSC = 11, /* as SCOPE, and tsc: the end's TSC (header 0.2+) */
	CTRACE_KIND_MAX = 11,
};

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
	__u16 flags;    /* CTRACE_STR_* bits for name and args */
	__u16 name_len; /* bytes of name at data[0] */
	__u16 args_len; /* bytes of args at data[name_len] */
	__u64 tsc;      /* SCOPE_TSC: the TSC at the scope's end; else not set */
	char data[];    /* name bytes, then args bytes; no NULs */
};

#define CTRACE_RECORD_MAX                                                      \
	(sizeof(struct ctrace_record) + CTRACE_NAME_MAX + CTRACE_ARGS_MAX)

#endif /* CTRACE_RECORD_H */
