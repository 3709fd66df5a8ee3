/* SPDX-License-Identifier: MIT */
/*
 * capture_format.h - the layout of a capture (-o FILE.ctrace), the bytes
 * the tracer moves while tracing, converted later (`ctrace-bpf convert`).
 * docs/capture-format.md describes it and says why it is made so.
 *
 * A file: a header, then records, each a type and a length before its
 * payload, padded to 8 bytes. Little-endian (the tracer's own machine: a
 * capture holds the BPF side's records as they are). A reader trusts no
 * length: a capture may be cut short or forged.
 */
#ifndef CTRACE_CAPTURE_FORMAT_H
#define CTRACE_CAPTURE_FORMAT_H

#include <stdint.h>

#define CAPTURE_MAGIC "CTRACECP"
#define CAPTURE_VERSION 1u
#define CAPTURE_HEADER_BYTES 32u
/* No record is larger: a batch copy (64 KiB) and a /proc/PID/maps text (session_capture.c caps it) fit. */
#define CAPTURE_RECORD_MAX ((4u << 20) - 4096)

struct capture_header {
	char magic[8];
	uint32_t version;
	uint32_t header_bytes; /* CAPTURE_HEADER_BYTES: records begin there */
	uint64_t flags;        /* none yet */
	uint64_t reserved;
};

struct capture_record_head {
	uint32_t type; /* enum capture_type */
	uint32_t len;  /* payload bytes, without the padding */
};

/* Each type's payload: docs/capture-format.md. */
enum capture_type {
	CAPTURE_FACTS = 1,    /* what the trace says at its start: TLV list */
	CAPTURE_RING = 2,     /* a ring-buffer record, as the BPF side wrote it */
	CAPTURE_UNREAD = 3,   /* a ring record left unread at the stop: counted lost, never decoded */
	CAPTURE_TSC = 4,      /* the TSC-to-CLOCK_MONOTONIC mapping: its ratio and its new pieces */
	CAPTURE_MAPS = 5,     /* a look at a process's mappings (file_maps.c): /proc/PID/maps as read */
	CAPTURE_NAMES = 6,    /* the names of a process's threads as /proc gave them */
	CAPTURE_TICK = 7,     /* the loop's round: the merge's watermark moves on */
	CAPTURE_DROPS = 8,    /* the kernel side's count of records lost, at a time */
	CAPTURE_UNTRACED = 9, /* processes left out of the full table, at a time */
	CAPTURE_STOP = 10,    /* the stop decided: later records are after it */
	CAPTURE_END = 11,     /* what the stop found: TLV list */
	CAPTURE_TARGET = 12,  /* a process traced from the start, named in the trace */
	CAPTURE_CATEGORY = 13, /* a category given its number (categories.c), in that order */
	CAPTURE_UNSEEN = 14,  /* the kernel side's count of each thread buffer's events, at the end */
	CAPTURE_BUFFER = 15,  /* the loader's copy of a thread's buffer (an idle read, the stop's) */
	CAPTURE_ADOPT = 16,   /* a buffer the process had before the trace, found at attach */
	CAPTURE_PAD = 17,     /* zeros to the next 4 KiB (the writer's direct writes): skipped */
	CAPTURE_ATTACHED = 18, /* what the programs loaded watch, once attached: TLV list */
	CAPTURE_LATE = 19,    /* a string the probe could not read, read from the process: for the next RING record */
	CAPTURE_TYPE_MAX = 19,
};

/* The TLV keys of FACTS and END: {u16 key, u16 0, u32 len, bytes, padding to 8}. */
enum capture_key {
	CK_START_WALL = 1, CK_START_MONO, CK_TARGET_START_WALL, CK_TARGET_START_MONO,
	CK_PROBES, CK_OBJECTS, CK_CATEGORIES, CK_PROGRAM_SET, CK_PROGRAM_SET_WHY, CK_PROGRAM_SET_FORCED,
	CK_PROBE_LINKS, CK_BPF_COOKIES, CK_FAST_NOP5, CK_EVENT_PATH, CK_EVENT_PATH_WHY, CK_DEATH_WATCH,
	CK_KERNEL_FEATURE, /* u8 present, then the name */
	CK_TARGET_PID, CK_TARGET_NS_PID, CK_TARGET_COMM, CK_TARGET_EXE, CK_TARGET_CWD, CK_TARGET_CMDLINE,
	CK_TARGET_START_BOOT,
	CK_TRACED_FROM_START, /* launch mode: the command's pid */
	CK_NO_BATCH, CK_MAX_MEMORY, CK_FIRST_PID,
	/* ATTACHED */
	CK_RENAMES_TOLD = 48,
	/* END */
	CK_STOP_MONO = 64, CK_STOP_REASON, CK_REMOTE_READS, CK_REMOTE_ABANDONED, CK_REMOTE_REFUSED,
	CK_BATCH_UNWATCHED, CK_UNREAD_AT_STOP, CK_KERNEL_DROPPED, CK_UNTRACED,
	CK_BATCH_UNREAD, /* live threads' buffers the stop could not read */
};

#endif
