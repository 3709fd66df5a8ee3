/* SPDX-License-Identifier: MIT */
/*
 * pftrace_annot.h - a JSON object's members as Perfetto debug annotations,
 * each value as pftrace_write.c's converter put it (whole numbers as
 * int_value, 16 digits or more read exactly, {} [] null as their JSON
 * text), so that pftrace_read.c gives back the same object. Used for the
 * args of events that have some, and for the trace's context and metadata:
 * JSON text our own writer made (chrome_trace.c), never the program's raw.
 */
#ifndef CTRACE_PFTRACE_ANNOT_H
#define CTRACE_PFTRACE_ANNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "encode/perfetto/pb_write.h"

/* Scratch kept between calls. */
struct pftrace_annot {
	struct pb *levels; /* one buffer per nesting level */
	size_t n_levels;
	struct pb text;    /* a string unescaped */
};

/*
 * Appends each member of the object s[0, n) to te as field `field` (a
 * DebugAnnotation), its key interned by intern_key (its name_iid): false
 * when the text is no whole object.
 */
bool pftrace_annot_object(struct pftrace_annot *a, struct pb *te, unsigned field, const char *s, size_t n,
			  uint64_t (*intern_key)(void *ctx, const char *key, size_t len), void *ctx);
/* The JSON string s[0, n) (its quotes included) unescaped, valid UTF-8, up to a NUL as cJSON reads it; valid until the next call. */
const char *pftrace_annot_string(struct pftrace_annot *a, const char *s, size_t n);
void pftrace_annot_free(struct pftrace_annot *a);

#endif
