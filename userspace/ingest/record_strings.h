/* SPDX-License-Identifier: MIT */
/*
 * record_strings.h - the step after record_decode(): a decoded event's
 * name and args as the site passed them. The probe may have sent a
 * string's address only (a literal it copied once before: the literal
 * cache has it), or found its page not yet faulted in (read again from the
 * process, else from the file it was mapped from). Which mappings a late
 * read may trust is kept per process as an epoch: the BPF side moves a
 * process's literal epoch on at each change to its objects (dlopen,
 * dlclose, exec), and the fork, exec and link-map records carry it.
 *
 * It calls nothing above it: the session tells it, before attaching a
 * process, to look at the process's mappings (record_strings_snapshot).
 */
#ifndef CTRACE_RECORD_STRINGS_H
#define CTRACE_RECORD_STRINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "ctrace_record.h"
#include "ingest/file_maps.h"
#include "ingest/literal_cache.h"
#include "ingest/process_epoch.h"
#include "ingest/record_decode.h"

struct trace_stats;

struct record_strings {
	struct literal_cache literals;
	struct file_maps files;  /* for strings of processes gone or changed */
	struct process_epochs epochs; /* the BPF side's, read live (none until the programs are loaded) */
	/* The epoch at the point of the ring being read (from the records). */
	uint32_t known_epoch[PROCESS_EPOCH_SLOTS];
	struct trace_stats *stats; /* late, file and unreadable strings counted here */
	bool offline; /* a conversion: no process is read, strings come from files only */
	/* Where strings read late are put: an event's name and args point here until the next. */
	char name_buf[CTRACE_NAME_MAX], args_buf[CTRACE_ARGS_MAX];
	/*
	 * A conversion: the strings the capture read late for the record that
	 * comes next (its name's and its args'), by their address.
	 */
	struct kept_late {
		bool set, truncated;
		uint32_t tgid;
		uint64_t addr;
		size_t len;
		char s[CTRACE_ARGS_MAX];
	} kept[2];
};

void record_strings_init(struct record_strings *rs, struct trace_stats *stats);
/*
 * A conversion: a string the capture read late at `addr` of process tgid,
 * for the record that comes next (record_strings_forget_kept() after it).
 */
void record_strings_keep_late(struct record_strings *rs, uint32_t tgid, uint64_t addr, const char *s, size_t len,
			      bool truncated);
void record_strings_forget_kept(struct record_strings *rs);
/*
 * A string the probe could not read, read from the process while it is as
 * the probe saw it (a capture keeps it for the conversion): its length, or
 * -1 (gone, changed, unreadable).
 */
ssize_t record_strings_read_process(struct record_strings *rs, const struct ctrace_event *ev, int arg, char *buf,
				    size_t max, bool *truncated);
void record_strings_free(struct record_strings *rs);
/* The BPF side's epochs, once its programs are loaded (again after a fallback). */
void record_strings_watch_epochs(struct record_strings *rs, const struct process_epochs *pe);

/*
 * Looks at a process's file mappings, to be called right before its
 * probes are attached: once an epoch (file_maps keeps those whose
 * events are still to be read).
 */
void record_strings_snapshot(struct record_strings *rs, int pid);
/* The same, even in an epoch already looked at: what the process maps may have grown since. */
void record_strings_snapshot_again(struct record_strings *rs, int pid);

/*
 * Resolves ev's name and args in place (they may then point into rs until
 * the next call); fork, exec and link-map records move the process's epoch
 * on, and fork and exec make the caches forget or share what they knew.
 */
void record_strings_resolve(struct record_strings *rs, struct ctrace_event *ev);

/*
 * A batched event's literal at ev->arg[arg] (batch_path.c), read as a late
 * string is, into buf: false when it cannot be read (counted).
 */
bool record_strings_read_late(struct record_strings *rs, const struct ctrace_event *ev, int arg,
			      const char **str, size_t *len, bool *truncated, char *buf, size_t max);

#endif
