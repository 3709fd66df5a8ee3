/* SPDX-License-Identifier: MIT */
/*
 * usdt_strings.h - the strings of a --usdt hit its probe could not read
 * (ctrace_usdt is not sleepable: a string on a page the program has not
 * touched yet, a literal in a cold .rodata page, faults), read again by
 * the loader as ctrace's own late strings are (record_strings.c: from the
 * process's memory, or the file it maps).
 */
#ifndef CTRACE_USDT_STRINGS_H
#define CTRACE_USDT_STRINGS_H

#include <stddef.h>
#include "ctrace_record.h"

struct record_strings;
struct ctrace_event;

/* Room for every string of a hit at its longest, with their headers. */
#define USDT_STRINGS_BYTES (CTRACE_USDT_ARGS * (sizeof(struct ctrace_usdt_str) + CTRACE_USDT_STR_MAX))

/*
 * If a USDT hit has strings flagged CTRACE_USDT_STR_FAULT that are plain
 * char * arguments, reads them and points ev->args at a copy of its
 * strings part in buf (USDT_STRINGS_BYTES) with what was read; else leaves
 * the event as it is.
 */
void usdt_strings_resolve(struct record_strings *rs, struct ctrace_event *ev, char *buf);

#endif
