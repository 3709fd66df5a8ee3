/* SPDX-License-Identifier: MIT */
/*
 * site_set.h - one mapped object's ctrace probe sites, read from its
 * ELF notes and grouped by kind, with the semaphore of each category
 * (attach.c attaches them; site_set.c reads them).
 */
#ifndef CTRACE_SITE_SET_H
#define CTRACE_SITE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ctrace_record.h"

struct category_filter;
struct mapped_object;

/* What of an object's sites is attached (attach.h: struct attachment's options). */
struct site_options {
	bool verbose, fast, no_batch;
	const struct category_filter *categories; /* NULL: every category */
};

/* The sites left out, and whether one of another category than the default was kept. */
struct site_counts {
	unsigned skipped;  /* ctrace notes whose bytes are not our site */
	unsigned filtered; /* of categories left out */
	bool other_categories;
};

#define ATTACH_COUNT_KIND(...) +1
/* The probe kinds of provider "ctrace" (bpf/ctrace_record.h), one BPF program each. */
enum { KIND_COUNT = 0 CTRACE_PROBE_KINDS(ATTACH_COUNT_KIND) };

/* A kind's index by its probe name, or -1 (attach.c). */
int attach_kind_of(const char *probe);

/* One category's semaphore in an object, and the site that carries it (attached last). */
struct armer {
	int kind;
	uint64_t offset, sema, cookie;
	bool is_default; /* ctrace_semaphore: raised after the others */
};

/* One object's attachable sites, grouped by kind. */
struct site_set {
	uint64_t *offsets[KIND_COUNT]; /* uprobe offsets (the nop, or the guarded nop5) */
	uint64_t *cookies[KIND_COUNT];
	size_t n[KIND_COUNT], cap[KIND_COUNT];
	struct armer *armers;          /* one per semaphore (category) */
	size_t n_armers, cap_armers;
	uint64_t batch_sema;           /* ctrace:batch's own (usdt/ctrace_batch.h) */
};

void site_set_free(struct site_set *s);

/*
 * obj's sites into set, as the options leave them (--categories, --fast,
 * --no-batch), adding those it leaves out to *counts. 0, or -errno: the
 * object could not be read (EMFILE, ENFILE: the limit of open files).
 */
int collect_sites(const struct mapped_object *obj, const struct site_options *a, struct site_counts *counts,
		  struct site_set *set);

#endif
