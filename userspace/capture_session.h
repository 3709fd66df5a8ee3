/* SPDX-License-Identifier: MIT */
/*
 * capture_session.h - a session writing a capture (-o FILE.ctrace): its
 * ring callback moves each record's bytes into the capture undecoded, and
 * the inputs a later conversion needs from the live world (the TSC's
 * mapping, the processes' mappings and thread names, the category
 * numbers, the drop counts and the stop) are written beside them as they
 * are read, in the order the live path reads them (docs/capture-format.md).
 *
 * capture_journal is set while a capture is written: file_maps.c,
 * model_facts.c and categories.c write what they read into it.
 */
#ifndef CTRACE_CAPTURE_SESSION_H
#define CTRACE_CAPTURE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture_write.h"

struct session;
struct tsc_clock;
struct trace_facts;

extern struct capture_writer *capture_journal;

/* NAMES' flags: a pass over every thread of a process (told to the model), or one thread looked up. */
#define CAPTURE_NAMES_PASS 1u
#define CAPTURE_NAMES_ONE 2u
#define CAPTURE_NAMES_GONE 4u /* looked up, and gone: no name */

/* True when path names a capture (ends in ".ctrace"). */
bool capture_path(const char *path);

/* The journal's writers (no-ops while capture_journal is NULL). */
void capture_note_name(uint32_t tgid, uint32_t tid, const char *comm, unsigned flags);
void capture_note_maps(uint32_t pid, uint32_t epoch, bool whole, bool exact, const char *text, size_t len,
		       uint64_t exe_dev, uint64_t exe_ino, const uint64_t *idents, size_t n_idents);
void capture_note_category(const char *name);
/* The TSC mapping's pieces since the last call (*written: how many are in the capture). */
void capture_note_tsc(const struct tsc_clock *c, size_t *written);

/* FACTS: what the trace's head says, and what the conversion must know of the options. */
void capture_write_facts(struct session *s);
/* END: what the stop found. */
void capture_write_end(struct session *s);
/* UNSEEN: the BPF side's table of threads' buffers (fd), at the end. */
void capture_write_unseen(struct session *s, int fd);
/* The batched path's copies of buffers and its adopted buffers into the capture (batch_path.h: copy_out). */
void capture_watch_batches(struct session *s);
/* The threads first seen this round, named as /proc says now (the round's end). */
void capture_name_new_threads(struct session *s);
/* The ring callback's body in a capture. */
int capture_take_record(struct session *s, void *data, size_t size);

#endif
