/* SPDX-License-Identifier: MIT */
/*
 * capture_journal.h - the inputs a conversion needs from the live world,
 * written into the capture as the live path reads them: the TSC's
 * mapping, processes' mappings and thread names, the category numbers
 * (docs/capture-format.md). file_maps.c, model_facts.c and categories.c
 * write what they read here; each call is a no-op while capture_journal
 * is NULL (no capture is written). The session's own records (facts, end,
 * ring records, buffers) are session_capture.c's.
 */
#ifndef CTRACE_CAPTURE_JOURNAL_H
#define CTRACE_CAPTURE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture/capture_write.h"

struct tsc_clock;

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

#endif
